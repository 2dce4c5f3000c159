// RUN: attn-opt %s --split-input-file --attn-tile | FileCheck %s

// A paged K/V cache: each program loads its sequence's key count, clamped
// to [0, max_pages * page_size] (the block table's columns times the
// compiled-in page size), which bounds the K/V loop, is the length the
// masks see (the bottom-right shift Nk - Nq) and the bound of the K/V
// loads; those gather their rows through the sequence's row of the block
// table (the grid's batch index), at positions relative to the sequence.
// Packed queries as in varlen, without cu_seqlens_k.

#cfg = #attn.config<mapping = "host", chip = "", block_m = 64, block_n = 32, warps = 0, min_ctas_per_sm = 0, stages = 0, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
!p = memref<1x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!kv = memref<?x?x16x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<1x?x?xf32, strided<[?, ?, ?], offset: ?>>
!cu = memref<?xi32, strided<[?], offset: ?>>
!bt = memref<?x?xi32, strided<[?, ?], offset: ?>>

// CHECK-LABEL: func.func @paged_varlen(
// CHECK-DAG: %[[TQ:.*]] = memref.dim %arg0, %c2
// CHECK: attn.tile_grid (%[[SEQ:.*]], %[[HI:.*]], %[[TI:.*]]) in
// CHECK:   %[[KVH:.*]] = arith.divui %[[HI]], %{{.*}} : index
// CHECK:   %[[ROW:.*]] = arith.muli %[[TI]], %c64
// CHECK:   memref.load %arg6[%[[SEQ]]]
// CHECK:   memref.load %arg6[%{{.*}}]
// CHECK:   %[[QE:.*]] = arith.minsi %{{.*}}, %[[TQ]] : index
// CHECK:   %[[NQ:.*]] = arith.subi %[[QE]], %[[QS:.*]] : index
// CHECK:   %[[USED:.*]] = memref.load %arg9[%[[SEQ]]]
// CHECK:   %[[USEDI:.*]] = arith.index_cast %[[USED]] : i32 to index
// CHECK:   %[[COLS:.*]] = memref.dim %arg8, %{{.*}}
// CHECK:   %[[CAP:.*]] = arith.muli %[[COLS]], %c16 : index
// CHECK:   %[[LO:.*]] = arith.maxsi %[[USEDI]], %{{.*}} : index
// CHECK:   %[[NK:.*]] = arith.minsi %[[LO]], %[[CAP]] : index
// CHECK:   %[[SHIFT:.*]] = arith.subi %[[NK]], %[[NQ]] : index
// CHECK:   %[[QROW:.*]] = arith.addi %[[QS]], %[[ROW]] : index
// CHECK:   %[[Q:.*]] = attn.load_tile %arg0[%{{.*}}, %[[HI]], %[[QROW]]] bounds %[[QE]]
// CHECK:   scf.for %[[KV:.*]] = %{{.*}} to %{{.*}} step %c32
// CHECK:     %[[K:.*]] = attn.load_tile %arg1[%[[SEQ]], %[[KVH]], %[[KV]]] pages(%arg8 : {{.*}}) bounds %[[NK]]
// CHECK:     %[[V:.*]] = attn.load_tile %arg2[%[[SEQ]], %[[KVH]], %[[KV]]] pages(%arg8 : {{.*}}) bounds %[[NK]]
// CHECK:     attn.online_attention %[[Q]], %[[K]], %[[V]], {{.*}} at [%[[ROW]], %[[KV]]] bounds [%[[NQ]], %[[NK]]] {{.*}} captures(%[[SHIFT]] : index)
func.func @paged_varlen(%q: !p, %k: !kv, %v: !kv, %o: !p, %lse: !lse, %s: f32, %cq: !cu, %maxq: index, %bt: !bt, %used: !cu) attributes {attn.config = #cfg} {
  attn.sdpa %q, %k, %v into %o lse %lse scale %s varlen(%cq, %maxq : !cu) paged(%bt, %used : !bt, !cu) mask <causal_bottom_right> positive_scale : !p, !kv, !kv -> !p, !lse
  return
}

// -----

#cfg = #attn.config<mapping = "host", chip = "", block_m = 64, block_n = 32, warps = 0, min_ctas_per_sm = 0, stages = 0, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!kv = memref<?x?x64x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!cu = memref<?xi32, strided<[?], offset: ?>>
!bt = memref<?x?xi32, strided<[?, ?], offset: ?>>

// An ordinary batch of queries over pages of 64: the queries' rows are
// the tensor's, the keys the sequence's.
// CHECK-LABEL: func.func @paged_batch(
// CHECK-DAG: %[[NQ:.*]] = memref.dim %arg0, %c2
// CHECK: attn.tile_grid (%[[B:.*]], %[[HI:.*]], %[[TI:.*]]) in
// CHECK:   %[[USED:.*]] = memref.load %arg5[%[[B]]]
// CHECK:   %[[CAP:.*]] = arith.muli %{{.*}}, %c64{{.*}} : index
// CHECK:   %[[NK:.*]] = arith.minsi %{{.*}}, %[[CAP]] : index
// CHECK:   %[[SHIFT:.*]] = arith.subi %[[NK]], %[[NQ]] : index
// CHECK:   %[[Q:.*]] = attn.load_tile %arg0[%[[B]], %[[HI]], %{{.*}}] bounds %[[NQ]]
// CHECK:   scf.for %[[KV:[^ ]*]] =
// CHECK:     attn.load_tile %arg1[%[[B]], %{{.*}}, %[[KV]]] pages(%arg4 : {{.*}}) bounds %[[NK]]
// CHECK:     attn.online_attention {{.*}} bounds [%[[NQ]], %[[NK]]] {{.*}} captures(%[[SHIFT]] : index)
func.func @paged_batch(%q: !t, %k: !kv, %v: !kv, %o: !t, %bt: !bt, %used: !cu) attributes {attn.config = #cfg} {
  attn.sdpa %q, %k, %v into %o paged(%bt, %used : !bt, !cu) mask <causal_bottom_right> : !t, !kv, !kv -> !t
  return
}
