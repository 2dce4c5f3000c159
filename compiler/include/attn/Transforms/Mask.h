//===- Mask.h - The one definition of the attention masks -------*- C++ -*-===//
//
// Which keys a query sees, as IR: the per-element predicate (used by the
// decomposition's mask map), the last key a range of queries can see (the
// tiling's loop bound, so tiles wholly above the diagonal are never
// visited), and whether a tile can hold any hidden key (so the mask runs
// only on tiles that cross the diagonal or the end of the keys).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TRANSFORMS_MASK_H
#define ATTN_TRANSFORMS_MASK_H

#include "attn/Dialect/Attn/IR/AttnOps.h"

namespace mlir::attn {

/// The shift of the diagonal: key j is visible to query i when
/// j <= i + shift: 0 for `causal` (top-left), Nk - Nq for
/// `causal_bottom_right`. Null for `none`.
Value buildDiagonalShift(OpBuilder &b, Location loc, MaskKind kind,
                         Value numQueries, Value numKeys);

/// i1: key `key` is hidden from query `query` (index values): past the keys,
/// or above the diagonal (`shift` from buildDiagonalShift, null for none).
Value buildKeyHidden(OpBuilder &b, Location loc, Value query, Value key,
                     Value numKeys, Value shift);

/// The end of the keys that queries [0, rowEnd) can see: Nk, or for causal
/// masks min(Nk, max(rowEnd + shift, 0)).
Value buildKeyEnd(OpBuilder &b, Location loc, Value rowEnd, Value numKeys,
                  Value shift);

/// i1: the tile of queries from `row` and keys [col, col + blockN) may hold
/// a hidden key: it reaches past the keys, or its last key lies above the
/// diagonal of its first query.
Value buildTileNeedsMask(OpBuilder &b, Location loc, Value row, Value col,
                         int64_t blockN, Value numKeys, Value shift);

} // namespace mlir::attn

#endif // ATTN_TRANSFORMS_MASK_H
