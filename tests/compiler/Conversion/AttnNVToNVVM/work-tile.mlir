// RUN: attn-opt %s --split-input-file --convert-attn-nv-to-nvvm --allow-unregistered-dialect | FileCheck %s

// A persistent CTA's work tile w of the grid (B, H, T): the launch position
// w (x fastest) as (tile, head, batch) = (w mod T, (w / T) mod H, w / T / H),
// then renumbered as a one-CTA-a-tile grid renumbers blockIdx: here
// reverse_grid, tile = T - 1 - tile; grid_group_ctas as in grid-group.mlir.
// CHECK-LABEL: gpu.func @work_tile(
// CHECK-SAME: %[[W:[^:]*]]: index, %[[NB:[^:]*]]: index, %[[NH:[^:]*]]: index, %[[NT:[^:]*]]: index
// CHECK: %[[T:.*]] = arith.remui %[[W]], %[[NT]] : index
// CHECK: %[[P:.*]] = arith.divui %[[W]], %[[NT]] : index
// CHECK: %[[H:.*]] = arith.remui %[[P]], %[[NH]] : index
// CHECK: %[[B:.*]] = arith.divui %[[P]], %[[NH]] : index
// CHECK: %[[LAST:.*]] = arith.subi %[[NT]], %{{.*}} : index
// CHECK: %[[TR:.*]] = arith.subi %[[LAST]], %[[T]] : index
// CHECK-NOT: nvvm.read.ptx.sreg
// CHECK: "test.sink"(%[[B]], %[[H]], %[[TR]])
func.func @work_tile(%w: index, %nb: index, %nh: index, %nt: index) attributes {attn.config = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "pv_in_flight", ordered_issue = true, reverse_grid = true, pack_gqa = false, conditional_rescale = false, tma = true, warp_specialize = true, persistent = true>} {
  %b, %h, %t = attn_nv.work_tile %w of (%nb, %nh, %nt)
  "test.sink"(%b, %h, %t) : (index, index, index) -> ()
  return
}

// -----

// A grouped persistent grid (grid_group_ctas: causal, every head of a query
// tile together) takes the group order only from 32 query tiles on; with
// fewer, w's plain (tile, head, batch). The groups are cut from w itself.
// CHECK-LABEL: gpu.func @grouped(
// CHECK-SAME: %[[W:[^:]*]]: index, %[[NB:[^:]*]]: index, %[[NH:[^:]*]]: index, %[[NT:[^:]*]]: index
// CHECK: %[[T:.*]] = arith.remui %[[W]], %[[NT]] : index
// CHECK: %[[P:.*]] = arith.divui %[[W]], %[[NT]] : index
// CHECK: %[[H:.*]] = arith.remui %[[P]], %[[NH]] : index
// CHECK: %[[B:.*]] = arith.divui %[[P]], %[[NH]] : index
// CHECK: %[[GCTAS:.*]] = arith.muli %{{.*}}, %[[NT]] : index
// CHECK-NEXT: %[[GROUP:.*]] = arith.divui %[[W]], %[[GCTAS]] : index
// CHECK: arith.minui
// CHECK: %[[START:.*]] = arith.muli %[[GROUP]], %[[GCTAS]] : index
// CHECK-NEXT: %[[RANK:.*]] = arith.subi %[[W]], %[[START]] : index
// CHECK-NEXT: %[[GT:.*]] = arith.divui %[[RANK]]
// CHECK-NEXT: arith.remui %[[RANK]]
// CHECK-NEXT: %[[GP:.*]] = arith.addi
// CHECK-NEXT: %[[GH:.*]] = arith.remui %[[GP]], %[[NH]] : index
// CHECK-NEXT: %[[GB:.*]] = arith.divui %[[GP]], %[[NH]] : index
// CHECK: %[[C32:.*]] = arith.constant 32 : index
// CHECK: %[[FEW:.*]] = arith.cmpi ult, %[[NT]], %[[C32]] : index
// CHECK: %[[ST:.*]] = arith.select %[[FEW]], %[[T]], %[[GT]] : index
// CHECK: %[[SH:.*]] = arith.select %[[FEW]], %[[H]], %[[GH]] : index
// CHECK: %[[SB:.*]] = arith.select %[[FEW]], %[[B]], %[[GB]] : index
// CHECK: %[[LAST:.*]] = arith.subi %[[NT]], %{{.*}} : index
// CHECK: %[[TR:.*]] = arith.subi %[[LAST]], %[[ST]] : index
// CHECK: "test.sink"(%[[SB]], %[[SH]], %[[TR]])
func.func @grouped(%w: index, %nb: index, %nh: index, %nt: index) attributes {attn.config = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "pv_in_flight", ordered_issue = true, reverse_grid = true, pack_gqa = false, conditional_rescale = false, tma = true, warp_specialize = true, grid_group_ctas = 1073741824, persistent = true>} {
  %b, %h, %t = attn_nv.work_tile %w of (%nb, %nh, %nt)
  "test.sink"(%b, %h, %t) : (index, index, index) -> ()
  return
}
