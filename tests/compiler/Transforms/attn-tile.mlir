// RUN: attn-opt %s --attn-tile="block-m=64 block-n=32" --split-input-file | FileCheck %s
// RUN: attn-opt %s --attn-tile --split-input-file | FileCheck %s --check-prefix=DEFAULT
// RUN: attn-opt %s --attn-tile="tensor-core=wgmma" --split-input-file | FileCheck %s --check-prefix=WGMMA
// RUN: not attn-opt %s --attn-tile="tensor-core=hmma" --split-input-file 2>&1 | FileCheck %s --check-prefix=BADNAME

!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>

// CHECK-LABEL: func.func @dense
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK-DAG: %[[NQ:.*]] = memref.dim %arg0, %c2
// CHECK-DAG: %[[NK:.*]] = memref.dim %arg1, %c2
// CHECK: %[[TILES:.*]] = arith.ceildivsi %[[NQ]], %[[C64]]
// CHECK: attn.tile_grid (%[[B:.*]], %[[H:.*]], %[[T:.*]]) in (%{{.*}}, %{{.*}}, %[[TILES]])
// CHECK:   %[[ROW:.*]] = arith.muli %[[T]], %[[C64]]
// CHECK:   %[[Q:.*]] = attn.load_tile %arg0[%[[B]], %[[H]], %[[ROW]]] {{.*}} -> tensor<64x64xbf16>
// Without a mask every K/V tile is visited.
// CHECK:   attn.kv_loop %[[KV:.*]] = %{{.*}} to %[[NK]] step %[[C32]]
// CHECK:     attn.load_tile %arg1[%[[B]], %[[H]], %[[KV]]] {{.*}} -> tensor<32x64xbf16>
// CHECK:     attn.load_tile %arg2[%[[B]], %[[H]], %[[KV]]] {{.*}} -> tensor<32x64xbf16>
// CHECK:     attn.online_attention %[[Q]], {{.*}} at [%[[ROW]], %[[KV]]] bounds [%[[NQ]], %[[NK]]] scale %arg5 :
// CHECK:     attn.yield
// CHECK:   attn.finalize
// CHECK:   attn.store_tile %{{.*}}, %arg3[%[[B]], %[[H]], %[[ROW]]]
// CHECK:   attn.store_tile %{{.*}}, %arg4[%[[B]], %[[H]], %[[ROW]]] : tensor<64xf32>
// Defaults at D = 64 without a mask: two 16-row m tiles per warp.
// DEFAULT-LABEL: func.func @dense
// DEFAULT: attn.load_tile {{.*}} -> tensor<128x64xbf16>
// DEFAULT: attn.kv_loop {{.*}} step %c64
// DEFAULT: attn.load_tile {{.*}} -> tensor<64x64xbf16>
// Defaults for wgmma at D = 64: two 64-row warpgroups, 64 keys.
// WGMMA-LABEL: func.func @dense
// WGMMA: attn.load_tile {{.*}} -> tensor<128x64xbf16>
// WGMMA: attn.kv_loop {{.*}} step %c64
// WGMMA: attn.load_tile {{.*}} -> tensor<64x64xbf16>
// BADNAME: error: attn-tile: tensor-core must be mma.sync or wgmma, got 'hmma'
func.func @dense(%q: !t, %k: !t, %v: !t, %o: !t, %lse: !lse, %s: f32) {
  attn.sdpa %q, %k, %v into %o lse %lse scale %s : !t, !t, !t -> !t, !lse
  return
}

// -----

!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>

// A causal loop stops at the diagonal: tiles wholly above it are skipped.
// CHECK-LABEL: func.func @causal
// No scale operand: 1/sqrt(64).
// CHECK: %[[SCALE:.*]] = arith.constant 1.250000e-01 : f32
// CHECK: attn.tile_grid
// CHECK:   %[[ROW:.*]] = arith.muli
// CHECK:   %[[END:.*]] = arith.addi %[[ROW]], %c64
// CHECK:   %[[UPPER:.*]] = arith.minsi %{{.*}}, %[[END]]
// CHECK:   attn.kv_loop %{{.*}} = %{{.*}} to %[[UPPER]]
// CHECK:     attn.online_attention {{.*}} scale %[[SCALE]] mask <causal>
// DEFAULT-LABEL: func.func @causal
// DEFAULT: attn.load_tile {{.*}} -> tensor<128x64xbf16>
// DEFAULT: attn.load_tile {{.*}} -> tensor<64x64xbf16>
func.func @causal(%q: !t, %k: !t, %v: !t, %o: !t) {
  attn.sdpa %q, %k, %v into %o mask <causal> : !t, !t, !t -> !t
  return
}

// -----

!q = memref<2x4x100x64xf16>
!kv = memref<2x4x40x64xf16>

// Bottom-right: the diagonal moves by Nk - Nq, and never below key 0.
// CHECK-LABEL: func.func @bottom_right
// CHECK: attn.tile_grid
// CHECK:   %[[END:.*]] = arith.addi %{{.*}}, %c64
// CHECK:   %[[SHIFT:.*]] = arith.subi %{{.*}}, %{{.*}}
// CHECK:   %[[END2:.*]] = arith.addi %[[END]], %[[SHIFT]]
// CHECK:   %[[CLAMP:.*]] = arith.maxsi %[[END2]], %c0
// CHECK:   %[[UPPER:.*]] = arith.minsi %{{.*}}, %[[CLAMP]]
// CHECK:   attn.kv_loop %{{.*}} = %{{.*}} to %[[UPPER]]
// CHECK:     mask <causal_bottom_right>
func.func @bottom_right(%q: !q, %k: !kv, %v: !kv, %o: !q) {
  attn.sdpa %q, %k, %v into %o mask <causal_bottom_right> : !q, !kv, !kv -> !q
  return
}
