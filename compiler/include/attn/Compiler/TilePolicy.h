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

/// Whether `name` is a tensor-core setting: auto, mma.sync or wgmma.
bool isTensorCoreName(std::string_view name);

/// Whether the default tiles are those of the wgmma mapping: it is asked
/// for, or auto on sm_90a (the pipelines and the runtime's resolved keys).
bool tilesForWgmma(std::string_view tensorCore, std::string_view chip);

/// Warps per CTA when left at 0: one per 16 rows with wgmma, 4 with mma.sync.
int64_t defaultWarps(bool wgmma, int64_t blockM);

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
