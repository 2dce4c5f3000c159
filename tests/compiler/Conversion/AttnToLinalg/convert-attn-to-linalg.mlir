// RUN: attn-opt %s --attn-tile="block-m=16 block-n=8" --attn-expand-online-softmax --convert-attn-to-linalg | FileCheck %s

!t = memref<?x?x?x32xf32, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>

// The grid becomes three loops, the K/V loop an scf.for carrying (m, l, acc).
// CHECK-LABEL: func.func @attn
// CHECK: scf.for %[[B:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:   scf.for %[[H:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:     scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// Tile loads read inside the bounds and zero-fill past them.
// CHECK:       tensor.generate
// CHECK:         scf.if
// CHECK:           memref.load %arg0[%[[B]], %[[H]]
// CHECK:       scf.for %[[KV:.*]] = %{{.*}} to %{{.*}} step %c8 iter_args(%[[M:.*]] = %{{.*}}, %[[L:.*]] = %{{.*}}, %[[ACC:.*]] = %{{.*}}) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x32xf32>)
// QKᵀ with f32 accumulation, then the scale.
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// CHECK:         arith.mulf
// The mask: -inf past the key bound.
// CHECK:         linalg.index 0
// CHECK:         arith.cmpi sge
// CHECK:         arith.select
// Running max, then p = exp2(s - m'), with base 0 while m' is -inf.
// CHECK:         arith.maximumf
// CHECK:         math.exp2
// CHECK:         scf.yield
// CHECK:     math.log
// CHECK:     memref.store
func.func @attn(%q: !t, %k: !t, %v: !t, %o: !t, %lse: !lse, %s: f32) {
  attn.sdpa %q, %k, %v into %o lse %lse scale %s : !t, !t, !t -> !t, !lse
  return
}
