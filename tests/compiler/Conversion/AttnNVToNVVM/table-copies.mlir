// RUN: attn-opt %s --convert-attn-nv-to-nvvm | FileCheck %s

// attn_nv.copy_table_async: one uniform branch per tile on the call's
// table (unit column stride, rows a multiple of 4 elements apart, the
// tile's first element 16-byte aligned, the tile under 2^31 bytes): 16-byte
// cp.async.cg chunks, unrolled (128 x 64 f32: 2048 chunks, 8 per thread of
// 256), else a loop of 4-byte cp.async.ca from the thread's index (no
// constant trip count: not unrolled, no per-element offsets held).
// attn_nv.load_shared: each thread's pairs of adjacent columns, one 8-byte
// shared load each (32 values of a 128 x 64 tile over 8 warps: 16 loads).

#wg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 64, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
!table = memref<?x?xf32, strided<[?, ?], offset: ?>>
!o = memref<?x?x?x64xf32, strided<[?, ?, ?, 1], offset: ?>>

// CHECK-LABEL: gpu.func @table
// CHECK-SAME: (%[[PTR:[[:alnum:]]+]]: !llvm.ptr<1>, %{{[[:alnum:]]+}}: i64, %{{[[:alnum:]]+}}: i64, %[[S0:[[:alnum:]]+]]: i64, %[[S1:[[:alnum:]]+]]: i64,
// CHECK: %[[UNIT:.*]] = llvm.icmp "eq" %[[S1]], %{{.*}} : i64
// CHECK: llvm.and %[[S0]], %{{.*}} : i64
// CHECK: llvm.ptrtoint
// CHECK: %[[SMALL:.*]] = llvm.icmp "ult" %[[S0]], %{{.*}} : i64
// CHECK: scf.if %{{.*}} {
// CHECK-COUNT-8: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache =  cg, %{{.*}} : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK-NOT: nvvm.cp.async.shared.global
// CHECK: } else {
// CHECK: scf.for %{{.*}} = %{{.*}} to %c8192 step %c256 {
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 4, cache =  ca, %{{.*}} : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK: }
// CHECK: }
// CHECK-COUNT-16: llvm.load %{{.*}} {alignment = 8 : i64} : !llvm.ptr<3> -> vector<2xf32>
// CHECK-NOT: llvm.load %{{.*}} : !llvm.ptr<3>
func.func @table(%T: !table, %O: !o, %row: index, %col: index, %rows: index, %cols: index) attributes {attn.config = #wg} {
  %buf = attn_nv.alloc_shared {offset = 0} : !attn_nv.smem<128x64xf32, swizzle_128b>
  attn_nv.copy_table_async %T[%row, %col] bounds %rows, %cols into %buf : !table, !attn_nv.smem<128x64xf32, swizzle_128b>
  %v = attn_nv.load_shared %buf : !attn_nv.smem<128x64xf32, swizzle_128b> -> tensor<128x64xf32, #attn_nv.acc<warps = 8>>
  attn.store_tile %v, %O[%row, %row, %row] bounds %rows : tensor<128x64xf32, #attn_nv.acc<warps = 8>>, !o
  return
}

// swizzle_pairs: the same chunks and loads; the chunk's XOR key is
// (r % 4) · 2 | (r / 4) % 2 of the row, on both sides.
// CHECK-LABEL: gpu.func @pairs
// CHECK: scf.if %{{.*}} {
// CHECK: arith.shli
// CHECK: arith.shrui
// CHECK: arith.ori
// CHECK: arith.xori
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache =  cg
// CHECK: } else {
// CHECK: arith.shrui
// CHECK: arith.xori
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 4, cache =  ca
// CHECK: arith.shrui
// CHECK: arith.xori
// CHECK-COUNT-16: llvm.load %{{.*}} {alignment = 8 : i64} : !llvm.ptr<3> -> vector<2xf32>
func.func @pairs(%T: !table, %O: !o, %row: index, %col: index, %rows: index, %cols: index) attributes {attn.config = #wg} {
  %buf = attn_nv.alloc_shared {offset = 0} : !attn_nv.smem<128x64xf32, swizzle_pairs>
  attn_nv.copy_table_async %T[%row, %col] bounds %rows, %cols into %buf : !table, !attn_nv.smem<128x64xf32, swizzle_pairs>
  %v = attn_nv.load_shared %buf : !attn_nv.smem<128x64xf32, swizzle_pairs> -> tensor<128x64xf32, #attn_nv.acc<warps = 8>>
  attn.store_tile %v, %O[%row, %row, %row] bounds %rows : tensor<128x64xf32, #attn_nv.acc<warps = 8>>, !o
  return
}
