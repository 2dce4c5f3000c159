// RUN: attn-opt %s --split-input-file --verify-diagnostics --attn-nv-assign-layouts

!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>

func.func @unconfigured(%Q: !t, %n: index) {
  // expected-error @+1 {{'attn.tile_grid' op has no attn.config: run attn-configure first}}
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %q = attn.load_tile %Q[%b, %h, %t] bounds %n : !t -> tensor<64x64xbf16>
  }
  return
}

// -----

// A product's rhs is read from shared memory: a tile loaded there, not one
// computed in registers (the map's).
#cfg = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 64, block_n = 64, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>

func.func @load_used_by_map(%Q: !t, %K: !t, %n: index) attributes {attn.config = #cfg} {
  %zs = arith.constant dense<0.0> : tensor<64x64xf32>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %q = attn.load_tile %Q[%b, %h, %t] bounds %n : !t -> tensor<64x64xbf16>
    %k = attn.load_tile %K[%b, %h, %t] bounds %n : !t -> tensor<64x64xbf16>
    %k2 = attn.map(%k : tensor<64x64xbf16>) -> tensor<64x64xbf16> {
    ^bb0(%i: index, %j: index, %x: bf16):
      attn.yield %x : bf16
    }
    // expected-error @+1 {{'attn.matmul' op rhs must be a tile loaded from memory (the NVIDIA mapping reads it from shared memory)}}
    %s = attn.matmul %q, %k2, %zs transpose_rhs : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32>
  }
  return
}

// -----

// An lhs read transposed (the atomic backward's (dSᵀ)ᵀ K) needs an
// MN-major A from shared memory: wgmma has one, mma.sync none.
#cfg = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 64, block_n = 64, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>

func.func @transpose_lhs(%Q: !t, %K: !t, %n: index) attributes {attn.config = #cfg} {
  %zs = arith.constant dense<0.0> : tensor<64x64xf32>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %q = attn.load_tile %Q[%b, %h, %t] bounds %n : !t -> tensor<64x64xbf16>
    %k = attn.load_tile %K[%b, %h, %t] bounds %n : !t -> tensor<64x64xbf16>
    // expected-error @+1 {{'attn.matmul' op with transpose_lhs is mapped on wgmma only (sm_90a, an MN-major A from shared memory); mma.sync has no such operand}}
    %s = attn.matmul %q, %k, %zs transpose_lhs : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32>
  }
  return
}

// -----

// On wgmma the transposed lhs is a register tile (dSᵀ), written to shared
// memory once; a loaded one or a transposed rhs is not that product.
#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 64, block_n = 64, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>

func.func @transpose_lhs_loaded(%Q: !t, %K: !t, %n: index) attributes {attn.config = #cfg} {
  %zs = arith.constant dense<0.0> : tensor<64x64xf32>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %q = attn.load_tile %Q[%b, %h, %t] bounds %n : !t -> tensor<64x64xbf16>
    %k = attn.load_tile %K[%b, %h, %t] bounds %n : !t -> tensor<64x64xbf16>
    // expected-error @+1 {{'attn.matmul' op with transpose_lhs takes a register lhs and a K×N rhs on the NVIDIA mapping}}
    %s = attn.matmul %q, %k, %zs transpose_lhs : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32>
  }
  return
}

// -----

// The rhs of a product is read from shared memory: it must be a loaded tile.
#cfg = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 64, block_n = 64, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>

func.func @rhs_in_registers(%Q: !t, %n: index) attributes {attn.config = #cfg} {
  %zs = arith.constant dense<0.0> : tensor<64x64xf32>
  %ones = arith.constant dense<1.0> : tensor<64x64xbf16>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %q = attn.load_tile %Q[%b, %h, %t] bounds %n : !t -> tensor<64x64xbf16>
    // expected-error @+1 {{'attn.matmul' op rhs must be a tile loaded from memory (the NVIDIA mapping reads it from shared memory)}}
    %s = attn.matmul %q, %ones, %zs transpose_rhs : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32>
  }
  return
}

// -----

// A part split over the head dim (col_groups) is lowered only by wgmma and
// accumulating stores: a plain store of it is refused.
#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 64, warps = 8, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
!t = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!a = memref<?x?x?x128xf32, strided<[?, ?, ?, 1], offset: ?>>

func.func @column_groups_plain_store(%Q: !t, %K: !t, %DQ: !a, %n: index) attributes {attn.config = #cfg} {
  %zs = arith.constant dense<0.0> : tensor<128x64xf32>
  %zq = arith.constant dense<0.0> : tensor<64x128xf32>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %k = attn.load_tile %K[%b, %h, %t] bounds %n : !t -> tensor<128x128xbf16>
    %q = attn.load_tile %Q[%b, %h, %t] bounds %n : !t -> tensor<64x128xbf16>
    %s = attn.matmul %k, %q, %zs transpose_rhs : tensor<128x128xbf16>, tensor<64x128xbf16>, tensor<128x64xf32>
    %ds = attn.map(%s : tensor<128x64xf32>) -> tensor<128x64xbf16> {
    ^bb0(%i: index, %j: index, %x: f32):
      %y = arith.truncf %x : f32 to bf16
      attn.yield %y : bf16
    }
    // expected-error @+1 {{'attn.matmul' op with transpose_lhs and fewer rows than the warps hold is split over the head dim; it must start from zero and feed accumulating stores only}}
    %dq = attn.matmul %ds, %k, %zq transpose_lhs : tensor<128x64xbf16>, tensor<128x128xbf16>, tensor<64x128xf32>
    attn.store_tile %dq, %DQ[%b, %h, %t] bounds %n : tensor<64x128xf32>, !a
  }
  return
}
