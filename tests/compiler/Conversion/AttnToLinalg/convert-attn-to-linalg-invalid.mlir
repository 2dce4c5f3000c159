// RUN: attn-opt %s --split-input-file --convert-attn-to-linalg --verify-diagnostics
// RUN: not attn-opt %s --split-input-file --attn-configure="target=host" --attn-tile --convert-attn-to-linalg 2>&1 | FileCheck %s --check-prefix=TILED

// convert-attn-to-linalg lowers the tile program's generic ops only: the
// attention ops must be tiled and decomposed first. Tiled but not
// decomposed, the online-softmax step is left:
// TILED: :[[@LINE+7]]:3: error: 'attn.online_attention' op must be tiled and decomposed (attn-tile, attn-decompose) before convert-attn-to-linalg
// TILED: error: 'attn.finalize' op must be tiled and decomposed

!t = memref<?x?x?x32xf32, strided<[?, ?, ?, 1], offset: ?>>

func.func @not_tiled(%q: !t, %k: !t, %v: !t, %o: !t) {
  // expected-error @+1 {{'attn.sdpa' op must be tiled and decomposed (attn-tile, attn-decompose) before convert-attn-to-linalg}}
  attn.sdpa %q, %k, %v into %o : !t, !t, !t -> !t
  return
}

// -----

func.func @not_decomposed(%acc: tensor<16x32xf32>, %m: tensor<16xf32>, %l: tensor<16xf32>) -> (tensor<16x32xbf16>, tensor<16xf32>) {
  // expected-error @+1 {{'attn.finalize' op must be tiled and decomposed (attn-tile, attn-decompose) before convert-attn-to-linalg}}
  %o, %lse = attn.finalize %acc, %m, %l : tensor<16x32xf32>, tensor<16xf32> -> tensor<16x32xbf16>
  return %o, %lse : tensor<16x32xbf16>, tensor<16xf32>
}
