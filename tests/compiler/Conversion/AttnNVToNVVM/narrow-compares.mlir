// RUN: attn-opt %s --split-input-file --convert-attn-nv-to-nvvm | FileCheck %s

// narrow_compares (AffineCoords.h): a signed comparison of two coordinate
// forms, base + constant, is the bases' difference -- once a thread,
// saturated to ±2^30 and narrowed to i32 -- against the constants'
// difference, one 32-bit compare per value. A thread's values of a 64x16
// accumulator lie at rows {0, 8} and columns {0, 1, 8, 9} from its base, so
// j <= i compares the gap (col base - row base) with row - col offsets 0,
// -1, 8, 7, -8, -9, 0, -1; j >= n the gap (col base - n) with -(col
// offset).
#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 64, block_n = 16, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = true, narrow_compares = true>
!acc = tensor<64x16xf32, #attn_nv.acc<warps = 4>>

// CHECK-LABEL: gpu.func @causal_and_bound
// CHECK: %[[D:.*]] = arith.subi %{{.*}}, %{{.*}} : i64
// CHECK: %[[HI:.*]] = arith.minsi %[[D]], %c1073741824_i64
// CHECK: %[[LO:.*]] = arith.maxsi %[[HI]], %c-1073741824_i64
// CHECK-NEXT: %[[GAP:.*]] = arith.trunci %[[LO]] : i64 to i32
// CHECK: arith.cmpi sle, %[[GAP]], %c0_i32 : i32
// CHECK: %[[NGAP:.*]] = arith.trunci
// CHECK: arith.cmpi sge, %[[NGAP]], %c0_i32{{.*}} : i32
// CHECK: arith.cmpi sle, %[[GAP]], %c-1_i32 : i32
// CHECK: arith.cmpi sge, %[[NGAP]], %c-1_i32{{.*}} : i32
// CHECK: arith.cmpi sle, %[[GAP]], %c8_i32 : i32
// CHECK: arith.cmpi sle, %[[GAP]], %c7_i32 : i32
// CHECK: arith.cmpi sle, %[[GAP]], %c-8_i32 : i32
// CHECK: arith.cmpi sle, %[[GAP]], %c-9_i32 : i32
// CHECK-NOT: arith.cmpi {{.*}} : index
// CHECK: gpu.return
func.func @causal_and_bound(%row: index, %col: index, %n: index) attributes {attn.config = #cfg} {
  %s0 = arith.constant dense<0.0> : !acc
  %ninf = arith.constant 0xFF800000 : f32
  %y = attn.map(%s0 : !acc) at [%row, %col] -> !acc {
  ^bb0(%i: index, %j: index, %a: f32):
    %seen = arith.cmpi sle, %j, %i : index
    %past = arith.cmpi sge, %j, %n : index
    %no = arith.xori %seen, %past : i1
    %z = arith.select %no, %a, %ninf : f32
    attn.yield %z : f32
  }
  return
}

// An unsigned comparison stays a comparison of the index values.
// CHECK-LABEL: gpu.func @unsigned
// CHECK-NOT: arith.trunci
// CHECK: arith.cmpi ule, %{{.*}}, %{{.*}} : index
func.func @unsigned(%row: index, %col: index) attributes {attn.config = #cfg} {
  %s0 = arith.constant dense<0.0> : !acc
  %ninf = arith.constant 0xFF800000 : f32
  %y = attn.map(%s0 : !acc) at [%row, %col] -> !acc {
  ^bb0(%i: index, %j: index, %a: f32):
    %seen = arith.cmpi ule, %j, %i : index
    %z = arith.select %seen, %a, %ninf : f32
    attn.yield %z : f32
  }
  return
}

// -----

// Without narrow_compares the coordinates compare as index values.
#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 64, block_n = 16, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = true>
!acc = tensor<64x16xf32, #attn_nv.acc<warps = 4>>

// CHECK-LABEL: gpu.func @wide
// CHECK-NOT: arith.trunci
// CHECK: arith.cmpi sle, %{{.*}}, %{{.*}} : index
func.func @wide(%row: index, %col: index) attributes {attn.config = #cfg} {
  %s0 = arith.constant dense<0.0> : !acc
  %ninf = arith.constant 0xFF800000 : f32
  %y = attn.map(%s0 : !acc) at [%row, %col] -> !acc {
  ^bb0(%i: index, %j: index, %a: f32):
    %seen = arith.cmpi sle, %j, %i : index
    %z = arith.select %seen, %a, %ninf : f32
    attn.yield %z : f32
  }
  return
}
