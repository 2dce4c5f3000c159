// RUN: attn-opt %s --split-input-file --attn-nv-split-kernels | FileCheck %s

// A kernel function with two grids becomes two kernels, in order, each with
// all the arguments and one grid; the grid over K/V tiles marks its kernel.
#cfg = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 64, block_n = 64, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>

// CHECK-LABEL: func.func @attn_bwd_0(%arg0: memref<{{.*}}>, %arg1: index)
// CHECK-SAME: attn.config
// CHECK-NOT: attn.grid
// CHECK: attn.tile_grid (%{{.*}}, %{{.*}}, %{{.*}}) in (%arg1, %arg1, %[[A:.*]]) {
// CHECK-NOT: attn.tile_grid
// CHECK: return
// CHECK-LABEL: func.func @attn_bwd_1(%arg0: memref<{{.*}}>, %arg1: index)
// CHECK-SAME: attn.grid = "keys"
// CHECK-NOT: arith.addi
// CHECK: attn.tile_grid (%{{.*}}, %{{.*}}, %{{.*}}) in (%arg1, %arg1, %{{.*}}) attributes {attn.grid = "keys"} {
// CHECK-NOT: attn.tile_grid
// CHECK: return
// CHECK-NOT: func.func @attn_bwd(
func.func @attn_bwd(%t: !t, %n: index) attributes {attn.config = #cfg} {
  %a = arith.addi %n, %n : index
  attn.tile_grid (%b, %h, %i) in (%n, %n, %a) {
  }
  %m = arith.muli %n, %n : index
  attn.tile_grid (%b, %h, %i) in (%n, %n, %m) attributes {attn.grid = "keys"} {
  }
  return
}

// -----

// One grid: the function stays as it is.
// CHECK-LABEL: func.func @attn_fwd(
// CHECK: attn.tile_grid
#cfg = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 64, block_n = 64, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
func.func @attn_fwd(%n: index) attributes {attn.config = #cfg} {
  attn.tile_grid (%b, %h, %i) in (%n, %n, %n) {
  }
  return
}
