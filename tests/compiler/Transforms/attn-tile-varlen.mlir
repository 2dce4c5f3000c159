// RUN: attn-opt %s --attn-tile | FileCheck %s

// A variable-length batch: the grid runs over the B = size(cu_q) - 1
// sequences and ceil(max_q / block_m) query tiles; each program loads its
// sequence's offsets, clamped to the packed rows, reads and writes rows
// from the sequence's start with its end as the bound, and hands the step
// positions and lengths relative to the sequence. The bottom-right
// diagonal's shift Nk - Nq becomes the sequence's own; a tile past the
// sequence's queries visits no K/V tile.
#cfg = #attn.config<mapping = "host", chip = "", block_m = 64, block_n = 32, warps = 0, min_ctas_per_sm = 0, stages = 0, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
!t = memref<1x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<1x?x?xf32, strided<[?, ?, ?], offset: ?>>
!cu = memref<?xi32, strided<[?], offset: ?>>

// CHECK-LABEL: func.func @varlen(
// CHECK-DAG: %[[TQ:.*]] = memref.dim %arg0, %c2
// CHECK-DAG: %[[TK:.*]] = memref.dim %arg1, %c2
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
// CHECK: %[[OFFSETS:.*]] = memref.dim %arg6, %{{.*}}
// CHECK: %[[BM1:.*]] = arith.subi %[[OFFSETS]], %{{.*}}
// CHECK: %[[B:.*]] = arith.maxsi %[[BM1]], %{{.*}}
// CHECK: %[[MAXQ:.*]] = arith.maxsi %arg8, %{{.*}}
// CHECK: %[[TILES:.*]] = arith.ceildivsi %[[MAXQ]], %[[C64]]
// CHECK: attn.tile_grid (%[[SEQ:.*]], %[[HI:.*]], %[[TI:.*]]) in (%[[B]], %{{.*}}, %[[TILES]]) {
// CHECK:   %[[ROW:.*]] = arith.muli %[[TI]], %[[C64]]
// CHECK:   %[[NEXT:.*]] = arith.addi %[[SEQ]], %{{.*}}
// CHECK:   %[[Q0:.*]] = memref.load %arg6[%[[SEQ]]]
// CHECK:   %[[Q0I:.*]] = arith.index_cast %[[Q0]] : i32 to index
// CHECK:   %[[Q0LO:.*]] = arith.maxsi %[[Q0I]], %{{.*}}
// CHECK:   %[[QS:.*]] = arith.minsi %[[Q0LO]], %[[TQ]]
// CHECK:   %[[Q1:.*]] = memref.load %arg6[%[[NEXT]]]
// CHECK:   %[[Q1I:.*]] = arith.index_cast %[[Q1]] : i32 to index
// CHECK:   %[[Q1LO:.*]] = arith.maxsi %[[Q1I]], %[[QS]]
// CHECK:   %[[QE:.*]] = arith.minsi %[[Q1LO]], %[[TQ]]
// CHECK:   %[[NQ:.*]] = arith.subi %[[QE]], %[[QS]]
// CHECK:   memref.load %arg7[%[[SEQ]]]
// CHECK:   %[[KS:.*]] = arith.minsi %{{.*}}, %[[TK]]
// CHECK:   memref.load %arg7[%[[NEXT]]]
// CHECK:   %[[KE:.*]] = arith.minsi %{{.*}}, %[[TK]]
// CHECK:   %[[NK:.*]] = arith.subi %[[KE]], %[[KS]]
// CHECK:   %[[SHIFT:.*]] = arith.subi %[[NK]], %[[NQ]]
// CHECK:   %[[QROW:.*]] = arith.addi %[[QS]], %[[ROW]]
// CHECK:   %[[Q:.*]] = attn.load_tile %arg0[%[[ZERO:.*]], %[[HI]], %[[QROW]]] bounds %[[QE]]
// CHECK:   %[[CLAMPED:.*]] = arith.minsi %[[NK]], %{{.*}}
// CHECK:   %[[LIVE:.*]] = arith.cmpi slt, %[[ROW]], %[[NQ]]
// CHECK:   %[[UB:.*]] = arith.select %[[LIVE]], %[[CLAMPED]], %[[LB:.*]] : index
// CHECK:   scf.for %[[KV:.*]] = %[[LB]] to %[[UB]] step %c32
// CHECK:     %[[KROW:.*]] = arith.addi %[[KS]], %[[KV]]
// CHECK:     %[[K:.*]] = attn.load_tile %arg1[%[[ZERO]], %{{.*}}, %[[KROW]]] bounds %[[KE]]
// CHECK:     %[[V:.*]] = attn.load_tile %arg2[%[[ZERO]], %{{.*}}, %[[KROW]]] bounds %[[KE]]
// CHECK:     attn.online_attention %[[Q]], %[[K]], %[[V]], {{.*}} at [%[[ROW]], %[[KV]]] bounds [%[[NQ]], %[[NK]]] scale %arg5 positive_scale batch %[[SEQ]] head %[[HI]] captures(%[[SHIFT]] : index) mask_mod {
// CHECK:   attn.store_tile %{{.*}}, %arg3[%[[ZERO]], %[[HI]], %[[QROW]]] bounds %[[QE]]
// CHECK:   attn.store_tile %{{.*}}, %arg4[%[[ZERO]], %[[HI]], %[[QROW]]] bounds %[[QE]]
func.func @varlen(%q: !t, %k: !t, %v: !t, %o: !t, %lse: !lse, %s: f32, %cq: !cu, %ck: !cu, %maxq: index) attributes {attn.config = #cfg} {
  attn.sdpa %q, %k, %v into %o lse %lse scale %s varlen(%cq, %ck, %maxq : !cu, !cu) mask <causal_bottom_right> positive_scale : !t, !t, !t -> !t, !lse
  return
}
