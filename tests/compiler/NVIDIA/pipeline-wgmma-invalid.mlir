// RUN: attn-opt %s --split-input-file --verify-diagnostics --attn-nv-pipeline-wgmma

// A schedule the K/V loop does not fit is a diagnostic, never a silently
// slower (or wrong) kernel.

#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "pv_in_flight", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false>

func.func @no_loop(%n: index) attributes {attn.config = #cfg} {
  // expected-error @+1 {{'attn.tile_grid' op attn-nv-pipeline-wgmma: schedule pv_in_flight needs a K/V loop of wgmma products}}
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
  }
  return
}

// -----

#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "softmax_overlaps_pv", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
#acc = #attn_nv.acc<warps = 8>
!s = !attn_nv.smem<128x128xbf16, swizzle_128b>
!s3 = !attn_nv.smem<3x128x128xbf16, swizzle_128b>

func.func @one_product(%n: index) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zs = arith.constant dense<0.0> : tensor<128x128xf32, #acc>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %qs = attn_nv.alloc_shared : !s
    %ks = attn_nv.alloc_shared : !s3
    // expected-error @+1 {{'scf.for' op attn-nv-pipeline-wgmma: expects two products (QKᵀ, P·V) in the K/V loop, found 1}}
    %r = scf.for %it = %c0 to %n step %c1 iter_args(%acc = %zs) -> (tensor<128x128xf32, #acc>) {
      %k = attn_nv.slot %ks[%it] : !s3 -> !s
      %s0 = attn_nv.wgmma %qs, %k, %acc transpose_rhs : !s, !s, tensor<128x128xf32, #acc>
      %s = attn_nv.wgmma_wait %s0 {pending = 0 : i64} : tensor<128x128xf32, #acc>
      scf.yield %s : tensor<128x128xf32, #acc>
    }
  }
  return
}

// -----

// One wait for both products: there is nothing to move.
#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "pv_in_flight", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
#acc = #attn_nv.acc<warps = 8>
#opa = #attn_nv.operand_a<warps = 8>
!s = !attn_nv.smem<128x128xbf16, swizzle_128b>
!s3 = !attn_nv.smem<3x128x128xbf16, swizzle_128b>

func.func @shared_wait(%pa: tensor<128x128xbf16, #opa>, %n: index) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zs = arith.constant dense<0.0> : tensor<128x128xf32, #acc>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %qs = attn_nv.alloc_shared : !s
    %ks = attn_nv.alloc_shared : !s3
    %vs = attn_nv.alloc_shared : !s3
    // expected-error @+1 {{'scf.for' op attn-nv-pipeline-wgmma: each product must be followed by its own wait}}
    %r = scf.for %it = %c0 to %n step %c1 iter_args(%acc = %zs) -> (tensor<128x128xf32, #acc>) {
      %k = attn_nv.slot %ks[%it] : !s3 -> !s
      %v = attn_nv.slot %vs[%it] : !s3 -> !s
      %s0 = attn_nv.wgmma %qs, %k, %zs transpose_rhs : !s, !s, tensor<128x128xf32, #acc>
      %o0 = attn_nv.wgmma %pa, %v, %acc : tensor<128x128xbf16, #opa>, !s, tensor<128x128xf32, #acc>
      %s, %o = attn_nv.wgmma_wait %s0, %o0 {pending = 0 : i64} : tensor<128x128xf32, #acc>, tensor<128x128xf32, #acc>
      scf.yield %o : tensor<128x128xf32, #acc>
    }
  }
  return
}

// -----

// The first product must be QKᵀ: both operands in shared memory.
#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "pv_in_flight", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
#acc = #attn_nv.acc<warps = 8>
#opa = #attn_nv.operand_a<warps = 8>
!s = !attn_nv.smem<128x128xbf16, swizzle_128b>
!s3 = !attn_nv.smem<3x128x128xbf16, swizzle_128b>

func.func @qk_from_registers(%qa: tensor<128x128xbf16, #opa>, %pa: tensor<128x128xbf16, #opa>, %n: index) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zs = arith.constant dense<0.0> : tensor<128x128xf32, #acc>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %ks = attn_nv.alloc_shared : !s3
    %vs = attn_nv.alloc_shared : !s3
    %r = scf.for %it = %c0 to %n step %c1 iter_args(%acc = %zs) -> (tensor<128x128xf32, #acc>) {
      %k = attn_nv.slot %ks[%it] : !s3 -> !s
      %v = attn_nv.slot %vs[%it] : !s3 -> !s
      // expected-error @+1 {{'attn_nv.wgmma' op attn-nv-pipeline-wgmma: the first product (QKᵀ) must read both operands from shared memory}}
      %s0 = attn_nv.wgmma %qa, %k, %zs transpose_rhs : tensor<128x128xbf16, #opa>, !s, tensor<128x128xf32, #acc>
      %s = attn_nv.wgmma_wait %s0 {pending = 0 : i64} : tensor<128x128xf32, #acc>
      %o0 = attn_nv.wgmma %pa, %v, %acc : tensor<128x128xbf16, #opa>, !s, tensor<128x128xf32, #acc>
      %o = attn_nv.wgmma_wait %o0 {pending = 0 : i64} : tensor<128x128xf32, #acc>
      scf.yield %o : tensor<128x128xf32, #acc>
    }
  }
  return
}

// -----

// A P·V result read in the iteration would have to wait there.
#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "pv_in_flight", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
#acc = #attn_nv.acc<warps = 8>
#opa = #attn_nv.operand_a<warps = 8>
!s = !attn_nv.smem<128x128xbf16, swizzle_128b>
!s3 = !attn_nv.smem<3x128x128xbf16, swizzle_128b>

func.func @pv_read(%pa: tensor<128x128xbf16, #opa>, %n: index) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zs = arith.constant dense<0.0> : tensor<128x128xf32, #acc>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %qs = attn_nv.alloc_shared : !s
    %ks = attn_nv.alloc_shared : !s3
    %vs = attn_nv.alloc_shared : !s3
    %r:2 = scf.for %it = %c0 to %n step %c1 iter_args(%acc = %zs, %acc2 = %zs) -> (tensor<128x128xf32, #acc>, tensor<128x128xf32, #acc>) {
      %k = attn_nv.slot %ks[%it] : !s3 -> !s
      %v = attn_nv.slot %vs[%it] : !s3 -> !s
      %s0 = attn_nv.wgmma %qs, %k, %zs transpose_rhs : !s, !s, tensor<128x128xf32, #acc>
      %s = attn_nv.wgmma_wait %s0 {pending = 0 : i64} : tensor<128x128xf32, #acc>
      // expected-error @+1 {{'attn_nv.wgmma' op attn-nv-pipeline-wgmma: the P·V result must only be yielded as the new accumulator}}
      %o0 = attn_nv.wgmma %pa, %v, %acc : tensor<128x128xbf16, #opa>, !s, tensor<128x128xf32, #acc>
      %o = attn_nv.wgmma_wait %o0 {pending = 0 : i64} : tensor<128x128xf32, #acc>
      scf.yield %o, %o : tensor<128x128xf32, #acc>, tensor<128x128xf32, #acc>
    }
  }
  return
}

// -----

// P·V must rescale the loop's accumulator by the row factors (the schedule
// moves that rescale with the product).
#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "softmax_overlaps_pv", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
#acc = #attn_nv.acc<warps = 8>
#opa = #attn_nv.operand_a<warps = 8>
!s = !attn_nv.smem<128x128xbf16, swizzle_128b>
!s3 = !attn_nv.smem<3x128x128xbf16, swizzle_128b>

func.func @no_rescale(%n: index) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zs = arith.constant dense<0.0> : tensor<128x128xf32, #acc>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %qs = attn_nv.alloc_shared : !s
    %ks = attn_nv.alloc_shared : !s3
    %vs = attn_nv.alloc_shared : !s3
    %r = scf.for %it = %c0 to %n step %c1 iter_args(%acc = %zs) -> (tensor<128x128xf32, #acc>) {
      %k = attn_nv.slot %ks[%it] : !s3 -> !s
      %v = attn_nv.slot %vs[%it] : !s3 -> !s
      %s0 = attn_nv.wgmma %qs, %k, %zs transpose_rhs : !s, !s, tensor<128x128xf32, #acc>
      %s = attn_nv.wgmma_wait %s0 {pending = 0 : i64} : tensor<128x128xf32, #acc>
      %pa = attn_nv.convert_layout %s : tensor<128x128xf32, #acc> -> tensor<128x128xbf16, #opa>
      // expected-error @+1 {{'attn_nv.wgmma' op attn-nv-pipeline-wgmma: P·V must take P converted to A fragments, V from its stage and the rescaled accumulator of the loop}}
      %o0 = attn_nv.wgmma %pa, %v, %acc : tensor<128x128xbf16, #opa>, !s, tensor<128x128xf32, #acc>
      %o = attn_nv.wgmma_wait %o0 {pending = 0 : i64} : tensor<128x128xf32, #acc>
      scf.yield %o : tensor<128x128xf32, #acc>
    }
  }
  return
}

// -----

// With P·V in flight the accumulator may be read only after the QKᵀ wait
// (which retires the P·V of the tile before).
#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "pv_in_flight", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
#acc = #attn_nv.acc<warps = 8>
#rows = #attn_nv.rows<warps = 8>
#opa = #attn_nv.operand_a<warps = 8>
!s = !attn_nv.smem<128x128xbf16, swizzle_128b>
!s3 = !attn_nv.smem<3x128x128xbf16, swizzle_128b>

func.func @acc_read_early(%alpha: tensor<128xf32, #rows>, %n: index) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zs = arith.constant dense<0.0> : tensor<128x128xf32, #acc>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %qs = attn_nv.alloc_shared : !s
    %ks = attn_nv.alloc_shared : !s3
    %vs = attn_nv.alloc_shared : !s3
    %r = scf.for %it = %c0 to %n step %c1 iter_args(%acc = %zs) -> (tensor<128x128xf32, #acc>) {
      %k = attn_nv.slot %ks[%it] : !s3 -> !s
      %v = attn_nv.slot %vs[%it] : !s3 -> !s
      // expected-error @+1 {{'attn.reduce' op attn-nv-pipeline-wgmma: reads the accumulator before the QKᵀ wait}}
      %early = attn.reduce <max> %acc, %alpha : tensor<128x128xf32, #acc>, tensor<128xf32, #rows>
      %s0 = attn_nv.wgmma %qs, %k, %zs transpose_rhs : !s, !s, tensor<128x128xf32, #acc>
      %s = attn_nv.wgmma_wait %s0 {pending = 0 : i64} : tensor<128x128xf32, #acc>
      %rescaled = attn.map(%acc, %early : tensor<128x128xf32, #acc>, tensor<128xf32, #rows>) -> tensor<128x128xf32, #acc> {
      ^bb0(%i: index, %j: index, %x: f32, %a: f32):
        %y = arith.mulf %x, %a : f32
        attn.yield %y : f32
      }
      %pa = attn_nv.convert_layout %s : tensor<128x128xf32, #acc> -> tensor<128x128xbf16, #opa>
      %o0 = attn_nv.wgmma %pa, %v, %rescaled : tensor<128x128xbf16, #opa>, !s, tensor<128x128xf32, #acc>
      %o = attn_nv.wgmma_wait %o0 {pending = 0 : i64} : tensor<128x128xf32, #acc>
      scf.yield %o : tensor<128x128xf32, #acc>
    }
  }
  return
}

// -----

// The releases behind P·V's wait move with it (to the next iteration, for
// the tile before): they must be of this iteration's stage.
#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "pv_in_flight", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = true>
#acc = #attn_nv.acc<warps = 8>
#rows = #attn_nv.rows<warps = 8>
#opa = #attn_nv.operand_a<warps = 8>
!t = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!s = !attn_nv.smem<128x128xbf16, swizzle_128b>
!s3 = !attn_nv.smem<3x128x128xbf16, swizzle_128b>

func.func @release_other_tile(%O: !t, %n: index) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zs = arith.constant dense<0.0> : tensor<128x128xf32, #acc>
  %m0 = arith.constant dense<0xFF800000> : tensor<128xf32, #rows>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %qs = attn_nv.alloc_shared : !s
    %ks = attn_nv.alloc_shared : !s3
    %vs = attn_nv.alloc_shared : !s3
    %ke = attn_nv.alloc_barriers : !attn_nv.barriers<3>
    %ve = attn_nv.alloc_barriers : !attn_nv.barriers<3>
    %r:2 = scf.for %it = %c0 to %n step %c1 iter_args(%m = %m0, %acc = %zs) -> (tensor<128xf32, #rows>, tensor<128x128xf32, #acc>) {
      %v = attn_nv.slot %vs[%it] : !s3 -> !s
      %k = attn_nv.slot %ks[%it] : !s3 -> !s
      %s0 = attn_nv.wgmma %qs, %k, %zs transpose_rhs : !s, !s, tensor<128x128xf32, #acc>
      %s = attn_nv.wgmma_wait %s0 {pending = 0 : i64} : tensor<128x128xf32, #acc>
      attn_nv.arrive_barrier %ke[%it] : !attn_nv.barriers<3>
      %mx = attn.reduce <max> %s, %m : tensor<128x128xf32, #acc>, tensor<128xf32, #rows>
      %alpha = attn.map(%m, %mx : tensor<128xf32, #rows>, tensor<128xf32, #rows>) -> tensor<128xf32, #rows> {
      ^bb0(%i: index, %x: f32, %y: f32):
        %d = arith.subf %x, %y : f32
        %e = math.exp2 %d : f32
        attn.yield %e : f32
      }
      %p = attn.map(%s, %mx : tensor<128x128xf32, #acc>, tensor<128xf32, #rows>) -> tensor<128x128xf32, #acc> {
      ^bb0(%i: index, %j: index, %x: f32, %y: f32):
        %d = arith.subf %x, %y : f32
        %e = math.exp2 %d : f32
        attn.yield %e : f32
      }
      %rescaled = attn.map(%acc, %alpha : tensor<128x128xf32, #acc>, tensor<128xf32, #rows>) -> tensor<128x128xf32, #acc> {
      ^bb0(%i: index, %j: index, %x: f32, %a: f32):
        %y = arith.mulf %x, %a : f32
        attn.yield %y : f32
      }
      %pa = attn_nv.convert_layout %p : tensor<128x128xf32, #acc> -> tensor<128x128xbf16, #opa>
      %o0 = attn_nv.wgmma %pa, %v, %rescaled : tensor<128x128xbf16, #opa>, !s, tensor<128x128xf32, #acc>
      %o = attn_nv.wgmma_wait %o0 {pending = 0 : i64} : tensor<128x128xf32, #acc>
      // expected-error @+1 {{'attn_nv.arrive_barrier' op attn-nv-pipeline-wgmma: the release behind P·V's wait must be of this iteration's stage}}
      attn_nv.arrive_barrier %ve[%c0] : !attn_nv.barriers<3>
      scf.yield %mx, %o : tensor<128xf32, #rows>, tensor<128x128xf32, #acc>
    }
    %out = attn.map(%r#1 : tensor<128x128xf32, #acc>) -> tensor<128x128xbf16, #acc> {
    ^bb0(%i: index, %j: index, %x: f32):
      %y = arith.truncf %x : f32 to bf16
      attn.yield %y : bf16
    }
    attn.store_tile %out, %O[%b, %h, %t] bounds %n : tensor<128x128xbf16, #acc>, !t
  }
  return
}
