// RUN: attn-opt %s --convert-attn-nv-to-nvvm | FileCheck %s
// RUN: attn-opt %s --convert-attn-nv-to-nvvm | FileCheck %s --check-prefix=MODULE

// attn.store_tile from registers: an #attn_nv.acc output tile as 4-byte
// stores of the pairs of adjacent columns each thread holds per 8-column
// block, row by row (rows g and g + 8 of each m tile), each row under its
// bound; an #attn_nv.rows tile (the LSE) by the first thread of each quad,
// skipped when the pointer is null.

#cfg = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 64, block_n = 32, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
#cfg90 = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 64, block_n = 64, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
!o = memref<?x?x?x16xbf16, strided<[?, ?, ?, 1], offset: ?>>
!oh = memref<?x?x?x16xf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>
!acc = tensor<64x16xbf16, #attn_nv.acc<warps = 4>>
!rows = tensor<64xf32, #attn_nv.rows<warps = 4>>

// 64x16 bf16: per thread two rows of two 8-column blocks, one pair each:
// 4 stores. Row g: values (0, 1) at column 2t, (4, 5) at 8 + 2t; row g + 8:
// (2, 3) and (6, 7).
// CHECK-LABEL: gpu.func @acc_tile
// CHECK-SAME: (%[[PTR:.*]]: !llvm.ptr<1>, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %[[SB:.*]]: i64, %[[SH:.*]]: i64, %[[SN:.*]]: i64, %{{.*}}: i64, %[[B:.*]]: index, %[[H:.*]]: index, %[[ROW:.*]]: index, %[[BOUND:.*]]: index, %{{.*}}: index)
// CHECK: %[[V:.*]]:8 = scf.for
// CHECK: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK: %[[R32:.*]] = arith.addi %{{.*}}, %{{.*}} : i32
// CHECK: %[[C32:.*]] = arith.muli %{{.*}}, %c2_i32 : i32
// CHECK: %[[R:.*]] = arith.index_castui %[[R32]] : i32 to index
// CHECK: %[[C:.*]] = arith.index_castui %[[C32]] : i32 to index
// CHECK: %[[FIRST:.*]] = arith.addi %[[ROW]], %[[R]] : index
// CHECK: %[[Q0:.*]] = arith.addi %[[FIRST]], %c0{{.*}} : index
// CHECK: %[[IN0:.*]] = arith.cmpi slt, %[[Q0]], %[[BOUND]] : index
// CHECK: scf.if %[[IN0]] {
// CHECK:   %[[NB:.*]] = arith.index_cast %[[SB]] : i64 to index
// CHECK:   arith.muli %[[B]], %[[NB]] : index
// CHECK:   %[[NH:.*]] = arith.index_cast %[[SH]] : i64 to index
// CHECK:   arith.muli %[[H]], %[[NH]] : index
// CHECK:   %[[NN:.*]] = arith.index_cast %[[SN]] : i64 to index
// CHECK:   arith.muli %[[Q0]], %[[NN]] : index
// CHECK:   %[[ROWOFF:.*]] = arith.addi %{{.*}}, %[[C]] : index
// CHECK:   llvm.insertelement %[[V]]#0
// CHECK:   %[[PAIR0:.*]] = llvm.insertelement %[[V]]#1
// CHECK:   %[[W0:.*]] = llvm.bitcast %[[PAIR0]] : vector<2xbf16> to i32
// CHECK:   %[[E0:.*]] = arith.addi %[[ROWOFF]], %c0{{.*}} : index
// CHECK:   %[[BY0:.*]] = arith.muli %[[E0]], %c2{{.*}} : index
// CHECK:   %[[BY0L:.*]] = arith.index_cast %[[BY0]] : index to i64
// CHECK:   %[[P0:.*]] = llvm.getelementptr %[[PTR]][%[[BY0L]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i8
// CHECK:   llvm.store %[[W0]], %[[P0]] {alignment = 4 : i64} : i32, !llvm.ptr<1>
// CHECK:   llvm.insertelement %[[V]]#4
// CHECK:   llvm.insertelement %[[V]]#5
// CHECK:   arith.addi %[[ROWOFF]], %c8{{.*}} : index
// CHECK:   llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : i32, !llvm.ptr<1>
// CHECK-NOT: llvm.store
// CHECK: }
// CHECK: %[[Q1:.*]] = arith.addi %[[FIRST]], %c8{{.*}} : index
// CHECK: %[[IN1:.*]] = arith.cmpi slt, %[[Q1]], %[[BOUND]] : index
// CHECK: scf.if %[[IN1]] {
// CHECK:   arith.muli %[[Q1]], %{{.*}} : index
// CHECK:   llvm.insertelement %[[V]]#2
// CHECK:   llvm.insertelement %[[V]]#3
// CHECK:   llvm.store
// CHECK:   llvm.insertelement %[[V]]#6
// CHECK:   llvm.insertelement %[[V]]#7
// CHECK:   llvm.store
// CHECK-NOT: llvm.store
// CHECK: }
// CHECK-NOT: llvm.store
// CHECK: gpu.return
func.func @acc_tile(%O: !o, %b: index, %h: index, %row: index, %bound: index, %n: index) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %o0 = arith.constant dense<1.0> : !acc
  %o = scf.for %it = %c0 to %n step %c1 iter_args(%x = %o0) -> (!acc) {
    scf.yield %x : !acc
  }
  attn.store_tile %o, %O[%b, %h, %row] bounds %bound : !acc, !o
  return
}

// f16 pairs are stored as i32 too; 128 rows over 4 warps: two m tiles, rows
// g, g + 8, 16 + g, 24 + g: 4 row branches of 2 stores.
// CHECK-LABEL: gpu.func @acc_tile_f16
// CHECK: %[[FIRST:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK: arith.addi %[[FIRST]], %c0{{.*}} : index
// CHECK: scf.if
// CHECK-COUNT-2: llvm.bitcast %{{.*}} : vector<2xf16> to i32
// CHECK: arith.addi %[[FIRST]], %c8{{.*}} : index
// CHECK: scf.if
// CHECK: arith.addi %[[FIRST]], %c16{{.*}} : index
// CHECK: scf.if
// CHECK: arith.addi %[[FIRST]], %c24{{.*}} : index
// CHECK: scf.if
// CHECK-COUNT-2: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : i32, !llvm.ptr<1>
// CHECK-NOT: llvm.store
// CHECK: gpu.return
func.func @acc_tile_f16(%O: !oh, %b: index, %h: index, %row: index, %bound: index, %n: index) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %o0 = arith.constant dense<1.0> : tensor<128x16xf16, #attn_nv.acc<warps = 4>>
  %o = scf.for %it = %c0 to %n step %c1 iter_args(%x = %o0) -> (tensor<128x16xf16, #attn_nv.acc<warps = 4>>) {
    scf.yield %x : tensor<128x16xf16, #attn_nv.acc<warps = 4>>
  }
  attn.store_tile %o, %O[%b, %h, %row] bounds %bound : tensor<128x16xf16, #attn_nv.acc<warps = 4>>, !oh
  return
}

// An f32 tile (split-KV's partial outputs): each pair as one 8-byte
// vector<2xf32> store, 4 bytes an element in the address.
// CHECK-LABEL: gpu.func @acc_tile_f32
// CHECK: %[[V:.*]]:8 = scf.for
// CHECK: scf.if
// CHECK:   %[[P0:.*]] = llvm.insertelement %[[V]]#0, %{{.*}}[%{{.*}} : i32] : vector<2xf32>
// CHECK:   %[[PAIR:.*]] = llvm.insertelement %[[V]]#1, %[[P0]][%{{.*}} : i32] : vector<2xf32>
// CHECK:   arith.muli %{{.*}}, %c4{{.*}} : index
// CHECK:   llvm.store %[[PAIR]], %{{.*}} {alignment = 8 : i64} : vector<2xf32>, !llvm.ptr<1>
// CHECK:   llvm.store %{{.*}}, %{{.*}} {alignment = 8 : i64} : vector<2xf32>, !llvm.ptr<1>
// CHECK-NOT: llvm.store
// CHECK: }
// CHECK: scf.if
// CHECK-COUNT-2: llvm.store %{{.*}}, %{{.*}} {alignment = 8 : i64} : vector<2xf32>, !llvm.ptr<1>
// CHECK-NOT: llvm.store
// CHECK: gpu.return
func.func @acc_tile_f32(%O: memref<?x?x?x16xf32, strided<[?, ?, ?, 1], offset: ?>>, %b: index, %h: index, %row: index, %bound: index, %n: index) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %o0 = arith.constant dense<1.0> : tensor<64x16xf32, #attn_nv.acc<warps = 4>>
  %o = scf.for %it = %c0 to %n step %c1 iter_args(%x = %o0) -> (tensor<64x16xf32, #attn_nv.acc<warps = 4>>) {
    scf.yield %x : tensor<64x16xf32, #attn_nv.acc<warps = 4>>
  }
  attn.store_tile %o, %O[%b, %h, %row] bounds %bound : tensor<64x16xf32, #attn_nv.acc<warps = 4>>, memref<?x?x?x16xf32, strided<[?, ?, ?, 1], offset: ?>>
  return
}

// Accumulating (the atomic backward's dQ parts; sm_90 and newer): per row
// under its bound, one relaxed vector reduction per pair of adjacent
// columns (red.global.add.v2.f32 at element offset c: c and c + 1; nothing
// waits on it, no plain store), and the gpu.module records that its PTX
// needs PTX ISA 8.1.
// MODULE: gpu.module @attn_kernels attributes {attn.min_ptx_version = 81 : i32}
// CHECK-LABEL: gpu.func @acc_tile_accumulate
// CHECK: %[[V:.*]]:8 = scf.for
// CHECK: scf.if
// CHECK:   %[[C0:.*]] = arith.addi %{{.*}}, %c0{{.*}} : index
// CHECK:   arith.muli %[[C0]], %c4{{.*}} : index
// CHECK:   %[[P0:.*]] = llvm.getelementptr
// CHECK:   llvm.inline_asm has_side_effects "red.relaxed.gpu.global.add.v2.f32 [$0], {$1, $2};", "l,f,f" %[[P0]], %[[V]]#0, %[[V]]#1 : (!llvm.ptr<1>, f32, f32) -> ()
// CHECK:   %[[C8:.*]] = arith.addi %{{.*}}, %c8{{.*}} : index
// CHECK:   arith.muli %[[C8]], %c4{{.*}} : index
// CHECK:   %[[P8:.*]] = llvm.getelementptr
// CHECK:   llvm.inline_asm has_side_effects "red.relaxed.gpu.global.add.v2.f32 [$0], {$1, $2};", "l,f,f" %[[P8]], %[[V]]#4, %[[V]]#5
// CHECK-NOT: llvm.store
// CHECK-NOT: llvm.atomicrmw
// CHECK-NOT: llvm.inline_asm
// CHECK: }
// CHECK: scf.if
// CHECK-COUNT-2: llvm.inline_asm has_side_effects "red.relaxed.gpu.global.add.v2.f32
// CHECK-NOT: llvm.store
// CHECK-NOT: llvm.atomicrmw
// CHECK: gpu.return
func.func @acc_tile_accumulate(%O: memref<?x?x?x16xf32, strided<[?, ?, ?, 1], offset: ?>>, %b: index, %h: index, %row: index, %bound: index, %n: index) attributes {attn.config = #cfg90} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %o0 = arith.constant dense<1.0> : tensor<64x16xf32, #attn_nv.acc<warps = 4>>
  %o = scf.for %it = %c0 to %n step %c1 iter_args(%x = %o0) -> (tensor<64x16xf32, #attn_nv.acc<warps = 4>>) {
    scf.yield %x : tensor<64x16xf32, #attn_nv.acc<warps = 4>>
  }
  attn.store_tile %o, %O[%b, %h, %row] accumulate bounds %bound : tensor<64x16xf32, #attn_nv.acc<warps = 4>>, memref<?x?x?x16xf32, strided<[?, ?, ?, 1], offset: ?>>
  return
}

// A part split over the head dim (col_groups = 2 over 8 warps): warp w holds
// rows 16 (w mod 4) + lane / 4 (and + 8) and columns 64 (w / 4) + 2 (lane
// mod 4) + 8n, n < 8: 8 reductions per row, 16 in all.
#cfg90w8 = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 64, warps = 8, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
// CHECK-LABEL: gpu.func @acc_tile_accumulate_column_groups
// CHECK: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK: %[[WARP:.*]] = arith.divui %[[TID]], %c32_i32 : i32
// CHECK: %[[LANE:.*]] = arith.remui %[[TID]], %c32_i32{{.*}} : i32
// CHECK: %[[QUAD:.*]] = arith.divui %[[LANE]], %c4_i32 : i32
// CHECK: %[[RW:.*]] = arith.remui %[[WARP]], %c4_i32{{.*}} : i32
// CHECK: %[[R16:.*]] = arith.muli %[[RW]], %c16_i32 : i32
// CHECK: arith.addi %[[R16]], %[[QUAD]] : i32
// CHECK: %[[PAIR:.*]] = arith.muli %{{.*}}, %c2_i32 : i32
// CHECK: %[[GROUP:.*]] = arith.divui %[[WARP]], %c4_i32{{.*}} : i32
// CHECK: %[[G64:.*]] = arith.muli %[[GROUP]], %c64_i32 : i32
// CHECK: arith.addi %[[PAIR]], %[[G64]] : i32
// CHECK: scf.if
// CHECK-COUNT-8: red.relaxed.gpu.global.add.v2.f32
// CHECK: scf.if
// CHECK-COUNT-8: red.relaxed.gpu.global.add.v2.f32
// CHECK-NOT: red.relaxed
// CHECK: gpu.return
func.func @acc_tile_accumulate_column_groups(%O: memref<?x?x?x128xf32, strided<[?, ?, ?, 1], offset: ?>>, %b: index, %h: index, %row: index, %bound: index) attributes {attn.config = #cfg90w8} {
  %o = arith.constant dense<1.0> : tensor<64x128xf32, #attn_nv.acc<warps = 8, col_groups = 2>>
  attn.store_tile %o, %O[%b, %h, %row] accumulate bounds %bound : tensor<64x128xf32, #attn_nv.acc<warps = 8, col_groups = 2>>, memref<?x?x?x128xf32, strided<[?, ?, ?, 1], offset: ?>>
  return
}

// The LSE: the quad leader (lane % 4 == 0) stores each of its two rows
// when the pointer is not null and the row is inside the bound.
// CHECK-LABEL: gpu.func @lse_rows
// CHECK-SAME: (%[[PTR:.*]]: !llvm.ptr<1>, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %[[SN:.*]]: i64, %[[B:.*]]: index, %[[H:.*]]: index, %[[ROW:.*]]: index, %[[BOUND:.*]]: index, %{{.*}}: index)
// CHECK: %[[V:.*]]:2 = scf.for
// CHECK: %[[FIRST:.*]] = arith.addi %[[ROW]], %{{.*}} : index
// CHECK: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK: %[[T:.*]] = arith.remui %[[TID]], %c4_i32{{.*}} : i32
// CHECK: %[[LEADER:.*]] = arith.cmpi eq, %[[T]], %c0_i32 : i32
// CHECK: %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr<1>
// CHECK: %[[GIVEN:.*]] = llvm.icmp "ne" %[[PTR]], %[[NULL]] : !llvm.ptr<1>
// CHECK: %[[GUARD:.*]] = arith.andi %[[LEADER]], %[[GIVEN]] : i1
// CHECK: %[[Q0:.*]] = arith.addi %[[FIRST]], %c0{{.*}} : index
// CHECK: %[[IN0:.*]] = arith.cmpi slt, %[[Q0]], %[[BOUND]] : index
// CHECK: %[[GO0:.*]] = arith.andi %[[IN0]], %[[GUARD]] : i1
// CHECK: scf.if %[[GO0]] {
// CHECK:   %[[NN:.*]] = arith.index_cast %[[SN]] : i64 to index
// CHECK:   arith.muli %[[Q0]], %[[NN]] : index
// CHECK:   %[[BY:.*]] = arith.muli %{{.*}}, %c4 : index
// CHECK:   %[[BYL:.*]] = arith.index_cast %[[BY]] : index to i64
// CHECK:   %[[P:.*]] = llvm.getelementptr %[[PTR]][%[[BYL]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i8
// CHECK:   llvm.store %[[V]]#0, %[[P]] {alignment = 4 : i64} : f32, !llvm.ptr<1>
// CHECK: }
// CHECK: %[[Q1:.*]] = arith.addi %[[FIRST]], %c8{{.*}} : index
// CHECK: %[[IN1:.*]] = arith.cmpi slt, %[[Q1]], %[[BOUND]] : index
// CHECK: %[[GO1:.*]] = arith.andi %[[IN1]], %[[GUARD]] : i1
// CHECK: scf.if %[[GO1]] {
// CHECK:   llvm.store %[[V]]#1, %{{.*}} {alignment = 4 : i64} : f32, !llvm.ptr<1>
// CHECK: }
// CHECK-NOT: llvm.store
// CHECK: gpu.return
func.func @lse_rows(%L: !lse, %b: index, %h: index, %row: index, %bound: index, %n: index) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %l0 = arith.constant dense<1.0> : !rows
  %l = scf.for %it = %c0 to %n step %c1 iter_args(%x = %l0) -> (!rows) {
    scf.yield %x : !rows
  }
  attn.store_tile %l, %L[%b, %h, %row] bounds %bound : !rows, !lse
  return
}

// Packed heads: packed row q lies in head h + q / rows_per_head, row
// q mod rows_per_head, found per row.
// CHECK-LABEL: gpu.func @packed_rows
// CHECK-SAME: %[[H:[[:alnum:]]+]]: index, %[[ROW:[[:alnum:]]+]]: index, %[[BOUND:[[:alnum:]]+]]: index, %[[RPH:[[:alnum:]]+]]: index)
// CHECK: %[[FIRST:.*]] = arith.addi %[[ROW]], %{{.*}} : index
// CHECK: %[[Q0:.*]] = arith.addi %[[FIRST]], %c0{{.*}} : index
// CHECK: scf.if
// CHECK:   %[[N0:.*]] = arith.remui %[[Q0]], %[[RPH]] : index
// CHECK:   %[[D0:.*]] = arith.divui %[[Q0]], %[[RPH]] : index
// CHECK:   %[[H0:.*]] = arith.addi %[[H]], %[[D0]] : index
// CHECK:   arith.muli %[[H0]], %{{.*}} : index
// CHECK:   arith.muli %[[N0]], %{{.*}} : index
// CHECK:   llvm.store
// CHECK: %[[Q1:.*]] = arith.addi %[[FIRST]], %c8{{.*}} : index
// CHECK: scf.if
// CHECK:   arith.remui %[[Q1]], %[[RPH]] : index
// CHECK:   arith.divui %[[Q1]], %[[RPH]] : index
// CHECK:   llvm.store
func.func @packed_rows(%O: !o, %b: index, %h: index, %row: index, %bound: index, %rph: index) attributes {attn.config = #cfg} {
  %o = arith.constant dense<1.0> : !acc
  attn.store_tile %o, %O[%b, %h, %row] rows_per_head %rph bounds %bound : !acc, !o
  return
}

// Packed heads of one sequence of a packed batch: row start + q mod
// rows_per_head of head h + q / rows_per_head.
// CHECK-LABEL: gpu.func @packed_rows_from
// CHECK-SAME: %[[H:[[:alnum:]]+]]: index, %[[ROW:[[:alnum:]]+]]: index, %[[BOUND:[[:alnum:]]+]]: index, %[[RPH:[[:alnum:]]+]]: index, %[[START:[[:alnum:]]+]]: index)
// CHECK: %[[FIRST:.*]] = arith.addi %[[ROW]], %{{.*}} : index
// CHECK: %[[Q0:.*]] = arith.addi %[[FIRST]], %c0{{.*}} : index
// CHECK: scf.if
// CHECK:   %[[N0:.*]] = arith.remui %[[Q0]], %[[RPH]] : index
// CHECK:   %[[D0:.*]] = arith.divui %[[Q0]], %[[RPH]] : index
// CHECK:   %[[H0:.*]] = arith.addi %[[H]], %[[D0]] : index
// CHECK:   %[[S0:.*]] = arith.addi %[[START]], %[[N0]] : index
// CHECK:   arith.muli %[[H0]], %{{.*}} : index
// CHECK:   arith.muli %[[S0]], %{{.*}} : index
// CHECK:   llvm.store
func.func @packed_rows_from(%O: !o, %b: index, %h: index, %row: index, %bound: index, %rph: index, %start: index) attributes {attn.config = #cfg} {
  %o = arith.constant dense<1.0> : !acc
  attn.store_tile %o, %O[%b, %h, %row] rows_per_head %rph start %start bounds %bound : !acc, !o
  return
}

// attn.load_tile into registers: row terms as a 1x16 #attn_nv.cols tile.
// Each lane loads the two sequence positions row + 8 (lane / 4) + 2 (lane %
// 4) + e, at element offset b·s0 + h·s1 + n·s2; branch-free: the position
// is clamped to the last row and a value past the bound selected to zero.
// No shuffle here: the maps that broadcast the tile over an acc tile move
// each column to its lanes where they use it (elementwise.mlir).
!lsecols = tensor<1x16xf32, #attn_nv.cols<warps = 4>>
// CHECK-LABEL: gpu.func @cols_load
// CHECK-SAME: (%[[PTR:.*]]: !llvm.ptr<1>, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %[[S0:.*]]: i64, %[[S1:.*]]: i64, %[[S2:.*]]: i64, %[[B:.*]]: index, %[[H:.*]]: index, %[[ROW:.*]]: index, %[[BOUND:.*]]: index
// CHECK: %[[BM1:.*]] = arith.subi %[[BOUND]], %{{.*}} : index
// CHECK: %[[LAST:.*]] = arith.maxsi %[[BM1]], %{{.*}} : index
// CHECK: nvvm.read.ptx.sreg.tid.x : i32
// CHECK: %[[QC:.*]] = arith.muli %{{.*}}, %c8_i32 : i32
// CHECK: %[[PC:.*]] = arith.muli %{{.*}}, %c2_i32 : i32
// CHECK: %[[LC:.*]] = arith.addi %[[QC]], %[[PC]] : i32
// CHECK: %[[LCI:.*]] = arith.index_castui %[[LC]] : i32 to index
// CHECK: %[[C0:.*]] = arith.addi %[[LCI]], %c0{{.*}} : index
// CHECK: %[[N:.*]] = arith.addi %[[ROW]], %[[C0]] : index
// CHECK: %[[IN:.*]] = arith.cmpi slt, %[[N]], %[[BOUND]] : index
// CHECK: %[[CL:.*]] = arith.minsi %[[N]], %[[LAST]] : index
// CHECK: arith.muli %[[B]], %{{.*}} : index
// CHECK: arith.muli %[[H]], %{{.*}} : index
// CHECK: arith.muli %[[CL]], %{{.*}} : index
// CHECK: %[[V0:.*]] = llvm.load %{{.*}} invariant {alignment = 4 : i64} : !llvm.ptr<1> -> f32
// CHECK: arith.select %[[IN]], %[[V0]], %{{.*}} : f32
// CHECK: %[[C1:.*]] = arith.addi %[[LCI]], %c1{{.*}} : index
// CHECK: arith.addi %[[ROW]], %[[C1]] : index
// CHECK: %[[V1:.*]] = llvm.load
// CHECK: arith.select %{{.*}}, %[[V1]], %{{.*}} : f32
// CHECK-NOT: llvm.load
// CHECK-NOT: nvvm.shfl.sync
// CHECK-NOT: scf.if
// CHECK: gpu.return
func.func @cols_load(%L: !lse, %b: index, %h: index, %row: index, %bound: index) attributes {attn.config = #cfg} {
  %t = attn.load_tile %L[%b, %h, %row] bounds %bound : !lse -> !lsecols
  return
}
