// RUN: attn-opt %s --convert-attn-nv-to-nvvm --allow-unregistered-dialect | FileCheck %s

// grid_group_ctas = 256: the CTA's place in launch order, linear = x +
// gridDim.x · (y + gridDim.y · z), is renumbered into groups of
// G = max(1, 256 / gridDim.x) (batch, head) pairs (the last group holds
// the pairs left), each group query tile by query tile: tile = r / g and
// pair = first + r mod g for r = linear - group · G · gridDim.x; then the
// pair's head (pair mod gridDim.y) and batch (pair / gridDim.y), and the
// tile reversed with reverse_grid.
// CHECK-LABEL: gpu.func @grouped(
// CHECK: %[[X:.*]] = nvvm.read.ptx.sreg.ctaid.x : i32
// CHECK: %[[BX:.*]] = arith.index_castui %[[X]] : i32 to index
// CHECK: nvvm.read.ptx.sreg.ctaid.y
// CHECK: %[[BY:.*]] = arith.index_castui
// CHECK: nvvm.read.ptx.sreg.ctaid.z
// CHECK: %[[BZ:.*]] = arith.index_castui
// CHECK: nvvm.read.ptx.sreg.nctaid.x
// CHECK: %[[NX:.*]] = arith.index_castui
// CHECK: nvvm.read.ptx.sreg.nctaid.y
// CHECK: %[[NY:.*]] = arith.index_castui
// CHECK: nvvm.read.ptx.sreg.nctaid.z
// CHECK: %[[NZ:.*]] = arith.index_castui
// CHECK: %[[P0:.*]] = arith.muli %[[NY]], %[[BZ]] : index
// CHECK: %[[P:.*]] = arith.addi %[[BY]], %[[P0]] : index
// CHECK: %[[L0:.*]] = arith.muli %[[NX]], %[[P]] : index
// CHECK: %[[L:.*]] = arith.addi %[[BX]], %[[L0]] : index
// CHECK: %[[ALL:.*]] = arith.muli %[[NY]], %[[NZ]] : index
// CHECK: %[[C256:.*]] = arith.constant 256 : index
// CHECK: %[[G0:.*]] = arith.divui %[[C256]], %[[NX]] : index
// CHECK: %[[G:.*]] = arith.maxui %[[G0]], %{{.*}} : index
// CHECK: %[[GC:.*]] = arith.muli %[[G]], %[[NX]] : index
// CHECK: %[[GRP:.*]] = arith.divui %[[L]], %[[GC]] : index
// CHECK: %[[FIRST:.*]] = arith.muli %[[GRP]], %[[G]] : index
// CHECK: %[[LEFT:.*]] = arith.subi %[[ALL]], %[[FIRST]] : index
// CHECK: %[[IN:.*]] = arith.minui %[[G]], %[[LEFT]] : index
// CHECK: %[[START:.*]] = arith.muli %[[GRP]], %[[GC]] : index
// CHECK: %[[R:.*]] = arith.subi %[[L]], %[[START]] : index
// CHECK: %[[T:.*]] = arith.divui %[[R]], %[[IN]] : index
// CHECK: %[[OFF:.*]] = arith.remui %[[R]], %[[IN]] : index
// CHECK: %[[PAIR:.*]] = arith.addi %[[FIRST]], %[[OFF]] : index
// CHECK: %[[H:.*]] = arith.remui %[[PAIR]], %[[NY]] : index
// CHECK: %[[B:.*]] = arith.divui %[[PAIR]], %[[NY]] : index
// CHECK: nvvm.read.ptx.sreg.nctaid.x
// CHECK: %[[LAST:.*]] = arith.subi %{{.*}}, %c1{{.*}} : index
// CHECK: %[[TR:.*]] = arith.subi %[[LAST]], %[[T]] : index
// CHECK-NOT: nvvm.read.ptx.sreg.ctaid
// CHECK: "test.sink"(%[[B]], %[[H]], %[[TR]])
func.func @grouped(%n: index) attributes {attn.config = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 64, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "pv_in_flight", ordered_issue = true, reverse_grid = true, pack_gqa = false, conditional_rescale = false, grid_group_ctas = 256>} {
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    "test.sink"(%b, %h, %t) : (index, index, index) -> ()
  }
  return
}
