// RUN: attn-opt %s --attn-create-kernel="head-dim=64 dtype=e4m3 mask=causal" --attn-configure="target=host" --attn-tile --attn-decompose --canonicalize --cse | FileCheck %s

// FP8 (e4m3): the kernel takes the descale factors after the scale; the
// scores' scale is scale·dq·dk, P is made 2^8 times larger by its
// exponent before its rounding to e4m3 for P·V (the product reads e4m3
// tiles), and the epilogue divides by the row sum with dv·2^-8 as the
// numerator; O is bf16.

// CHECK-LABEL: func.func @attn_fwd
// CHECK-SAME: %[[Q:[a-z0-9]+]]: memref<?x?x?x64xf8E4M3FN
// CHECK-SAME: %[[O:[a-z0-9]+]]: memref<?x?x?x64xbf16
// CHECK-SAME: %[[SCALE:[a-z0-9]+]]: f32, %[[DQ:[a-z0-9]+]]: f32, %[[DK:[a-z0-9]+]]: f32, %[[DV:[a-z0-9]+]]: f32)
// CHECK-DAG: %[[EIGHT:.*]] = arith.constant 8.000000e+00 : f32
// CHECK-DAG: %[[INV_P_SCALE:.*]] = arith.constant 3.906250e-03 : f32
// CHECK: %[[QK:.*]] = arith.mulf %[[DQ]], %[[DK]] : f32
// CHECK: %[[S:.*]] = arith.mulf %[[SCALE]], %[[QK]] : f32
// CHECK: %[[OUT_SCALE:.*]] = arith.mulf %[[DV]], %[[INV_P_SCALE]] : f32
// CHECK: attn.matmul %{{.*}}, %{{.*}}, %{{.*}} transpose_rhs : tensor<128x64xf8E4M3FN>, tensor<64x64xf8E4M3FN>, tensor<128x64xf32>
// The exponent base of P is m' - 8 (2^8 · P from the exponent), the row
// sum takes 2^-8 of its sum, and a map that only rounds feeds P·V.
// CHECK: arith.subf %{{.*}}, %[[EIGHT]] : f32
// CHECK: %[[P:.*]] = attn.map(%{{.*}}, %{{.*}} : tensor<128x64xf32>, tensor<128xf32>) -> tensor<128x64xf32>
// CHECK: math.exp2
// CHECK: %[[ROWSUM:.*]] = attn.reduce <add> %[[P]]
// CHECK: attn.map(%{{.*}}, %{{.*}}, %[[ROWSUM]] : tensor<128xf32>, tensor<128xf32>, tensor<128xf32>) -> tensor<128xf32>
// CHECK-NEXT: ^bb0(%{{.*}}: index, %{{.*}}: f32, %{{.*}}: f32, %[[S:.*]]: f32):
// CHECK-NEXT: arith.mulf %[[S]], %[[INV_P_SCALE]] : f32
// CHECK: attn.map(%[[P]] : tensor<128x64xf32>) -> tensor<128x64xf8E4M3FN>
// CHECK-NEXT: ^bb0(%{{.*}}: index, %{{.*}}: index, %[[PS:.*]]: f32):
// CHECK-NEXT: arith.truncf %[[PS]] : f32 to f8E4M3FN
// CHECK: attn.matmul %{{.*}}, %{{.*}}, %{{.*}} : tensor<128x64xf8E4M3FN>, tensor<64x64xf8E4M3FN>, tensor<128x64xf32>
// CHECK: arith.divf %[[OUT_SCALE]], %{{.*}} : f32
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: attn.store_tile %{{.*}}, %[[O]]
