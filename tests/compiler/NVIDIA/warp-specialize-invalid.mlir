// RUN: attn-opt %s --split-input-file --attn-nv-warp-specialize -verify-diagnostics

#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "plain", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = true, warp_specialize = true>
!s = !attn_nv.smem<128x128xbf16, swizzle_128b>

// The split follows the prologue's CTA barriers.
func.func @no_prologue_barrier(%n: index) attributes {attn.config = #cfg} {
  // expected-error @+1 {{attn-nv-warp-specialize: no prologue CTA barrier}}
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
  }
  return
}

// -----

#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "plain", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = true, warp_specialize = true>
!s = !attn_nv.smem<128x128xbf16, swizzle_128b>

// A loop whose copy loads its own tile (use = it), not the next one: not
// attn-nv-pipeline-copies' prefetch, so there is nothing to hand over.
func.func @no_prefetch(%n: index, %kmap: !llvm.ptr) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{attn-nv-warp-specialize: no K/V loop whose copy_tma loads tile it + 1 (use = it + 1)}}
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %k = attn_nv.alloc_shared : !s
    %kf = attn_nv.alloc_barriers : !attn_nv.barriers<3>
    attn_nv.init_barriers %kf : !attn_nv.barriers<3>
    nvvm.barrier0
    scf.for %it = %c0 to %n step %c1 {
      attn_nv.copy_tma %kmap[%b, %h, %it] into %k, %kf[%it] : !llvm.ptr, !s, !attn_nv.barriers<3>
    }
  }
  return
}

// -----

#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "plain", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = true, warp_specialize = true>
!s = !attn_nv.smem<128x128xbf16, swizzle_128b>

// A prefetch that does not wait for its stage's release: the producer
// would overwrite a stage the consumers still read.
func.func @no_release(%n: index, %kmap: !llvm.ptr) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %k = attn_nv.alloc_shared : !s
    %kf = attn_nv.alloc_barriers : !attn_nv.barriers<3>
    attn_nv.init_barriers %kf : !attn_nv.barriers<3>
    nvvm.barrier0
    scf.for %it = %c0 to %n step %c1 {
      %next = arith.addi %it, %c1 : index
      // expected-error @+1 {{attn-nv-warp-specialize: a prefetch must wait for its stage's release (after %empty)}}
      attn_nv.copy_tma %kmap[%b, %h, %next] into %k, %kf[%next] : !llvm.ptr, !s, !attn_nv.barriers<3>
    }
  }
  return
}

// -----

#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "plain", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = true, warp_specialize = true>
!s = !attn_nv.smem<128x128xbf16, swizzle_128b>

// The producer must count the tiles the consumers count: a bound computed
// inside the consumers' code would not be visible to it.
func.func @count_after_split(%n: index, %kmap: !llvm.ptr) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %k = attn_nv.alloc_shared : !s
    %kf = attn_nv.alloc_barriers : !attn_nv.barriers<3>
    %ke = attn_nv.alloc_barriers : !attn_nv.barriers<3>
    attn_nv.init_barriers %kf : !attn_nv.barriers<3>
    nvvm.barrier0
    %any = arith.cmpi slt, %c0, %n : index
    scf.if %any {
      %iters = arith.addi %n, %c1 : index
      // expected-error @+1 {{attn-nv-warp-specialize: the tile count must be computed before the loop (both sides read it)}}
      scf.for %it = %c0 to %iters step %c1 {
        %next = arith.addi %it, %c1 : index
        attn_nv.copy_tma %kmap[%b, %h, %next] into %k, %kf[%next] after %ke : !llvm.ptr, !s, !attn_nv.barriers<3>, !attn_nv.barriers<3>
      }
    }
  }
  return
}
