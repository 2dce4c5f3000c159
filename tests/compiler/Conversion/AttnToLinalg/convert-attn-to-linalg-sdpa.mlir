// RUN: attn-opt %s --attn-configure="target=host block-m=16 block-n=8" --attn-tile --attn-decompose --convert-attn-to-linalg | FileCheck %s

!t = memref<?x?x?x32xf32, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>

// The whole tile program of attn.sdpa on the host: the grid, the K/V loop
// carrying (m, l, acc) as tensors, QKᵀ, the mask, the online softmax, P·V
// and the epilogue, with no attn op left.
// CHECK-LABEL: func.func @attn
// CHECK: scf.while
// CHECK:   memref.atomic_rmw addi
// CHECK:   } do {
// CHECK:     %[[T:.*]] = arith.remui
// CHECK:     %[[BH:.*]] = arith.divui
// CHECK:     %[[H:.*]] = arith.remui %[[BH]]
// CHECK:     %[[B:.*]] = arith.divui %[[BH]]
// CHECK:       tensor.generate
// CHECK:         memref.load %arg0[%[[B]], %[[H]]
// CHECK:       scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c8 iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x32xf32>)
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// CHECK:         arith.mulf
// CHECK:         linalg.index 1
// CHECK:         arith.cmpi sge
// CHECK:         arith.select
// CHECK:         arith.maxnumf
// CHECK:         math.exp2
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// CHECK:         scf.yield
// CHECK:       math.log2
// CHECK:       memref.store
// CHECK:       memref.store
// CHECK-NOT: attn.
func.func @attn(%q: !t, %k: !t, %v: !t, %o: !t, %lse: !lse, %s: f32) {
  attn.sdpa %q, %k, %v into %o lse %lse scale %s mask <causal> : !t, !t, !t -> !t, !lse
  return
}
