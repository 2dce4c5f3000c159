// RUN: attn-opt %s --split-input-file --verify-diagnostics --attn-tile

// Tile sizes are decided by attn-configure, never by attn-tile.
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>

func.func @unconfigured(%q: !t, %k: !t, %v: !t, %o: !t) {
  // expected-error @+1 {{'attn.sdpa' op has no attn.config on its function: run attn-configure first}}
  attn.sdpa %q, %k, %v into %o : !t, !t, !t -> !t
  return
}
