// RUN: attn-opt %s --split-input-file --verify-diagnostics --attn-nv-pipeline-copies

#cfg = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 64, block_n = 64, warps = 4, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!s = !attn_nv.smem<64x64xbf16, padded>

func.func @two_loops(%K: !t, %n: index) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  // expected-error @+1 {{'attn.tile_grid' op attn-nv-pipeline-copies: more than one loop copies tiles; only one K/V loop is pipelined}}
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %ks = attn_nv.alloc_shared : !s
    scf.for %kv = %c0 to %n step %c64 {
      attn_nv.copy_async %K[%b, %h, %kv] bounds %n into %ks : !t, !s
    }
    scf.for %kv = %c0 to %n step %c64 {
      attn_nv.copy_async %K[%b, %h, %kv] bounds %n into %ks : !t, !s
    }
  }
  return
}

// -----

// The copies are issued one tile ahead: the next tile's position must
// follow from the induction variable by pure arithmetic (a row read from
// memory cannot be recomputed for the next iteration).
#cfg = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 64, block_n = 64, warps = 4, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!s = !attn_nv.smem<64x64xbf16, padded>

func.func @not_from_induction_variable(%K: !t, %rows: memref<?xindex>, %n: index) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %ks = attn_nv.alloc_shared : !s
    scf.for %kv = %c0 to %n step %c64 {
      %row = memref.load %rows[%kv] : memref<?xindex>
      // expected-error @+1 {{'attn_nv.copy_async' op attn-nv-pipeline-copies: the position of a tile copied in the loop must follow from the induction variable}}
      attn_nv.copy_async %K[%b, %h, %row] bounds %n into %ks : !t, !s
    }
  }
  return
}

// -----

// A copy into a stage of a buffer: the loop was pipelined already.
#cfg = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 64, block_n = 64, warps = 4, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!s = !attn_nv.smem<64x64xbf16, padded>
!s3 = !attn_nv.smem<3x64x64xbf16, padded>

func.func @not_a_buffer(%K: !t, %n: index) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %ks = attn_nv.alloc_shared : !s3
    scf.for %kv = %c0 to %n step %c64 {
      %slot = attn_nv.slot %ks[%kv] : !s3 -> !s
      // expected-error @+1 {{'attn_nv.copy_async' op attn-nv-pipeline-copies: destination must be an attn_nv.alloc_shared buffer}}
      attn_nv.copy_async %K[%b, %h, %kv] bounds %n into %slot : !t, !s
    }
  }
  return
}

// -----

// With tma, a K/V copy must read whole tiles of the tensor bounded by its
// rows, or (the ragged maps) tiles of a packed batch, at batch 0, bounded
// by their sequence's end: a bound of its own at another batch index has
// no map whose zero fill starts there.
#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 64, block_n = 64, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = true>
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!s = !attn_nv.smem<64x64xbf16, swizzle_128b>

func.func @tma_bound(%Q: !t, %K: !t, %V: !t, %end: index, %n: index) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %ks = attn_nv.alloc_shared : !s
    scf.for %kv = %c0 to %n step %c64 {
      // expected-error @+1 {{'attn_nv.copy_async' op attn-nv-pipeline-copies: tma loads whole tiles of a mapped kernel argument (K or V; Q or dO in the backward) bounded by its rows, or by a sequence's end in a packed batch (no packed heads, pages or other bounds)}}
      attn_nv.copy_async %K[%b, %h, %kv] bounds %end into %ks : !t, !s
    }
  }
  return
}

// -----

// The runtime encodes both maps of a kernel in one form: a copy bounded by
// K's rows and one bounded by a sequence's end cannot share a kernel.
#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 64, block_n = 64, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = true>
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!s = !attn_nv.smem<64x64xbf16, swizzle_128b>

func.func @tma_two_forms(%Q: !t, %K: !t, %V: !t, %end: index, %n: index) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %nk = memref.dim %K, %c2 : !t
    %ks = attn_nv.alloc_shared : !s
    %vs = attn_nv.alloc_shared : !s
    scf.for %kv = %c0 to %n step %c64 {
      attn_nv.copy_async %K[%c0, %h, %kv] bounds %nk into %ks : !t, !s
      // expected-error @+1 {{'attn_nv.copy_async' op attn-nv-pipeline-copies: tma copies bounded by the tensor's rows and by a sequence's end need maps of two forms}}
      attn_nv.copy_async %V[%c0, %h, %kv] bounds %end into %vs : !t, !s
    }
  }
  return
}

// -----

// Nor can it copy a tensor that has no map (only K and V have).
#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 64, block_n = 64, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = true>
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!s = !attn_nv.smem<64x64xbf16, swizzle_128b>

func.func @tma_not_kv(%Q: !t, %n: index) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %nq = memref.dim %Q, %c2 : !t
    %qs = attn_nv.alloc_shared : !s
    scf.for %kv = %c0 to %n step %c64 {
      // expected-error @+1 {{tma loads whole tiles of a mapped kernel argument}}
      attn_nv.copy_async %Q[%b, %h, %kv] bounds %nq into %qs : !t, !s
    }
  }
  return
}


// -----

// With tma each warp releases a stage after the wait that retires the
// product reading it: a product without its own wait leaves no place for
// the release.
#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "pv_in_flight", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = true>
#acc = #attn_nv.acc<warps = 8>
!t = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!s = !attn_nv.smem<128x128xbf16, swizzle_128b>

func.func @tma_product_without_wait(%Q: !t, %K: !t, %V: !t, %lo: index, %hi: index, %n: index) attributes {attn.config = #cfg} {
  %c2 = arith.constant 2 : index
  %c128 = arith.constant 128 : index
  %zs = arith.constant dense<0.0> : tensor<128x128xf32, #acc>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %nk = memref.dim %K, %c2 : !t
    %qs = attn_nv.alloc_shared : !s
    %ks = attn_nv.alloc_shared : !s
    %r = scf.for %kv = %lo to %hi step %c128 iter_args(%acc = %zs) -> (tensor<128x128xf32, #acc>) {
      attn_nv.copy_async %K[%b, %h, %kv] bounds %nk into %ks : !t, !s
      // expected-error @+1 {{'attn_nv.wgmma' op attn-nv-pipeline-copies: a product reading a TMA stage must be followed by its own wait (the stage is released after it)}}
      %s0 = attn_nv.wgmma %qs, %ks, %acc transpose_rhs : !s, !s, tensor<128x128xf32, #acc>
      scf.yield %s0 : tensor<128x128xf32, #acc>
    }
  }
  return
}

// -----

// A table's copies are cp.async: a TMA kernel's stages without
// barrier_per_tile are released by per-warp mbarriers, which they do not
// join (attn-nv-stage-tables keeps the gather there).
#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 64, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "pv_in_flight", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = true>
!t = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!table = memref<?x?xf32, strided<[?, ?], offset: ?>>
!k = !attn_nv.smem<64x128xbf16, swizzle_128b>
!b = !attn_nv.smem<128x64xf32, swizzle_128b>

func.func @table_with_tma(%K: !t, %bias: !table, %n: index) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %ks = attn_nv.alloc_shared : !k
    %bs = attn_nv.alloc_shared : !b
    scf.for %kv = %c0 to %n step %c64 {
      attn_nv.copy_async %K[%b, %h, %kv] bounds %n into %ks : !t, !k
      // expected-error @+1 {{'attn_nv.copy_table_async' op attn-nv-pipeline-copies: a table's copies (cp.async) do not join the empty mbarriers of a TMA kernel's stages (no barrier_per_tile)}}
      attn_nv.copy_table_async %bias[%t, %kv] bounds %n, %n into %bs : !table, !b
    }
  }
  return
}
