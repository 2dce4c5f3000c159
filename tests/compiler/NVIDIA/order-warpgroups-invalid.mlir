// RUN: attn-opt %s --split-input-file --verify-diagnostics --attn-nv-order-warpgroups

// With tma the turn is numbered by K's stage use: a K that is not a stage
// gives no number.
#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "pv_in_flight", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = true>
#acc = #attn_nv.acc<warps = 8>
!s = !attn_nv.smem<128x128xbf16, swizzle_128b>

func.func @unnumbered(%q: !s, %k: !s, %acc: tensor<128x128xf32, #acc>) -> tensor<128x128xf32, #acc> attributes {attn.config = #cfg} {
  // expected-error @+1 {{attn-nv-order-warpgroups: with tma, QKᵀ must read K from a stage (attn_nv.slot) whose index numbers the turn}}
  %s0 = attn_nv.wgmma %q, %k, %acc transpose_rhs : !s, !s, tensor<128x128xf32, #acc>
  %s = attn_nv.wgmma_wait %s0 {pending = 0 : i64} : tensor<128x128xf32, #acc>
  return %s : tensor<128x128xf32, #acc>
}
