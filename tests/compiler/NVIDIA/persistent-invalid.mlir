// RUN: attn-opt %s --split-input-file --attn-nv-persistent --allow-unregistered-dialect --verify-diagnostics

// A producer warpgroup exits before the CTA barrier that ends a work tile:
// the pass refuses it rather than make a kernel that hangs. (The
// #attn.config verifier already refuses persistent with warp_specialize;
// this is the op without that flag.)
#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "plain", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = true, persistent = true>

func.func @producer(%n: index) attributes {attn.config = #cfg} {
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    // expected-error @+1 {{'attn_nv.warp_specialize' op cannot run in a persistent kernel: a work tile ends with a CTA barrier the producer's threads never reach}}
    attn_nv.warp_specialize consumers(256 threads, 232 registers) {
      "test.sink"(%b) : (index) -> ()
    } producer(40 registers) {
      "test.sink"(%h) : (index) -> ()
    }
  }
  return
}
