// RUN: attn-opt %s --attn-tile | FileCheck %s

// Split-KV: the forward's grid runs n = max(num_splits, 1) programs per
// batch row (program z: batch z / n, split z mod n); split s visits
// ceil(tiles / n) whole K/V tiles of its query tile's range from
// lower + s * that, clamped to the range's end (empty past it), and stores
// its f32 partial (O_s, LSE_s) at workspace row b * n + s, the program's
// own index z (a packed batch: s, @split_varlen below). A second grid
// over the forward's query tiles merges the n partials of its rows with the
// online-softmax merge (base-2 max, -inf guarded) and finalizes into O and
// the LSE.
#cfg = #attn.config<mapping = "host", chip = "", block_m = 64, block_n = 32, warps = 0, min_ctas_per_sm = 0, stages = 0, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>
!po = memref<?x?x?x64xf32, strided<[?, ?, ?, 1], offset: ?>>

// CHECK-LABEL: func.func @split(
// CHECK-DAG: %[[B:.*]] = memref.dim %arg0, %c0
// CHECK-DAG: %[[NQ:.*]] = memref.dim %arg0, %c2
// CHECK-DAG: %[[NK:.*]] = memref.dim %arg1, %c2
// CHECK: %[[TILES:.*]] = arith.ceildivsi %[[NQ]], %c64
// CHECK: %[[N:.*]] = arith.maxsi %arg6, %{{.*}}
// CHECK: %[[BN:.*]] = arith.muli %[[B]], %[[N]]
// CHECK: attn.tile_grid (%[[Z:.*]], %[[H:.*]], %[[T:.*]]) in (%[[BN]], %{{.*}}, %[[TILES]]) attributes {attn.grid = "splits"} {
// CHECK:   %[[S:.*]] = arith.remui %[[Z]], %[[N]]
// CHECK:   %[[BI:.*]] = arith.divui %[[Z]], %[[N]]
// CHECK:   %[[ROW:.*]] = arith.muli %[[T]], %c64
// CHECK:   attn.load_tile %arg0[%[[BI]], %[[H]], %[[ROW]]]
// CHECK:   %[[UPPER:.*]] = arith.minsi %[[NK]], %{{.*}}
// CHECK:   %[[KT:.*]] = arith.ceildivsi %{{.*}}, %c32
// CHECK:   %[[PER:.*]] = arith.ceildivsi %[[KT]], %[[N]]
// CHECK:   %[[SPAN:.*]] = arith.muli %[[PER]], %c32
// CHECK:   %[[OFF:.*]] = arith.muli %[[S]], %[[SPAN]]
// CHECK:   %[[FROM:.*]] = arith.addi %{{.*}}, %[[OFF]]
// CHECK:   %[[LO:.*]] = arith.minsi %[[FROM]], %[[UPPER]]
// CHECK:   %[[END:.*]] = arith.addi %[[LO]], %[[SPAN]]
// CHECK:   %[[HI:.*]] = arith.minsi %[[END]], %[[UPPER]]
// CHECK:   %[[ST:.*]]:3 = scf.for %[[KV:.*]] = %[[LO]] to %[[HI]] step %c32
// CHECK:     attn.load_tile %arg1[%[[BI]], %{{.*}}, %[[KV]]] bounds %[[NK]]
// CHECK:     attn.online_attention
// CHECK:   %[[O:.*]], %[[L:.*]] = attn.finalize %[[ST]]#2, %[[ST]]#0, %[[ST]]#1 : tensor<64x64xf32>, tensor<64xf32> -> tensor<64x64xf32>
// CHECK:   attn.store_tile %[[O]], %arg7[%[[Z]], %[[H]], %[[ROW]]] bounds %[[NQ]] : tensor<64x64xf32>
// CHECK:   attn.store_tile %[[L]], %arg8[%[[Z]], %[[H]], %[[ROW]]] bounds %[[NQ]] : tensor<64xf32>
// CHECK: }
// CHECK: attn.tile_grid (%[[MB:.*]], %[[MH:.*]], %[[MT:.*]]) in (%[[B]], %{{.*}}, %[[TILES]]) attributes {attn.grid = "rows"} {
// CHECK:   %[[MROW:.*]] = arith.muli %[[MT]], %c64
// CHECK:   %[[FIRST:.*]] = arith.muli %[[MB]], %[[N]]
// CHECK:   %[[M:.*]]:3 = scf.for %[[SI:.*]] = %{{.*}} to %[[N]] step %{{.*}} iter_args(%[[RM:.*]] = %{{.*}}, %[[RL:.*]] = %{{.*}}, %[[RU:.*]] = %{{.*}})
// CHECK:     %[[P:.*]] = arith.addi %[[FIRST]], %[[SI]]
// CHECK:     %[[LS:.*]] = attn.load_tile %arg8[%[[P]], %[[MH]], %[[MROW]]] bounds %[[NQ]] {{.*}} -> tensor<64xf32>
// CHECK:     %[[OS:.*]] = attn.load_tile %arg7[%[[P]], %[[MH]], %[[MROW]]] bounds %[[NQ]] {{.*}} -> tensor<64x64xf32>
// CHECK:     %[[X:.*]] = attn.map(%[[LS]] : tensor<64xf32>)
// CHECK:       arith.constant 1.44269502
// CHECK:     %[[MAX:.*]] = attn.map(%[[RM]], %[[X]] : {{.*}})
// CHECK:       arith.maxnumf
// CHECK:     %[[SAFE:.*]] = attn.map(%[[MAX]] : {{.*}})
// CHECK:       arith.cmpf oeq, %{{.*}}, %{{.*}} : f32
// CHECK:       arith.select
// CHECK:     %[[ALPHA:.*]] = attn.map(%[[RM]], %[[SAFE]] : {{.*}})
// CHECK:       math.exp2
// CHECK:     %[[BETA:.*]] = attn.map(%[[X]], %[[SAFE]] : {{.*}})
// CHECK:       math.exp2
// CHECK:     %[[SUM:.*]] = attn.map(%[[RL]], %[[ALPHA]], %[[BETA]] : {{.*}})
// CHECK:     %[[ACC:.*]] = attn.map(%[[RU]], %[[OS]], %[[ALPHA]], %[[BETA]] : {{.*}}) -> tensor<64x64xf32>
// CHECK:     scf.yield %[[MAX]], %[[SUM]], %[[ACC]]
// CHECK:   %[[FO:.*]], %[[FL:.*]] = attn.finalize %[[M]]#2, %[[M]]#0, %[[M]]#1 : tensor<64x64xf32>, tensor<64xf32> -> tensor<64x64xbf16>
// CHECK:   attn.store_tile %[[FO]], %arg3[%[[MB]], %[[MH]], %[[MROW]]] bounds %[[NQ]]
// CHECK:   attn.store_tile %[[FL]], %arg4[%[[MB]], %[[MH]], %[[MROW]]] bounds %[[NQ]]
func.func @split(%q: !t, %k: !t, %v: !t, %o: !t, %lse: !lse, %s: f32, %n: index, %po: !po, %pl: !lse) attributes {attn.config = #cfg} {
  attn.sdpa %q, %k, %v into %o lse %lse scale %s split(%n, %po, %pl : !po, !lse) mask <causal_bottom_right> positive_scale : !t, !t, !t -> !t, !lse
  return
}

// A packed batch: split s of sequence b stores at workspace row s (one
// batch row of packed queries), at the sequence's rows; the merge runs
// over the sequences' query tiles and reads and writes those rows.
!p = memref<1x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse1 = memref<1x?x?xf32, strided<[?, ?, ?], offset: ?>>
!cu = memref<?xi32, strided<[?], offset: ?>>
// CHECK-LABEL: func.func @split_varlen(
// CHECK: attn.tile_grid (%[[Z:.*]], %[[H:.*]], %{{.*}}) in ({{.*}}) attributes {attn.grid = "splits"} {
// CHECK:   %[[S:.*]] = arith.remui %[[Z]], %[[N:.*]] : index
// CHECK:   %[[SEQ:.*]] = arith.divui %[[Z]], %[[N]] : index
// CHECK:   memref.load %arg6[%[[SEQ]]]
// CHECK:   attn.load_tile %arg0[%{{.*}}, %[[H]], %[[QROW:.*]]] bounds %[[QEND:[^ ]*]] :
// CHECK:   scf.for
// CHECK:   attn.store_tile %{{.*}}, %arg10[%[[S]], %[[H]], %[[QROW]]] bounds %[[QEND]] : tensor<64x64xf32>
// CHECK:   attn.store_tile %{{.*}}, %arg11[%[[S]], %[[H]], %[[QROW]]] bounds %[[QEND]] : tensor<64xf32>
// CHECK: attn.tile_grid (%[[MSEQ:.*]], %[[MH:.*]], %{{.*}}) in ({{.*}}) attributes {attn.grid = "rows"} {
// CHECK:   memref.load %arg6[%[[MSEQ]]]
// CHECK:   scf.for %[[SI:.*]] = %{{.*}} to %[[N]]
// CHECK:     %[[P:.*]] = arith.addi %{{.*}}, %[[SI]] : index
// CHECK:     attn.load_tile %arg11[%[[P]], %[[MH]], %[[MROW:.*]]] bounds %[[MEND:[^ ]*]] :
// CHECK:     attn.load_tile %arg10[%[[P]], %[[MH]], %[[MROW]]] bounds %[[MEND]]
// CHECK:   attn.store_tile %{{.*}}, %arg3[%{{.*}}, %[[MH]], %[[MROW]]] bounds %[[MEND]] : tensor<64x64xbf16>
// CHECK:   attn.store_tile %{{.*}}, %arg4[%{{.*}}, %[[MH]], %[[MROW]]] bounds %[[MEND]] : tensor<64xf32>
func.func @split_varlen(%q: !p, %k: !p, %v: !p, %o: !p, %lse: !lse1, %s: f32, %cq: !cu, %ck: !cu, %maxq: index, %n: index, %po: !po, %pl: !lse) attributes {attn.config = #cfg} {
  attn.sdpa %q, %k, %v into %o lse %lse scale %s varlen(%cq, %ck, %maxq : !cu, !cu) split(%n, %po, %pl : !po, !lse) mask <causal_bottom_right> positive_scale : !p, !p, !p -> !p, !lse1
  return
}
