// RUN: attn-opt %s --split-input-file --attn-nv-bulk-reductions | FileCheck %s

// attn-nv-bulk-reductions: an accumulating store of an f32 accumulator into
// plain rows (the atomic backward's dQ part) in a wgmma kernel becomes
// attn_nv.reduce_bulk through a padded f32 staging buffer of its own; any
// other store stays.
#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 64, warps = 8, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
!a = memref<?x?x?x128xf32, strided<[?, ?, ?, 1], offset: ?>>
!acc = tensor<64x128xf32, #attn_nv.acc<warps = 8, col_groups = 2>>
!out = tensor<128x128xf32, #attn_nv.acc<warps = 8>>

// CHECK-LABEL: func.func @dq_part(
// CHECK: attn.tile_grid
// CHECK-NEXT: %[[STAGE:.*]] = attn_nv.alloc_shared : !attn_nv.smem<64x128xf32, padded>
// CHECK: attn_nv.reduce_bulk %{{.*}}, %[[STAGE]] into %arg0[%{{.*}}, %{{.*}}, %{{.*}}] bounds %arg1 : tensor<64x128xf32, #attn_nv.acc<warps = 8, col_groups = 2>>, !attn_nv.smem<64x128xf32, padded>, memref<?x?x?x128xf32, strided<[?, ?, ?, 1], offset: ?>>
// CHECK-NOT: accumulate
// CHECK: attn.store_tile %{{.*}}, %arg0[%{{.*}}, %{{.*}}, %{{.*}}] bounds %arg1 : tensor<128x128xf32, #attn_nv.acc<warps = 8>>
func.func @dq_part(%DQ: !a, %n: index) attributes {attn.config = #cfg} {
  %p = arith.constant dense<1.0> : !acc
  %o = arith.constant dense<2.0> : !out
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    attn.store_tile %p, %DQ[%b, %h, %t] accumulate bounds %n : !acc, !a
    attn.store_tile %o, %DQ[%b, %h, %t] bounds %n : !out, !a
  }
  return
}

// -----

// mma.sync kernels have no atomic backward (nor bulk reductions): untouched.
#cfg = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 64, block_n = 64, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
!a = memref<?x?x?x64xf32, strided<[?, ?, ?, 1], offset: ?>>

// CHECK-LABEL: func.func @mma_sync(
// CHECK-NOT: attn_nv.reduce_bulk
// CHECK: attn.store_tile %{{.*}} accumulate
func.func @mma_sync(%DQ: !a, %n: index) attributes {attn.config = #cfg} {
  %p = arith.constant dense<1.0> : tensor<64x64xf32, #attn_nv.acc<warps = 4>>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    attn.store_tile %p, %DQ[%b, %h, %t] accumulate bounds %n : tensor<64x64xf32, #attn_nv.acc<warps = 4>>, !a
  }
  return
}
