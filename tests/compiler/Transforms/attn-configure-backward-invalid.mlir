// RUN: attn-opt %s --verify-diagnostics --attn-configure="tensor-core=wgmma block-m=128"

// The atomic backward forms each step's dQ part, (dSᵀ)ᵀ K, a tile of
// block_n query rows split over the warps that split block_m: 64 rows
// cannot go to 8 warps (two warpgroups) in 16-row m tiles.
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!a = memref<?x?x?x64xf32, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>

func.func @backward_atomic(%t: !t, %a: !a, %l: !lse) {
  // expected-error @+1 {{'attn.sdpa_backward' op cannot be configured: the atomic backward's dQ part of 64 query rows is not a whole number of 16-row tiles for each of warps=8}}
  attn.sdpa_backward %t, %t, %t, %t, %t, %l into %t, %t, %t delta %l dq_accum %a : !a
      : !t, !t, !t, !t, !lse -> !t, !t, !t, !lse
  return
}
