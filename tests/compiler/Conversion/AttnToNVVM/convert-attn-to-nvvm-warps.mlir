// RUN: attn-opt %s --attn-tile="block-m=128" --attn-expand-online-softmax --convert-attn-to-nvvm="warps=4" --verify-diagnostics

!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>

func.func @attn_fwd(%q: !t, %k: !t, %v: !t, %o: !t) {
  // expected-error @+1 {{query tile of 128 rows needs 8 warps of 16 rows; the mapping was given warps=4}}
  attn.sdpa %q, %k, %v into %o : !t, !t, !t -> !t
  return
}
