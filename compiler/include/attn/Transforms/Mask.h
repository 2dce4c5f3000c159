//===- Mask.h - The one definition of which keys a query sees ---*- C++ -*-===//
//
// A mask is a mask_mod region, `(b, h, q_idx, kv_idx: index, captures...)
// -> i1` (true: the key is seen); the built-in kinds (causal, bottom-right
// causal) are mask_mods of this library. Keys past Nk are hidden by the
// tiling itself. MaskStructure reads the affine part of a mask_mod --
// conjunctions and disjunctions of comparisons linear in q_idx and kv_idx,
// with loop-invariant terms from captures, and equal non-decreasing ids
// (documents) -- so that the tiling visits only
// the K/V tiles a query tile can see and the decomposition masks only the
// tiles that may hide a key. A part it cannot read (document ids) only
// makes it conservative: every tile visited and masked.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TRANSFORMS_MASK_H
#define ATTN_TRANSFORMS_MASK_H

#include "attn/Dialect/Attn/IR/AttnOps.h"

#include <memory>

namespace mlir::attn {

/// On a mod's memref.load of a 1-D capture at q_idx or kv_idx: the
/// capture's values never decrease along it (document ids of packed
/// sequences). `ids_q[q_idx] == ids_kv[kv_idx]` of two such loads is then a
/// run of keys per query, which bounds the K/V loop by a search.
inline constexpr const char *kNonDecreasingAttr = "attn.non_decreasing";

/// On the arith.minsi that attn-decompose puts on a position a mod reads
/// memory at: the clamp only keeps the reads of a tile's rows past the
/// queries (or columns past the keys) inside the capture; the scores there
/// are dropped (or masked), so a lowering may read anything for them
/// (attn-nv-stage-tables zero-fills them).
inline constexpr const char *kBoundsClampAttr = "attn.bounds_clamp";

/// Leading block arguments of a mask_mod (b, h, q_idx, kv_idx) and of a
/// score_mod (score, b, h, q_idx, kv_idx); the captures follow.
inline constexpr unsigned kMaskModArgs = 4;
inline constexpr unsigned kScoreModArgs = 5;

/// The shift of the diagonal: key j is on query i's diagonal at
/// j = i + shift: 0 for `causal` (top-left), Nk - Nq for
/// `causal_bottom_right`. Null for `none`.
Value buildDiagonalShift(OpBuilder &b, Location loc, MaskKind kind,
                         Value numQueries, Value numKeys);

/// i1: the causal mask sees key `key` from query `query`: key <= query +
/// shift (index values).
Value buildCausalSeen(OpBuilder &b, Location loc, Value query, Value key,
                      Value shift);

/// The built-in mask of `kind` as a mask_mod: appends `shift`
/// (buildDiagonalShift) to `captures` and a block argument for it to both
/// regions (creating an empty-bodied mask_mod if there is none), and ands
/// the mask_mod's result with `kv_idx <= q_idx + shift`. Nothing for none.
void appendBuiltinMask(OpBuilder &b, Location loc, MaskKind kind, Value shift,
                       Region &scoreMod, Region &maskMod,
                       MutableOperandRange captures);

/// The first and last query (index values) a query tile from `row` of
/// `blockM` rows may hold: [row, min(row + blockM, Nq) - 1], or any query,
/// [0, Nq - 1], when the tile packs several heads' rows.
std::pair<Value, Value> buildQueryRange(OpBuilder &b, Location loc, Value row,
                                        int64_t blockM, Value numQueries,
                                        bool packed);

/// i1: key `key` lies past the keys.
Value buildKeyPastEnd(OpBuilder &b, Location loc, Value key, Value numKeys);

/// The affine structure of a mask_mod (see the file comment).
class MaskStructure {
public:
  /// Reads `maskMod` (empty: every key seen); `captures` are the values its
  /// capture arguments stand for where the bounds are built.
  MaskStructure(Region &maskMod, ValueRange captures);
  ~MaskStructure();

  /// Keys [begin, end) that queries [firstQuery, lastQuery] may see, begin a
  /// multiple of `blockN` (tiles stay aligned), end <= numKeys.
  std::pair<Value, Value> keyRange(OpBuilder &b, Location loc,
                                   Value firstQuery, Value lastQuery,
                                   Value numKeys, int64_t blockN) const;

  /// Queries [begin, end) that may see a key of [firstKey, lastKey] (the
  /// backward's loop over query tiles), begin a multiple of `blockM`, end
  /// <= numQueries.
  std::pair<Value, Value> queryRange(OpBuilder &b, Location loc,
                                     Value firstKey, Value lastKey,
                                     Value numQueries, int64_t blockM) const;

  /// i1: the mod sees every key of queries [firstQuery, lastQuery] x keys
  /// [firstKey, lastKey] (the tile needs no per-element mask, keys past Nk
  /// aside). False where the mod has a part it cannot read.
  Value tileAllSeen(OpBuilder &b, Location loc, Value firstQuery,
                    Value lastQuery, Value firstKey, Value lastKey) const;

  /// Whether a part of the mod is a run of equal non-decreasing ids
  /// (documents): the keys of a query tile, hence its work, then come from
  /// data, found by a search.
  bool hasDataRuns() const;

  struct Cond;

private:
  std::unique_ptr<Cond> cond;
  Region *region;
  SmallVector<Value> captures;
};

} // namespace mlir::attn

#endif // ATTN_TRANSFORMS_MASK_H
