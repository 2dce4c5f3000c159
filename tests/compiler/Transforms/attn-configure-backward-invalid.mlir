// RUN: attn-opt %s --split-input-file --verify-diagnostics --attn-configure="tensor-core=mma.sync block-n=32 warps=4"
// RUN: attn-opt %s --split-input-file --attn-configure="tensor-core=mma.sync block-n=32" | FileCheck %s

// The backward's K/V tiles are score tiles too (keys-major): their rows must
// split into 16-row m tiles over the warps, as a query tile's do. Warps
// left automatic fit the smaller tile instead (mma.sync: one 16-row m tile
// a warp).
// CHECK: block_m = 64, block_n = 32, warps = 2,
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>

func.func @backward(%t: !t, %l: !lse) {
  // expected-error @+1 {{'attn.sdpa_backward' op cannot be configured: the backward's K/V tile of 32 keys is not a whole number of 16-row tiles for each of warps=4}}
  attn.sdpa_backward %t, %t, %t, %t, %t, %l into %t, %t, %t delta %l
      : !t, !t, !t, !t, !lse -> !t, !t, !t, !lse
  return
}
