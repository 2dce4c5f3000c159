//===- SplitKv.h - split-KV (flash-decoding) pieces of attn-tile -*- C++ -*-===//
//
// With `split(%n, %o_part, %lse_part)` attn-tile runs the forward's grid
// once per split (z = batch · n): each program visits its own range of the
// K/V tiles its query tile sees and stores an f32 partial (O_s, LSE_s);
// a second grid merges them by the seed's rule. These are the pieces it
// adds to the forward's tiling (Tile.cpp), kept apart so that the tiling
// of a K/V tile (contiguous, paged) and the split do not know each other.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TRANSFORMS_SPLITKV_H
#define ATTN_TRANSFORMS_SPLITKV_H

#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/IR/Builders.h"

#include <array>
#include <functional>
#include <utility>

namespace mlir::attn {

/// Split `split` of `numSplits` (>= 1) of the K/V tiles [lower, upper) (steps of
/// `blockN` from `lower`): ceil(tiles / numSplits) whole tiles each, from
/// the first; a split past the last tile gets the empty range (upper,
/// upper).
std::pair<Value, Value> buildSplitKeyRange(OpBuilder &b, Location loc,
                                           Value lower, Value upper,
                                           int64_t blockN, Value split,
                                           Value numSplits);

/// Where a merge program's rows are: (memory batch row, first row, row
/// bound) of tile `tile` of batch index `batch` (a packed batch's sequence
/// rows), built inside the program.
using SplitRowsFn = std::function<std::array<Value, 3>(
    OpBuilder &, Location, Value batch, Value tile)>;

/// The merge grid of a split sdpa (`numSplits` >= 1), after its split grid: over (`batch`,
/// heads, `queryTiles`) as the forward without packed heads; each program
/// folds the num_splits partials of its rows (row p·n + s of the
/// workspaces for memory batch row p) with the online-softmax merge and
/// stores O (rounded to its element type) and, if any, the LSE.
void buildSplitMerge(OpBuilder &b, Location loc, SdpaOp op, int64_t blockM,
                     Value numSplits, Value batch, Value queryTiles,
                     const SplitRowsFn &rows);

} // namespace mlir::attn

#endif // ATTN_TRANSFORMS_SPLITKV_H
