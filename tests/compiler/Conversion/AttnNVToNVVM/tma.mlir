// RUN: attn-opt %s --convert-attn-nv-to-nvvm --canonicalize | FileCheck %s

// mbarriers and bulk tensor copies: a barrier buffer is its byte offset;
// thread 0 initializes each barrier for one arrival (then the init fence),
// and issues a tile's copies: arrive.expect_tx with the tile's bytes (two
// 64-column boxes of 128 rows x 128 bytes: 32768) on barrier use mod 3,
// then one cp.async.bulk.tensor per 64-column block into the block's
// 1024-aligned place (tile + block · 128 rows · 128 bytes) at coordinates
// (64 · block, row, head, batch), through the map's generic address. A
// wait is try_wait.parity on barrier use mod 3 in phase parity
// (use / 3) mod 2. Tensor-map arguments keep 64-byte alignment and the
// kernel records how many it has.

// CHECK-LABEL: gpu.func @alloc_init(
// CHECK: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[TID]], %c0_i32
// CHECK: scf.if %[[FIRST]] {
// CHECK-NEXT: %[[B0:.*]] = llvm.getelementptr %[[SMEM:.*]][98304]
// CHECK-NEXT: nvvm.mbarrier.init %[[B0]], %c1_i32
// CHECK-NEXT: %[[B1:.*]] = llvm.getelementptr %[[SMEM]][98312]
// CHECK-NEXT: nvvm.mbarrier.init %[[B1]], %c1_i32
// CHECK-NEXT: %[[B2:.*]] = llvm.getelementptr %[[SMEM]][98320]
// CHECK-NEXT: nvvm.mbarrier.init %[[B2]], %c1_i32
// CHECK-NEXT: nvvm.fence.mbarrier.init
// CHECK-NEXT: }

// CHECK-LABEL: gpu.func @copy(
// CHECK-SAME: %[[B:[^:]*]]: index, %[[H:[^:]*]]: index, %[[ROW:[^:]*]]: index, %[[IT:[^:]*]]: index, %[[KMAP:[^:]*]]: !llvm.ptr {llvm.align = 64 : i64}, %{{[^:]*}}: !llvm.ptr {llvm.align = 64 : i64})
// CHECK-SAME: attn.tensor_maps = 2 : i32
// CHECK: scf.if
// CHECK-NEXT: %[[U:.*]] = arith.index_castui %[[IT]] : index to i32
// CHECK-NEXT: %[[SLOT:.*]] = arith.remui %[[U]], %c3_i32
// CHECK-NEXT: %[[OFF:.*]] = arith.muli %[[SLOT]], %c8_i32
// CHECK-NEXT: %[[AT:.*]] = arith.addi %[[OFF]], %c98304_i32
// CHECK-NEXT: %[[BAR:.*]] = llvm.getelementptr %{{.*}}[%[[AT]]]
// CHECK-NEXT: nvvm.mbarrier.arrive.expect_tx %[[BAR]], %c32768_i32
// CHECK-NEXT: %[[R:.*]] = arith.index_castui %[[ROW]] : index to i32
// CHECK-NEXT: %[[HH:.*]] = arith.index_castui %[[H]] : index to i32
// CHECK-NEXT: %[[BB:.*]] = arith.index_castui %[[B]] : index to i32
// CHECK-NEXT: %[[D0:.*]] = llvm.getelementptr %{{.*}}[32768]
// CHECK-NEXT: %[[C0:.*]] = llvm.addrspacecast %[[D0]] : !llvm.ptr<3> to !llvm.ptr<7>
// CHECK-NEXT: nvvm.cp.async.bulk.tensor.shared.cluster.global %[[C0]], %[[KMAP]], %[[BAR]], box[%c0_i32, %[[R]], %[[HH]], %[[BB]]]
// CHECK-NEXT: %[[D1:.*]] = llvm.getelementptr %{{.*}}[49152]
// CHECK-NEXT: %[[C1:.*]] = llvm.addrspacecast %[[D1]] : !llvm.ptr<3> to !llvm.ptr<7>
// CHECK-NEXT: nvvm.cp.async.bulk.tensor.shared.cluster.global %[[C1]], %[[KMAP]], %[[BAR]], box[%c64_i32, %[[R]], %[[HH]], %[[BB]]]
// CHECK-NEXT: }

// CHECK-LABEL: gpu.func @wait(
// CHECK-SAME: %[[I:[^:]*]]: index)
// CHECK: %[[U:.*]] = arith.index_castui %[[I]] : index to i32
// CHECK-NEXT: %[[SLOT:.*]] = arith.remui %[[U]], %c3_i32
// CHECK-NEXT: %[[OFF:.*]] = arith.muli %[[SLOT]], %c8_i32
// CHECK-NEXT: %[[AT:.*]] = arith.addi %[[OFF]], %c98304_i32
// CHECK-NEXT: %[[BAR:.*]] = llvm.getelementptr %{{.*}}[%[[AT]]]
// CHECK-NEXT: %[[PH:.*]] = arith.divui %[[U]], %c3_i32
// CHECK-NEXT: %[[PAR:.*]] = arith.andi %[[PH]], %c1_i32
// CHECK-NEXT: nvvm.mbarrier.try_wait.parity %[[BAR]], %[[PAR]], %c10000000_i32

#wg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "pv_in_flight", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = true>
!s = !attn_nv.smem<128x128xbf16, swizzle_128b>

func.func @alloc_init(%n: index) attributes {attn.config = #wg} {
  %bars = attn_nv.alloc_barriers {offset = 98304 : i64} : !attn_nv.barriers<3>
  attn_nv.init_barriers %bars : !attn_nv.barriers<3>
  return
}

func.func @copy(%b: index, %h: index, %row: index, %it: index, %kmap: !llvm.ptr, %vmap: !llvm.ptr) attributes {attn.config = #wg} {
  %bars = attn_nv.alloc_barriers {offset = 98304 : i64} : !attn_nv.barriers<3>
  %k = attn_nv.alloc_shared {offset = 32768 : i64} : !s
  attn_nv.copy_tma %kmap[%b, %h, %row] into %k, %bars[%it] : !llvm.ptr, !s, !attn_nv.barriers<3>
  return
}

func.func @wait(%it: index) attributes {attn.config = #wg} {
  %bars = attn_nv.alloc_barriers {offset = 98304 : i64} : !attn_nv.barriers<3>
  attn_nv.wait_barrier %bars[%it] : !attn_nv.barriers<3>
  return
}

// Stage release. "Empty" barriers are initialized for one arrival per warp;
// a copy after them first waits (thread 0, before announcing the bytes) for
// the phase before its use's, parity ((use / 3) mod 2) xor 1, on barrier
// use mod 3 of the empty ones (a fresh barrier passes it: uses 0-2 go at
// once); a warp's release is a warp sync, then lane 0's arrive, predicated (no branch between wgmma ops).
// CHECK-LABEL: gpu.func @init_arrivals(
// CHECK: scf.if
// CHECK: nvvm.mbarrier.init %{{.*}}, %c8_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c8_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c8_i32
// CHECK-NEXT: nvvm.fence.mbarrier.init

// CHECK-LABEL: gpu.func @copy_after_release(
// CHECK-SAME: %{{[^:]*}}: index, %{{[^:]*}}: index, %{{[^:]*}}: index, %[[IT:[^:]*]]: index
// CHECK: scf.if
// CHECK-NEXT: %[[U:.*]] = arith.index_castui %[[IT]] : index to i32
// CHECK-NEXT: %[[SLOT:.*]] = arith.remui %[[U]], %c3_i32
// CHECK-NEXT: %[[OFF:.*]] = arith.muli %[[SLOT]], %c8_i32
// CHECK-NEXT: %[[AT:.*]] = arith.addi %[[OFF]], %c98328_i32
// CHECK-NEXT: %[[EMPTY:.*]] = llvm.getelementptr %{{.*}}[%[[AT]]]
// CHECK-NEXT: %[[PH:.*]] = arith.divui %[[U]], %c3_i32
// CHECK-NEXT: %[[PAR:.*]] = arith.andi %[[PH]], %c1_i32
// CHECK-NEXT: %[[PREV:.*]] = arith.xori %[[PAR]], %c1_i32
// CHECK-NEXT: nvvm.mbarrier.try_wait.parity %[[EMPTY]], %[[PREV]], %c10000000_i32
// CHECK: %[[FULL:.*]] = llvm.getelementptr %{{.*}}[%{{.*}}]
// CHECK-NEXT: nvvm.mbarrier.arrive.expect_tx %[[FULL]], %c32768_i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global

// CHECK-LABEL: gpu.func @release(
// CHECK-SAME: %[[I:[^:]*]]: index)
// CHECK: %[[U:.*]] = arith.index_castui %[[I]] : index to i32
// CHECK-NEXT: %[[SLOT:.*]] = arith.remui %[[U]], %c3_i32
// CHECK-NEXT: %[[OFF:.*]] = arith.muli %[[SLOT]], %c8_i32
// CHECK-NEXT: %[[AT:.*]] = arith.addi %[[OFF]], %c98328_i32
// CHECK-NEXT: %[[BAR:.*]] = llvm.getelementptr %{{.*}}[%[[AT]]]
// CHECK-NEXT: nvvm.bar.warp.sync %c-1_i32
// CHECK-NEXT: %[[LANE:.*]] = nvvm.read.ptx.sreg.laneid
// CHECK-NEXT: llvm.inline_asm has_side_effects "{\0A.reg .pred p;\0Asetp.eq.u32 p, $0, 0;\0A@p mbarrier.arrive.shared.b64 _, [$1];\0A}", "r,l" %[[LANE]], %[[BAR]] : (i32, !llvm.ptr<3>) -> ()
// CHECK-NOT: scf.if

func.func @init_arrivals() attributes {attn.config = #wg} {
  %empty = attn_nv.alloc_barriers {offset = 98328 : i64} : !attn_nv.barriers<3>
  attn_nv.init_barriers %empty arrivals 8 : !attn_nv.barriers<3>
  return
}

func.func @copy_after_release(%b: index, %h: index, %row: index, %it: index, %kmap: !llvm.ptr, %vmap: !llvm.ptr) attributes {attn.config = #wg} {
  %bars = attn_nv.alloc_barriers {offset = 98304 : i64} : !attn_nv.barriers<3>
  %empty = attn_nv.alloc_barriers {offset = 98328 : i64} : !attn_nv.barriers<3>
  %k = attn_nv.alloc_shared {offset = 32768 : i64} : !s
  attn_nv.copy_tma %kmap[%b, %h, %row] into %k, %bars[%it] after %empty : !llvm.ptr, !s, !attn_nv.barriers<3>, !attn_nv.barriers<3>
  return
}

func.func @release(%it: index) attributes {attn.config = #wg} {
  %empty = attn_nv.alloc_barriers {offset = 98328 : i64} : !attn_nv.barriers<3>
  attn_nv.arrive_barrier %empty[%it] : !attn_nv.barriers<3>
  return
}

// The output by TMA: each warp fences its shared writes for the async
// proxy and syncs; its lane 0 (a predicate, no branch) stores the warp's 16
// rows, one 64-column block at a time, from (tile + block · 128 rows · 128
// bytes + 16 w · 128) to coordinates (64 · block, row + 16 w, head, batch)
// of O's map; then every lane commits its (possibly empty) bulk group and
// waits until it has read shared memory.
// CHECK-LABEL: gpu.func @store_output(
// CHECK-SAME: %[[B:[^:]*]]: index, %[[H:[^:]*]]: index, %[[ROW:[^:]*]]: index, %[[OMAP:[^:]*]]: !llvm.ptr {llvm.align = 64 : i64})
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: nvvm.bar.warp.sync %c-1_i32
// CHECK-NEXT: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x
// CHECK-NEXT: %[[WARP:.*]] = arith.divui %[[TID]], %c32_i32
// CHECK-NEXT: %[[LANE:.*]] = nvvm.read.ptx.sreg.laneid
// CHECK-NEXT: %[[LEADER:.*]] = arith.cmpi eq, %[[LANE]], %c0_i32
// CHECK-NEXT: %[[WROW:.*]] = arith.muli %[[WARP]], %c16_i32
// CHECK-NEXT: %[[R0:.*]] = arith.index_castui %[[ROW]] : index to i32
// CHECK-NEXT: %[[R:.*]] = arith.addi %[[R0]], %[[WROW]]
// CHECK-NEXT: %[[HH:.*]] = arith.index_castui %[[H]] : index to i32
// CHECK-NEXT: %[[BB:.*]] = arith.index_castui %[[B]] : index to i32
// CHECK-NEXT: %[[WBYTES:.*]] = arith.muli %[[WARP]], %c2048_i32
// CHECK-NEXT: %[[FIRST:.*]] = arith.addi %[[WBYTES]], %c32768_i32
// CHECK-NEXT: %[[S0:.*]] = llvm.getelementptr %{{.*}}[%[[FIRST]]]
// CHECK-NEXT: nvvm.cp.async.bulk.tensor.global.shared.cta %[[OMAP]], %[[S0]], box[%c0_i32, %[[R]], %[[HH]], %[[BB]]], predicate = %[[LEADER]]
// CHECK-NEXT: %[[SECOND:.*]] = arith.addi %[[WBYTES]], %c49152_i32
// CHECK-NEXT: %[[S1:.*]] = llvm.getelementptr %{{.*}}[%[[SECOND]]]
// CHECK-NEXT: nvvm.cp.async.bulk.tensor.global.shared.cta %[[OMAP]], %[[S1]], box[%c64_i32, %[[R]], %[[HH]], %[[BB]]], predicate = %[[LEADER]]
// CHECK-NEXT: nvvm.cp.async.bulk.commit.group
// CHECK-NEXT: nvvm.cp.async.bulk.wait_group 0 {read}
func.func @store_output(%b: index, %h: index, %row: index, %omap: !llvm.ptr) attributes {attn.config = #wg} {
  %o = attn_nv.alloc_shared {offset = 32768 : i64} : !s
  attn_nv.store_tma %o into %omap[%b, %h, %row] : !s, !llvm.ptr
  return
}

// With no_wait the store ends at the commit; attn_nv.wait_stores_read is
// the wait alone, in every thread.
// CHECK-LABEL: gpu.func @store_output_no_wait(
// CHECK: nvvm.cp.async.bulk.commit.group
// CHECK-NEXT: nvvm.barrier0
// CHECK-NEXT: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK-NEXT: gpu.return
func.func @store_output_no_wait(%b: index, %h: index, %row: index, %omap: !llvm.ptr) attributes {attn.config = #wg} {
  %o = attn_nv.alloc_shared {offset = 32768 : i64} : !s
  attn_nv.store_tma %o into %omap[%b, %h, %row] no_wait : !s, !llvm.ptr
  nvvm.barrier0
  attn_nv.wait_stores_read
  return
}

// attn_nv.reduce_bulk (the atomic backward's dQ part, split over the head dim
// by two warpgroups): after the warp's previous reads (bar.warp.sync), each
// thread writes its 16 pairs into the padded f32 staging buffer (at 2048;
// rows 528 bytes apart: thread row 16 (warp mod 4) + lane / 4, column
// 64 (warp / 4) + 2 (lane mod 4); rows +8 at +4224), makes them visible to
// the async proxy, and lane r < 16 adds row 16 (warp mod 4) + r of its
// group's 64 columns (256 bytes) -- if under the bound, by predicate --
// with one bulk reduction, then waits until its reads are done.
#wg8 = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 64, warps = 8, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
// CHECK-LABEL: gpu.func @reduce_bulk
// CHECK: nvvm.bar.warp.sync %c-1_i32
// CHECK: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x
// CHECK: %[[WARP:.*]] = arith.divui %[[TID]], %c32_i32
// CHECK: %[[ROWW:.*]] = arith.remui %[[WARP]], %c4_i32
// CHECK: arith.muli %[[ROWW]], %c16_i32
// CHECK: %[[GRP:.*]] = arith.divui %[[WARP]], %c4_i32
// CHECK: arith.muli %[[GRP]], %c64_i32
// CHECK: arith.muli %{{.*}}, %c528_i32
// CHECK: %[[T0:.*]] = arith.addi %{{.*}}, %c2048_i32
// CHECK: llvm.getelementptr %{{.*}}[%[[T0]]]
// CHECK: llvm.store %{{.*}} {alignment = 8 : i64} : vector<2xf32>, !llvm.ptr<3>
// CHECK: arith.addi %{{.*}}, %c6272_i32
// CHECK-COUNT-15: llvm.store %{{.*}} : vector<2xf32>, !llvm.ptr<3>
// CHECK-NOT: llvm.store
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: nvvm.bar.warp.sync
// CHECK: %[[LANE:.*]] = nvvm.read.ptx.sreg.laneid
// CHECK: %[[FIRST:.*]] = arith.cmpi ult, %[[LANE]], %c16_i32
// CHECK: %[[UNDER:.*]] = arith.cmpi slt, %{{.*}}, %arg12 : index
// CHECK: %[[MINE:.*]] = arith.andi %[[FIRST]], %[[UNDER]]
// CHECK: %[[DST:.*]] = llvm.getelementptr %arg0[%{{.*}}] : (!llvm.ptr<1>, i64)
// CHECK: arith.muli %{{.*}}, %c528_i32
// CHECK: arith.muli %[[GRP2:.*]], %c256_i32
// CHECK: %[[P:.*]] = arith.extui %[[MINE]] : i1 to i32
// CHECK: llvm.inline_asm has_side_effects "{\0A.reg .pred p;\0Asetp.ne.b32 p, $2, 0;\0A@p cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [$0], [$1], 256;\0A}", "l,r,r" %[[DST]], %{{.*}}, %[[P]]
// CHECK-NEXT: nvvm.cp.async.bulk.commit.group
// CHECK-NEXT: nvvm.cp.async.bulk.wait_group 0 {read}
func.func @reduce_bulk(%DQ: memref<?x?x?x128xf32, strided<[?, ?, ?, 1], offset: ?>>, %b: index, %h: index, %row: index, %n: index) attributes {attn.config = #wg8} {
  %stage = attn_nv.alloc_shared {offset = 2048} : !attn_nv.smem<64x128xf32, padded>
  %p = arith.constant dense<1.0> : tensor<64x128xf32, #attn_nv.acc<warps = 8, col_groups = 2>>
  attn_nv.reduce_bulk %p, %stage into %DQ[%b, %h, %row] bounds %n : tensor<64x128xf32, #attn_nv.acc<warps = 8, col_groups = 2>>, !attn_nv.smem<64x128xf32, padded>, memref<?x?x?x128xf32, strided<[?, ?, ?, 1], offset: ?>>
  return
}
