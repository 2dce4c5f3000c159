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

// -----

// A warp-specialised grid (attn-nv-warp-specialize's form): the buffers,
// the barriers' init and one CTA barrier once; then each side loops over
// the same work tiles, carrying the ring's base (the K/V tiles of the
// CTA's earlier work tiles). The producer recomputes the tile count from
// its own decoded tile and issues tiles 0 .. n - 1 (the prologue's tile 0
// copy is gone) into uses base + u; the consumers run the prologue (Q's
// copy and wait) with their barrier 15 where its last CTA barrier was,
// the loop with every use offset by the base, the epilogue and barrier 15
// again. No CTA barrier and no invalidation inside the loops.
// CHECK-LABEL: func.func @producer(
// CHECK-SAME: %[[B:[^:]*]]: index, %[[H:[^:]*]]: index, %[[T:[^:]*]]: index, %[[MAP:[^:]*]]: !llvm.ptr)
// CHECK: %[[WORK:.*]] = arith.muli %{{.*}}, %[[T]]
// CHECK-NEXT: attn_nv.persistent_grid {
// CHECK-NEXT: ^bb0(%[[CTA:.*]]: index, %[[CTAS:.*]]: index):
// CHECK-NEXT: %[[Q:.*]] = attn_nv.alloc_shared : !attn_nv.smem<128x128xbf16
// CHECK-NEXT: %[[K:.*]] = attn_nv.alloc_shared : !attn_nv.smem<3x128x128xbf16
// CHECK-NEXT: %[[KF:.*]] = attn_nv.alloc_barriers
// CHECK-NEXT: %[[KE:.*]] = attn_nv.alloc_barriers
// CHECK-NEXT: attn_nv.init_barriers %[[KF]]
// CHECK-NEXT: attn_nv.init_barriers %[[KE]] arrivals 8
// CHECK-NEXT: nvvm.barrier0
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT: attn_nv.warp_specialize consumers(256 threads, 232 registers) {
// CHECK-NEXT: scf.for %[[W:.*]] = %[[CTA]] to %[[WORK]] step %[[CTAS]] iter_args(%[[BASE:.*]] = %[[ZERO]]) -> (index) {
// CHECK: %[[LASTC:.*]] = arith.subi %[[T]], %{{.*}} : index
// CHECK-NEXT: %[[TC:.*]] = arith.subi %[[LASTC]], %{{.*}} : index
// CHECK-NEXT: %[[ROW:.*]] = arith.muli %[[TC]], %{{.*}} : index
// CHECK-NEXT: "test.copy_q"(%[[BC:[^,]*]], %[[HC:[^,]*]], %[[ROW]], %[[Q]])
// CHECK-NEXT: %[[N:.*]] = arith.addi %[[TC]], %{{.*}} : index
// CHECK-NEXT: "test.wait_q"()
// CHECK-NEXT: %[[ID:.*]] = arith.constant 15 : i32
// CHECK-NEXT: %[[CNT:.*]] = arith.constant 256 : i32
// CHECK-NEXT: nvvm.barrier id = %[[ID]] number_of_threads = %[[CNT]]
// CHECK-NEXT: %[[END:.*]] = arith.muli %[[N]], %{{.*}} : index
// CHECK-NEXT: scf.for %[[IT:.*]] = %{{.*}} to %[[N]] step %{{.*}} {
// CHECK-NEXT: %[[U1:.*]] = arith.addi %[[BASE]], %[[IT]] : index
// CHECK-NEXT: attn_nv.wait_barrier %[[KF]][%[[U1]]]
// CHECK-NEXT: %[[U2:.*]] = arith.addi %[[BASE]], %[[IT]] : index
// CHECK-NEXT: %[[S:.*]] = attn_nv.slot %[[K]][%[[U2]]]
// CHECK-NEXT: "test.product"(%[[Q]], %[[S]])
// CHECK-NEXT: %[[U3:.*]] = arith.addi %[[BASE]], %[[IT]] : index
// CHECK-NEXT: attn_nv.arrive_barrier %[[KE]][%[[U3]]]
// CHECK-NEXT: }
// CHECK-NEXT: "test.store"(%[[BC]], %[[HC]], %[[ROW]], %[[END]])
// CHECK-NEXT: arith.constant 15 : i32
// CHECK-NEXT: arith.constant 256 : i32
// CHECK-NEXT: nvvm.barrier id
// CHECK-NEXT: %[[NEXT:.*]] = arith.addi %[[BASE]], %[[N]] : index
// CHECK-NEXT: scf.yield %[[NEXT]] : index
// CHECK-NEXT: }
// CHECK-NEXT: } producer(40 registers) {
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT: scf.for %{{.*}} = %[[CTA]] to %[[WORK]] step %[[CTAS]] iter_args(%[[PBASE:.*]] = %[[ZERO]]) -> (index) {
// CHECK: %[[BP:.*]] = arith.index_castui %{{.*}} : i32 to index
// CHECK-NEXT: %[[HP:.*]] = arith.index_castui %{{.*}} : i32 to index
// CHECK: %[[LASTP:.*]] = arith.subi %[[T]], %{{.*}} : index
// CHECK-NEXT: %[[TP:.*]] = arith.subi %[[LASTP]], %{{.*}} : index
// CHECK-NEXT: %[[NP:.*]] = arith.addi %[[TP]], %{{.*}} : index
// CHECK-NEXT: %[[FROM:.*]] = arith.constant 0 : index
// CHECK-NEXT: scf.for %[[U:.*]] = %[[FROM]] to %[[NP]] step %[[ONE]] {
// CHECK-NEXT: %[[PREV:.*]] = arith.subi %[[U]], %[[ONE]]
// CHECK-NEXT: %[[TILE:.*]] = arith.addi %[[PREV]], %[[ONE]]
// CHECK-NEXT: %[[R:.*]] = arith.muli %[[TILE]], %{{.*}}
// CHECK-NEXT: %[[V1:.*]] = arith.addi %[[PBASE]], %[[TILE]] : index
// CHECK-NEXT: %[[PS:.*]] = attn_nv.slot %[[K]][%[[V1]]]
// CHECK-NEXT: %[[V2:.*]] = arith.addi %[[PBASE]], %[[TILE]] : index
// CHECK-NEXT: attn_nv.copy_tma %[[MAP]][%[[BP]], %[[HP]], %[[R]]] into %[[PS]], %[[KF]][%[[V2]]] after %[[KE]] {single_thread}
// CHECK-NEXT: }
// CHECK-NEXT: %[[PNEXT:.*]] = arith.addi %[[PBASE]], %[[NP]] : index
// CHECK-NEXT: scf.yield %[[PNEXT]] : index
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NOT: attn.tile_grid
// CHECK-NOT: nvvm.barrier0
// CHECK-NOT: attn_nv.inval_barriers

#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "plain", ordered_issue = true, reverse_grid = true, pack_gqa = false, conditional_rescale = false, tma = true, warp_specialize = true, persistent = true>

func.func @producer(%nb: index, %nh: index, %nt: index, %kmap: !llvm.ptr) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  attn.tile_grid (%b, %h, %t) in (%nb, %nh, %nt) {
    %q = attn_nv.alloc_shared : !attn_nv.smem<128x128xbf16, swizzle_128b>
    %k = attn_nv.alloc_shared : !attn_nv.smem<3x128x128xbf16, swizzle_128b>
    %kfull = attn_nv.alloc_barriers : !attn_nv.barriers<3>
    %kempty = attn_nv.alloc_barriers : !attn_nv.barriers<3>
    %row = arith.muli %t, %c128 : index
    "test.copy_q"(%b, %h, %row, %q) : (index, index, index, !attn_nv.smem<128x128xbf16, swizzle_128b>) -> ()
    %n = arith.addi %t, %c1 : index
    attn_nv.init_barriers %kfull : !attn_nv.barriers<3>
    attn_nv.init_barriers %kempty arrivals 8 : !attn_nv.barriers<3>
    nvvm.barrier0
    %any = arith.cmpi slt, %c0, %n : index
    scf.if %any {
      %s0 = attn_nv.slot %k[%c0] : !attn_nv.smem<3x128x128xbf16, swizzle_128b> -> !attn_nv.smem<128x128xbf16, swizzle_128b>
      attn_nv.copy_tma %kmap[%b, %h, %c0] into %s0, %kfull[%c0] after %kempty : !llvm.ptr, !attn_nv.smem<128x128xbf16, swizzle_128b>, !attn_nv.barriers<3>, !attn_nv.barriers<3>
    }
    "test.wait_q"() : () -> ()
    nvvm.barrier0
    %end = arith.muli %n, %c128 : index
    attn_nv.warp_specialize consumers(256 threads, 232 registers) {
      scf.for %it = %c0 to %n step %c1 {
        attn_nv.wait_barrier %kfull[%it] : !attn_nv.barriers<3>
        %s = attn_nv.slot %k[%it] : !attn_nv.smem<3x128x128xbf16, swizzle_128b> -> !attn_nv.smem<128x128xbf16, swizzle_128b>
        "test.product"(%q, %s) : (!attn_nv.smem<128x128xbf16, swizzle_128b>, !attn_nv.smem<128x128xbf16, swizzle_128b>) -> ()
        attn_nv.arrive_barrier %kempty[%it] : !attn_nv.barriers<3>
      }
      "test.store"(%b, %h, %row, %end) : (index, index, index, index) -> ()
    } producer(40 registers) {
      %one = arith.constant 1 : index
      scf.for %u = %one to %n step %one {
        %it = arith.subi %u, %one : index
        %next = arith.addi %it, %one : index
        %r = arith.muli %next, %c128 : index
        %s = attn_nv.slot %k[%next] : !attn_nv.smem<3x128x128xbf16, swizzle_128b> -> !attn_nv.smem<128x128xbf16, swizzle_128b>
        attn_nv.copy_tma %kmap[%b, %h, %r] into %s, %kfull[%next] after %kempty {single_thread} : !llvm.ptr, !attn_nv.smem<128x128xbf16, swizzle_128b>, !attn_nv.barriers<3>, !attn_nv.barriers<3>
      }
    }
  }
  return
}

// -----

// Reads of kernel arguments (a document variant's boundaries) the
// producer repeats for its own work tile, as it does pure ops.
#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "plain", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = true, warp_specialize = true, persistent = true>

// CHECK-LABEL: func.func @global_reads(
// CHECK-SAME: %[[ENDS:[^:]*]]: memref<?xindex>
// CHECK: } producer(40 registers) {
// CHECK: scf.for
// CHECK: %[[BP:.*]] = arith.index_castui %{{.*}} : i32 to index
// CHECK: %[[END:.*]] = memref.load %[[ENDS]][%[[BP]]]
// CHECK-NEXT: arith.constant 0 : index
// CHECK-NEXT: scf.for %{{.*}} = %{{.*}} to %[[END]] step
func.func @global_reads(%ends: memref<?xindex>, %nb: index, %kmap: !llvm.ptr) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  attn.tile_grid (%b, %h, %t) in (%nb, %nb, %nb) {
    %k = attn_nv.alloc_shared : !attn_nv.smem<3x128x128xbf16, swizzle_128b>
    %kfull = attn_nv.alloc_barriers : !attn_nv.barriers<3>
    %kempty = attn_nv.alloc_barriers : !attn_nv.barriers<3>
    %n = memref.load %ends[%b] : memref<?xindex>
    attn_nv.init_barriers %kfull : !attn_nv.barriers<3>
    attn_nv.init_barriers %kempty arrivals 8 : !attn_nv.barriers<3>
    nvvm.barrier0
    attn_nv.warp_specialize consumers(256 threads, 232 registers) {
      scf.for %it = %c0 to %n step %c1 {
        attn_nv.wait_barrier %kfull[%it] : !attn_nv.barriers<3>
        attn_nv.arrive_barrier %kempty[%it] : !attn_nv.barriers<3>
      }
    } producer(40 registers) {
      scf.for %u = %c1 to %n step %c1 {
        %s = attn_nv.slot %k[%u] : !attn_nv.smem<3x128x128xbf16, swizzle_128b> -> !attn_nv.smem<128x128xbf16, swizzle_128b>
        attn_nv.copy_tma %kmap[%b, %h, %u] into %s, %kfull[%u] after %kempty {single_thread} : !llvm.ptr, !attn_nv.smem<128x128xbf16, swizzle_128b>, !attn_nv.barriers<3>, !attn_nv.barriers<3>
      }
    }
  }
  return
}
