//===- TilePolicy.h - Default tiles and mapping choice, MLIR-free -*- C++ -*-===//
//
// The choices the NVIDIA pipeline makes when the user leaves them open: tile
// sizes per head dim and whether the wgmma mapping can run the tiles. Pure
// functions, shared by the passes (attn-tile, convert-attn-to-nvvm) and the
// runtime (which keys its caches on the resolved configuration) without
// bringing MLIR into the runtime.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_COMPILER_TILEPOLICY_H
#define ATTN_COMPILER_TILEPOLICY_H

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace attn::compiler {

/// Default tile sizes (block-m, block-n) for a head dim, for the mma.sync or
/// the wgmma (sm_90a) mapping.
std::pair<int64_t, int64_t> defaultTileSizes(int64_t headDim, bool wgmma);

/// Why the wgmma mapping cannot run tiles of block-m x block-n with this head
/// dim and `warps` warps (0: automatic) on `chip`; empty when it can.
/// `tensor-core=auto` takes wgmma exactly when it is empty.
std::string wgmmaUnsupportedReason(std::string_view chip, int64_t headDim,
                                   int64_t blockM, int64_t blockN,
                                   int64_t warps);

} // namespace attn::compiler

#endif // ATTN_COMPILER_TILEPOLICY_H
