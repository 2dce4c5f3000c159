// RUN: attn-opt %s --split-input-file --attn-tile | FileCheck %s

// attn-tile reads block_m, block_n and pack_gqa from the function's
// attn.config: one grid instance per (batch, head, block_m query rows), one
// loop step per block_n keys.

#cfg = #attn.config<mapping = "host", chip = "", block_m = 64, block_n = 32, warps = 0, min_ctas_per_sm = 0, stages = 0, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>

// CHECK-LABEL: func.func @dense(
// CHECK-DAG: %[[B:.*]] = memref.dim %arg0, %c0
// CHECK-DAG: %[[H:.*]] = memref.dim %arg0, %c1
// CHECK-DAG: %[[NQ:.*]] = memref.dim %arg0, %c2
// CHECK-DAG: %[[HKV:.*]] = memref.dim %arg1, %c1
// CHECK-DAG: %[[NK:.*]] = memref.dim %arg1, %c2
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// Grouped-query attention: query heads [g·G, (g + 1)·G) share K/V head g.
// CHECK-DAG: %[[GROUP:.*]] = arith.divui %[[H]], %[[HKV]]
// CHECK-DAG: %[[TILES:.*]] = arith.ceildivsi %[[NQ]], %[[C64]]
// CHECK: attn.tile_grid (%[[BI:.*]], %[[HI:.*]], %[[TI:.*]]) in (%[[B]], %[[H]], %[[TILES]]) {
// CHECK:   %[[KVH:.*]] = arith.divui %[[HI]], %[[GROUP]]
// CHECK:   %[[ROW:.*]] = arith.muli %[[TI]], %[[C64]]
// CHECK:   %[[Q:.*]] = attn.load_tile %arg0[%[[BI]], %[[HI]], %[[ROW]]] bounds %[[NQ]] : {{.*}} -> tensor<64x64xbf16>
// CHECK-DAG: %[[M0:.*]] = arith.constant dense<0xFF800000> : tensor<64xf32>
// CHECK-DAG: %[[L0:.*]] = arith.constant dense<0.000000e+00> : tensor<64xf32>
// CHECK-DAG: %[[A0:.*]] = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
// Without a mask every K/V tile is visited.
// CHECK:   %[[RES:.*]]:3 = scf.for %[[KV:.*]] = %{{.*}} to %[[NK]] step %[[C32]] iter_args(%[[M:.*]] = %[[M0]], %[[L:.*]] = %[[L0]], %[[A:.*]] = %[[A0]])
// CHECK:     %[[K:.*]] = attn.load_tile %arg1[%[[BI]], %[[KVH]], %[[KV]]] bounds %[[NK]] : {{.*}} -> tensor<32x64xbf16>
// CHECK:     %[[V:.*]] = attn.load_tile %arg2[%[[BI]], %[[KVH]], %[[KV]]] bounds %[[NK]] : {{.*}} -> tensor<32x64xbf16>
// CHECK:     %[[M1:.*]], %[[L1:.*]], %[[A1:.*]] = attn.online_attention %[[Q]], %[[K]], %[[V]], %[[M]], %[[L]], %[[A]] at [%[[ROW]], %[[KV]]] bounds [%[[NQ]], %[[NK]]] scale %arg5 positive_scale :
// CHECK:     scf.yield %[[M1]], %[[L1]], %[[A1]]
// CHECK:   %[[O:.*]], %[[LSE:.*]] = attn.finalize %[[RES]]#2, %[[RES]]#0, %[[RES]]#1 : tensor<64x64xf32>, tensor<64xf32> -> tensor<64x64xbf16>
// CHECK:   attn.store_tile %[[O]], %arg3[%[[BI]], %[[HI]], %[[ROW]]] bounds %[[NQ]] : tensor<64x64xbf16>
// CHECK:   attn.store_tile %[[LSE]], %arg4[%[[BI]], %[[HI]], %[[ROW]]] bounds %[[NQ]] : tensor<64xf32>
// CHECK-NOT: attn.sdpa
func.func @dense(%q: !t, %k: !t, %v: !t, %o: !t, %lse: !lse, %s: f32) attributes {attn.config = #cfg} {
  attn.sdpa %q, %k, %v into %o lse %lse scale %s positive_scale : !t, !t, !t -> !t, !lse
  return
}

// -----

// A causal loop stops at the diagonal: tiles wholly above it are skipped.
// The causal mask becomes the library's mask_mod (key j seen by query i when
// j <= i + shift, shift = 0 a capture), whose structure gives the bound:
// the tile's last query, min(row + 64, Nq) - 1, sees keys up to itself.
#cfg = #attn.config<mapping = "host", chip = "", block_m = 64, block_n = 32, warps = 0, min_ctas_per_sm = 0, stages = 0, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>

// CHECK-LABEL: func.func @causal(
// CHECK-DAG: %[[NQ:.*]] = memref.dim %arg0, %c2
// CHECK-DAG: %[[NK:.*]] = memref.dim %arg1, %c2
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
// No scale operand: 1/sqrt(64).
// CHECK-DAG: %[[SCALE:.*]] = arith.constant 1.250000e-01 : f32
// CHECK: %[[SHIFT:.*]] = arith.constant 0 : index
// CHECK: attn.tile_grid
// CHECK:   %[[ROW:.*]] = arith.muli %{{.*}}, %[[C64]]
// CHECK:   %[[ROWEND:.*]] = arith.addi %[[ROW]], %[[C64]]
// CHECK:   %[[LASTROW:.*]] = arith.minsi %[[ROWEND]], %[[NQ]]
// CHECK:   %[[LAST:.*]] = arith.subi %[[LASTROW]], %{{.*}}
// CHECK:   %[[HI:.*]] = arith.addi %[[SHIFT]], %[[LAST]]
// CHECK:   %[[PAST:.*]] = arith.addi %[[HI]], %{{.*}}
// CHECK:   %[[CLAMP:.*]] = arith.maxsi %[[PAST]], %{{.*}}
// CHECK:   %[[UB:.*]] = arith.minsi %[[NK]], %[[CLAMP]]
// CHECK:   scf.for %{{.*}} = %{{.*}} to %[[UB]] step %c32
// CHECK:     attn.online_attention {{.*}} scale %[[SCALE]] batch %{{.*}} head %{{.*}} captures(%[[SHIFT]] : index) mask_mod {
// CHECK:     ^bb0(%{{.*}}: index, %{{.*}}: index, %[[I:.*]]: index, %[[J:.*]]: index, %[[S:.*]]: index):
// CHECK:       %[[DIAG:.*]] = arith.addi %[[I]], %[[S]]
// CHECK:       arith.cmpi sle, %[[J]], %[[DIAG]]
// CHECK-NOT: mask <causal>
// No LSE operand: no LSE store.
// CHECK:   attn.store_tile %{{.*}}, %arg3
// CHECK-NOT: attn.store_tile
// CHECK: return
func.func @causal(%q: !t, %k: !t, %v: !t, %o: !t) attributes {attn.config = #cfg} {
  attn.sdpa %q, %k, %v into %o mask <causal> : !t, !t, !t -> !t
  return
}

// -----

// Bottom-right causal: query i sees keys j <= i + Nk - Nq.
#cfg = #attn.config<mapping = "host", chip = "", block_m = 64, block_n = 32, warps = 0, min_ctas_per_sm = 0, stages = 0, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>

// CHECK-LABEL: func.func @causal_bottom_right(
// CHECK-DAG: %[[NQ:.*]] = memref.dim %arg0, %c2
// CHECK-DAG: %[[NK:.*]] = memref.dim %arg1, %c2
// CHECK: %[[SHIFT:.*]] = arith.subi %[[NK]], %[[NQ]]
// CHECK: attn.tile_grid
// CHECK:   %[[LAST:.*]] = arith.subi %{{.*}}, %{{.*}}
// CHECK:   %[[HI:.*]] = arith.addi %[[SHIFT]], %[[LAST]]
// CHECK:   %[[PAST:.*]] = arith.addi %[[HI]], %{{.*}}
// CHECK:   %[[CLAMP:.*]] = arith.maxsi %[[PAST]], %{{.*}}
// CHECK:   %[[UB:.*]] = arith.minsi %[[NK]], %[[CLAMP]]
// CHECK:   scf.for %{{.*}} = %{{.*}} to %[[UB]] step %c32
// CHECK:     attn.online_attention {{.*}} captures(%[[SHIFT]] : index) mask_mod {
func.func @causal_bottom_right(%q: !t, %k: !t, %v: !t, %o: !t) attributes {attn.config = #cfg} {
  attn.sdpa %q, %k, %v into %o mask <causal_bottom_right> : !t, !t, !t -> !t
  return
}

// -----

// Tile sizes come from the configuration; V tiles, the accumulator and the
// output have Dv columns (the host mapping allows Dv != D).
#cfg = #attn.config<mapping = "host", chip = "", block_m = 16, block_n = 128, warps = 0, min_ctas_per_sm = 0, stages = 0, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
!qk = memref<?x?x?x64xf32, strided<[?, ?, ?, 1], offset: ?>>
!vo = memref<?x?x?x32xf32, strided<[?, ?, ?, 1], offset: ?>>

// CHECK-LABEL: func.func @value_dim(
// CHECK: arith.ceildivsi %{{.*}}, %c16
// CHECK: attn.load_tile %arg0{{.*}} -> tensor<16x64xf32>
// CHECK: arith.constant dense<0.000000e+00> : tensor<16x32xf32>
// CHECK: scf.for {{.*}} step %c128 {{.*}} -> (tensor<16xf32>, tensor<16xf32>, tensor<16x32xf32>)
// CHECK:   attn.load_tile %arg1{{.*}} -> tensor<128x64xf32>
// CHECK:   attn.load_tile %arg2{{.*}} -> tensor<128x32xf32>
// CHECK: attn.finalize {{.*}} : tensor<16x32xf32>, tensor<16xf32> -> tensor<16x32xf32>
func.func @value_dim(%q: !qk, %k: !qk, %v: !vo, %o: !vo, %s: f32) attributes {attn.config = #cfg} {
  attn.sdpa %q, %k, %v into %o scale %s : !qk, !qk, !vo -> !vo
  return
}

// -----

// pack_gqa: a query tile packs the rows of the G = H / Hkv query heads of
// one K/V head end to end (G · Nq rows, Nq per head), so the grid runs over
// K/V heads and K, V are read once per group. Every key any packed row may
// see is visited: the causal bound is that of the last query, Nq.
#pack = #attn.config<mapping = "host", chip = "", block_m = 64, block_n = 32, warps = 0, min_ctas_per_sm = 0, stages = 0, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = true, conditional_rescale = false>
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>

// CHECK-LABEL: func.func @packed(
// CHECK-DAG: %[[B:.*]] = memref.dim %arg0, %c0
// CHECK-DAG: %[[H:.*]] = memref.dim %arg0, %c1
// CHECK-DAG: %[[NQ:.*]] = memref.dim %arg0, %c2
// CHECK-DAG: %[[HKV:.*]] = memref.dim %arg1, %c1
// CHECK-DAG: %[[NK:.*]] = memref.dim %arg1, %c2
// CHECK: %[[GROUP:.*]] = arith.divui %[[H]], %[[HKV]]
// CHECK: %[[ROWS:.*]] = arith.muli %[[GROUP]], %[[NQ]]
// CHECK: %[[TILES:.*]] = arith.ceildivsi %[[ROWS]], %c64
// CHECK: attn.tile_grid (%[[BI:.*]], %[[KVH:.*]], %[[TI:.*]]) in (%[[B]], %[[HKV]], %[[TILES]]) {
// CHECK:   %[[QH:.*]] = arith.muli %[[KVH]], %[[GROUP]]
// CHECK:   %[[ROW:.*]] = arith.muli %[[TI]], %c64
// CHECK:   %[[Q:.*]] = attn.load_tile %arg0[%[[BI]], %[[QH]], %[[ROW]]] rows_per_head %[[NQ]] bounds %[[ROWS]] : {{.*}} -> tensor<64x64xbf16>
// CHECK:   %[[LAST:.*]] = arith.subi %[[NQ]], %{{.*}}
// CHECK:   %[[HI:.*]] = arith.addi %{{.*}}, %[[LAST]]
// CHECK:   %[[PAST:.*]] = arith.addi %[[HI]], %{{.*}}
// CHECK:   %[[CLAMP:.*]] = arith.maxsi %[[PAST]], %{{.*}}
// CHECK:   %[[UB:.*]] = arith.minsi %[[NK]], %[[CLAMP]]
// CHECK:   scf.for %[[KV:.*]] = %{{.*}} to %[[UB]] step %c32
// CHECK:     attn.load_tile %arg1[%[[BI]], %[[KVH]], %[[KV]]] bounds %[[NK]]
// CHECK:     attn.load_tile %arg2[%[[BI]], %[[KVH]], %[[KV]]] bounds %[[NK]]
// CHECK:     attn.online_attention %[[Q]], {{.*}} at [%[[ROW]], %[[KV]]] rows_per_head %[[NQ]] bounds [%[[NQ]], %[[NK]]] scale %arg5 positive_scale batch %[[BI]] head %[[QH]] captures({{.*}}) mask_mod {
// CHECK:   attn.store_tile %{{.*}}, %arg3[%[[BI]], %[[QH]], %[[ROW]]] rows_per_head %[[NQ]] bounds %[[ROWS]] : tensor<64x64xbf16>
// CHECK:   attn.store_tile %{{.*}}, %arg4[%[[BI]], %[[QH]], %[[ROW]]] rows_per_head %[[NQ]] bounds %[[ROWS]] : tensor<64xf32>
func.func @packed(%q: !t, %k: !t, %v: !t, %o: !t, %lse: !lse, %s: f32) attributes {attn.config = #pack} {
  attn.sdpa %q, %k, %v into %o lse %lse scale %s mask <causal> positive_scale : !t, !t, !t -> !t, !lse
  return
}

// -----

// The configuration may sit on any enclosing op.
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>

// CHECK-LABEL: func.func @module_config(
// CHECK: attn.load_tile %arg0{{.*}} -> tensor<32x64xbf16>
// CHECK: scf.for {{.*}} step %c16
module attributes {attn.config = #attn.config<mapping = "host", chip = "", block_m = 32, block_n = 16, warps = 0, min_ctas_per_sm = 0, stages = 0, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>} {
  func.func @module_config(%q: !t, %k: !t, %v: !t, %o: !t) {
    attn.sdpa %q, %k, %v into %o : !t, !t, !t -> !t
    return
  }
}

// -----

// A sliding window as a mask_mod (Mistral: query i sees keys i - w .. i):
// its structure bounds the loop on both sides, so the tiles left of the
// window are never visited either: from the first query's lowest key,
// rounded down to a tile, to the last query's highest key.
#cfg = #attn.config<mapping = "host", chip = "", block_m = 64, block_n = 32, warps = 0, min_ctas_per_sm = 0, stages = 0, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>

// CHECK-LABEL: func.func @window(
// CHECK: attn.tile_grid
// CHECK:   %[[ROW:.*]] = arith.muli
// The lowest key of the first query: -(w - row), then at least 0, rounded
// down to a tile.
// CHECK:   %[[NEGROW:.*]] = arith.muli %[[ROW]], %c-1
// CHECK:   %[[F:.*]] = arith.addi %arg4, %[[NEGROW]]
// CHECK:   %[[LO:.*]] = arith.subi %{{.*}}, %[[F]]
// CHECK:   %[[LO0:.*]] = arith.maxsi %[[LO]], %{{.*}}
// CHECK:   %[[TILE:.*]] = arith.divui %[[LO0]], %{{.*}}
// CHECK:   %[[LB:.*]] = arith.muli %[[TILE]], %{{.*}}
// CHECK:   %[[UB:.*]] = arith.minsi %{{.*}}, %{{.*}}
// CHECK:   scf.for %{{.*}} = %[[LB]] to %[[UB]] step %c32
func.func @window(%q: !t, %k: !t, %v: !t, %o: !t, %w: index) attributes {attn.config = #cfg} {
  attn.sdpa %q, %k, %v into %o captures(%w : index) mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index, %n: index):
    %lo = arith.subi %i, %n : index
    %in = arith.cmpi sge, %j, %lo : index
    %below = arith.cmpi sle, %j, %i : index
    %seen = arith.andi %in, %below : i1
    attn.yield %seen : i1
  } : !t, !t, !t -> !t
  return
}

// -----

// A mask the structure cannot read (document ids) leaves every tile
// visited: [0, Nk).
#cfg = #attn.config<mapping = "host", chip = "", block_m = 64, block_n = 32, warps = 0, min_ctas_per_sm = 0, stages = 0, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!ids = memref<?xi32>

// CHECK-LABEL: func.func @document(
// CHECK: %[[NK:.*]] = memref.dim %arg1, %c2
// CHECK: attn.tile_grid
// CHECK:   scf.for %{{.*}} = %c0{{.*}} to %[[NK]] step %c32
// CHECK:     attn.online_attention {{.*}} captures(%arg4 : memref<?xi32>) mask_mod {
// CHECK:       memref.load
func.func @document(%q: !t, %k: !t, %v: !t, %o: !t, %ids: !ids) attributes {attn.config = #cfg} {
  attn.sdpa %q, %k, %v into %o captures(%ids : !ids) mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index, %d: !ids):
    %x = memref.load %d[%i] : !ids
    %y = memref.load %d[%j] : !ids
    %same = arith.cmpi eq, %x, %y : i32
    attn.yield %same : i1
  } : !t, !t, !t -> !t
  return
}

// -----

// Document ids marked non-decreasing (packed sequences): each query tile
// visits the keys from the first key of its first query's document to the
// last key of its last query's, both found by one search that narrows each
// range 16 ways a step (15 probes of each end loaded together).
#cfg = #attn.config<mapping = "host", chip = "", block_m = 64, block_n = 32, warps = 0, min_ctas_per_sm = 0, stages = 0, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!ids = memref<?xi32>

// CHECK-LABEL: func.func @sorted_documents(
// CHECK: attn.tile_grid
// CHECK:   %[[ROW:.*]] = arith.muli
// CHECK:   %[[FIRST:.*]] = memref.load %arg4[%[[ROW]]]
// CHECK:   %[[LAST:.*]] = memref.load %arg4[
// CHECK:   %[[ENDS:.*]]:4 = scf.while {{.*}} : (index, index, index, index) -> (index, index, index, index)
// CHECK-COUNT-15: memref.load %arg4
// CHECK:     arith.cmpi slt, %{{.*}}, %[[FIRST]] : i32
// CHECK-COUNT-15: memref.load %arg4
// CHECK:     arith.cmpi sle, %{{.*}}, %[[LAST]] : i32
// CHECK-NOT: memref.load
// CHECK:     scf.yield
// CHECK:   %[[TILE:.*]] = arith.divui %{{.*}}, %{{.*}}
// CHECK:   %[[LB:.*]] = arith.muli %[[TILE]]
// CHECK:   scf.for %{{.*}} = %[[LB]] to %{{.*}} step %c32
func.func @sorted_documents(%q: !t, %k: !t, %v: !t, %o: !t, %ids: !ids) attributes {attn.config = #cfg} {
  attn.sdpa %q, %k, %v into %o captures(%ids : !ids) mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index, %d: !ids):
    %x = memref.load %d[%i] {attn.non_decreasing} : !ids
    %y = memref.load %d[%j] {attn.non_decreasing} : !ids
    %same = arith.cmpi eq, %x, %y : i32
    attn.yield %same : i1
  } : !t, !t, !t -> !t
  return
}

// -----

// The backward pass: two grids. Per query tile the row terms rowsum(dO ∘ O)
// go to the workspace, then dQ sums dS·K over the K/V tiles the causal mask
// lets it see; per K/V tile dK and dV sum over the query heads of its group
// and the query tiles that see it (causal: from the tile's first key, down
// to a multiple of block_n), with keys-major steps (1xR row terms). A CTA of
// either grid owns block_m rows (queries, then keys) and steps over block_n
// rows of the other side: 64 keys a K/V tile, 32 queries a step.
#cfg = #attn.config<mapping = "host", chip = "", block_m = 64, block_n = 32, warps = 0, min_ctas_per_sm = 0, stages = 0, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>

// CHECK-LABEL: func.func @backward(
// CHECK: attn.tile_grid (%[[B:.*]], %[[H:.*]], %[[T:.*]]) in
// CHECK:   %[[ROW:.*]] = arith.muli %[[T]], %{{.*}}
// CHECK:   %[[Q:.*]] = attn.load_tile %arg0[%[[B]], %[[H]], %[[ROW]]] {{.*}} -> tensor<64x64xbf16>
// CHECK:   %[[DO:.*]] = attn.load_tile %arg4[%[[B]], %[[H]], %[[ROW]]] {{.*}} -> tensor<64x64xbf16>
// CHECK:   %[[O:.*]] = attn.load_tile %arg3[%[[B]], %[[H]], %[[ROW]]] {{.*}} -> tensor<64x64xbf16>
// CHECK:   %[[LSE:.*]] = attn.load_tile %arg5[%[[B]], %[[H]], %[[ROW]]] {{.*}} -> tensor<64xf32>
// CHECK:   %[[PROD:.*]] = attn.map(%[[DO]], %[[O]] : tensor<64x64xbf16>, tensor<64x64xbf16>) -> tensor<64x64xf32>
// CHECK:   %[[DELTA:.*]] = attn.reduce <add> %[[PROD]]
// CHECK:   attn.store_tile %[[DELTA]], %arg9[%[[B]], %[[H]], %[[ROW]]]
// CHECK:   %[[DQ:.*]] = scf.for %[[KV:.*]] = {{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<64x64xf32>)
// CHECK:     %[[K:.*]] = attn.load_tile %arg1
// CHECK:     %[[V:.*]] = attn.load_tile %arg2
// CHECK:     %{{.*}}, %[[DS:.*]] = attn.score_grad %[[Q]], %[[K]], %[[V]], %[[DO]], %[[LSE]], %[[DELTA]] at [%[[ROW]], %[[KV]]] {{.*}} positive_scale batch %[[B]] head %[[H]] {{.*}} mask_mod
// CHECK:     attn.matmul %[[DS]], %[[K]], %[[ACC]] : tensor<64x32xbf16>, tensor<32x64xbf16>, tensor<64x64xf32>
// CHECK:   attn.map(%[[DQ]] : tensor<64x64xf32>) -> tensor<64x64xbf16>
// CHECK:     arith.mulf %{{.*}}, %arg10
// CHECK:   attn.store_tile %{{.*}}, %arg6[%[[B]], %[[H]], %[[ROW]]]
// CHECK: attn.tile_grid (%[[B2:.*]], %[[G:.*]], %[[T2:.*]]) in
// CHECK:   %[[KV2:.*]] = arith.muli %[[T2]], %{{.*}}
// CHECK:   %[[K2:.*]] = attn.load_tile %arg1[%[[B2]], %[[G]], %[[KV2]]]
// CHECK:   %[[V2:.*]] = attn.load_tile %arg2[%[[B2]], %[[G]], %[[KV2]]]
// One loop over (query head, query tile) pairs: G · T iterations, T the
// query tiles that see this K/V tile.
// CHECK:   %[[FIRST:.*]] = arith.muli %[[G]], %[[GROUP:.*]] : index
// CHECK:   %[[SPAN:.*]] = arith.subi %{{.*}}, %[[LOWER:.*]] : index
// CHECK:   %[[CT:.*]] = arith.ceildivsi %[[SPAN]], %{{.*}} : index
// CHECK:   %[[T:.*]] = arith.maxsi %[[CT]], %{{.*}} : index
// CHECK:   %[[PAIRS:.*]] = arith.muli %[[GROUP]], %[[T]] : index
// CHECK:   %[[KD:.*]]:2 = scf.for %[[IT:.*]] = %{{.*}} to %[[PAIRS]] step %{{.*}} iter_args(%[[DK:.*]] = %{{.*}}, %[[DV:.*]] = %{{.*}})
// The pair's head and tile by a 32-bit division.
// CHECK:     %[[IT32:.*]] = arith.index_castui %[[IT]] : index to i32
// CHECK:     %[[T32:.*]] = arith.index_castui %[[T]] : index to i32
// CHECK:     %[[HOFF32:.*]] = arith.divui %[[IT32]], %[[T32]] : i32
// CHECK:     %[[TILES32:.*]] = arith.muli %[[HOFF32]], %[[T32]] : i32
// CHECK:     %[[TI32:.*]] = arith.subi %[[IT32]], %[[TILES32]] : i32
// CHECK:     %[[HOFF:.*]] = arith.index_castui %[[HOFF32]] : i32 to index
// CHECK:     %[[HH:.*]] = arith.addi %[[FIRST]], %[[HOFF]] : index
// CHECK:     %[[TI:.*]] = arith.index_castui %[[TI32]] : i32 to index
// CHECK:     %[[TROW:.*]] = arith.muli %[[TI]], %{{.*}} : index
// CHECK:     %[[QR:.*]] = arith.addi %[[LOWER]], %[[TROW]] : index
// CHECK:       %[[Q2:.*]] = attn.load_tile %arg0[%[[B2]], %[[HH]], %[[QR]]]
// CHECK:       %[[DO2:.*]] = attn.load_tile %arg4[%[[B2]], %[[HH]], %[[QR]]]
// CHECK:       %[[LSE2:.*]] = attn.load_tile %arg5[%[[B2]], %[[HH]], %[[QR]]] {{.*}} -> tensor<1x32xf32>
// CHECK:       %[[DELTA2:.*]] = attn.load_tile %arg9[%[[B2]], %[[HH]], %[[QR]]] {{.*}} -> tensor<1x32xf32>
// CHECK:       %[[P:.*]], %[[DST:.*]] = attn.score_grad %[[Q2]], %[[K2]], %[[V2]], %[[DO2]], %[[LSE2]], %[[DELTA2]] at [%[[QR]], %[[KV2]]] {{.*}} keys_major
// CHECK:       attn.matmul %[[DST]], %[[Q2]], %[[DK]] : tensor<64x32xbf16>, tensor<32x64xbf16>, tensor<64x64xf32>
// CHECK:       attn.matmul %[[P]], %[[DO2]], %[[DV]] : tensor<64x32xbf16>, tensor<32x64xbf16>, tensor<64x64xf32>
// CHECK:   attn.store_tile %{{.*}}, %arg7[%[[B2]], %[[G]], %[[KV2]]]
// CHECK:   attn.store_tile %{{.*}}, %arg8[%[[B2]], %[[G]], %[[KV2]]]
// CHECK-NOT: attn.sdpa_backward
func.func @backward(%q: !t, %k: !t, %v: !t, %o: !t, %do: !t, %lse: !lse, %dq: !t, %dk: !t, %dv: !t, %delta: !lse, %s: f32) attributes {attn.config = #cfg} {
  attn.sdpa_backward %q, %k, %v, %o, %do, %lse into %dq, %dk, %dv delta %delta scale %s mask <causal> positive_scale
      : !t, !t, !t, !t, !lse -> !t, !t, !t, !lse
  return
}

// -----

// A window (keys i - 8 .. i + 4) bounds the backward's query loop on both
// sides: queries k - 4 .. k + 8 of a key tile's keys k.
#cfg = #attn.config<mapping = "host", chip = "", block_m = 64, block_n = 32, warps = 0, min_ctas_per_sm = 0, stages = 0, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>

// CHECK-LABEL: func.func @backward_window(
// CHECK: attn.tile_grid
// CHECK: attn.tile_grid (%{{.*}}, %{{.*}}, %[[T:.*]]) in
// CHECK:   %[[KV:.*]] = arith.muli %[[T]], %{{.*}}
// CHECK:   %[[LAST:.*]] = arith.subi %{{.*}}, %{{.*}} : index
// The upper bound from the last key (k + 8), the lower from the first
// (-(4 - k)).
// CHECK:   %[[C8:.*]] = arith.constant 8 : index
// CHECK:   arith.addi %[[C8]], %[[LAST]]
// CHECK:   %[[C4:.*]] = arith.constant 4 : index
// CHECK:   %[[NEG:.*]] = arith.muli %[[KV]], %{{.*}}
// CHECK:   arith.addi %[[C4]], %[[NEG]]
// CHECK:   scf.for
// CHECK:     attn.score_grad {{.*}} keys_major
func.func @backward_window(%q: !t, %k: !t, %v: !t, %o: !t, %do: !t, %lse: !lse, %dq: !t, %dk: !t, %dv: !t, %delta: !lse, %s: f32) attributes {attn.config = #cfg} {
  attn.sdpa_backward %q, %k, %v, %o, %do, %lse into %dq, %dk, %dv delta %delta scale %s mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c8 = arith.constant 8 : index
    %c4 = arith.constant 4 : index
    %lo = arith.subi %i, %c8 : index
    %hi = arith.addi %i, %c4 : index
    %a = arith.cmpi sge, %j, %lo : index
    %z = arith.cmpi sle, %j, %hi : index
    %in = arith.andi %a, %z : i1
    attn.yield %in : i1
  } : !t, !t, !t, !t, !lse -> !t, !t, !t, !lse
  return
}

// -----

// Past D = 128 the NVIDIA backward gives dK and dV a grid each (a thread
// cannot hold both accumulators): three grids, the K/V tiles' loops carry
// one accumulator each and each stores its own gradient.
#cfg = #attn.config<mapping = "mma.sync", chip = "sm_90a", block_m = 32, block_n = 32, warps = 2, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
!t = memref<?x?x?x256xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>

// CHECK-LABEL: func.func @backward_split_grads(
// CHECK:      attn.tile_grid
// CHECK:        scf.for {{.*}} -> (tensor<32x256xf32>)
// CHECK:        attn.store_tile %{{.*}}, %arg6[
// CHECK:      attn.tile_grid {{.*}} attributes {attn.grid = "keys"}
// CHECK:        %[[DK:.*]] = scf.for {{.*}} -> (tensor<32x256xf32>)
// CHECK:          %{{.*}}, %[[DS:.*]] = attn.score_grad {{.*}} keys_major
// CHECK-NEXT:     %[[ACC:.*]] = attn.matmul %[[DS]], %{{.*}} : tensor<32x32xbf16>, tensor<32x256xbf16>, tensor<32x256xf32>
// CHECK-NEXT:     scf.yield %[[ACC]]
// CHECK-NOT:    %arg8
// CHECK:        attn.store_tile %{{.*}}, %arg7[
// CHECK-NOT:    %arg8
// CHECK:      attn.tile_grid {{.*}} attributes {attn.grid = "keys"}
// CHECK:        %[[DV:.*]] = scf.for {{.*}} -> (tensor<32x256xf32>)
// CHECK:          %[[P:.*]], %{{.*}} = attn.score_grad {{.*}} keys_major
// CHECK-NEXT:     %[[ACCV:.*]] = attn.matmul %[[P]], %{{.*}} : tensor<32x32xbf16>, tensor<32x256xbf16>, tensor<32x256xf32>
// CHECK-NEXT:     scf.yield %[[ACCV]]
// CHECK-NOT:    %arg7
// CHECK:        attn.store_tile %{{.*}}, %arg8[
// CHECK-NOT:  attn.tile_grid
func.func @backward_split_grads(%q: !t, %k: !t, %v: !t, %o: !t, %do: !t, %lse: !lse, %dq: !t, %dk: !t, %dv: !t, %delta: !lse, %s: f32) attributes {attn.config = #cfg} {
  attn.sdpa_backward %q, %k, %v, %o, %do, %lse into %dq, %dk, %dv delta %delta scale %s
      : !t, !t, !t, !t, !lse -> !t, !t, !t, !lse
  return
}

// -----

// The host keeps dK and dV in one grid at any head dim.
#cfg = #attn.config<mapping = "host", chip = "", block_m = 64, block_n = 32, warps = 0, min_ctas_per_sm = 0, stages = 0, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
!t = memref<?x?x?x256xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>

// CHECK-LABEL: func.func @backward_host_joint_grads(
// CHECK:      attn.tile_grid
// CHECK:      attn.tile_grid
// CHECK:        scf.for {{.*}} -> (tensor<64x256xf32>, tensor<64x256xf32>)
// CHECK-NOT:  attn.tile_grid
func.func @backward_host_joint_grads(%q: !t, %k: !t, %v: !t, %o: !t, %do: !t, %lse: !lse, %dq: !t, %dk: !t, %dv: !t, %delta: !lse, %s: f32) attributes {attn.config = #cfg} {
  attn.sdpa_backward %q, %k, %v, %o, %do, %lse into %dq, %dk, %dv delta %delta scale %s
      : !t, !t, !t, !t, !lse -> !t, !t, !t, !lse
  return
}

// -----

// With dQ's accumulator (the atomic backward): the query tiles' grid forms
// only the row terms (no Q, no LSE, no loop); the K/V tiles' loop adds each
// pair's dS K, (dSᵀ)ᵀ K from the keys-major tile, into the accumulator at
// the pair's query rows; a third grid stores scale · accumulator as dQ.
#cfg = #attn.config<mapping = "host", chip = "", block_m = 64, block_n = 32, warps = 0, min_ctas_per_sm = 0, stages = 0, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!acc = memref<?x?x?x64xf32, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>

// CHECK-LABEL: func.func @backward_atomic(
// CHECK:      attn.tile_grid
// CHECK-NOT:    %arg0[
// CHECK-NOT:    %arg5[
// CHECK-NOT:    scf.for
// CHECK:        attn.store_tile %{{.*}}, %arg9[
// CHECK-NEXT: }
// CHECK:      attn.tile_grid (%[[B:.*]], %[[G:.*]], %{{.*}}) in {{.*}} attributes {attn.grid = "keys"}
// CHECK:        %[[K:.*]] = attn.load_tile %arg1[
// CHECK:        scf.for
// CHECK:          %[[H:.*]] = arith.addi
// CHECK:          %[[ROW:.*]] = arith.addi
// CHECK:          %{{.*}}, %[[DST:.*]] = attn.score_grad {{.*}} keys_major
// CHECK:          attn.matmul %[[DST]], %{{.*}}, %{{.*}} : tensor<64x32xbf16>, tensor<32x64xbf16>, tensor<64x64xf32>
// CHECK:          %[[PART:.*]] = attn.matmul %[[DST]], %[[K]], %{{.*}} transpose_lhs : tensor<64x32xbf16>, tensor<64x64xbf16>, tensor<32x64xf32>
// CHECK-NEXT:     attn.store_tile %[[PART]], %arg11[%[[B]], %[[H]], %[[ROW]]] accumulate bounds
// CHECK:      attn.tile_grid
// CHECK:        %[[ACC:.*]] = attn.load_tile %arg11[{{.*}}] bounds {{.*}} -> tensor<64x64xf32>
// CHECK:        %[[DQ:.*]] = attn.map(%[[ACC]] :
// CHECK:          arith.mulf
// CHECK:        attn.store_tile %[[DQ]], %arg6[
// CHECK-NOT:  attn.sdpa_backward
func.func @backward_atomic(%q: !t, %k: !t, %v: !t, %o: !t, %do: !t, %lse: !lse, %dq: !t, %dk: !t, %dv: !t, %delta: !lse, %s: f32, %acc: !acc) attributes {attn.config = #cfg} {
  attn.sdpa_backward %q, %k, %v, %o, %do, %lse into %dq, %dk, %dv delta %delta dq_accum %acc : !acc scale %s mask <causal>
      : !t, !t, !t, !t, !lse -> !t, !t, !t, !lse
  return
}

// -----

// Split gradients (past D = 128 on NVIDIA): dQ's part is formed in the dK
// grid, whose loop holds dS, and not in the dV grid.
#cfg = #attn.config<mapping = "mma.sync", chip = "sm_90a", block_m = 32, block_n = 32, warps = 2, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
!t = memref<?x?x?x256xbf16, strided<[?, ?, ?, 1], offset: ?>>
!acc = memref<?x?x?x256xf32, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>

// CHECK-LABEL: func.func @backward_atomic_split_grads(
// CHECK:      attn.tile_grid
// CHECK:      attn.tile_grid {{.*}} attributes {attn.grid = "keys"}
// CHECK:        transpose_lhs
// CHECK:        attn.store_tile %{{.*}}, %arg11[{{.*}}] accumulate
// CHECK:        attn.store_tile %{{.*}}, %arg7[
// CHECK:      attn.tile_grid {{.*}} attributes {attn.grid = "keys"}
// CHECK-NOT:    accumulate
// CHECK:        attn.store_tile %{{.*}}, %arg8[
// CHECK:      attn.tile_grid
// CHECK:        attn.load_tile %arg11
// CHECK:        attn.store_tile %{{.*}}, %arg6[
func.func @backward_atomic_split_grads(%q: !t, %k: !t, %v: !t, %o: !t, %do: !t, %lse: !lse, %dq: !t, %dk: !t, %dv: !t, %delta: !lse, %s: f32, %acc: !acc) attributes {attn.config = #cfg} {
  attn.sdpa_backward %q, %k, %v, %o, %do, %lse into %dq, %dk, %dv delta %delta dq_accum %acc : !acc scale %s
      : !t, !t, !t, !t, !lse -> !t, !t, !t, !lse
  return
}
