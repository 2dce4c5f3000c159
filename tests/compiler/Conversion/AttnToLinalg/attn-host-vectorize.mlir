// RUN: attn-opt %s --attn-host-vectorize --canonicalize | FileCheck %s

// Products become register blocks of vector.fma summed over k in order: 32
// columns are two vectors of 16 lanes, eight rows (16 accumulators); the
// transposed rhs is copied once into a [K, N] tile.
// CHECK-LABEL: func.func @product_transposed_rhs
// CHECK-SAME: (%[[A:.*]]: tensor<16x64xf32>, %[[B:.*]]: tensor<32x64xf32>, %[[C:.*]]: tensor<16x32xf32>)
// CHECK: %[[BT:.*]] = linalg.transpose ins(%[[B]] : tensor<32x64xf32>) outs(%{{.*}} : tensor<64x32xf32>) permutation = [1, 0]
// CHECK: scf.for %{{.*}} = %c0 to %c16 step %c8
// CHECK-COUNT-16: vector.transfer_read %{{.*}} : tensor<16x32xf32>, vector<16xf32>
// CHECK:     scf.for %[[K:.*]] = %c0 to %c64 step %c1
// CHECK-COUNT-2: vector.transfer_read %[[BT]][%[[K]], %{{.*}}]{{.*}} : tensor<64x32xf32>, vector<16xf32>
// CHECK:       tensor.extract %[[A]][%{{.*}}, %[[K]]] : tensor<16x64xf32>
// CHECK:       vector.broadcast
// CHECK-COUNT-2: vector.fma
// CHECK-COUNT-16: vector.transfer_write
// CHECK-NOT: linalg.generic
func.func @product_transposed_rhs(%a: tensor<16x64xf32>, %b: tensor<32x64xf32>, %c: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : tensor<16x64xf32>, tensor<32x64xf32>) outs(%c : tensor<16x32xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<16x32xf32>
  return %r : tensor<16x32xf32>
}

// 16-bit operands are extended to f32 vectors; a column count no vector
// width divides (N = 6) leaves the product scalar.
// CHECK-LABEL: func.func @product_bf16
// CHECK: arith.extf %{{.*}} : vector<8xbf16> to vector<8xf32>
// CHECK: vector.fma
// CHECK-LABEL: func.func @product_odd
// CHECK: linalg.generic
// CHECK-NOT: vector.fma
func.func @product_bf16(%a: tensor<4x8xbf16>, %b: tensor<8x24xbf16>, %c: tensor<4x24xf32>) -> tensor<4x24xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : tensor<4x8xbf16>, tensor<8x24xbf16>) outs(%c : tensor<4x24xf32>) {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %p = arith.mulf %xf, %yf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x24xf32>
  return %r : tensor<4x24xf32>
}
func.func @product_odd(%a: tensor<4x8xf32>, %b: tensor<8x6xf32>, %c: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : tensor<4x8xf32>, tensor<8x6xf32>) outs(%c : tensor<4x6xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x6xf32>
  return %r : tensor<4x6xf32>
}

// Maps and row reductions: one row at a time, in vectors of the row's
// length; a body that loads from a table stays scalar.
// CHECK-LABEL: func.func @row_ops
// CHECK: scf.for
// CHECK:   math.exp2 %{{.*}} : vector<32xf32>
// CHECK: scf.for
// CHECK:   vector.reduction <maxnumf>, %{{.*}} : vector<32xf32> into f32
// CHECK-LABEL: func.func @table_map
// CHECK: linalg.generic
// CHECK:   memref.load
func.func @row_ops(%s: tensor<16x32xf32>, %m: tensor<16xf32>) -> (tensor<16x32xf32>, tensor<16xf32>) {
  %e = tensor.empty() : tensor<16x32xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%s, %m : tensor<16x32xf32>, tensor<16xf32>) outs(%e : tensor<16x32xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %d = arith.subf %x, %y : f32
    %z = math.exp2 %d : f32
    linalg.yield %z : f32
  } -> tensor<16x32xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%p : tensor<16x32xf32>) outs(%m : tensor<16xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %z = arith.maxnumf %acc, %x : f32
    linalg.yield %z : f32
  } -> tensor<16xf32>
  return %p, %r : tensor<16x32xf32>, tensor<16xf32>
}
func.func @table_map(%s: tensor<16x32xf32>, %t: memref<?xf32>) -> tensor<16x32xf32> {
  %e = tensor.empty() : tensor<16x32xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%s : tensor<16x32xf32>) outs(%e : tensor<16x32xf32>) {
  ^bb0(%x: f32, %o: f32):
    %i = linalg.index 1 : index
    %b = memref.load %t[%i] : memref<?xf32>
    %z = arith.addf %x, %b : f32
    linalg.yield %z : f32
  } -> tensor<16x32xf32>
  return %p : tensor<16x32xf32>
}
