// RUN: attn-opt %s --split-input-file --attn-nv-persistent --allow-unregistered-dialect | FileCheck %s

// The tile grid becomes a persistent grid whose CTAs loop over the work
// tiles w = cta, cta + ctas, ... < B · H · T, each decoded tile-major
// (w = (t' · B + b) · H + h) with t = T - 1 - t' under reverse_grid; the
// body is the grid's, unchanged, followed by a CTA barrier and thread 0's
// invalidation of the tile's barriers.

#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "plain", ordered_issue = true, reverse_grid = true, pack_gqa = false, conditional_rescale = false, tma = true, persistent = true>

// CHECK-LABEL: func.func @reversed(
// CHECK-SAME: %[[B:[^:]*]]: index, %[[H:[^:]*]]: index, %[[T:[^:]*]]: index)
// CHECK: %[[BH:.*]] = arith.muli %[[B]], %[[H]]
// CHECK-NEXT: %[[WORK:.*]] = arith.muli %[[BH]], %[[T]]
// CHECK-NEXT: attn_nv.persistent_grid {
// CHECK-NEXT: ^bb0(%[[CTA:.*]]: index, %[[CTAS:.*]]: index):
// CHECK-NEXT: scf.for %[[W:.*]] = %[[CTA]] to %[[WORK]] step %[[CTAS]] {
// CHECK-NEXT: %[[W32:.*]] = arith.index_castui %[[W]] : index to i32
// CHECK-NEXT: %[[B32:.*]] = arith.index_castui %[[B]] : index to i32
// CHECK-NEXT: %[[H32:.*]] = arith.index_castui %[[H]] : index to i32
// CHECK-NEXT: %[[PER:.*]] = arith.muli %[[B32]], %[[H32]] : i32
// CHECK-NEXT: %[[SLOT:.*]] = arith.divui %[[W32]], %[[PER]] : i32
// CHECK-NEXT: %[[IN:.*]] = arith.remui %[[W32]], %[[PER]] : i32
// CHECK-NEXT: %[[BB32:.*]] = arith.divui %[[IN]], %[[H32]] : i32
// CHECK-NEXT: %[[HH32:.*]] = arith.remui %[[IN]], %[[H32]] : i32
// CHECK-NEXT: %[[BB:.*]] = arith.index_castui %[[BB32]] : i32 to index
// CHECK-NEXT: %[[HH:.*]] = arith.index_castui %[[HH32]] : i32 to index
// CHECK-NEXT: %[[TS:.*]] = arith.index_castui %[[SLOT]] : i32 to index
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[LAST:.*]] = arith.subi %[[T]], %[[ONE]]
// CHECK-NEXT: %[[TT:.*]] = arith.subi %[[LAST]], %[[TS]]
// CHECK-NEXT: %[[KF:.*]] = attn_nv.alloc_barriers
// CHECK-NEXT: %[[KE:.*]] = attn_nv.alloc_barriers
// CHECK-NEXT: attn_nv.init_barriers %[[KF]]
// CHECK-NEXT: attn_nv.init_barriers %[[KE]] arrivals 8
// CHECK-NEXT: nvvm.barrier0
// CHECK-NEXT: "test.sink"(%[[BB]], %[[HH]], %[[TT]])
// CHECK-NEXT: nvvm.barrier0
// CHECK-NEXT: attn_nv.inval_barriers %[[KF]]
// CHECK-NEXT: attn_nv.inval_barriers %[[KE]]
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NOT: attn.tile_grid
func.func @reversed(%nb: index, %nh: index, %nt: index) attributes {attn.config = #cfg} {
  attn.tile_grid (%b, %h, %t) in (%nb, %nh, %nt) {
    %kf = attn_nv.alloc_barriers : !attn_nv.barriers<3>
    %ke = attn_nv.alloc_barriers : !attn_nv.barriers<3>
    attn_nv.init_barriers %kf : !attn_nv.barriers<3>
    attn_nv.init_barriers %ke arrivals 8 : !attn_nv.barriers<3>
    nvvm.barrier0
    "test.sink"(%b, %h, %t) : (index, index, index) -> ()
  }
  return
}

// -----

// Without reverse_grid the tile is the slot itself; a kernel without
// barriers (cp.async) invalidates nothing.
#cfg = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 128, block_n = 64, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false, persistent = true>

// CHECK-LABEL: func.func @forward(
// CHECK: scf.for %[[W:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: %[[W32:.*]] = arith.index_castui %[[W]]
// CHECK: %[[SLOT:.*]] = arith.divui %[[W32]]
// CHECK: %[[T:.*]] = arith.index_castui %[[SLOT]] : i32 to index
// CHECK-NOT: arith.subi
// CHECK: "test.sink"(%{{.*}}, %{{.*}}, %[[T]])
// CHECK-NEXT: nvvm.barrier0
// CHECK-NEXT: }
func.func @forward(%n: index) attributes {attn.config = #cfg} {
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    "test.sink"(%b, %h, %t) : (index, index, index) -> ()
  }
  return
}

// -----

// A kernel that is not persistent keeps its grid.
#cfg = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 128, block_n = 64, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>

// CHECK-LABEL: func.func @grid(
// CHECK-NEXT: attn.tile_grid
// CHECK-NOT: persistent_grid
func.func @grid(%n: index) attributes {attn.config = #cfg} {
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    "test.sink"(%b, %h, %t) : (index, index, index) -> ()
  }
  return
}
