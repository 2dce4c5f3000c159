// RUN: attn-opt %s --split-input-file --attn-nv-allocate-shared --verify-diagnostics

// Buffers beyond what the chip gives one CTA are a diagnostic, not a launch
// failure at run time.
// expected-error @+1 {{'func.func' op needs 328704 bytes of shared memory; sm_80 gives a CTA at most 166912}}
func.func @too_much() attributes {attn.config = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 128, block_n = 64, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>} {
  %a = attn_nv.alloc_shared : !attn_nv.smem<2x512x128xbf16, swizzle_128b>
  %b = attn_nv.alloc_shared : !attn_nv.smem<2x128x128xbf16, swizzle_128b>
  return
}
