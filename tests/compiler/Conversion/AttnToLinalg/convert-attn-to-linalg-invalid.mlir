// RUN: attn-opt %s --attn-tile --convert-attn-to-linalg --verify-diagnostics


!t = memref<?x?x?x32xf32, strided<[?, ?, ?, 1], offset: ?>>

func.func @not_expanded(%q: !t, %k: !t, %v: !t, %o: !t) {
  // expected-error @+1 {{'attn.online_attention' op must be tiled and expanded (attn-tile, attn-expand-online-softmax) before convert-attn-to-linalg}}
  attn.sdpa %q, %k, %v into %o : !t, !t, !t -> !t
  return
}
