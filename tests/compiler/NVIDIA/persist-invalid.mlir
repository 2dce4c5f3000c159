// RUN: attn-opt %s --split-input-file --attn-nv-persist --allow-unregistered-dialect -verify-diagnostics

#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "plain", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = true, warp_specialize = true, persistent = true>
!s = !attn_nv.smem<128x128xbf16, swizzle_128b>
!b1 = !attn_nv.barriers<1>

// The loops go on the two sides of attn-nv-warp-specialize's split.
func.func @no_split(%n: index) attributes {attn.config = #cfg} {
  // expected-error @+1 {{attn-nv-persist: no attn_nv.warp_specialize (persistent needs warp_specialize)}}
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    nvvm.barrier0
  }
  return
}

// -----

#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "plain", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = true, warp_specialize = true, persistent = true>
!s = !attn_nv.smem<128x128xbf16, swizzle_128b>
!b1 = !attn_nv.barriers<1>

// Q's copy is the prologue's only one outside tile 0's branch.
func.func @two_copies(%n: index, %qmap: !llvm.ptr) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %q = attn_nv.alloc_shared : !s
    %qf = attn_nv.alloc_barriers : !b1
    attn_nv.init_barriers %qf : !b1
    attn_nv.copy_tma %qmap[%b, %h, %t] into %q, %qf[%c0] : !llvm.ptr, !s, !b1
    // expected-error @+1 {{attn-nv-persist: a second copy in the prologue (expected Q's alone)}}
    attn_nv.copy_tma %qmap[%b, %h, %t] into %q, %qf[%c0] : !llvm.ptr, !s, !b1
    nvvm.barrier0
    attn_nv.warp_specialize consumers(256 threads, 232 registers) {
    } producer(40 registers) {
    }
  }
  return
}

// -----

#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "plain", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = true, warp_specialize = true, persistent = true>
!s = !attn_nv.smem<128x128xbf16, swizzle_128b>
!b1 = !attn_nv.barriers<1>

// The prologue's wait is Q's (the one that moves to the consumers).
func.func @other_wait(%n: index, %qmap: !llvm.ptr) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %q = attn_nv.alloc_shared : !s
    %qf = attn_nv.alloc_barriers : !b1
    %xf = attn_nv.alloc_barriers : !b1
    attn_nv.init_barriers %qf : !b1
    attn_nv.copy_tma %qmap[%b, %h, %t] into %q, %qf[%c0] : !llvm.ptr, !s, !b1
    nvvm.barrier0
    // expected-error @+1 {{attn-nv-persist: the prologue's wait must be Q's}}
    attn_nv.wait_barrier %xf[%c0] : !b1
    attn_nv.warp_specialize consumers(256 threads, 232 registers) {
    } producer(40 registers) {
    }
  }
  return
}

// -----

#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "plain", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = true, warp_specialize = true, persistent = true>
!s = !attn_nv.smem<128x128xbf16, swizzle_128b>
!b1 = !attn_nv.barriers<1>

// A work tile's value computed by an op that writes memory cannot be
// computed again in each loop (one that reads, like a document mask's key
// search, can: persist.mlir).
func.func @impure_value(%n: index, %ids: memref<?xi32>, %one: i32) attributes {attn.config = #cfg} {
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    // expected-error @+1 {{attn-nv-persist: a value of the work tile must be computed by ops that at most read memory}}
    %x = memref.atomic_rmw addi %one, %ids[%t] : (i32, memref<?xi32>) -> i32
    nvvm.barrier0
    attn_nv.warp_specialize consumers(256 threads, 232 registers) {
    } producer(40 registers) {
    }
  }
  return
}

// -----

#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "plain", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = true, warp_specialize = true, persistent = true>
!s = !attn_nv.smem<128x128xbf16, swizzle_128b>
!b1 = !attn_nv.barriers<1>

// Q's copy, tile 0's branch and Q's wait are what the loops take over.
func.func @no_q(%n: index) attributes {attn.config = #cfg} {
  // expected-error @+1 {{attn-nv-persist: expected Q's copy_tma, tile 0's copies and Q's wait in the prologue}}
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    nvvm.barrier0
    attn_nv.warp_specialize consumers(256 threads, 232 registers) {
    } producer(40 registers) {
    }
  }
  return
}

// -----

#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "plain", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = true, warp_specialize = true, persistent = true>
!s = !attn_nv.smem<128x128xbf16, swizzle_128b>
!b1 = !attn_nv.barriers<1>

// Tile 0's copies are one branch.
func.func @two_branches(%n: index, %p: i1, %qmap: !llvm.ptr) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %q = attn_nv.alloc_shared : !s
    %qf = attn_nv.alloc_barriers : !b1
    %kf = attn_nv.alloc_barriers : !b1
    attn_nv.init_barriers %qf : !b1
    attn_nv.copy_tma %qmap[%b, %h, %t] into %q, %qf[%c0] : !llvm.ptr, !s, !b1
    nvvm.barrier0
    scf.if %p {
      attn_nv.copy_tma %qmap[%b, %h, %c0] into %q, %kf[%c0] : !llvm.ptr, !s, !b1
    }
    // expected-error @+1 {{attn-nv-persist: a second branch of copies in the prologue}}
    scf.if %p {
      attn_nv.copy_tma %qmap[%b, %h, %c1] into %q, %kf[%c0] : !llvm.ptr, !s, !b1
    }
    attn_nv.wait_barrier %qf[%c0] : !b1
    attn_nv.warp_specialize consumers(256 threads, 232 registers) {
    } producer(40 registers) {
      scf.for %u = %c1 to %n step %c1 {}
    }
  }
  return
}

// -----

#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "plain", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = true, warp_specialize = true, persistent = true>
!s = !attn_nv.smem<128x128xbf16, swizzle_128b>
!b1 = !attn_nv.barriers<1>

// Both sides loop to the producer's K/V loop bound.
func.func @no_producer_loop(%n: index, %p: i1, %qmap: !llvm.ptr) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %q = attn_nv.alloc_shared : !s
    %qf = attn_nv.alloc_barriers : !b1
    %kf = attn_nv.alloc_barriers : !b1
    attn_nv.init_barriers %qf : !b1
    attn_nv.copy_tma %qmap[%b, %h, %t] into %q, %qf[%c0] : !llvm.ptr, !s, !b1
    nvvm.barrier0
    scf.if %p {
      attn_nv.copy_tma %qmap[%b, %h, %c0] into %q, %kf[%c0] : !llvm.ptr, !s, !b1
    }
    attn_nv.wait_barrier %qf[%c0] : !b1
    // expected-error @+1 {{attn-nv-persist: no K/V loop in the producer region}}
    attn_nv.warp_specialize consumers(256 threads, 232 registers) {
    } producer(40 registers) {

    }
  }
  return
}

// -----

#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "plain", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = true, warp_specialize = true, persistent = true>
!s = !attn_nv.smem<128x128xbf16, swizzle_128b>
!b1 = !attn_nv.barriers<1>

// Q's "empty" barrier is initialized next to Q's.
func.func @q_not_initialized(%n: index, %p: i1, %qmap: !llvm.ptr) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %q = attn_nv.alloc_shared : !s
    %qf = attn_nv.alloc_barriers : !b1
    %kf = attn_nv.alloc_barriers : !b1

    // expected-error @+1 {{attn-nv-persist: Q's barrier is never initialized}}
    attn_nv.copy_tma %qmap[%b, %h, %t] into %q, %qf[%c0] : !llvm.ptr, !s, !b1
    nvvm.barrier0
    scf.if %p {
      attn_nv.copy_tma %qmap[%b, %h, %c0] into %q, %kf[%c0] : !llvm.ptr, !s, !b1
    }
    attn_nv.wait_barrier %qf[%c0] : !b1
    attn_nv.warp_specialize consumers(256 threads, 232 registers) {
    } producer(40 registers) {
      scf.for %u = %c1 to %n step %c1 {}
    }
  }
  return
}

// -----

#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "plain", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = true, warp_specialize = true, persistent = true>
!s = !attn_nv.smem<128x128xbf16, swizzle_128b>
!b1 = !attn_nv.barriers<1>

// A work tile's value is computed again on both sides: nothing after the
// split may read it.
func.func @read_after_split(%n: index, %p: i1, %qmap: !llvm.ptr) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %q = attn_nv.alloc_shared : !s
    %qf = attn_nv.alloc_barriers : !b1
    %kf = attn_nv.alloc_barriers : !b1
    attn_nv.init_barriers %qf : !b1
    attn_nv.copy_tma %qmap[%b, %h, %t] into %q, %qf[%c0] : !llvm.ptr, !s, !b1
    nvvm.barrier0
    scf.if %p {
      attn_nv.copy_tma %qmap[%b, %h, %c0] into %q, %kf[%c0] : !llvm.ptr, !s, !b1
    }
    // expected-error @+1 {{attn-nv-persist: a value of the work tile is read outside the two sides}}
    %row = arith.muli %t, %c1 : index
    attn_nv.wait_barrier %qf[%c0] : !b1
    attn_nv.warp_specialize consumers(256 threads, 232 registers) {
    } producer(40 registers) {
      scf.for %u = %c1 to %n step %c1 {}
    }
    "test.sink"(%row) : (index) -> ()
  }
  return
}

// -----

#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = true, warp_specialize = true, persistent = true, q_stages = 2>
!s = !attn_nv.smem<128x128xbf16, swizzle_128b>
!s2 = !attn_nv.smem<2x128x128xbf16, swizzle_128b>
!b1 = !attn_nv.barriers<1>

// Two Q buffers replace Q's one-tile allocation.
func.func @q_in_a_slot(%n: index, %qmap: !llvm.ptr) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %qs = attn_nv.alloc_shared : !s2
    %q = attn_nv.slot %qs[%c0] : !s2 -> !s
    %qf = attn_nv.alloc_barriers : !b1
    attn_nv.init_barriers %qf : !b1
    // expected-error @+1 {{attn-nv-persist: q_stages = 2 needs Q's buffer to be one tile's alloc_shared}}
    attn_nv.copy_tma %qmap[%b, %h, %t] into %q, %qf[%c0] : !llvm.ptr, !s, !b1
    nvvm.barrier0
    %any = arith.cmpi slt, %c0, %n : index
    scf.if %any {
      attn_nv.copy_tma %qmap[%b, %h, %c0] into %q, %qf[%c0] : !llvm.ptr, !s, !b1
    }
    attn_nv.wait_barrier %qf[%c0] : !b1
    attn_nv.warp_specialize consumers(256 threads, 232 registers) {
    } producer(40 registers) {
      scf.for %u = %c0 to %n step %c0 {
      }
    }
  }
  return
}

// -----

#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = true, warp_specialize = true, persistent = true, q_stages = 2>
!s = !attn_nv.smem<128x128xbf16, swizzle_128b>
!b1 = !attn_nv.barriers<1>

// Each work tile reads its own Q buffer: none may be read after the split.
func.func @q_read_after_split(%n: index, %qmap: !llvm.ptr) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    // expected-error @+1 {{attn-nv-persist: Q's buffer is read outside the two sides}}
    %q = attn_nv.alloc_shared : !s
    %qf = attn_nv.alloc_barriers : !b1
    attn_nv.init_barriers %qf : !b1
    attn_nv.copy_tma %qmap[%b, %h, %t] into %q, %qf[%c0] : !llvm.ptr, !s, !b1
    nvvm.barrier0
    %any = arith.cmpi slt, %c0, %n : index
    scf.if %any {
      attn_nv.copy_tma %qmap[%b, %h, %c0] into %q, %qf[%c0] : !llvm.ptr, !s, !b1
    }
    attn_nv.wait_barrier %qf[%c0] : !b1
    attn_nv.warp_specialize consumers(256 threads, 232 registers) {
    } producer(40 registers) {
      scf.for %u = %c0 to %n step %c0 {
      }
    }
    "test.use"(%q) : (!s) -> ()
  }
  return
}
