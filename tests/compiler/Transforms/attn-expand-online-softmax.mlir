// RUN: attn-opt %s --attn-expand-online-softmax | FileCheck %s

// CHECK-LABEL: func.func @step
// CHECK-SAME: (%[[Q:.*]]: tensor<64x64xbf16>, %[[K:.*]]: tensor<32x64xbf16>, %[[V:.*]]: tensor<32x64xbf16>, %[[M:.*]]: tensor<64xf32>, %[[L:.*]]: tensor<64xf32>, %[[ACC:.*]]: tensor<64x64xf32>, %[[I:.*]]: index, %[[S:.*]]: f32)
// The softmax scale and the change of base to 2 are one multiplier.
// CHECK: %[[LOG2E:.*]] = arith.constant 1.44269502 : f32
// CHECK: %[[SCALE:.*]] = arith.mulf %[[S]], %[[LOG2E]]
// CHECK: %[[SC:.*]] = attn.qk %[[Q]], %[[K]] scale %[[SCALE]] : {{.*}} -> tensor<64x32xf32>
// CHECK: %[[MASKED:.*]] = attn.mask %[[SC]] at [%[[I]], %[[I]]] bounds [%[[I]], %[[I]]] mask <causal>
// CHECK: %[[P:.*]], %[[M1:.*]], %[[L1:.*]], %[[ALPHA:.*]] = attn.online_softmax %[[MASKED]], %[[M]], %[[L]] : {{.*}} -> tensor<64x32xbf16>
// CHECK: %[[ACC1:.*]] = attn.pv %[[P]], %[[V]], %[[ACC]], %[[ALPHA]]
// CHECK: return %[[M1]], %[[L1]], %[[ACC1]]
func.func @step(%q: tensor<64x64xbf16>, %k: tensor<32x64xbf16>, %v: tensor<32x64xbf16>,
                %m: tensor<64xf32>, %l: tensor<64xf32>, %acc: tensor<64x64xf32>,
                %i: index, %s: f32) -> (tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>) {
  %m1, %l1, %acc1 = attn.online_attention %q, %k, %v, %m, %l, %acc
      at [%i, %i] bounds [%i, %i] scale %s mask <causal>
      : tensor<64x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<64xf32>, tensor<64x64xf32>
  return %m1, %l1, %acc1 : tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>
}
