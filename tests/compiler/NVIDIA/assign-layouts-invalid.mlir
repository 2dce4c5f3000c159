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
