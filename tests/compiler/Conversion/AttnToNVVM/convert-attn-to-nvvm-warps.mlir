// RUN: attn-opt %s --attn-tile="block-m=96" --attn-expand-online-softmax --convert-attn-to-nvvm="warps=4" --verify-diagnostics

!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>

func.func @attn_fwd(%q: !t, %k: !t, %v: !t, %o: !t) {
  // expected-error @+1 {{query tile of 96 rows is not a whole number of 16-row tiles for each of warps=4}}
  attn.sdpa %q, %k, %v into %o : !t, !t, !t -> !t
  return
}
