// RUN: attn-opt %s --split-input-file --attn-nv-persistent --allow-unregistered-dialect --verify-diagnostics

// A warp-specialised grid is rebuilt only from attn-nv-warp-specialize's
// form; anything else is refused rather than turned into a kernel whose
// sides disagree on the work tiles.
#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "plain", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = true, warp_specialize = true, persistent = true>

func.func @split_not_last(%n: index) attributes {attn.config = #cfg} {
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    nvvm.barrier0
    // expected-error @+1 {{'attn_nv.warp_specialize' op attn-nv-persistent: the warp_specialize must end the grid's body}}
    attn_nv.warp_specialize consumers(256 threads, 232 registers) {
      "test.sink"(%b) : (index) -> ()
    } producer(40 registers) {
      scf.for %u = %n to %n step %n {
      }
    }
    "test.sink"(%h) : (index) -> ()
  }
  return
}

// -----

#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "plain", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = true, warp_specialize = true, persistent = true>

func.func @producer_not_a_loop(%n: index) attributes {attn.config = #cfg} {
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    nvvm.barrier0
    // expected-error @+1 {{'attn_nv.warp_specialize' op attn-nv-persistent: the producer must be one loop of copies (attn-nv-warp-specialize's)}}
    attn_nv.warp_specialize consumers(256 threads, 232 registers) {
      "test.sink"(%b) : (index) -> ()
    } producer(40 registers) {
      "test.sink"(%h) : (index) -> ()
    }
  }
  return
}

// -----

#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "plain", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = true, warp_specialize = true, persistent = true>

func.func @no_prologue_barrier(%n: index) attributes {attn.config = #cfg} {
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    // expected-error @+1 {{'attn_nv.warp_specialize' op attn-nv-persistent: no prologue CTA barrier (expected attn-nv-warp-specialize's form)}}
    attn_nv.warp_specialize consumers(256 threads, 232 registers) {
      "test.sink"(%b) : (index) -> ()
    } producer(40 registers) {
      scf.for %u = %n to %n step %n {
      }
    }
  }
  return
}

// -----

// Tile 0's copy goes to the producer: what stands beside it in the
// prologue would be lost.
#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "plain", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = true, warp_specialize = true, persistent = true>

func.func @tile0_not_alone(%n: index, %c: i1, %map: !llvm.ptr) attributes {attn.config = #cfg} {
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %k = attn_nv.alloc_shared : !attn_nv.smem<128x128xbf16, swizzle_128b>
    %full = attn_nv.alloc_barriers : !attn_nv.barriers<3>
    // expected-error @+1 {{'scf.if' op attn-nv-persistent: tile 0's copies must stand alone (the producer issues them)}}
    scf.if %c {
      attn_nv.copy_tma %map[%b, %h, %t] into %k, %full[%t] : !llvm.ptr, !attn_nv.smem<128x128xbf16, swizzle_128b>, !attn_nv.barriers<3>
      "test.sink"(%h) : (index) -> ()
    }
    nvvm.barrier0
    attn_nv.warp_specialize consumers(256 threads, 232 registers) {
      "test.sink"(%b) : (index) -> ()
    } producer(40 registers) {
      scf.for %u = %n to %n step %n {
      }
    }
  }
  return
}

// -----

// The producer recomputes the prologue's positions; a value with side
// effects (here an unknown op) it cannot.
#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "plain", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = true, warp_specialize = true, persistent = true>

func.func @producer_reads_effects(%n: index) attributes {attn.config = #cfg} {
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %row = "test.position"(%t) : (index) -> index
    nvvm.barrier0
    attn_nv.warp_specialize consumers(256 threads, 232 registers) {
      "test.sink"(%b) : (index) -> ()
    } producer(40 registers) {
      scf.for %u = %n to %n step %n {
        // expected-error @+1 {{'test.sink' op attn-nv-persistent: the producer reads a value of the consumers' prologue that it cannot recompute (side effects other than global reads)}}
        "test.sink"(%row) : (index) -> ()
      }
    }
  }
  return
}
