// RUN: attn-opt %s --split-input-file --attn-tile | FileCheck %s

// Packed GQA heads in a variable-length batch: the grid runs over the
// sequences, the K/V heads and ceil(G · max_q / block_m) tiles; a program's
// tile packs the G query heads of its K/V head for its sequence end to end:
// rows_per_head = max(len_q, 1) (no division by zero for a sequence
// without queries), start = the sequence's first row, the bound G · len_q
// (its packed rows) on Q, O and the LSE, and a tile at or past that bound
// visits no K/V tile. The step sees positions relative to the sequence
// (rows_per_head gives each row its query, row mod len_q) and the
// sequence's own bottom-right shift.
#cfg = #attn.config<mapping = "host", chip = "", block_m = 64, block_n = 32, warps = 0, min_ctas_per_sm = 0, stages = 0, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = true, conditional_rescale = false>
!t = memref<1x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<1x?x?xf32, strided<[?, ?, ?], offset: ?>>
!cu = memref<?xi32, strided<[?], offset: ?>>

// CHECK-LABEL: func.func @varlen(
// CHECK-DAG: %[[H:.*]] = memref.dim %arg0, %c1
// CHECK-DAG: %[[TQ:.*]] = memref.dim %arg0, %c2
// CHECK-DAG: %[[HKV:.*]] = memref.dim %arg1, %c1
// CHECK: %[[GROUP:.*]] = arith.divui %[[H]], %[[HKV]]
// CHECK: %[[OFFSETS:.*]] = memref.dim %arg6, %{{.*}}
// CHECK: %[[BM1:.*]] = arith.subi %[[OFFSETS]], %{{.*}}
// CHECK: %[[B:.*]] = arith.maxsi %[[BM1]], %{{.*}}
// CHECK: %[[MAXQ:.*]] = arith.maxsi %arg8, %{{.*}}
// CHECK: %[[MAXROWS:.*]] = arith.muli %[[GROUP]], %[[MAXQ]]
// CHECK: %[[TILES:.*]] = arith.ceildivsi %[[MAXROWS]], %c64
// CHECK: attn.tile_grid (%[[SEQ:.*]], %[[KVH:.*]], %[[TI:.*]]) in (%[[B]], %[[HKV]], %[[TILES]]) {
// CHECK:   %[[QH:.*]] = arith.muli %[[KVH]], %[[GROUP]]
// CHECK:   %[[ROW:.*]] = arith.muli %[[TI]], %c64
// CHECK:   memref.load %arg6[%[[SEQ]]]
// CHECK:   %[[QS:.*]] = arith.minsi %{{.*}}, %[[TQ]]
// CHECK:   memref.load %arg6[%{{.*}}]
// CHECK:   %[[QE:.*]] = arith.minsi %{{.*}}, %[[TQ]]
// CHECK:   %[[NQ:.*]] = arith.subi %[[QE]], %[[QS]]
// CHECK:   %[[KS:.*]] = arith.minsi %{{.*}}, %{{.*}}
// CHECK:   %[[KE:.*]] = arith.minsi %{{.*}}, %{{.*}}
// CHECK:   %[[NK:.*]] = arith.subi %[[KE]], %[[KS]]
// CHECK:   %[[SHIFT:.*]] = arith.subi %[[NK]], %[[NQ]]
// CHECK:   %[[ZERO:.*]] = arith.constant 0 : index
// CHECK:   %[[ROWS:.*]] = arith.muli %[[GROUP]], %[[NQ]]
// CHECK:   %[[RPH:.*]] = arith.maxsi %[[NQ]], %{{.*}}
// CHECK:   %[[Q:.*]] = attn.load_tile %arg0[%[[ZERO]], %[[QH]], %[[ROW]]] rows_per_head %[[RPH]] start %[[QS]] bounds %[[ROWS]]
// CHECK:   %[[LIVE:.*]] = arith.cmpi slt, %[[ROW]], %[[ROWS]]
// CHECK:   %[[UB:.*]] = arith.select %[[LIVE]], %{{.*}}, %[[LB:.*]] : index
// CHECK:   scf.for %[[KV:.*]] = %[[LB]] to %[[UB]] step %c32
// CHECK:     %[[KROW:.*]] = arith.addi %[[KS]], %[[KV]]
// CHECK:     attn.load_tile %arg1[%[[ZERO]], %[[KVH]], %[[KROW]]] bounds %[[KE]]
// CHECK:     attn.load_tile %arg2[%[[ZERO]], %[[KVH]], %[[KROW]]] bounds %[[KE]]
// CHECK:     attn.online_attention %[[Q]], {{.*}} at [%[[ROW]], %[[KV]]] rows_per_head %[[RPH]] bounds [%[[NQ]], %[[NK]]] scale %arg5 positive_scale batch %[[SEQ]] head %[[QH]] captures(%[[SHIFT]] : index) mask_mod {
// CHECK:   attn.store_tile %{{.*}}, %arg3[%[[ZERO]], %[[QH]], %[[ROW]]] rows_per_head %[[RPH]] start %[[QS]] bounds %[[ROWS]] : tensor<64x64xbf16>
// CHECK:   attn.store_tile %{{.*}}, %arg4[%[[ZERO]], %[[QH]], %[[ROW]]] rows_per_head %[[RPH]] start %[[QS]] bounds %[[ROWS]] : tensor<64xf32>
func.func @varlen(%q: !t, %k: !t, %v: !t, %o: !t, %lse: !lse, %s: f32, %cq: !cu, %ck: !cu, %maxq: index) attributes {attn.config = #cfg} {
  attn.sdpa %q, %k, %v into %o lse %lse scale %s varlen(%cq, %ck, %maxq : !cu, !cu) mask <causal_bottom_right> positive_scale : !t, !t, !t -> !t, !lse
  return
}

// -----

// Over a paged cache (its queries a varlen batch): the same packed Q, O
// and LSE; K and V of the program's K/V head gathered through the
// sequence's row of the block table, bounded by its key count.
#cfg = #attn.config<mapping = "host", chip = "", block_m = 64, block_n = 32, warps = 0, min_ctas_per_sm = 0, stages = 0, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = true, conditional_rescale = false>
!p = memref<1x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!kv = memref<?x?x16x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<1x?x?xf32, strided<[?, ?, ?], offset: ?>>
!cu = memref<?xi32, strided<[?], offset: ?>>
!bt = memref<?x?xi32, strided<[?, ?], offset: ?>>

// CHECK-LABEL: func.func @paged(
// CHECK-DAG: %[[H:.*]] = memref.dim %arg0, %c1
// CHECK-DAG: %[[HKV:.*]] = memref.dim %arg1, %c1
// CHECK: %[[GROUP:.*]] = arith.divui %[[H]], %[[HKV]]
// CHECK: %[[MAXQ:.*]] = arith.maxsi %arg7, %{{.*}}
// CHECK: %[[MAXROWS:.*]] = arith.muli %[[GROUP]], %[[MAXQ]]
// CHECK: %[[TILES:.*]] = arith.ceildivsi %[[MAXROWS]], %c64
// CHECK: attn.tile_grid (%[[SEQ:.*]], %[[KVH:.*]], %[[TI:.*]]) in (%{{.*}}, %[[HKV]], %[[TILES]]) {
// CHECK:   %[[QH:.*]] = arith.muli %[[KVH]], %[[GROUP]]
// CHECK:   %[[ROW:.*]] = arith.muli %[[TI]], %c64
// CHECK:   %[[QS:.*]] = arith.minsi %{{.*}}, %{{.*}}
// CHECK:   %[[NQ:.*]] = arith.subi %{{.*}}, %[[QS]]
// CHECK:   memref.load %arg9[%[[SEQ]]]
// CHECK:   %[[NK:.*]] = arith.minsi %{{.*}}, %{{.*}}
// CHECK:   %[[ROWS:.*]] = arith.muli %[[GROUP]], %[[NQ]]
// CHECK:   %[[RPH:.*]] = arith.maxsi %[[NQ]], %{{.*}}
// CHECK:   %[[Q:.*]] = attn.load_tile %arg0[%{{.*}}, %[[QH]], %[[ROW]]] rows_per_head %[[RPH]] start %[[QS]] bounds %[[ROWS]]
// CHECK:   arith.cmpi slt, %[[ROW]], %[[ROWS]]
// CHECK:   scf.for %[[KV:[^ ]*]] =
// CHECK:     attn.load_tile %arg1[%[[SEQ]], %[[KVH]], %[[KV]]] pages(%arg8 : {{.*}}) bounds %[[NK]]
// CHECK:     attn.load_tile %arg2[%[[SEQ]], %[[KVH]], %[[KV]]] pages(%arg8 : {{.*}}) bounds %[[NK]]
// CHECK:     attn.online_attention %[[Q]], {{.*}} at [%[[ROW]], %[[KV]]] rows_per_head %[[RPH]] bounds [%[[NQ]], %[[NK]]]
// CHECK:   attn.store_tile %{{.*}}, %arg3[%{{.*}}, %[[QH]], %[[ROW]]] rows_per_head %[[RPH]] start %[[QS]] bounds %[[ROWS]]
// CHECK:   attn.store_tile %{{.*}}, %arg4[%{{.*}}, %[[QH]], %[[ROW]]] rows_per_head %[[RPH]] start %[[QS]] bounds %[[ROWS]]
func.func @paged(%q: !p, %k: !kv, %v: !kv, %o: !p, %lse: !lse, %s: f32, %cq: !cu, %maxq: index, %bt: !bt, %used: !cu) attributes {attn.config = #cfg} {
  attn.sdpa %q, %k, %v into %o lse %lse scale %s varlen(%cq, %maxq : !cu) paged(%bt, %used : !bt, !cu) mask <causal_bottom_right> positive_scale : !p, !kv, !kv -> !p, !lse
  return
}

// -----

// An ordinary query batch over a paged cache packs as a contiguous call:
// rows_per_head Nq, no start, the bound G · Nq.
#cfg = #attn.config<mapping = "host", chip = "", block_m = 64, block_n = 32, warps = 0, min_ctas_per_sm = 0, stages = 0, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = true, conditional_rescale = false>
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!kv = memref<?x?x64x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!cu = memref<?xi32, strided<[?], offset: ?>>
!bt = memref<?x?xi32, strided<[?, ?], offset: ?>>

// CHECK-LABEL: func.func @paged_batch(
// CHECK-DAG: %[[H:.*]] = memref.dim %arg0, %c1
// CHECK-DAG: %[[NQ:.*]] = memref.dim %arg0, %c2
// CHECK-DAG: %[[HKV:.*]] = memref.dim %arg1, %c1
// CHECK: %[[GROUP:.*]] = arith.divui %[[H]], %[[HKV]]
// CHECK: %[[ROWS:.*]] = arith.muli %[[GROUP]], %[[NQ]]
// CHECK: %[[TILES:.*]] = arith.ceildivsi %[[ROWS]], %c64
// CHECK: attn.tile_grid (%[[B:.*]], %[[KVH:.*]], %{{.*}}) in (%{{.*}}, %[[HKV]], %[[TILES]]) {
// CHECK:   %[[QH:.*]] = arith.muli %[[KVH]], %[[GROUP]]
// CHECK:   %[[Q:.*]] = attn.load_tile %arg0[%[[B]], %[[QH]], %{{.*}}] rows_per_head %[[NQ]] bounds %[[ROWS]]
// CHECK:   scf.for
// CHECK:     attn.load_tile %arg1[%[[B]], %[[KVH]], %{{.*}}] pages(%arg4 : {{.*}})
// CHECK:   attn.store_tile %{{.*}}, %arg3[%[[B]], %[[QH]], %{{.*}}] rows_per_head %[[NQ]] bounds %[[ROWS]]
func.func @paged_batch(%q: !t, %k: !kv, %v: !kv, %o: !t, %bt: !bt, %used: !cu) attributes {attn.config = #cfg} {
  attn.sdpa %q, %k, %v into %o paged(%bt, %used : !bt, !cu) mask <causal_bottom_right> : !t, !kv, !kv -> !t
  return
}

// -----

// Split-KV of a packed varlen batch: split s of sequence b stores its
// packed partial at workspace row s, the sequence's rows mapped as its O;
// the merge runs unpacked over the query heads and the unpacked tiles
// ceil(max_q / block_m).
#cfg = #attn.config<mapping = "host", chip = "", block_m = 64, block_n = 32, warps = 0, min_ctas_per_sm = 0, stages = 0, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = true, conditional_rescale = false>
!p = memref<1x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse1 = memref<1x?x?xf32, strided<[?, ?, ?], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>
!po = memref<?x?x?x64xf32, strided<[?, ?, ?, 1], offset: ?>>
!cu = memref<?xi32, strided<[?], offset: ?>>

// CHECK-LABEL: func.func @split_varlen(
// CHECK-DAG: %[[HKV:.*]] = memref.dim %arg1, %c1
// CHECK: %[[MAXQ:.*]] = arith.maxsi %arg8, %{{.*}}
// CHECK: %[[UNPACKED:.*]] = arith.ceildivsi %[[MAXQ]], %c64
// CHECK: attn.tile_grid (%[[Z:.*]], %[[KVH:.*]], %{{.*}}) in (%{{.*}}, %[[HKV]], %{{.*}}) attributes {attn.grid = "splits"} {
// CHECK:   %[[S:.*]] = arith.remui %[[Z]], %[[N:.*]] : index
// CHECK:   %[[QH:.*]] = arith.muli %[[KVH]], %{{.*}}
// CHECK:   %[[ROW:.*]] = arith.muli
// CHECK:   attn.load_tile %arg0[%{{.*}}, %[[QH]], %[[ROW]]] rows_per_head %[[RPH:[^ ]*]] start %[[QS:[^ ]*]] bounds %[[ROWS:[^ ]*]] :
// CHECK:   scf.for
// CHECK:   attn.store_tile %{{.*}}, %arg10[%[[S]], %[[QH]], %[[ROW]]] rows_per_head %[[RPH]] start %[[QS]] bounds %[[ROWS]] : tensor<64x64xf32>
// CHECK:   attn.store_tile %{{.*}}, %arg11[%[[S]], %[[QH]], %[[ROW]]] rows_per_head %[[RPH]] start %[[QS]] bounds %[[ROWS]] : tensor<64xf32>
// CHECK: attn.tile_grid (%{{.*}}, %[[MH:.*]], %{{.*}}) in (%{{.*}}, %{{.*}}, %[[UNPACKED]]) attributes {attn.grid = "rows"} {
// CHECK:   scf.for
// CHECK:     attn.load_tile %arg11[%{{.*}}, %[[MH]], %[[MROW:[^ ]*]]] bounds
// CHECK:   attn.store_tile %{{.*}}, %arg3[%{{.*}}, %[[MH]], %[[MROW]]] bounds
func.func @split_varlen(%q: !p, %k: !p, %v: !p, %o: !p, %lse: !lse1, %s: f32, %cq: !cu, %ck: !cu, %maxq: index, %n: index, %po: !po, %pl: !lse) attributes {attn.config = #cfg} {
  attn.sdpa %q, %k, %v into %o lse %lse scale %s varlen(%cq, %ck, %maxq : !cu, !cu) split(%n, %po, %pl : !po, !lse) mask <causal_bottom_right> positive_scale : !p, !p, !p -> !p, !lse1
  return
}
