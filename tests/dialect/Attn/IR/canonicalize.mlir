// RUN: attn-opt %s -split-input-file --canonicalize | FileCheck %s

// attn.map's canonicalization (MapCanonicalize.cpp): per-element work that
// does not depend on the element leaves the body.

// A softcap as decomposition builds it: scale, 1 / cap, tanh, cap, log2(e).
// 1 / cap is hoisted; the reassociable uniform factors fold pairwise, so
// two multiplies a score remain.
// CHECK-LABEL: func.func @softcap
// CHECK-SAME: (%[[S:.*]]: tensor<64x32xf32>, %[[SCALE:.*]]: f32, %[[CAP:.*]]: f32)
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.0
// CHECK-DAG: %[[LOG2E:.*]] = arith.constant 1.44
// CHECK: %[[INV:.*]] = arith.divf %[[ONE]], %[[CAP]] : f32
// CHECK-DAG: %[[K1:.*]] = arith.mulf %[[SCALE]], %[[INV]] fastmath<reassoc>
// CHECK-DAG: %[[K2:.*]] = arith.mulf %[[CAP]], %[[LOG2E]] fastmath<reassoc>
// CHECK: attn.map
// CHECK-NEXT: ^bb0(%{{.*}}: index, %{{.*}}: index, %[[X:.*]]: f32):
// CHECK-NEXT: %[[A:.*]] = arith.mulf %[[X]], %[[K1]] fastmath<reassoc>
// CHECK-NEXT: %[[T:.*]] = math.tanh %[[A]]
// CHECK-NEXT: %[[B:.*]] = arith.mulf %[[T]], %[[K2]] fastmath<reassoc>
// CHECK-NEXT: attn.yield %[[B]]
func.func @softcap(%s: tensor<64x32xf32>, %scale: f32, %cap: f32) -> tensor<64x32xf32> {
  %one = arith.constant 1.0 : f32
  %log2e = arith.constant 1.44269502 : f32
  %0 = attn.map(%s : tensor<64x32xf32>) -> tensor<64x32xf32> {
  ^bb0(%i: index, %j: index, %x: f32):
    %a = arith.mulf %x, %scale fastmath<reassoc> : f32
    %inv = arith.divf %one, %cap : f32
    %b = arith.mulf %a, %inv fastmath<reassoc> : f32
    %t = math.tanh %b : f32
    %c = arith.mulf %t, %cap fastmath<reassoc> : f32
    %d = arith.mulf %log2e, %c fastmath<reassoc> : f32
    attn.yield %d : f32
  }
  return %0 : tensor<64x32xf32>
}

// -----

// Without reassoc on both products the order of the rounding stays.
// CHECK-LABEL: func.func @strict
// CHECK: attn.map
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf %{{.*}}, %{{.*}} fastmath<reassoc>
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: attn.yield
func.func @strict(%s: tensor<64x32xf32>, %a: f32, %b: f32) -> tensor<64x32xf32> {
  %0 = attn.map(%s : tensor<64x32xf32>) -> tensor<64x32xf32> {
  ^bb0(%i: index, %j: index, %x: f32):
    %y = arith.mulf %x, %a fastmath<reassoc> : f32
    %z = arith.mulf %y, %b : f32
    attn.yield %z : f32
  }
  return %0 : tensor<64x32xf32>
}

// -----

// A product with another use stays (folding would compute it twice), and
// so does an op that depends on the element or reads memory.
// CHECK-LABEL: func.func @kept
// CHECK: attn.map
// CHECK-NEXT: ^bb0(%[[I:.*]]: index, %{{.*}}: index, %[[X:.*]]: f32):
// CHECK-NEXT: %[[Y:.*]] = arith.mulf %[[X]], %{{.*}} fastmath<reassoc>
// CHECK-NEXT: %[[Z:.*]] = arith.mulf %[[Y]], %{{.*}} fastmath<reassoc>
// CHECK-NEXT: %[[L:.*]] = memref.load %{{.*}}[%[[I]]]
// CHECK-NEXT: %[[W:.*]] = arith.addf %[[Y]], %[[Z]]
// CHECK-NEXT: arith.addf %[[W]], %[[L]]
func.func @kept(%s: tensor<64x32xf32>, %a: f32, %b: f32, %m: memref<64xf32>) -> tensor<64x32xf32> {
  %0 = attn.map(%s : tensor<64x32xf32>) -> tensor<64x32xf32> {
  ^bb0(%i: index, %j: index, %x: f32):
    %y = arith.mulf %x, %a fastmath<reassoc> : f32
    %z = arith.mulf %y, %b fastmath<reassoc> : f32
    %l = memref.load %m[%i] : memref<64xf32>
    %w = arith.addf %y, %z : f32
    %v = arith.addf %w, %l : f32
    attn.yield %v : f32
  }
  return %0 : tensor<64x32xf32>
}
