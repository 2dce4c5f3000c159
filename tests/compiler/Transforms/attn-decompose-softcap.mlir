// RUN: attn-opt %S/../Pipelines/Inputs/empty.mlir --attn-create-kernel="head-dim=128 mask=causal variants=softcap" --attn-configure="target=nvidia" --attn-tile --attn-decompose --canonicalize | FileCheck %s
// RUN: attn-opt %S/../Pipelines/Inputs/empty.mlir --attn-create-kernel="head-dim=64 variants=softcap backward" --attn-configure="target=host" --attn-tile --attn-decompose --canonicalize | FileCheck %s --check-prefix=BWD

// The softcap's scores, cap · tanh(scale · S / cap) in the base-2 domain:
// after decomposition and canonicalization two multiplies a score remain,
// by scale / cap before the tanh and by cap · log2(e) after it, both
// computed once outside the map (attn.map's canonicalization).
// CHECK: %[[INV:.*]] = arith.divf %{{.*}}, %[[CAP:.*]] : f32
// CHECK-NEXT: %[[K1:.*]] = arith.mulf %{{.*}}, %[[INV]] fastmath<reassoc> : f32
// CHECK-NEXT: %[[K2:.*]] = arith.mulf %[[CAP]], %{{.*}} fastmath<reassoc> : f32
// CHECK-NEXT: attn.map
// CHECK-NEXT: ^bb0(%{{.*}}: index, %{{.*}}: index, %[[X:.*]]: f32):
// CHECK-NEXT: %[[A:.*]] = arith.mulf %[[X]], %[[K1]] fastmath<reassoc> : f32
// CHECK-NEXT: %[[T:.*]] = math.tanh %[[A]] : f32
// CHECK-NEXT: %[[B:.*]] = arith.mulf %[[T]], %[[K2]] fastmath<reassoc> : f32
// CHECK-NEXT: attn.yield %[[B]] : f32

// The backward's scores fold the same way.
// BWD: attn.map(%{{.*}} : tensor<64x64xf32>) at
// BWD-NEXT: ^bb0(%{{.*}}: index, %{{.*}}: index, %[[X:.*]]: f32):
// BWD-NEXT: %[[A:.*]] = arith.mulf %[[X]], %{{.*}} fastmath<reassoc> : f32
// BWD-NEXT: %[[T:.*]] = math.tanh %[[A]] : f32
// BWD-NEXT: %[[B:.*]] = arith.mulf %[[T]], %{{.*}} fastmath<reassoc> : f32
// BWD-NEXT: attn.yield %[[B]] : f32
