// RUN: attn-opt %s --split-input-file --attn-nv-order-warpgroups | FileCheck %s
// Ordering is done once: a second run changes nothing.
// RUN: attn-opt %s --split-input-file --attn-nv-order-warpgroups --attn-nv-order-warpgroups | FileCheck %s

// With ordered_issue, each wgmma reading both operands from shared memory
// (QKᵀ) is issued in turn by the CTA's warpgroups (warps / 4 of them); P·V
// (A from registers) is not.

#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "pv_in_flight", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
#acc = #attn_nv.acc<warps = 8>
#opa = #attn_nv.operand_a<warps = 8>
!s = !attn_nv.smem<128x128xbf16, swizzle_128b>

// CHECK-LABEL: func.func @ordered(
// CHECK-SAME: %[[Q:[^:]*]]: !attn_nv.smem<128x128xbf16, swizzle_128b>, %[[K:[^:]*]]: !attn_nv.smem<128x128xbf16, swizzle_128b>, %[[V:[^:]*]]: !attn_nv.smem<128x128xbf16, swizzle_128b>, %[[P:[^:]*]]: tensor<128x128xbf16, #attn_nv.operand_a<warps = 8>>, %[[ACC:[^:]*]]: tensor<128x128xf32, #attn_nv.acc<warps = 8>>
// CHECK:      %[[S0:.*]] = attn_nv.warpgroup_turn warpgroups 2 -> tensor<128x128xf32, #attn_nv.acc<warps = 8>> {
// CHECK-NEXT:   %[[S:.*]] = attn_nv.wgmma %[[Q]], %[[K]], %[[ACC]] transpose_rhs
// CHECK-NEXT:   attn_nv.yield %[[S]] : tensor<128x128xf32, #attn_nv.acc<warps = 8>>
// CHECK-NEXT: }
// CHECK-NEXT: %[[SW:.*]] = attn_nv.wgmma_wait %[[S0]] {pending = 0 : i64}
// CHECK-NEXT: %[[O:.*]] = attn_nv.wgmma %[[P]], %[[V]], %[[SW]] :
// CHECK-NEXT: attn_nv.wgmma_wait %[[O]]
// CHECK-NOT: warpgroup_turn
func.func @ordered(%q: !s, %k: !s, %v: !s, %p: tensor<128x128xbf16, #opa>, %acc: tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc> attributes {attn.config = #cfg} {
  %s0 = attn_nv.wgmma %q, %k, %acc transpose_rhs : !s, !s, tensor<128x128xf32, #acc>
  %s = attn_nv.wgmma_wait %s0 {pending = 0 : i64} : tensor<128x128xf32, #acc>
  %o0 = attn_nv.wgmma %p, %v, %s : tensor<128x128xbf16, #opa>, !s, tensor<128x128xf32, #acc>
  %o = attn_nv.wgmma_wait %o0 {pending = 0 : i64} : tensor<128x128xf32, #acc>
  return %o : tensor<128x128xf32, #acc>
}

// -----

// Three warpgroups take three turns.
#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 192, block_n = 64, warps = 12, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
#acc = #attn_nv.acc<warps = 12>

// CHECK-LABEL: func.func @three_warpgroups(
// CHECK: attn_nv.warpgroup_turn warpgroups 3 -> tensor<192x64xf32, #attn_nv.acc<warps = 12>> {
// CHECK-NEXT: attn_nv.wgmma
func.func @three_warpgroups(%q: !attn_nv.smem<192x64xbf16, swizzle_128b>, %k: !attn_nv.smem<64x64xbf16, swizzle_128b>, %acc: tensor<192x64xf32, #acc>) -> tensor<192x64xf32, #acc> attributes {attn.config = #cfg} {
  %s0 = attn_nv.wgmma %q, %k, %acc transpose_rhs : !attn_nv.smem<192x64xbf16, swizzle_128b>, !attn_nv.smem<64x64xbf16, swizzle_128b>, tensor<192x64xf32, #acc>
  %s = attn_nv.wgmma_wait %s0 {pending = 0 : i64} : tensor<192x64xf32, #acc>
  return %s : tensor<192x64xf32, #acc>
}

// -----

// Without ordered_issue the warpgroups issue freely.
#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 64, block_n = 128, warps = 4, min_ctas_per_sm = 2, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
#acc = #attn_nv.acc<warps = 4>
!s = !attn_nv.smem<64x64xbf16, swizzle_128b>
!sk = !attn_nv.smem<128x64xbf16, swizzle_128b>

// CHECK-LABEL: func.func @unordered(
// CHECK-NOT: attn_nv.warpgroup_turn
// CHECK: attn_nv.wgmma
// CHECK-NOT: attn_nv.warpgroup_turn
// CHECK: return
func.func @unordered(%q: !s, %k: !sk, %acc: tensor<64x128xf32, #acc>) -> tensor<64x128xf32, #acc> attributes {attn.config = #cfg} {
  %s0 = attn_nv.wgmma %q, %k, %acc transpose_rhs : !s, !sk, tensor<64x128xf32, #acc>
  %s = attn_nv.wgmma_wait %s0 {pending = 0 : i64} : tensor<64x128xf32, #acc>
  return %s : tensor<64x128xf32, #acc>
}

// -----

// With tma (no CTA barrier per tile) the turn is numbered by the K tile's
// stage use and rotates over `stages` sets of named barriers.
#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "pv_in_flight", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = true>
#acc = #attn_nv.acc<warps = 8>
!s = !attn_nv.smem<128x128xbf16, swizzle_128b>
!s3 = !attn_nv.smem<3x128x128xbf16, swizzle_128b>

// CHECK-LABEL: func.func @numbered(
// CHECK-SAME: %[[IT:[^:]*]]: index
// CHECK: attn_nv.warpgroup_turn warpgroups 2 turn %[[IT]] rotation 3 -> tensor<128x128xf32, #attn_nv.acc<warps = 8>> {
// CHECK-NEXT: attn_nv.wgmma
func.func @numbered(%q: !s, %ks: !s3, %it: index, %acc: tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc> attributes {attn.config = #cfg} {
  %k = attn_nv.slot %ks[%it] : !s3 -> !s
  %s0 = attn_nv.wgmma %q, %k, %acc transpose_rhs : !s, !s, tensor<128x128xf32, #acc>
  %s = attn_nv.wgmma_wait %s0 {pending = 0 : i64} : tensor<128x128xf32, #acc>
  return %s : tensor<128x128xf32, #acc>
}

// -----

// With tma and barrier_per_tile the CTA barrier keeps the warpgroups within
// a tile: the turn is not numbered.
#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 64, warps = 8, min_ctas_per_sm = 2, stages = 3, q_in_registers = false, schedule = "softmax_overlaps_pv", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = true, barrier_per_tile = true>
#acc = #attn_nv.acc<warps = 8>
!s = !attn_nv.smem<128x64xbf16, swizzle_128b>
!s3 = !attn_nv.smem<3x64x64xbf16, swizzle_128b>
!sk = !attn_nv.smem<64x64xbf16, swizzle_128b>

// CHECK-LABEL: func.func @unnumbered_with_barrier_per_tile(
// CHECK: attn_nv.warpgroup_turn warpgroups 2 -> tensor<128x64xf32, #attn_nv.acc<warps = 8>> {
// CHECK-NOT: rotation
func.func @unnumbered_with_barrier_per_tile(%q: !s, %ks: !s3, %it: index, %acc: tensor<128x64xf32, #acc>) -> tensor<128x64xf32, #acc> attributes {attn.config = #cfg} {
  %k = attn_nv.slot %ks[%it] : !s3 -> !sk
  %s0 = attn_nv.wgmma %q, %k, %acc transpose_rhs : !s, !sk, tensor<128x64xf32, #acc>
  %s = attn_nv.wgmma_wait %s0 {pending = 0 : i64} : tensor<128x64xf32, #acc>
  return %s : tensor<128x64xf32, #acc>
}
