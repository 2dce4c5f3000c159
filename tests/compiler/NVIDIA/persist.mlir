// RUN: attn-opt %s --split-input-file --attn-nv-persist | FileCheck %s

// Each side of the split loops over rounds r of G = gridDim.x work tiles,
// taking w = r·G + blockIdx.x in even rounds and r·G + G - 1 - blockIdx.x
// in odd ones, below B · H · T, carrying the K/V tiles it has passed
// (base) and the work tiles (k). The work tile's values (its
// row, the key bound, the tile count) are computed again in each loop from
// attn_nv.work_tile; every K/V stage use u becomes base + u; Q's barrier
// is used once a work tile (k). The consumers wait for Q, then release its
// buffer after the epilogue's store (a new one-stage barrier of one arrival
// per consumer warp); the producer copies tile 0, then Q after that
// release, then tiles 1 ... n - 1. The prologue keeps the allocations, the
// inits and the CTA barrier.

#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "plain", ordered_issue = true, reverse_grid = true, pack_gqa = false, conditional_rescale = false, tma = true, warp_specialize = true, persistent = true>
!s = !attn_nv.smem<128x128xbf16, swizzle_128b>
!s3 = !attn_nv.smem<3x128x128xbf16, swizzle_128b>
!b1 = !attn_nv.barriers<1>
!b3 = !attn_nv.barriers<3>

// CHECK-LABEL: func.func @persist(
// CHECK-SAME: %[[B:[^:]*]]: index, %[[H:[^:]*]]: index, %[[T:[^:]*]]: index, %[[NK:[^:]*]]: index, %[[KMAP:[^:]*]]: !llvm.ptr, %[[QMAP:[^:]*]]: !llvm.ptr, %[[OMAP:[^:]*]]: !llvm.ptr)
// CHECK: attn.tile_grid
// CHECK: %[[KS:.*]] = attn_nv.alloc_shared : !attn_nv.smem<3x128x128xbf16
// CHECK: %[[KF:.*]] = attn_nv.alloc_barriers : !attn_nv.barriers<3>
// CHECK: %[[KE:.*]] = attn_nv.alloc_barriers : !attn_nv.barriers<3>
// CHECK: %[[QF:.*]] = attn_nv.alloc_barriers : !attn_nv.barriers<1>
// CHECK-NEXT: %[[QE:.*]] = attn_nv.alloc_barriers : !attn_nv.barriers<1>
// CHECK-NOT: arith.muli
// CHECK: attn_nv.init_barriers %[[QF]] :
// CHECK-NEXT: attn_nv.init_barriers %[[QE]] arrivals 8 :
// CHECK-NEXT: nvvm.barrier0
// CHECK-NEXT: %[[CTAID:.*]] = nvvm.read.ptx.sreg.ctaid.x
// CHECK-NEXT: %[[CTA:.*]] = arith.index_castui %[[CTAID]]
// CHECK-NEXT: %[[NCTA:.*]] = nvvm.read.ptx.sreg.nctaid.x
// CHECK-NEXT: %[[CTAS:.*]] = arith.index_castui %[[NCTA]]
// CHECK-NEXT: %[[BH:.*]] = arith.muli %[[B]], %[[H]]
// CHECK-NEXT: %[[WORKS:.*]] = arith.muli %[[BH]], %[[T]]
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[ROUNDS:.*]] = arith.ceildivui %[[WORKS]], %[[CTAS]]
// CHECK-NEXT: %[[LAST:.*]] = arith.subi %[[CTAS]], %[[ONE]]
// CHECK-NEXT: %[[MIRROR:.*]] = arith.subi %[[LAST]], %[[CTA]]
// CHECK-NEXT: attn_nv.warp_specialize consumers(256 threads, 232 registers) {
// CHECK-NEXT: %{{.*}}:2 = scf.for %[[R:.*]] = %[[ZERO]] to %[[ROUNDS]] step %[[ONE]] iter_args(%[[BASE:.*]] = %[[ZERO]], %[[K:.*]] = %[[ZERO]])
// CHECK-NEXT: %[[PAR:.*]] = arith.andi %[[R]], %[[ONE]]
// CHECK-NEXT: %[[ODD:.*]] = arith.cmpi ne, %[[PAR]], %[[ZERO]]
// CHECK-NEXT: %[[PLACE:.*]] = arith.select %[[ODD]], %[[MIRROR]], %[[CTA]]
// CHECK-NEXT: %[[RG:.*]] = arith.muli %[[R]], %[[CTAS]]
// CHECK-NEXT: %[[W:.*]] = arith.addi %[[RG]], %[[PLACE]]
// CHECK-NEXT: %[[IN:.*]] = arith.cmpi ult, %[[W]], %[[WORKS]]
// CHECK-NEXT: %[[DONE:.*]]:2 = scf.if %[[IN]] -> (index, index) {
// CHECK-NEXT: %[[CB:.*]], %[[CH:.*]], %[[CT:.*]] = attn_nv.work_tile %[[W]] of (%[[B]], %[[H]], %[[T]])
// CHECK-NEXT: %[[ROW:.*]] = arith.muli %[[CT]]
// CHECK-NEXT: %[[END:.*]] = arith.addi %[[ROW]]
// CHECK-NEXT: %[[HI:.*]] = arith.minsi %[[END]], %[[NK]]
// CHECK-NEXT: arith.cmpi
// CHECK-NEXT: %[[N:.*]] = arith.ceildivsi %[[HI]]
// CHECK-NEXT: attn_nv.wait_barrier %[[QF]][%[[K]]]
// CHECK-NEXT: scf.for %[[IT:.*]] = %{{.*}} to %[[N]]
// CHECK-NEXT: %[[U0:.*]] = arith.addi %[[IT]], %[[BASE]]
// CHECK-NEXT: attn_nv.wait_barrier %[[KF]][%[[U0]]]
// CHECK-NEXT: %[[U1:.*]] = arith.addi %[[IT]], %[[BASE]]
// CHECK-NEXT: attn_nv.slot %[[KS]][%[[U1]]]
// CHECK-NEXT: %[[U2:.*]] = arith.addi %[[IT]], %[[BASE]]
// CHECK-NEXT: attn_nv.arrive_barrier %[[KE]][%[[U2]]]
// CHECK-NEXT: }
// CHECK-NEXT: attn_nv.store_tma %{{.*}} into %[[OMAP]][%[[CB]], %[[CH]], %[[ROW]]]
// CHECK-NEXT: attn_nv.arrive_barrier %[[QE]][%[[K]]]
// CHECK-NEXT: %[[NB:.*]] = arith.addi %[[BASE]], %[[N]]
// CHECK-NEXT: %[[NEXTK:.*]] = arith.addi %[[K]], %[[ONE]]
// CHECK-NEXT: scf.yield %[[NB]], %[[NEXTK]]
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.yield %[[BASE]], %[[K]]
// CHECK-NEXT: }
// CHECK-NEXT: scf.yield %[[DONE]]#0, %[[DONE]]#1
// CHECK-NEXT: }
// CHECK-NEXT: } producer(40 registers) {
// CHECK-NEXT: %{{.*}}:2 = scf.for %[[PR:.*]] = %[[ZERO]] to %[[ROUNDS]] step %[[ONE]] iter_args(%[[PBASE:.*]] = %[[ZERO]], %[[PK:.*]] = %[[ZERO]])
// CHECK: %[[PW:.*]] = arith.addi
// CHECK-NEXT: %[[PIN:.*]] = arith.cmpi ult, %[[PW]], %[[WORKS]]
// CHECK-NEXT: scf.if %[[PIN]] -> (index, index) {
// CHECK-NEXT: %[[PB:.*]], %[[PH:.*]], %[[PT:.*]] = attn_nv.work_tile %[[PW]] of (%[[B]], %[[H]], %[[T]])
// CHECK-NEXT: %[[PROW:.*]] = arith.muli %[[PT]]
// CHECK: %[[ANY:.*]] = arith.cmpi
// CHECK-NEXT: %[[PN:.*]] = arith.ceildivsi
// CHECK-NEXT: scf.if %[[ANY]] {
// CHECK-NEXT: %[[T0:.*]] = arith.addi %{{.*}}, %[[PBASE]]
// CHECK-NEXT: %[[S0:.*]] = attn_nv.slot %[[KS]][%[[T0]]]
// CHECK-NEXT: %[[T0C:.*]] = arith.addi %{{.*}}, %[[PBASE]]
// CHECK-NEXT: attn_nv.copy_tma %[[KMAP]][%[[PB]], %[[PH]], %{{.*}}] into %[[S0]], %[[KF]][%[[T0C]]] after %[[KE]] {single_thread}
// CHECK-NEXT: }
// CHECK-NEXT: attn_nv.copy_tma %[[QMAP]][%[[PB]], %[[PH]], %[[PROW]]] into %{{.*}}, %[[QF]][%[[PK]]] after %[[QE]] {single_thread}
// CHECK-NEXT: scf.for %[[PU:.*]] = %{{.*}} to %[[PN]]
// CHECK-NEXT: %[[PU0:.*]] = arith.addi %[[PU]], %[[PBASE]]
// CHECK-NEXT: %[[PS:.*]] = attn_nv.slot %[[KS]][%[[PU0]]]
// CHECK-NEXT: %[[PU1:.*]] = arith.addi %[[PU]], %[[PBASE]]
// CHECK-NEXT: attn_nv.copy_tma %[[KMAP]][%[[PB]], %[[PH]], %[[PU]]] into %[[PS]], %[[KF]][%[[PU1]]] after %[[KE]] {single_thread}
// CHECK-NEXT: }
// CHECK-NEXT: %[[PNB:.*]] = arith.addi %[[PBASE]], %[[PN]]
// CHECK-NEXT: %[[PNK:.*]] = arith.addi %[[PK]], %[[ONE]]
// CHECK-NEXT: scf.yield %[[PNB]], %[[PNK]]
func.func @persist(%B: index, %H: index, %T: index, %nk: index, %kmap: !llvm.ptr, %qmap: !llvm.ptr, %omap: !llvm.ptr) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  attn.tile_grid (%b, %h, %t) in (%B, %H, %T) {
    %q = attn_nv.alloc_shared : !s
    %ks = attn_nv.alloc_shared : !s3
    %kf = attn_nv.alloc_barriers : !b3
    %ke = attn_nv.alloc_barriers : !b3
    %qf = attn_nv.alloc_barriers : !b1
    %row = arith.muli %t, %c128 : index
    %end = arith.addi %row, %c128 : index
    %hi = arith.minsi %end, %nk : index
    attn_nv.init_barriers %kf : !b3
    attn_nv.init_barriers %ke arrivals 8 : !b3
    attn_nv.init_barriers %qf : !b1
    attn_nv.copy_tma %qmap[%b, %h, %row] into %q, %qf[%c0] : !llvm.ptr, !s, !b1
    nvvm.barrier0
    %any = arith.cmpi slt, %c0, %hi : index
    scf.if %any {
      %k0 = attn_nv.slot %ks[%c0] : !s3 -> !s
      attn_nv.copy_tma %kmap[%b, %h, %c0] into %k0, %kf[%c0] after %ke : !llvm.ptr, !s, !b3, !b3
    }
    attn_nv.wait_barrier %qf[%c0] : !b1
    %n = arith.ceildivsi %hi, %c128 : index
    attn_nv.warp_specialize consumers(256 threads, 232 registers) {
      scf.for %it = %c0 to %n step %c1 {
        attn_nv.wait_barrier %kf[%it] : !b3
        %k = attn_nv.slot %ks[%it] : !s3 -> !s
        attn_nv.arrive_barrier %ke[%it] : !b3
      }
      attn_nv.store_tma %q into %omap[%b, %h, %row] : !s, !llvm.ptr
    } producer(40 registers) {
      scf.for %u = %c1 to %n step %c1 {
        %kn = attn_nv.slot %ks[%u] : !s3 -> !s
        attn_nv.copy_tma %kmap[%b, %h, %u] into %kn, %kf[%u] after %ke {single_thread} : !llvm.ptr, !s, !b3, !b3
      }
    }
  }
  return
}

// -----

// q_stages = 2: Q's buffer and its barriers get a stage dim, each side reads
// slot k of the buffer in work tile k (the output's store included), and the
// producer copies Q before tile 0 (its copy waits for work tile k - 2's
// release). The consumers do not wait for the output's store to have read
// the buffer (no_wait): work tile k releases k - 1's buffer after its first
// K/V stage release (or after its loop, when it has no K/V tile), and the
// last store is waited for after the work-tile loop.
#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = true, reverse_grid = true, pack_gqa = false, conditional_rescale = false, tma = true, warp_specialize = true, persistent = true, q_stages = 2>
!s = !attn_nv.smem<128x128xbf16, swizzle_128b>
!s2 = !attn_nv.smem<2x128x128xbf16, swizzle_128b>
!b1 = !attn_nv.barriers<1>
!b2 = !attn_nv.barriers<2>

// CHECK-LABEL: func.func @persist_two_q(
// CHECK-SAME: %[[KMAP:[^:]*]]: !llvm.ptr, %[[QMAP:[^:]*]]: !llvm.ptr, %[[OMAP:[^:]*]]: !llvm.ptr)
// CHECK: %[[QS:.*]] = attn_nv.alloc_shared : !attn_nv.smem<2x128x128xbf16
// CHECK-NOT: attn_nv.alloc_shared : !attn_nv.smem<128x128xbf16
// CHECK: %[[KS:.*]] = attn_nv.alloc_shared : !attn_nv.smem<2x128x128xbf16
// CHECK-NEXT: attn_nv.alloc_barriers : !attn_nv.barriers<2>
// CHECK-NEXT: %[[KE:.*]] = attn_nv.alloc_barriers : !attn_nv.barriers<2>
// CHECK-NEXT: %[[QF:.*]] = attn_nv.alloc_barriers : !attn_nv.barriers<2>
// CHECK-NEXT: %[[QE:.*]] = attn_nv.alloc_barriers : !attn_nv.barriers<2>
// CHECK: attn_nv.warp_specialize consumers
// CHECK-NEXT: scf.for %{{.*}} iter_args(%{{.*}} = %{{.*}}, %[[K:.*]] = %{{.*}})
// CHECK: scf.if
// CHECK-NEXT: %[[Q:.*]] = attn_nv.slot %[[QS]][%[[K]]]
// CHECK-NEXT: attn_nv.work_tile
// CHECK: attn_nv.wait_barrier %[[QF]][%[[K]]]
// CHECK-NEXT: scf.for %[[IT:.*]] = %[[LB:.*]] to %[[N:.*]] step
// CHECK: attn_nv.arrive_barrier %[[KE]]
// CHECK-NEXT: %[[FIRST:.*]] = arith.cmpi eq, %[[IT]], %[[LB]]
// CHECK: %[[LATER:.*]] = arith.cmpi ne, %[[K]]
// CHECK-NEXT: %[[AFTER:.*]] = arith.andi %[[FIRST]], %[[LATER]]
// CHECK-NEXT: scf.if %[[AFTER]] {
// CHECK: %[[PREV:.*]] = arith.subi %[[K]]
// CHECK-NEXT: attn_nv.wait_stores_read
// CHECK-NEXT: attn_nv.arrive_barrier %[[QE]][%[[PREV]]]
// CHECK: %[[EMPTY:.*]] = arith.cmpi sge, %[[LB]], %[[N]]
// CHECK: scf.if
// CHECK: %[[PREV2:.*]] = arith.subi %[[K]]
// CHECK-NEXT: attn_nv.wait_stores_read
// CHECK-NEXT: attn_nv.arrive_barrier %[[QE]][%[[PREV2]]]
// CHECK: attn_nv.store_tma %[[Q]] into %[[OMAP]]{{.*}} no_wait
// CHECK-NOT: attn_nv.arrive_barrier %[[QE]]
// CHECK: scf.yield
// CHECK: attn_nv.wait_stores_read
// CHECK-NEXT: } producer
// CHECK-NEXT: scf.for %{{.*}} iter_args(%{{.*}} = %{{.*}}, %[[PK:.*]] = %{{.*}})
// CHECK: scf.if
// CHECK-NEXT: %[[PQ:.*]] = attn_nv.slot %[[QS]][%[[PK]]]
// CHECK-NEXT: attn_nv.work_tile
// CHECK: attn_nv.copy_tma %[[QMAP]][{{.*}}] into %[[PQ]], %[[QF]][%[[PK]]] after %[[QE]] {single_thread}
// CHECK-NEXT: scf.if
// CHECK-NEXT: arith.addi
// CHECK-NEXT: attn_nv.slot %[[KS]]
// CHECK: attn_nv.copy_tma %[[KMAP]]
func.func @persist_two_q(%B: index, %H: index, %T: index, %nk: index, %kmap: !llvm.ptr, %qmap: !llvm.ptr, %omap: !llvm.ptr) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  attn.tile_grid (%b, %h, %t) in (%B, %H, %T) {
    %q = attn_nv.alloc_shared : !s
    %ks = attn_nv.alloc_shared : !s2
    %kf = attn_nv.alloc_barriers : !b2
    %ke = attn_nv.alloc_barriers : !b2
    %qf = attn_nv.alloc_barriers : !b1
    %row = arith.muli %t, %c128 : index
    %end = arith.addi %row, %c128 : index
    %hi = arith.minsi %end, %nk : index
    attn_nv.init_barriers %kf : !b2
    attn_nv.init_barriers %ke arrivals 8 : !b2
    attn_nv.init_barriers %qf : !b1
    attn_nv.copy_tma %qmap[%b, %h, %row] into %q, %qf[%c0] : !llvm.ptr, !s, !b1
    nvvm.barrier0
    %any = arith.cmpi slt, %c0, %hi : index
    scf.if %any {
      %k0 = attn_nv.slot %ks[%c0] : !s2 -> !s
      attn_nv.copy_tma %kmap[%b, %h, %c0] into %k0, %kf[%c0] after %ke : !llvm.ptr, !s, !b2, !b2
    }
    attn_nv.wait_barrier %qf[%c0] : !b1
    %n = arith.ceildivsi %hi, %c128 : index
    attn_nv.warp_specialize consumers(256 threads, 232 registers) {
      scf.for %it = %c0 to %n step %c1 {
        attn_nv.wait_barrier %kf[%it] : !b2
        %k = attn_nv.slot %ks[%it] : !s2 -> !s
        attn_nv.arrive_barrier %ke[%it] : !b2
      }
      attn_nv.store_tma %q into %omap[%b, %h, %row] : !s, !llvm.ptr
    } producer(40 registers) {
      scf.for %u = %c1 to %n step %c1 {
        %kn = attn_nv.slot %ks[%u] : !s2 -> !s
        attn_nv.copy_tma %kmap[%b, %h, %u] into %kn, %kf[%u] after %ke {single_thread} : !llvm.ptr, !s, !b2, !b2
      }
    }
  }
  return
}

// -----

// A work tile's values may read memory the kernel never writes (a document
// mask's ids): the load and the key search (an scf.while reading a value of
// the tile only inside its region) are computed again on both sides, and the
// producer, which now searches per work tile, gets 56 registers (the
// consumers 224).
#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "plain", ordered_issue = true, reverse_grid = true, pack_gqa = false, conditional_rescale = false, tma = true, warp_specialize = true, persistent = true>
!s = !attn_nv.smem<128x128xbf16, swizzle_128b>
!s3 = !attn_nv.smem<3x128x128xbf16, swizzle_128b>
!b1 = !attn_nv.barriers<1>
!b3 = !attn_nv.barriers<3>

// CHECK-LABEL: func.func @persist_search(
// CHECK-NOT: memref.load
// CHECK-NOT: scf.while
// CHECK: attn_nv.warp_specialize consumers(256 threads, 224 registers) {
// CHECK: attn_nv.work_tile
// CHECK-NEXT: arith.muli
// CHECK-NEXT: memref.load
// CHECK-NEXT: scf.while
// CHECK: } producer(56 registers) {
// CHECK: attn_nv.work_tile
// CHECK-NEXT: arith.muli
// CHECK-NEXT: memref.load
// CHECK-NEXT: scf.while
func.func @persist_search(%B: index, %H: index, %T: index, %ids: memref<?xi32>, %kmap: !llvm.ptr, %qmap: !llvm.ptr, %omap: !llvm.ptr) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  attn.tile_grid (%b, %h, %t) in (%B, %H, %T) {
    %q = attn_nv.alloc_shared : !s
    %ks = attn_nv.alloc_shared : !s3
    %kf = attn_nv.alloc_barriers : !b3
    %ke = attn_nv.alloc_barriers : !b3
    %qf = attn_nv.alloc_barriers : !b1
    %row = arith.muli %t, %c128 : index
    %id = memref.load %ids[%row] : memref<?xi32>
    // The first key of the row's document: a search that reads %id inside.
    %lo = scf.while (%j = %row) : (index) -> index {
      %jid = memref.load %ids[%j] : memref<?xi32>
      %same = arith.cmpi eq, %jid, %id : i32
      %pos = arith.cmpi ugt, %j, %c0 : index
      %go = arith.andi %same, %pos : i1
      scf.condition(%go) %j : index
    } do {
    ^bb0(%j: index):
      %prev = arith.subi %j, %c1 : index
      scf.yield %prev : index
    }
    attn_nv.init_barriers %kf : !b3
    attn_nv.init_barriers %ke arrivals 8 : !b3
    attn_nv.init_barriers %qf : !b1
    attn_nv.copy_tma %qmap[%b, %h, %row] into %q, %qf[%c0] : !llvm.ptr, !s, !b1
    nvvm.barrier0
    %any = arith.cmpi slt, %lo, %row : index
    scf.if %any {
      %k0 = attn_nv.slot %ks[%c0] : !s3 -> !s
      attn_nv.copy_tma %kmap[%b, %h, %lo] into %k0, %kf[%c0] after %ke : !llvm.ptr, !s, !b3, !b3
    }
    attn_nv.wait_barrier %qf[%c0] : !b1
    %n = arith.ceildivsi %lo, %c128 : index
    attn_nv.warp_specialize consumers(256 threads, 232 registers) {
      scf.for %it = %c0 to %n step %c1 {
        attn_nv.wait_barrier %kf[%it] : !b3
        attn_nv.arrive_barrier %ke[%it] : !b3
      }
      attn_nv.store_tma %q into %omap[%b, %h, %row] : !s, !llvm.ptr
    } producer(40 registers) {
      scf.for %u = %c1 to %n step %c1 {
        %kn = attn_nv.slot %ks[%u] : !s3 -> !s
        attn_nv.copy_tma %kmap[%b, %h, %u] into %kn, %kf[%u] after %ke {single_thread} : !llvm.ptr, !s, !b3, !b3
      }
    }
  }
  return
}

// -----

// Without persistent nothing changes.
#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "plain", ordered_issue = true, reverse_grid = true, pack_gqa = false, conditional_rescale = false, tma = true, warp_specialize = true>
!s = !attn_nv.smem<128x128xbf16, swizzle_128b>
!b1 = !attn_nv.barriers<1>

// CHECK-LABEL: func.func @not_asked(
// CHECK-NOT: attn_nv.work_tile
// CHECK: attn_nv.copy_tma
// CHECK-NEXT: nvvm.barrier0
// CHECK-NEXT: attn_nv.warp_specialize
func.func @not_asked(%n: index, %qmap: !llvm.ptr) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %q = attn_nv.alloc_shared : !s
    %qf = attn_nv.alloc_barriers : !b1
    attn_nv.init_barriers %qf : !b1
    attn_nv.copy_tma %qmap[%b, %h, %t] into %q, %qf[%c0] : !llvm.ptr, !s, !b1
    nvvm.barrier0
    attn_nv.warp_specialize consumers(256 threads, 232 registers) {
    } producer(40 registers) {
    }
  }
  return
}
