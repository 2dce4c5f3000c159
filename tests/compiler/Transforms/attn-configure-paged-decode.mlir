// RUN: attn-opt %S/../Pipelines/Inputs/empty.mlir --attn-create-kernel="head-dim=128 varlen=1 page-size=16" --attn-configure="paged-decode=true" | FileCheck %s --check-prefix=DECODE
// RUN: attn-opt %S/../Pipelines/Inputs/empty.mlir --attn-create-kernel="head-dim=128 varlen=1 page-size=16" --attn-configure | FileCheck %s --check-prefix=DEFAULT
// RUN: attn-opt %S/../Pipelines/Inputs/empty.mlir --attn-create-kernel="head-dim=128 varlen=1 page-size=16" --attn-configure="paged-decode=true block-m=128 block-n=64" | FileCheck %s --check-prefix=NAMED
// RUN: attn-opt %S/../Pipelines/Inputs/empty.mlir --attn-create-kernel="head-dim=128" --attn-configure="paged-decode=true" | FileCheck %s --check-prefix=DEFAULT

// paged-decode: a paged kernel that decodes takes the runtime's decode tiles
// (TilePolicy's pagedDecodeTiles: 64 x 64, one warpgroup, two CTAs an SM)
// where its tiles are left open; tiles it names, and a kernel over
// contiguous K/V, keep theirs.
// DECODE: block_m = 64, block_n = 64, warps = 4, min_ctas_per_sm = 2
// DEFAULT: block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1
// NAMED: block_m = 128, block_n = 64,
