// RUN: attn-opt %s --convert-attn-nv-to-nvvm | FileCheck %s

// A shared buffer is its byte offset from the aligned base; a slot adds
// (index mod stages) tiles; attn_nv.copy_async is every thread issuing
// cp.async.cg of 16-byte chunks (thread t: chunks t, t + threads, ...),
// zero-filling (0 source bytes, from a valid address) rows at or past the
// bound and columns past the head dim: such a chunk reads from the tile's
// first row (offset 0), or from the tensor's base when the whole tile is
// past the bound.

#mma = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 64, block_n = 32, warps = 4, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
#wg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 64, block_n = 64, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = true, conditional_rescale = false>
!t64 = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!t40 = memref<?x?x?x40xbf16, strided<[?, ?, ?, 1], offset: ?>>
!t128 = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!t96 = memref<?x?x?x96xbf16, strided<[?, ?, ?, 1], offset: ?>>

// 3 stages of 32 padded rows of 64 bf16 (+16 bytes: 144-byte rows, 4608
// bytes a tile) at byte 4096; 32 rows x 8 chunks = 256 chunks: two per
// thread of 128, no bounds check on the chunk index.
// CHECK-LABEL: gpu.func @padded
// CHECK-SAME: (%[[PTR:.*]]: !llvm.ptr<1>, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %[[SB:.*]]: i64, %[[SH:.*]]: i64, %[[SN:.*]]: i64, %{{.*}}: i64, %[[B:.*]]: index, %[[H:.*]]: index, %[[ROW:.*]]: index, %[[BOUND:.*]]: index, %[[I:.*]]: index)
// CHECK: %[[BUF:.*]] = arith.constant 4096 : i32
// CHECK: %[[I32:.*]] = arith.index_castui %[[I]] : index to i32
// CHECK: %[[STAGE:.*]] = arith.remui %[[I32]], %c3_i32 : i32
// CHECK: %[[SKIP:.*]] = arith.muli %[[STAGE]], %c4608_i32 : i32
// CHECK: %[[TILE:.*]] = arith.addi %[[BUF]], %[[SKIP]] : i32
// CHECK: %[[SMEM:.*]] = llvm.mlir.addressof @attn_smem : !llvm.ptr<3>
// CHECK-NOT: arith.andi %{{.*}}, %c1023_i32
// The tile's first row: batch, head, row times their strides, in bytes.
// CHECK-DAG: %[[N:.*]] = arith.index_cast %[[SN]] : i64 to index
// CHECK-DAG: arith.muli %[[ROW]], %[[N]] : index
// CHECK-DAG: arith.muli %[[H]], %{{.*}} : index
// CHECK-DAG: arith.muli %[[B]], %{{.*}} : index
// CHECK: %[[FIRST:.*]] = arith.muli %{{.*}}, %c2 : index
// CHECK: %[[FIRST64:.*]] = arith.index_cast %[[FIRST]] : index to i64
// CHECK: %[[FIRSTROW:.*]] = llvm.getelementptr %[[PTR]][%[[FIRST64]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i8
// CHECK: %[[STARTS:.*]] = arith.cmpi slt, %[[ROW]], %[[BOUND]] : index
// CHECK: %[[BASE:.*]] = arith.select %[[STARTS]], %[[FIRSTROW]], %[[PTR]] : !llvm.ptr<1>
// CHECK: %[[STRIDE:.*]] = arith.trunci %[[SN]] : i64 to i32
// CHECK: %[[LEFT64:.*]] = arith.subi %[[BOUND]], %[[ROW]] : index
// CHECK: %[[LEFT:.*]] = arith.index_cast %[[LEFT64]] : index to i32
// CHECK: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK: %[[CHUNK:.*]] = arith.addi %[[TID]], %c0_i32
// CHECK: %[[R:.*]] = arith.divui %[[CHUNK]], %c8_i32
// CHECK: %[[C:.*]] = arith.remui %[[CHUNK]], %c8_i32
// CHECK: %[[CB:.*]] = arith.muli %[[C]], %c16_i32
// CHECK: %[[RB:.*]] = arith.muli %[[R]], %c144_i32
// CHECK: %[[OFF:.*]] = arith.addi %[[RB]], %[[CB]] : i32
// CHECK: %[[DST:.*]] = arith.addi %[[TILE]], %[[OFF]] : i32
// CHECK: %[[INR:.*]] = arith.cmpi slt, %[[R]], %[[LEFT]] : i32
// CHECK: %[[INC:.*]] = arith.cmpi ult, %[[C]], %c8_i32{{.*}} : i32
// CHECK: %[[VALID:.*]] = arith.andi %[[INR]], %[[INC]] : i1
// CHECK: %[[RS:.*]] = arith.muli %[[R]], %[[STRIDE]] : i32
// CHECK: %[[RSB:.*]] = arith.muli %[[RS]], %c2_i32
// CHECK: %[[BYTES:.*]] = arith.addi %[[RSB]], %{{.*}} : i32
// CHECK: %[[SAFE:.*]] = arith.select %[[VALID]], %[[BYTES]], %c0_i32{{.*}} : i32
// CHECK: %[[FROM:.*]] = llvm.getelementptr %[[BASE]][%[[SAFE]]] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i8
// CHECK: %[[SIZE:.*]] = arith.select %[[VALID]], %c16_i32{{.*}}, %c0_i32{{.*}} : i32
// CHECK: %[[TO:.*]] = llvm.getelementptr %[[SMEM]][%[[DST]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK: nvvm.cp.async.shared.global %[[TO]], %[[FROM]], 16, cache = cg, %[[SIZE]] : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK: arith.addi %[[TID]], %c128_i32
// CHECK: nvvm.cp.async.shared.global
// CHECK-NOT: nvvm.cp.async.shared.global
// CHECK-NOT: scf.if
// CHECK: nvvm.cp.async.commit.group
func.func @padded(%K: !t64, %b: index, %h: index, %row: index, %bound: index, %i: index) attributes {attn.config = #mma} {
  %buf = attn_nv.alloc_shared {offset = 4096} : !attn_nv.smem<3x32x64xbf16, padded>
  %k = attn_nv.slot %buf[%i] : !attn_nv.smem<3x32x64xbf16, padded> -> !attn_nv.smem<32x64xbf16, padded>
  attn_nv.copy_async %K[%b, %h, %row] bounds %bound into %k : !t64, !attn_nv.smem<32x64xbf16, padded>
  nvvm.cp.async.commit.group
  return
}

// A head dim of 40: rows padded to 48 columns (112 bytes with the 16 extra),
// 6 chunks a row of which the 6th is zero-filled; 24 rows: 144 chunks, so
// the second round (chunks 128-255) checks the chunk index.
// CHECK-LABEL: gpu.func @partial_round
// CHECK: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK: %[[C0:.*]] = arith.addi %[[TID]], %c0_i32
// CHECK: arith.divui %[[C0]], %c6_i32
// CHECK: %[[COL:.*]] = arith.remui %[[C0]], %c6_i32
// CHECK: arith.muli %{{.*}}, %c112_i32
// CHECK: arith.cmpi ult, %[[COL]], %c5_i32 : i32
// CHECK: nvvm.cp.async.shared.global
// CHECK: %[[C1:.*]] = arith.addi %[[TID]], %c128_i32
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[C1]], %c144_i32 : i32
// CHECK: scf.if %[[IN]] {
// CHECK:   arith.divui %[[C1]], %c6_i32
// CHECK:   nvvm.cp.async.shared.global
// CHECK: }
// CHECK-NOT: nvvm.cp.async.shared.global
// CHECK: gpu.return
func.func @partial_round(%V: !t40, %b: index, %h: index, %row: index, %bound: index) attributes {attn.config = #mma} {
  %v = attn_nv.alloc_shared {offset = 0} : !attn_nv.smem<24x40xbf16, padded>
  attn_nv.copy_async %V[%b, %h, %row] bounds %bound into %v : !t40, !attn_nv.smem<24x40xbf16, padded>
  return
}

// wgmma kernels align the shared base to 1024 bytes for the 128-byte
// swizzle. 64 rows of 128 bf16: two 64-column blocks of 64 x 128 bytes;
// chunk c of row r at block c / 8, chunk (c % 8) ^ (r % 8). Packed heads
// (rows_per_head): each row finds its own head and row, head + p / rph and
// p mod rph for packed row p = row + r. 1024 chunks: 8 rounds.
// CHECK-LABEL: gpu.func @swizzled_packed
// CHECK-SAME: %[[PTR:[[:alnum:]]+]]: !llvm.ptr<1>
// CHECK-SAME: %[[B:[[:alnum:]]+]]: index, %[[H:[[:alnum:]]+]]: index, %[[ROW:[[:alnum:]]+]]: index, %[[BOUND:[[:alnum:]]+]]: index, %[[RPH:[[:alnum:]]+]]: index)
// CHECK: %[[BUF:.*]] = arith.constant 1024 : i32
// CHECK: %[[SMEM:.*]] = llvm.mlir.addressof @attn_smem : !llvm.ptr<3>
// CHECK: %[[ADDR:.*]] = llvm.ptrtoint %[[SMEM]] : !llvm.ptr<3> to i32
// CHECK: %[[NEG:.*]] = arith.subi %c0_i32{{.*}}, %[[ADDR]] : i32
// CHECK: %[[PAD:.*]] = arith.andi %[[NEG]], %c1023_i32 : i32
// CHECK: %[[ALIGNED:.*]] = llvm.getelementptr %[[SMEM]][%[[PAD]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK: %[[CHUNK:.*]] = arith.addi %[[TID]], %c0_i32
// CHECK: %[[R:.*]] = arith.divui %[[CHUNK]], %c16_i32
// CHECK: %[[C:.*]] = arith.remui %[[CHUNK]], %c16_i32
// CHECK: %[[BLOCK:.*]] = arith.divui %[[C]], %c8_i32
// CHECK: %[[IN:.*]] = arith.remui %[[C]], %c8_i32
// CHECK: %[[R8:.*]] = arith.andi %[[R]], %c7_i32 : i32
// CHECK: %[[SWZ:.*]] = arith.xori %[[IN]], %[[R8]] : i32
// CHECK: arith.muli %[[BLOCK]], %c8192_i32 : i32
// CHECK: arith.muli %[[R]], %c128_i32 : i32
// CHECK: arith.muli %[[SWZ]], %c16_i32{{.*}} : i32
// CHECK: %[[DST:.*]] = arith.addi %[[BUF]], %{{.*}} : i32
// CHECK: arith.cmpi ult, %[[C]], %c16_i32{{.*}} : i32
// CHECK: %[[R64:.*]] = arith.index_castui %[[R]] : i32 to index
// CHECK: %[[P:.*]] = arith.addi %[[ROW]], %[[R64]] : index
// CHECK: %[[N:.*]] = arith.remui %[[P]], %[[RPH]] : index
// CHECK: %[[DH:.*]] = arith.divui %[[P]], %[[RPH]] : index
// CHECK: %[[HEAD:.*]] = arith.addi %[[H]], %[[DH]] : index
// CHECK-DAG: arith.muli %[[B]], %{{.*}} : index
// CHECK-DAG: arith.muli %[[HEAD]], %{{.*}} : index
// CHECK-DAG: arith.muli %[[N]], %{{.*}} : index
// CHECK: %[[SRC:.*]] = llvm.getelementptr %[[PTR]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i8
// CHECK: %[[FROM:.*]] = arith.select %{{.*}}, %[[SRC]], %[[PTR]] : !llvm.ptr<1>
// CHECK: %[[TO:.*]] = llvm.getelementptr %[[ALIGNED]][%[[DST]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK: nvvm.cp.async.shared.global %[[TO]], %[[FROM]], 16, cache = cg, %{{.*}} : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK-COUNT-7: nvvm.cp.async.shared.global
// CHECK-NOT: nvvm.cp.async.shared.global
// CHECK-NOT: scf.if
// CHECK: gpu.return
func.func @swizzled_packed(%Q: !t128, %b: index, %h: index, %row: index, %bound: index, %rph: index) attributes {attn.config = #wg} {
  %q = attn_nv.alloc_shared {offset = 1024} : !attn_nv.smem<64x128xbf16, swizzle_128b>
  attn_nv.copy_async %Q[%b, %h, %row] rows_per_head %rph bounds %bound into %q : !t128, !attn_nv.smem<64x128xbf16, swizzle_128b>
  return
}

// Packed heads of one sequence of a packed batch (start): each row's
// position is start + p mod rph.
// CHECK-LABEL: gpu.func @swizzled_packed_from
// CHECK-SAME: %[[B:[[:alnum:]]+]]: index, %[[H:[[:alnum:]]+]]: index, %[[ROW:[[:alnum:]]+]]: index, %[[BOUND:[[:alnum:]]+]]: index, %[[RPH:[[:alnum:]]+]]: index, %[[START:[[:alnum:]]+]]: index)
// CHECK: %[[R64:.*]] = arith.index_castui %{{.*}} : i32 to index
// CHECK: %[[P:.*]] = arith.addi %[[ROW]], %[[R64]] : index
// CHECK: %[[N:.*]] = arith.remui %[[P]], %[[RPH]] : index
// CHECK: %[[DH:.*]] = arith.divui %[[P]], %[[RPH]] : index
// CHECK: %[[HEAD:.*]] = arith.addi %[[H]], %[[DH]] : index
// CHECK: %[[AT:.*]] = arith.addi %[[START]], %[[N]] : index
// CHECK-DAG: arith.muli %[[HEAD]], %{{.*}} : index
// CHECK-DAG: arith.muli %[[AT]], %{{.*}} : index
// CHECK: nvvm.cp.async.shared.global
func.func @swizzled_packed_from(%Q: !t128, %b: index, %h: index, %row: index, %bound: index, %rph: index, %start: index) attributes {attn.config = #wg} {
  %q = attn_nv.alloc_shared {offset = 1024} : !attn_nv.smem<64x128xbf16, swizzle_128b>
  attn_nv.copy_async %Q[%b, %h, %row] rows_per_head %rph start %start bounds %bound into %q : !t128, !attn_nv.smem<64x128xbf16, swizzle_128b>
  return
}

// A paged cache (pages of 16 rows): each chunk's row finds its page in row
// %b of the block table, read through the read-only cache; the table
// column is clamped to the table's columns and the page number to the
// cache's pages (so rows past the bound read valid entries too, and copy 0
// bytes); the address is 64-bit from the page, head and row in the page.
// CHECK-LABEL: gpu.func @paged
// CHECK-SAME: (%[[PTR:[^:]*]]: !llvm.ptr<1>, %[[PAGES:[^:]*]]: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %[[SP:[^:]*]]: i64, %[[SH:[^:]*]]: i64, %[[SN:[^:]*]]: i64, %{{[^:]*}}: i64, %[[TPTR:[^:]*]]: !llvm.ptr<1>, %{{[^:]*}}: i64, %[[COLS:[^:]*]]: i64, %[[TS0:[^:]*]]: i64, %[[TS1:[^:]*]]: i64, %[[B:[^:]*]]: index, %[[H:[^:]*]]: index, %[[ROW:[^:]*]]: index, %[[BOUND:[^:]*]]: index)
// CHECK: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK: %[[R64:.*]] = arith.index_castui %{{.*}} : i32 to index
// CHECK: %[[J:.*]] = arith.addi %[[ROW]], %[[R64]] : index
// CHECK: %[[NCOLS:.*]] = arith.index_cast %[[COLS]] : i64 to index
// CHECK: %[[COL:.*]] = arith.divui %[[J]], %{{.*}} : index
// CHECK: %[[LASTCOL:.*]] = arith.subi %[[NCOLS]], %{{.*}} : index
// CHECK: %[[CCOL:.*]] = arith.minsi %[[COL]], %[[LASTCOL]] : index
// CHECK: %[[INPAGE:.*]] = arith.remui %[[J]], %{{.*}} : index
// CHECK: arith.muli %[[B]], %{{.*}} : index
// CHECK: arith.muli %[[CCOL]], %{{.*}} : index
// CHECK: %[[AT:.*]] = llvm.getelementptr %[[TPTR]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i32
// CHECK: %[[E:.*]] = llvm.load %[[AT]] invariant {alignment = 4 : i64} : !llvm.ptr<1> -> i32
// CHECK: %[[P:.*]] = arith.index_cast %[[E]] : i32 to index
// CHECK: %[[NPAGES:.*]] = arith.index_cast %[[PAGES]] : i64 to index
// CHECK: %[[LAST:.*]] = arith.subi %[[NPAGES]], %{{.*}} : index
// CHECK: %[[LO:.*]] = arith.minsi %[[P]], %[[LAST]] : index
// CHECK: %[[PAGE:.*]] = arith.maxsi %[[LO]], %{{.*}} : index
// CHECK: arith.muli %[[PAGE]], %{{.*}} : index
// CHECK: arith.muli %[[H]], %{{.*}} : index
// CHECK: arith.muli %[[INPAGE]], %{{.*}} : index
// CHECK: %[[SRC:.*]] = llvm.getelementptr %[[PTR]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i8
// CHECK: %[[FROM:.*]] = arith.select %{{.*}}, %[[SRC]], %[[PTR]] : !llvm.ptr<1>
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %[[FROM]], 16, cache = cg, %{{.*}} : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK: nvvm.cp.async.shared.global
// CHECK-NOT: nvvm.cp.async.shared.global
// CHECK: gpu.return
func.func @paged(%K: memref<?x?x16x64xbf16, strided<[?, ?, ?, 1], offset: ?>>, %bt: memref<?x?xi32, strided<[?, ?], offset: ?>>, %b: index, %h: index, %row: index, %bound: index) attributes {attn.config = #mma} {
  %k = attn_nv.alloc_shared {offset = 0} : !attn_nv.smem<32x64xbf16, padded>
  attn_nv.copy_async %K[%b, %h, %row] pages(%bt : memref<?x?xi32, strided<[?, ?], offset: ?>>) bounds %bound into %k : memref<?x?x16x64xbf16, strided<[?, ?, ?, 1], offset: ?>>, !attn_nv.smem<32x64xbf16, padded>
  return
}

// A head dim of 96 (wgmma): rows stored in two 64-column blocks, the second
// half used. Only the row's own 12 chunks are copied (chunks 8-11 into
// block 1, 64 rows x 128 bytes on); the unused half of block 1 is never
// written: 64 rows x 12 chunks = 768, six full rounds of 128 threads.
// CHECK-LABEL: gpu.func @swizzled_partial_block
// CHECK: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK: %[[CHUNK:.*]] = arith.addi %[[TID]], %c0_i32
// CHECK: %[[R:.*]] = arith.divui %[[CHUNK]], %c12_i32
// CHECK: %[[C:.*]] = arith.remui %[[CHUNK]], %c12_i32
// CHECK: %[[BLOCK:.*]] = arith.divui %[[C]], %c8_i32
// CHECK: arith.muli %[[BLOCK]], %c8192_i32 : i32
// CHECK: arith.cmpi ult, %[[C]], %c12_i32{{.*}} : i32
// CHECK: nvvm.cp.async.shared.global
// CHECK-COUNT-5: nvvm.cp.async.shared.global
// CHECK-NOT: nvvm.cp.async.shared.global
// CHECK-NOT: scf.if
// CHECK: gpu.return
func.func @swizzled_partial_block(%K: !t96, %b: index, %h: index, %row: index, %bound: index) attributes {attn.config = #wg} {
  %k = attn_nv.alloc_shared {offset = 1024} : !attn_nv.smem<64x96xbf16, swizzle_128b>
  attn_nv.copy_async %K[%b, %h, %row] bounds %bound into %k : !t96, !attn_nv.smem<64x96xbf16, swizzle_128b>
  return
}

// attn_nv.store_shared: each thread's pairs of adjacent columns, rounded to
// bf16 together (one cvt of a vector<2xf32>), as one 4-byte store at the
// swizzled place: row r (16·warp + lane/4 + 8·half), 16-byte chunk
// col / 8 at chunk ^ (r mod 8), (col mod 8)·2 bytes into it. A thread's
// pairs share r mod 8 and col mod 8, so one address Y (its first pair's,
// with 16 (r mod 8) added) serves them all: pair i at
// (Y ^ 16 (chunk_i mod 8)) + 128 (row_i - row_0), the XOR inside the
// store's PTX (LLVM hoisted each pair's own address out of the backward's
// K/V loop). 64x16 f32 over 4 warps: 8 values a thread, 4 stores (chunks
// 0 and 1, rows r and r + 8).
// CHECK-LABEL: gpu.func @store_shared
// CHECK: %[[SMEM:.*]] = llvm.mlir.addressof @attn_smem : !llvm.ptr<3>
// CHECK: %[[ADDR:.*]] = llvm.ptrtoint %[[SMEM]]
// CHECK: %[[ALIGNED:.*]] = arith.addi %[[ADDR]], %{{.*}} : i32
// CHECK: %[[R:.*]] = arith.addi %{{.*}}, %{{.*}} : i32
// CHECK: %[[RI:.*]] = arith.index_castui %[[R]] : i32 to index
// CHECK: %[[ROW:.*]] = arith.index_cast %[[RI]] : index to i32
// CHECK: %[[COL:.*]] = arith.index_cast %{{.*}} : index to i32
// CHECK: %[[RB:.*]] = arith.muli %[[ROW]], %c128_i32 : i32
// CHECK: %[[CB:.*]] = arith.muli %[[COL]], %c2_i32{{.*}} : i32
// CHECK: %[[R7:.*]] = arith.andi %[[ROW]], %c7_i32 : i32
// CHECK: %[[SW:.*]] = arith.muli %[[R7]], %c16_i32{{.*}} : i32
// CHECK: %[[Y0:.*]] = arith.addi %[[ALIGNED]], %c0_i32 : i32
// CHECK: %[[Y1:.*]] = arith.addi %[[Y0]], %[[RB]] : i32
// CHECK: %[[Y2:.*]] = arith.addi %[[Y1]], %[[CB]] : i32
// CHECK: %[[Y:.*]] = arith.addi %[[Y2]], %[[SW]] : i32
// CHECK: %[[PAIR:.*]] = llvm.fptrunc %{{.*}} : vector<2xf32> to vector<2xbf16>
// CHECK: %[[W:.*]] = llvm.bitcast %[[PAIR]] : vector<2xbf16> to i32
// CHECK: llvm.inline_asm has_side_effects "{\0A.reg .b32 a;\0Axor.b32 a, $0, 0;\0Ast.shared.b32 [a+0], $1;\0A}", "r,r" %[[Y]], %[[W]]
// CHECK: llvm.inline_asm has_side_effects "{\0A.reg .b32 a;\0Axor.b32 a, $0, 0;\0Ast.shared.b32 [a+1024], $1;\0A}", "r,r" %[[Y]],
// CHECK: llvm.inline_asm has_side_effects "{\0A.reg .b32 a;\0Axor.b32 a, $0, 16;\0Ast.shared.b32 [a+0], $1;\0A}", "r,r" %[[Y]],
// CHECK: llvm.inline_asm has_side_effects "{\0A.reg .b32 a;\0Axor.b32 a, $0, 16;\0Ast.shared.b32 [a+1024], $1;\0A}", "r,r" %[[Y]],
// CHECK-NOT: llvm.store
// CHECK-NOT: llvm.inline_asm
// CHECK: gpu.return
func.func @store_shared(%n: index) attributes {attn.config = #wg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %buf = attn_nv.alloc_shared {offset = 0} : !attn_nv.smem<64x16xbf16, swizzle_128b>
  %t0 = arith.constant dense<1.0> : tensor<64x16xf32, #attn_nv.acc<warps = 4>>
  %t = scf.for %it = %c0 to %n step %c1 iter_args(%x = %t0) -> (tensor<64x16xf32, #attn_nv.acc<warps = 4>>) {
    scf.yield %x : tensor<64x16xf32, #attn_nv.acc<warps = 4>>
  }
  attn_nv.store_shared %t, %buf : tensor<64x16xf32, #attn_nv.acc<warps = 4>>, !attn_nv.smem<64x16xbf16, swizzle_128b>
  return
}

// Into a padded buffer (rows 16 columns apart plus padding: 48 bytes) each
// pair's place is computed on its own and stored with llvm.store: row r at
// r · 48, chunk col / 8 at 16 · chunk, (col mod 8) · 2 bytes into it.
// CHECK-LABEL: gpu.func @store_shared_padded
// CHECK: %[[ROW:.*]] = arith.addi %{{.*}}, %c0_i32{{.*}} : i32
// CHECK: %[[COL:.*]] = arith.addi %{{.*}}, %c0_i32{{.*}} : i32
// CHECK: %[[CH:.*]] = arith.divui %[[COL]], %c8_i32 : i32
// CHECK: arith.muli %[[CH]], %c16_i32{{.*}} : i32
// CHECK: arith.muli %[[ROW]], %c48_i32 : i32
// CHECK: %[[W:.*]] = llvm.bitcast %{{.*}} : vector<2xbf16> to i32
// CHECK: llvm.store %[[W]], %{{.*}} {alignment = 4 : i64} : i32, !llvm.ptr<3>
// CHECK-COUNT-3: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : i32, !llvm.ptr<3>
// CHECK-NOT: llvm.store
// CHECK-NOT: llvm.inline_asm
// CHECK: gpu.return
func.func @store_shared_padded(%n: index) attributes {attn.config = #wg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %buf = attn_nv.alloc_shared {offset = 0} : !attn_nv.smem<64x16xbf16, padded>
  %t0 = arith.constant dense<1.0> : tensor<64x16xf32, #attn_nv.acc<warps = 4>>
  %t = scf.for %it = %c0 to %n step %c1 iter_args(%x = %t0) -> (tensor<64x16xf32, #attn_nv.acc<warps = 4>>) {
    scf.yield %x : tensor<64x16xf32, #attn_nv.acc<warps = 4>>
  }
  attn_nv.store_shared %t, %buf : tensor<64x16xf32, #attn_nv.acc<warps = 4>>, !attn_nv.smem<64x16xbf16, padded>
  return
}

// A `strided` copy (attn-nv-pipeline-copies marks the backward's loop
// copies) of a tile whose passes each cover whole rows (128 threads, 8
// chunks a row: 16 rows a pass): the thread
// index and the row stride pass through an empty asm in the loop, so that
// LLVM cannot hoist a row, a source offset and a shared pointer per chunk
// out of it; each pass is one inline cp.async at the first pass's 32-bit
// shared address plus 16 rows of 144 bytes (2304) a pass, reading from its
// row (rows past the bound: 0 bytes from the tile's first row).
// CHECK-LABEL: gpu.func @strided_in_loop
// CHECK: scf.for
// CHECK: %[[PIN:.*]] = llvm.inline_asm has_side_effects "", "=r,=r,0,1" %{{.*}}, %{{.*}} : (i32, i32) -> !llvm.struct<(i32, i32)>
// CHECK: %[[T:.*]] = llvm.extractvalue %[[PIN]][0]
// CHECK: %[[S:.*]] = llvm.extractvalue %[[PIN]][1]
// CHECK: %[[R:.*]] = arith.divui %[[T]], %c8_i32
// CHECK: %[[C:.*]] = arith.remui %[[T]], %c8_i32
// CHECK: %[[RB:.*]] = arith.muli %[[S]], %c2_i32
// CHECK: arith.cmpi slt, %{{.*}}, %{{.*}} : i32
// CHECK: llvm.inline_asm has_side_effects "cp.async.cg.shared.global [$0+0], [$1], 16, $2;", "r,l,r"
// CHECK: %[[R1:.*]] = arith.addi %[[R]], %c16_i32{{.*}} : i32
// CHECK: arith.cmpi slt, %[[R1]], %{{.*}} : i32
// CHECK: llvm.inline_asm has_side_effects "cp.async.cg.shared.global [$0+2304], [$1], 16, $2;", "r,l,r"
// CHECK-NEXT: nvvm.cp.async.commit.group
// CHECK-NEXT: }
func.func @strided_in_loop(%K: !t64, %b: index, %h: index, %bound: index, %n: index) attributes {attn.config = #mma} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %buf = attn_nv.alloc_shared {offset = 4096} : !attn_nv.smem<3x32x64xbf16, padded>
  scf.for %i = %c0 to %n step %c1 {
    %row = arith.muli %i, %c32 : index
    %k = attn_nv.slot %buf[%i] : !attn_nv.smem<3x32x64xbf16, padded> -> !attn_nv.smem<32x64xbf16, padded>
    attn_nv.copy_async %K[%b, %h, %row] bounds %bound into %k strided : !t64, !attn_nv.smem<32x64xbf16, padded>
    nvvm.cp.async.commit.group
  }
  return
}

// The same copy without `strided` (the forward's loops: their hoisted
// addresses cost no spill, and strided they ran slower) in the per-chunk
// form.
// CHECK-LABEL: gpu.func @per_chunk_in_loop
// CHECK: scf.for
// CHECK-NOT: llvm.inline_asm
// CHECK: nvvm.cp.async.shared.global
// CHECK: nvvm.cp.async.commit.group
func.func @per_chunk_in_loop(%K: !t64, %b: index, %h: index, %bound: index, %n: index) attributes {attn.config = #mma} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %buf = attn_nv.alloc_shared {offset = 4096} : !attn_nv.smem<3x32x64xbf16, padded>
  scf.for %i = %c0 to %n step %c1 {
    %row = arith.muli %i, %c32 : index
    %k = attn_nv.slot %buf[%i] : !attn_nv.smem<3x32x64xbf16, padded> -> !attn_nv.smem<32x64xbf16, padded>
    attn_nv.copy_async %K[%b, %h, %row] bounds %bound into %k : !t64, !attn_nv.smem<32x64xbf16, padded>
    nvvm.cp.async.commit.group
  }
  return
}
