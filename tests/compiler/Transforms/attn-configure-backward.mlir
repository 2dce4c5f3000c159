// RUN: attn-opt %s --attn-configure | FileCheck %s --check-prefix=WGMMA
// RUN: attn-opt %s --attn-configure="block-m=128" | FileCheck %s --check-prefix=WGMMA128
// RUN: attn-opt %s --attn-configure="tensor-core=mma.sync block-n=32" | FileCheck %s --check-prefix=MMA

// A CTA of either backward grid owns block_m rows (queries, or keys) split
// over the warps and steps over block_n rows of the other side; warps left
// automatic fit block_m (mma.sync: one 16-row m tile a warp; wgmma: one
// warpgroup per 64 rows), and block_n needs only whole 16-row k steps.
// The default is 64 x 64 on one warpgroup (128 rows on two measured
// slower); the atomic form must keep block_n a whole number of the warps'
// 16-row tiles (attn-configure-backward-invalid.mlir).
// WGMMA: block_m = 64, block_n = 64, warps = 4,
// WGMMA128: block_m = 128, block_n = 64, warps = 8,
// MMA: block_m = 64, block_n = 32, warps = 4,
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>

func.func @backward(%t: !t, %l: !lse) {
  attn.sdpa_backward %t, %t, %t, %t, %t, %l into %t, %t, %t delta %l
      : !t, !t, !t, !t, !lse -> !t, !t, !t, !lse
  return
}
