// RUN: attn-opt %s --split-input-file --verify-diagnostics --attn-configure="target=host"

// The host's head dims are bounded as the runtime's are (Limits.h: 1 to
// 512): D = 0 and D = 2^40 are diagnostics, not kernels (issue 14).

!d0 = memref<?x?x?x0xf32, strided<[?, ?, ?, 1], offset: ?>>

func.func @d0(%q: !d0, %k: !d0, %v: !d0, %o: !d0) {
  // expected-error @+1 {{'attn.sdpa' op cannot be configured: head dim must be in [1, 512] on the host, got 0}}
  attn.sdpa %q, %k, %v into %o : !d0, !d0, !d0 -> !d0
  return
}

// -----

!huge = memref<?x?x?x1099511627776xf32, strided<[?, ?, ?, 1], offset: ?>>

func.func @d_huge(%q: !huge, %k: !huge, %v: !huge, %o: !huge) {
  // expected-error @+1 {{'attn.sdpa' op cannot be configured: head dim must be in [1, 512] on the host, got 1099511627776}}
  attn.sdpa %q, %k, %v into %o : !huge, !huge, !huge -> !huge
  return
}
