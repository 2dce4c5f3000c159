//===- Decompose.cpp - attention steps as generic tile ops ----------------===//
//
// The one definition of the online softmax and the epilogue (the mask's is
// Mask.cpp). Both mappings lower only the generic ops this produces.
//
// One step, c = scale · log2(e), S = Q Kᵀ:
//   positive scale:  T = mask(S);        m' = max(m, c · rowmax(T));
//                    P = 2^(c·T − b)     (one fused multiply-add)
//   any scale:       T = mask(c · S);    m' = max(m, rowmax(T));
//                    P = 2^(T − b)
//   b = m' unless m' = −inf (no key seen yet), then 0, so no −inf − −inf;
//   alpha = 2^(m − b);  l' = alpha · l + rowsum(P);
//   acc' = alpha · acc + round(P) · V.
// A score_mod forces the second form with T = log2(e) · score_mod(scale · S)
// (it must see the real scaled score). The mask -- past Nk, or not seen by
// the mask_mod -- runs only on tiles that can hold a hidden key (an scf.if
// on MaskStructure's "all seen"), as an elementwise map over each score's
// (query, key) coordinates with the mask_mod inlined.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/ScoreModGrad.h"
#include "attn/Transforms/Mask.h"
#include "attn/Transforms/Passes.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#include <cmath>
#include <limits>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNDECOMPOSE
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
/// The widest output accumulator (head dim) beside which a score_mod's loads
/// are gathered before the product (decompose(OnlineAttentionOp)).
constexpr int64_t kMaxGatherColumns = 128;

/// Builds tile maps and the scalar ops of their bodies.
struct TileBuilder {
  OpBuilder &b;
  Location loc;

  Value f32(float v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }
  Value splat(RankedTensorType type, float v) {
    return arith::ConstantOp::create(
        b, loc, type, DenseElementsAttr::get(type, b.getF32FloatAttr(v)));
  }
  using Body = function_ref<Value(OpBuilder &, Location, ValueRange coords,
                                  ValueRange elems)>;
  Value map(RankedTensorType type, ValueRange inputs, Body body,
            ValueRange offsets = {}) {
    return MapOp::create(b, loc, type, inputs, offsets, body);
  }
};

/// The products by the scale and by log2(e) around a score_mod may be
/// reassociated with the mod's own uniform factors (attn.map's
/// canonicalization): a reordered product changes a score by an ulp, far
/// below P's bf16 rounding.
constexpr arith::FastMathFlags kScoreFactorFlags =
    arith::FastMathFlags::reassoc;

/// Scalar ops inside map bodies.
Value mul(OpBuilder &b, Location loc, Value x, Value y, bool contract = false) {
  auto fm = contract ? arith::FastMathFlags::contract
                     : arith::FastMathFlags::none;
  return arith::MulFOp::create(b, loc, x, y, fm);
}
Value sub(OpBuilder &b, Location loc, Value x, Value y, bool contract = false) {
  auto fm = contract ? arith::FastMathFlags::contract
                     : arith::FastMathFlags::none;
  return arith::SubFOp::create(b, loc, x, y, fm);
}

/// The mod's body cloned at the builder with its block arguments bound to
/// `leading` then `captures`, into `mapping`. Ops whose results `mapping`
/// already binds (loads gathered before the product) are not cloned.
void cloneMod(OpBuilder &b, Region &mod, ValueRange leading,
              ValueRange captures, IRMapping &mapping) {
  Block &block = mod.front();
  mapping.map(block.getArguments().take_front(leading.size()), leading);
  mapping.map(block.getArguments().drop_front(leading.size()), captures);
  for (Operation &inner : block.without_terminator()) {
    if (inner.getNumResults() &&
        llvm::all_of(inner.getResults(),
                     [&](Value r) { return mapping.contains(r); }))
      continue;
    b.clone(inner, mapping);
  }
}

/// cloneMod, returning the value the mod yields.
Value inlineMod(OpBuilder &b, Region &mod, ValueRange leading,
                ValueRange captures, IRMapping mapping = {}) {
  cloneMod(b, mod, leading, captures, mapping);
  return mapping.lookup(
      cast<YieldOp>(mod.front().getTerminator()).getValues()[0]);
}

/// A score_mod that adds terms free of the score to it, s + g1 + ... + gk
/// (ALiBi's slope · (kv_idx − q_idx), a bias table's entry), in any order
/// of the additions: each term, and where a term is a product x · y with x
/// free of the positions too (ALiBi's slope), x. Then the base-2 score
/// log2(e) · (scale · S + Σ g) is c · S + Σ log2(e) · g: one fused
/// multiply-add per score for the first term, and log2(e) joins x once per
/// per element (CSE: once a tile) instead of after the sum (modded).
struct AddedTerm {
  Value term, factor, other; // factor and other: term = factor · other
};
std::optional<SmallVector<AddedTerm, 2>> addedTerms(Region &scoreMod) {
  Block &block = scoreMod.front();
  Value score = block.getArgument(0);
  SetVector<Operation *> fromScore, fromPositions;
  getForwardSlice(score, &fromScore);
  for (unsigned fromEnd : {2u, 1u})
    getForwardSlice(block.getArgument(kScoreModArgs - fromEnd),
                    &fromPositions);
  auto freeOf = [](const SetVector<Operation *> &slice, Value v, Value arg) {
    Operation *def = v.getDefiningOp();
    return v != arg && !(def && slice.contains(def));
  };
  auto freeOfPositions = [&](Value v) {
    return freeOf(fromPositions, v, block.getArgument(kScoreModArgs - 2)) &&
           freeOf(fromPositions, v, block.getArgument(kScoreModArgs - 1));
  };
  SmallVector<AddedTerm, 2> terms;
  Value v = cast<YieldOp>(block.getTerminator()).getValues()[0];
  while (v != score) {
    auto add = v.getDefiningOp<arith::AddFOp>();
    if (!add || add.getFastmath() != arith::FastMathFlags::none)
      return std::nullopt;
    Value lhs = add.getLhs(), rhs = add.getRhs();
    bool lhsFree = freeOf(fromScore, lhs, score);
    if (!lhsFree && !freeOf(fromScore, rhs, score))
      return std::nullopt;
    AddedTerm term{lhsFree ? lhs : rhs, Value(), Value()};
    v = lhsFree ? rhs : lhs;
    if (auto mul = term.term.getDefiningOp<arith::MulFOp>();
        mul && mul.getFastmath() == arith::FastMathFlags::none) {
      if (freeOfPositions(mul.getLhs()))
        term = {term.term, mul.getLhs(), mul.getRhs()};
      else if (freeOfPositions(mul.getRhs()))
        term = {term.term, mul.getRhs(), mul.getLhs()};
    }
    terms.push_back(term);
  }
  if (terms.empty())
    return std::nullopt;
  return terms;
}

/// The ops of `block` that `root` depends on, root included, in block
/// order.
SmallVector<Operation *> dependencies(Block &block, Operation *root) {
  llvm::SmallPtrSet<Operation *, 8> needed{root};
  SmallVector<Operation *> work{root};
  while (!work.empty())
    for (Value operand : work.pop_back_val()->getOperands())
      if (Operation *def = operand.getDefiningOp();
          def && def->getBlock() == &block && needed.insert(def).second)
        work.push_back(def);
  SmallVector<Operation *> ordered;
  for (Operation &op : block)
    if (needed.contains(&op))
      ordered.push_back(&op);
  return ordered;
}

/// The probabilities' exponentials 2^(T - base) of a tile of base-2 scores
/// T (with `positive`, c · T: one fused multiply-add), `base` a row tile
/// (the running max; the LSE in the backward) broadcast along it.
Value exponentials(TileBuilder &t, RankedTensorType type, Value scores,
                   Value base, Value c, bool positive) {
  return t.map(type, {scores, base},
               [&](OpBuilder &nb, Location nl, ValueRange, ValueRange e) {
                 Value x = positive ? mul(nb, nl, e[0], c, /*contract=*/true)
                                    : e[0];
                 return math::Exp2Op::create(
                            nb, nl, sub(nb, nl, x, e[1], /*contract=*/true))
                     .getResult();
               });
}

/// Where a score tile lies and what decides its elements: the mods, their
/// captures, the bounds. Shared by the forward step and the backward's
/// (score_grad), so that the mask and the score_mod have one lowering.
/// Queries-major tiles hold queries along the rows; keys-major ones
/// (the backward's dK/dV loop) along the columns.
struct ScoreSpace {
  Region &scoreMod, &maskMod;
  ValueRange captures;
  Value batch, head, rowsPerHead;
  Value row, col; // first query, first key
  Value numQueries, numKeys, scale;
  int64_t blockM, blockN; // queries, keys
  bool keysMajor;
  /// Which positions a mod reads memory at (prepare).
  struct Clamp {
    bool query = false, key = false;
  } scoreClamp, maskClamp;
  Value lastRow, lastCol;
  /// The score_mod's loads gathered before the product (gatherLoads) and
  /// their tiles.
  SmallVector<std::pair<Operation *, Value>> gathered;

  /// The map offsets of a score tile.
  SmallVector<Value, 2> at() const {
    return keysMajor ? SmallVector<Value, 2>{col, row}
                     : SmallVector<Value, 2>{row, col};
  }
  /// (query, key) of an element's coordinates.
  std::pair<Value, Value> queryKey(ValueRange ij) const {
    return keysMajor ? std::pair{ij[1], ij[0]} : std::pair{ij[0], ij[1]};
  }

  /// A position a mod reads memory at is clamped: a tile's queries and
  /// keys past the bounds are computed (then dropped or masked) but must
  /// not read past a capture. Only such positions, and only in the mod
  /// that loads at them: a clamp is a 64-bit min per element (ALiBi's
  /// distance paid two; a causal mask beside a bias table two more).
  void prepare(OpBuilder &b, Location loc) {
    // The mods' query and key arguments are their last two positions.
    auto reachesLoad = [](Region &mod, unsigned arity, unsigned fromEnd) {
      if (mod.empty())
        return false;
      SetVector<Operation *> slice;
      getForwardSlice(mod.front().getArgument(arity - fromEnd), &slice);
      return llvm::any_of(slice, llvm::IsaPred<memref::LoadOp>);
    };
    scoreClamp = {reachesLoad(scoreMod, kScoreModArgs, 2),
                  reachesLoad(scoreMod, kScoreModArgs, 1)};
    maskClamp = {reachesLoad(maskMod, kMaskModArgs, 2),
                 reachesLoad(maskMod, kMaskModArgs, 1)};
    if (!scoreClamp.query && !scoreClamp.key && !maskClamp.query &&
        !maskClamp.key)
      return;
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    if (scoreClamp.query || maskClamp.query)
      lastRow = arith::SubIOp::create(b, loc, numQueries, one);
    if (scoreClamp.key || maskClamp.key)
      lastCol = arith::SubIOp::create(b, loc, numKeys, one);
  }
  Value key(OpBuilder &nb, Location nl, Value k, Clamp clamp) const {
    return clamp.key ? boundsClamp(nb, nl, k, lastCol) : k;
  }
  /// min(position, last), marked as a clamp for memory safety only
  /// (kBoundsClampAttr).
  static Value boundsClamp(OpBuilder &nb, Location nl, Value position,
                           Value last) {
    auto min = arith::MinSIOp::create(nb, nl, position, last);
    min->setAttr(kBoundsClampAttr, nb.getUnitAttr());
    return min;
  }
  /// Packed rows: row p is query p mod rows_per_head of head head + p /
  /// rows.
  std::pair<Value, Value> position(OpBuilder &nb, Location nl, Value query,
                                   Clamp clamp) const {
    if (!rowsPerHead)
      return {clamp.query ? boundsClamp(nb, nl, query, lastRow) : query,
              head};
    // Without a head operand (a hand-written step with a built-in mask
    // only) no mod reads the head.
    if (!head)
      return {arith::RemUIOp::create(nb, nl, query, rowsPerHead), Value()};
    Value h = arith::AddIOp::create(
        nb, nl, head, arith::DivUIOp::create(nb, nl, query, rowsPerHead));
    return {arith::RemUIOp::create(nb, nl, query, rowsPerHead), h};
  }
  /// The score_mod's leading arguments for the element at `ij`.
  SmallVector<Value, 5> modArgs(OpBuilder &nb, Location nl, ValueRange ij,
                                Value scaled) const {
    auto [q, k] = queryKey(ij);
    auto [query, h] = position(nb, nl, q, scoreClamp);
    return {scaled, batch, h, query, key(nb, nl, k, scoreClamp)};
  }

  /// i1: the tile may hide an element: it reaches past the keys (with
  /// keys_major, past the queries too) or the mask_mod may not see all of
  /// it (Mask.h).
  Value needsMask(OpBuilder &b, Location loc) const {
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    Value tileEnd = arith::AddIOp::create(
        b, loc, col, arith::ConstantIndexOp::create(b, loc, blockN));
    Value needs = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt,
                                        tileEnd, numKeys);
    if (keysMajor) {
      Value rowsEnd = arith::AddIOp::create(
          b, loc, row, arith::ConstantIndexOp::create(b, loc, blockM));
      needs = arith::OrIOp::create(
          b, loc, needs,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, rowsEnd,
                                numQueries));
    }
    if (maskMod.empty())
      return needs;
    // A packed tile may hold any query of its heads.
    auto [firstQuery, lastQuery] = buildQueryRange(
        b, loc, row, blockM, numQueries, bool(rowsPerHead));
    Value lastKey = arith::SubIOp::create(b, loc, tileEnd, one);
    Value allSeen = MaskStructure(maskMod, captures)
                        .tileAllSeen(b, loc, firstQuery, lastQuery, col,
                                     lastKey);
    Value notAllSeen = arith::XOrIOp::create(
        b, loc, allSeen,
        arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1));
    return arith::OrIOp::create(b, loc, needs, notAllSeen);
  }

  /// i1: the element at `ij` is hidden.
  Value hidden(OpBuilder &nb, Location nl, ValueRange ij) const {
    auto [q, k] = queryKey(ij);
    Value hide = buildKeyPastEnd(nb, nl, k, numKeys);
    if (keysMajor)
      hide = arith::OrIOp::create(nb, nl, hide,
                                  buildKeyPastEnd(nb, nl, q, numQueries));
    if (maskMod.empty())
      return hide;
    auto [query, h] = position(nb, nl, q, maskClamp);
    Value seen = inlineMod(nb, maskMod,
                           {batch, h, query, key(nb, nl, k, maskClamp)},
                           captures);
    Value unseen = arith::XOrIOp::create(
        nb, nl, seen, arith::ConstantIntOp::create(nb, nl, nb.getI1Type(), 1));
    return arith::OrIOp::create(nb, nl, hide, unseen);
  }

  /// The score_mod's loads at a query or key position (a bias table's, not
  /// ALiBi's slope per head), each into a tile of the scores' shape, built
  /// where the builder is: before the product, so that they are in flight
  /// during it instead of stalling each tile after it (the products are
  /// asynchronous on wgmma; loads cannot move across their wait). `modded`
  /// then reads the tiles.
  void gatherLoads(TileBuilder &t, ArrayRef<int64_t> shape) {
    if (scoreMod.empty())
      return;
    Block &block = scoreMod.front();
    SetVector<Operation *> fromScore, fromPositions;
    getForwardSlice(block.getArgument(0), &fromScore);
    for (unsigned fromEnd : {2u, 1u})
      getForwardSlice(block.getArgument(kScoreModArgs - fromEnd),
                      &fromPositions);
    for (auto load : block.getOps<memref::LoadOp>()) {
      if (fromScore.contains(load) || !fromPositions.contains(load))
        continue;
      SmallVector<Operation *> ops = dependencies(block, load);
      auto type = RankedTensorType::get(shape, load.getType());
      Value tile = t.map(
          type, ValueRange{},
          [&](OpBuilder &nb, Location nl, ValueRange ij, ValueRange) {
            IRMapping mapping;
            // Positions only: no slice of a gathered load reads the score.
            SmallVector<Value, 5> args = modArgs(nb, nl, ij, Value());
            for (auto [arg, value] :
                 llvm::zip(block.getArguments().drop_front(),
                           ArrayRef(args).drop_front()))
              mapping.map(arg, value);
            mapping.map(block.getArguments().drop_front(kScoreModArgs),
                        captures);
            for (Operation *op : ops)
              nb.clone(*op, mapping);
            return mapping.lookup(load.getResult());
          },
          at());
      gathered.push_back({load, tile});
    }
  }

  /// The scores in the base-2 domain: log2(e) · score_mod(scale · S) with
  /// a score_mod; c · S (c = scale · log2 e) without, unless `positive`
  /// (then S itself: the caller folds c into its exponent).
  Value modded(TileBuilder &t, Value s, Value c, bool positive) const {
    auto type = cast<RankedTensorType>(s.getType());
    if (!scoreMod.empty()) {
      Value log2e = t.f32(static_cast<float>(M_LOG2E));
      SmallVector<Value> inputs{s};
      for (auto [load, tile] : gathered)
        inputs.push_back(tile);
      std::optional<SmallVector<AddedTerm, 2>> terms = addedTerms(scoreMod);
      // log2(e) · a term's factor, built before the map where the tile has
      // one head (not packed heads): the same for every score, which lets
      // the NVIDIA map lowering fuse it with ALiBi's distance (AffineCoords).
      DenseMap<Value, Value> hoisted;
      if (terms && batch && head && !rowsPerHead) {
        Block &block = scoreMod.front();
        for (const AddedTerm &term : *terms) {
          if (!term.factor)
            continue;
          IRMapping mapping;
          mapping.map(block.getArgument(1), batch);
          mapping.map(block.getArgument(2), head);
          mapping.map(block.getArguments().drop_front(kScoreModArgs),
                      captures);
          if (Operation *def = term.factor.getDefiningOp())
            for (Operation *op : dependencies(block, def))
              t.b.clone(*op, mapping);
          hoisted[term.factor] =
              mul(t.b, t.loc, mapping.lookupOrDefault(term.factor), log2e);
        }
      }
      return t.map(
          type, inputs,
          [&](OpBuilder &nb, Location nl, ValueRange ij, ValueRange e) {
            IRMapping mapping;
            for (auto [i, entry] : llvm::enumerate(gathered))
              mapping.map(entry.first->getResult(0), e[i + 1]);
            if (!terms) {
              // Reassociable, so that a mod's own uniform factors (a
              // softcap's 1 / cap and cap) fold into scale and log2(e)
              // (attn.map's canonicalization).
              Value scaled = arith::MulFOp::create(nb, nl, e[0], scale,
                                                   kScoreFactorFlags);
              Value modded =
                  inlineMod(nb, scoreMod, modArgs(nb, nl, ij, scaled),
                            captures, std::move(mapping));
              return arith::MulFOp::create(nb, nl, modded, log2e,
                                           kScoreFactorFlags)
                  .getResult();
            }
            // c · S + Σ log2(e) · g (addedTerms); the mod's own additions
            // of the score are left dead.
            cloneMod(nb, scoreMod, modArgs(nb, nl, ij, e[0]), captures,
                     mapping);
            Value sum = mul(nb, nl, e[0], c, /*contract=*/true);
            for (const AddedTerm &term : *terms) {
              Value g;
              if (term.factor) {
                Value x = hoisted.lookup(term.factor);
                if (!x)
                  x = mul(nb, nl, mapping.lookupOrDefault(term.factor), log2e);
                g = mul(nb, nl, x, mapping.lookupOrDefault(term.other));
              } else {
                g = mul(nb, nl, mapping.lookupOrDefault(term.term), log2e);
              }
              sum = arith::AddFOp::create(nb, nl, sum, g,
                                          arith::FastMathFlags::contract);
            }
            return sum;
          },
          at());
    }
    if (positive)
      return s;
    return t.map(type, s,
                 [&](OpBuilder &nb, Location nl, ValueRange, ValueRange e) {
                   return mul(nb, nl, e[0], c);
                 });
  }

  /// needsMask where the test reads a capture (document ids): built before
  /// the product, so that its loads are in flight during the matrix
  /// multiply instead of stalling each tile after it (the products are
  /// asynchronous on wgmma; loads cannot move across their wait). A test of
  /// positions alone stays by its use (no latency to hide, fewer registers
  /// live across the product): null.
  Value needsMaskEarly(OpBuilder &b, Location loc) const {
    bool reads = !maskMod.empty() &&
                 maskMod.walk([](memref::LoadOp) {
                          return WalkResult::interrupt();
                        }).wasInterrupted();
    return reads ? needsMask(b, loc) : Value();
  }

  /// `t` with its hidden elements -inf, on tiles that may hide one (`needs`,
  /// or needsMask); and the -inf constant.
  std::pair<Value, Value> masked(OpBuilder &b, Location loc, Value t,
                                 Value needs = Value()) const {
    auto type = cast<RankedTensorType>(t.getType());
    if (!needs)
      needs = needsMask(b, loc);
    Value negInf = TileBuilder{b, loc}.f32(kNegInf);
    auto ifOp = scf::IfOp::create(
        b, loc, needs,
        [&](OpBuilder &tb, Location tl) {
          TileBuilder tt{tb, tl};
          Value m = tt.map(
              type, t,
              [&](OpBuilder &nb, Location nl, ValueRange ij, ValueRange e) {
                return arith::SelectOp::create(nb, nl, hidden(nb, nl, ij),
                                               negInf, e[0])
                    .getResult();
              },
              at());
          scf::YieldOp::create(tb, tl, m);
        },
        [&](OpBuilder &eb, Location el) { scf::YieldOp::create(eb, el, t); });
    return {ifOp.getResult(0), negInf};
  }
};

void decompose(OnlineAttentionOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  TileBuilder t{b, loc};
  auto qType = cast<RankedTensorType>(op.getQuery().getType());
  auto kType = cast<RankedTensorType>(op.getKey().getType());
  auto rowType = cast<RankedTensorType>(op.getMax().getType());
  int64_t blockM = qType.getDimSize(0), blockN = kType.getDimSize(0);
  auto scoreType = RankedTensorType::get({blockM, blockN}, b.getF32Type());
  auto probType =
      RankedTensorType::get({blockM, blockN}, qType.getElementType());
  Region &scoreMod = op.getScoreMod();
  // A score_mod sees the real scaled score: scale first.
  bool positive = op.getPositiveScale() && scoreMod.empty();

  // Hand-written steps may still carry a built-in mask kind.
  if (op.getMask() != MaskKind::None) {
    appendBuiltinMask(b, loc, op.getMask(),
                      buildDiagonalShift(b, loc, op.getMask(),
                                         op.getNumQueries(), op.getNumKeys()),
                      scoreMod, op.getMaskMod(), op.getCapturesMutable());
    op.setMask(MaskKind::None);
  }
  ScoreSpace space{scoreMod,         op.getMaskMod(),    op.getCaptures(),
                   op.getBatch(),    op.getHead(),       op.getRowsPerHead(),
                   op.getRow(),      op.getCol(),        op.getNumQueries(),
                   op.getNumKeys(),  op.getScale(),      blockM,
                   blockN,           /*keysMajor=*/false};
  space.prepare(b, loc);

  // One multiplier: the softmax scale and the change of base to 2.
  Value log2e = t.f32(static_cast<float>(M_LOG2E));
  Value c = arith::MulFOp::create(b, loc, op.getScale(), log2e);
  Value needs = space.needsMaskEarly(b, loc);
  // A gathered tile is held across the product: only where the mask's test
  // has no loads of its own in flight then (document ids), and the output
  // accumulator is at most kMaxGatherColumns wide (ptxas 13.0, wgmma, bias
  // table: D = 128 spill-free either way; with document ids 0 -> 60 bytes
  // spilled, D = 160 0 -> 40).
  if (!needs && cast<RankedTensorType>(op.getAcc().getType()).getDimSize(1) <=
                    kMaxGatherColumns)
    space.gatherLoads(t, scoreType.getShape());
  Value s = MatmulOp::create(b, loc, op.getQuery(), op.getKey(),
                             t.splat(scoreType, 0.0f), /*transposeLhs=*/false,
                             /*transposeRhs=*/true);
  s = space.modded(t, s, c, positive);
  // The mask, on tiles that may hide a key.
  auto [scores, negInf] = space.masked(b, loc, s, needs);

  // m' = max(m, rowmax): with a positive scale over the unscaled scores.
  Value max = op.getMax();
  Value newMax;
  if (positive) {
    Value rowMax = ReduceOp::create(b, loc, ReduceKind::Max, scores,
                                    t.splat(rowType, kNegInf));
    newMax = t.map(rowType, {rowMax, max},
                   [&](OpBuilder &nb, Location nl, ValueRange, ValueRange e) {
                     return arith::MaxNumFOp::create(
                                nb, nl, mul(nb, nl, e[0], c), e[1])
                         .getResult();
                   });
  } else {
    newMax = ReduceOp::create(b, loc, ReduceKind::Max, scores, max);
  }
  // The exponent base: m', or 0 while no key has been seen (m' = -inf).
  Value base = t.map(rowType, newMax,
                     [&](OpBuilder &nb, Location nl, ValueRange, ValueRange e) {
                       Value unseen = arith::CmpFOp::create(
                           nb, nl, arith::CmpFPredicate::OEQ, e[0], negInf);
                       return arith::SelectOp::create(nb, nl, unseen,
                                                      t.f32(0.0f), e[0])
                           .getResult();
                     });
  Value alpha =
      t.map(rowType, {max, base},
            [&](OpBuilder &nb, Location nl, ValueRange, ValueRange e) {
              return math::Exp2Op::create(nb, nl, sub(nb, nl, e[0], e[1]))
                  .getResult();
            });
  // e4m3 (FP8): P·V takes the probabilities times kFp8ProbScale
  // (attn.online_attention), made by the exponent -- exp2(x - (m' - 8)) --
  // rather than a product per score, and the row sum takes them back to P
  // once per row (FlashAttention-3's max offset).
  Type element = qType.getElementType();
  bool fp8 = isa<Float8E4M3FNType>(element);
  float probScaleLog2 = std::log2(OnlineAttentionOp::kFp8ProbScale);
  Value probBase =
      fp8 ? t.map(rowType, base,
                  [&](OpBuilder &nb, Location nl, ValueRange, ValueRange e) {
                    return sub(nb, nl, e[0], t.f32(probScaleLog2));
                  })
          : base;
  Value probs = exponentials(t, scoreType, scores, probBase, c, positive);
  Value rowSum = ReduceOp::create(b, loc, ReduceKind::Add, probs,
                                  t.splat(rowType, 0.0f));
  Value newSum =
      t.map(rowType, {op.getSum(), alpha, rowSum},
            [&](OpBuilder &nb, Location nl, ValueRange, ValueRange e) {
              Value sum = e[2];
              if (fp8)
                sum = mul(nb, nl, sum,
                          t.f32(1.0f / OnlineAttentionOp::kFp8ProbScale));
              return arith::AddFOp::create(nb, nl, mul(nb, nl, e[1], e[0]),
                                           sum)
                  .getResult();
            });
  // P is rounded to the element type of V for the product by a map that
  // only rounds: what a mapping folds into its operand conversion (the
  // NVIDIA one rounds pairs of f32 there).
  Value rounded = probs;
  if (!element.isF32())
    rounded =
        t.map(probType, rounded,
              [&](OpBuilder &nb, Location nl, ValueRange, ValueRange e) {
                return arith::TruncFOp::create(nb, nl, element, e[0])
                    .getResult();
              });
  auto accType = cast<RankedTensorType>(op.getAcc().getType());
  Value rescaled =
      t.map(accType, {op.getAcc(), alpha},
            [&](OpBuilder &nb, Location nl, ValueRange, ValueRange e) {
              return mul(nb, nl, e[0], e[1]);
            });
  Value acc = MatmulOp::create(b, loc, rounded, op.getValue(), rescaled,
                               /*transposeLhs=*/false, /*transposeRhs=*/false);
  op.replaceAllUsesWith(ValueRange{newMax, newSum, acc});
  op.erase();
}

void decompose(FinalizeOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  TileBuilder t{b, loc};
  auto rowType = cast<RankedTensorType>(op.getSum().getType());
  auto outType = cast<RankedTensorType>(op.getOutput().getType());
  // l = 0 only when every key of the row was masked: O = 0, LSE = -inf.
  Value inverse =
      t.map(rowType, op.getSum(),
            [&](OpBuilder &nb, Location nl, ValueRange, ValueRange e) {
              Value zero = t.f32(0.0f);
              Value empty = arith::CmpFOp::create(
                  nb, nl, arith::CmpFPredicate::OEQ, e[0], zero);
              // O = s · acc / l with an output scale s (FP8), else 1.
              Value numerator = op.getOutputScale() ? op.getOutputScale()
                                                    : t.f32(1.0f);
              Value inv = arith::DivFOp::create(nb, nl, numerator, e[0]);
              return arith::SelectOp::create(nb, nl, empty, zero, inv)
                  .getResult();
            });
  Type outElement = outType.getElementType();
  Value out = t.map(outType, {op.getAcc(), inverse},
                    [&](OpBuilder &nb, Location nl, ValueRange, ValueRange e) {
                      Value o = mul(nb, nl, e[0], e[1]);
                      if (outElement.isF32())
                        return o;
                      return arith::TruncFOp::create(nb, nl, outElement, o)
                          .getResult();
                    });
  // LSE = ln 2 · (m + log2 l): m is in base-2 units.
  Value lse = t.map(
      rowType, {op.getMax(), op.getSum()},
      [&](OpBuilder &nb, Location nl, ValueRange, ValueRange e) {
        Value empty = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ,
                                            e[1], t.f32(0.0f));
        Value log2l = math::Log2Op::create(nb, nl, e[1]);
        Value ln2 = t.f32(static_cast<float>(M_LN2));
        Value v = mul(nb, nl, arith::AddFOp::create(nb, nl, e[0], log2l), ln2);
        return arith::SelectOp::create(nb, nl, empty, t.f32(kNegInf), v)
            .getResult();
      });
  op.replaceAllUsesWith(ValueRange{out, lse});
  op.erase();
}


/// The backward step (attn.score_grad): P recomputed from the LSE, in the
/// base-2 domain as the forward's (P = 2^(T − log2(e) · lse) with T the
/// step's scores), and dS = P ∘ (dP − delta) ∘ ∂S'/∂S.
void decompose(ScoreGradOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  TileBuilder t{b, loc};
  auto qType = cast<RankedTensorType>(op.getQuery().getType());
  auto kType = cast<RankedTensorType>(op.getKey().getType());
  int64_t blockM = qType.getDimSize(0), blockN = kType.getDimSize(0);
  bool keysMajor = op.getKeysMajor();
  auto resultType = cast<RankedTensorType>(op.getProbs().getType());
  auto scoreType =
      RankedTensorType::get(resultType.getShape(), b.getF32Type());
  Region &scoreMod = op.getScoreMod();
  bool positive = op.getPositiveScale() && scoreMod.empty();
  ScoreSpace space{scoreMod,        op.getMaskMod(), op.getCaptures(),
                   op.getBatch(),   op.getHead(),    Value(),
                   op.getRow(),     op.getCol(),     op.getNumQueries(),
                   op.getNumKeys(), op.getScale(),   blockM,
                   blockN,          keysMajor};
  space.prepare(b, loc);

  Value log2e = t.f32(static_cast<float>(M_LOG2E));
  Value c = arith::MulFOp::create(b, loc, op.getScale(), log2e);
  Value zero = t.splat(scoreType, 0.0f);
  // Keys-major tiles are the transposed products: K Qᵀ and V dOᵀ.
  auto product = [&](Value queriesSide, Value keysSide) {
    return keysMajor
               ? MatmulOp::create(b, loc, keysSide, queriesSide, zero, false,
                                  true)
               : MatmulOp::create(b, loc, queriesSide, keysSide, zero, false,
                                  true);
  };
  Value needs = space.needsMaskEarly(b, loc);
  Value s = product(op.getQuery(), op.getKey());
  Value scores =
      space.masked(b, loc, space.modded(t, s, c, positive), needs).first;
  // The LSE in base 2; a row that saw no key (LSE = -inf) has every key
  // hidden: +inf makes its P 0, not NaN.
  auto rowTermsType = cast<RankedTensorType>(op.getLse().getType());
  Value lse2 =
      t.map(rowTermsType, op.getLse(),
            [&](OpBuilder &nb, Location nl, ValueRange, ValueRange e) {
              Value empty = arith::CmpFOp::create(
                  nb, nl, arith::CmpFPredicate::OEQ, e[0], t.f32(kNegInf));
              Value scaled = mul(nb, nl, e[0], log2e);
              return arith::SelectOp::create(nb, nl, empty, t.f32(-kNegInf),
                                             scaled)
                  .getResult();
            });
  Value probs = exponentials(t, scoreType, scores, lse2, c, positive);
  Value dp = product(op.getGradOutput(), op.getValue());
  // dS = P (dP - delta), times the score_mod's derivative at the element.
  SmallVector<Value> inputs{probs, dp, op.getDelta()};
  if (!scoreMod.empty())
    inputs.push_back(s);
  Value grad = t.map(
      scoreType, inputs,
      [&](OpBuilder &nb, Location nl, ValueRange ij, ValueRange e) {
        Value g = mul(nb, nl, e[0], sub(nb, nl, e[1], e[2]));
        if (scoreMod.empty())
          return g;
        Value scaled = arith::MulFOp::create(nb, nl, e[3], op.getScale(),
                                             kScoreFactorFlags);
        auto [modded, derivative] = buildScoreModWithDerivative(
            nb, nl, scoreMod, space.modArgs(nb, nl, ij, scaled),
            op.getCaptures());
        (void)modded;
        return mul(nb, nl, g, derivative);
      },
      space.at());
  Type element = qType.getElementType();
  auto rounded = [&](Value x) {
    if (element.isF32())
      return x;
    return t.map(resultType, x,
                 [&](OpBuilder &nb, Location nl, ValueRange, ValueRange e) {
                   return arith::TruncFOp::create(nb, nl, element, e[0])
                       .getResult();
                 });
  };
  op.replaceAllUsesWith(ValueRange{rounded(probs), rounded(grad)});
  op.erase();
}

struct AttnDecomposePass
    : mlir::attn::impl::AttnDecomposeBase<AttnDecomposePass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (isa<OnlineAttentionOp, FinalizeOp, ScoreGradOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      if (auto step = dyn_cast<OnlineAttentionOp>(op))
        decompose(step);
      else if (auto grad = dyn_cast<ScoreGradOp>(op))
        decompose(grad);
      else
        decompose(cast<FinalizeOp>(op));
    }
  }
};

} // namespace
