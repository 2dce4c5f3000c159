//===- Tile.cpp - attn.sdpa to a grid of query tiles and a K/V loop -------===//

#include "attn/Compiler/KernelABI.h"
#include "attn/Compiler/TilePolicy.h"
#include "attn/Transforms/Mask.h"
#include "attn/Transforms/Passes.h"
#include "attn/Transforms/SplitKv.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <array>
#include <cmath>
#include <limits>
#include <tuple>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNTILE
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Splat constant of `value` with the given tensor type.
Value splat(OpBuilder &b, Location loc, RankedTensorType type, float value) {
  return arith::ConstantOp::create(
      b, loc, type, DenseElementsAttr::get(type, b.getF32FloatAttr(value)));
}

/// The sizes both tilings read off the whole tensors, and the scale.
struct Sizes {
  Value batch, heads, numQueries, kvHeads, numKeys;
  Value group; // query heads per K/V head
  Value scale; // the op's, or 1/sqrt(D)
};

Sizes buildSizes(OpBuilder &b, Location loc, Value query, Value key,
                 Value scale) {
  Sizes s;
  s.batch = memref::DimOp::create(b, loc, query, 0);
  s.heads = memref::DimOp::create(b, loc, query, 1);
  s.numQueries = memref::DimOp::create(b, loc, query, 2);
  s.kvHeads = memref::DimOp::create(b, loc, key, 1);
  s.numKeys = memref::DimOp::create(b, loc, key, 2);
  // Grouped-query attention: query heads [g·G, (g + 1)·G) share K/V head g.
  s.group = arith::DivUIOp::create(b, loc, s.heads, s.kvHeads);
  s.scale = scale;
  if (!s.scale) {
    int64_t headDim = cast<MemRefType>(query.getType()).getDimSize(3);
    s.scale = arith::ConstantOp::create(
        b, loc, b.getF32FloatAttr(1.0f / std::sqrt(float(headDim))));
  }
  return s;
}

/// One sequence of a packed (variable-length) batch, inside its program:
/// rows [qStart, qEnd) of Q and O, [kStart, kEnd) of K and V. The offsets
/// are clamped to the packed rows (start in [0, total], end in [start,
/// total]), so offsets that are wrong on the device can never move a load
/// or a store outside the tensors.
struct Sequence {
  Value qStart, qEnd, qLen, kStart, kEnd, kLen;
};

/// The key count of sequence `seq` of a paged cache: seqused_k[seq]
/// clamped to [0, max_pages · page_size], so that every key it covers has a
/// block-table column.
Value buildPagedKeyCount(OpBuilder &b, Location loc, SdpaOp op, Value seq) {
  Value used = arith::IndexCastOp::create(
      b, loc, b.getIndexType(),
      memref::LoadOp::create(b, loc, op.getSequsedK(), seq));
  Value maxPages = memref::DimOp::create(b, loc, op.getBlockTable(), 1);
  Value pageSize = arith::ConstantIndexOp::create(
      b, loc, op.getKey().getType().getDimSize(2));
  Value capacity = arith::MulIOp::create(b, loc, maxPages, pageSize);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  return arith::MinSIOp::create(
      b, loc, arith::MaxSIOp::create(b, loc, used, zero), capacity);
}

/// A sequence's rows: of a packed batch, or over a paged cache (its K/V
/// rows are then the sequence's own keys, gathered through the block
/// table: no start, the key count as the end).
Sequence buildSequence(OpBuilder &b, Location loc, SdpaOp op, Value seq,
                       Value totalQueries, Value totalKeys) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value next = arith::AddIOp::create(
      b, loc, seq, arith::ConstantIndexOp::create(b, loc, 1));
  auto rows = [&](Value offsets, Value total) {
    auto at = [&](Value i) {
      Value v = memref::LoadOp::create(b, loc, offsets, i);
      return arith::IndexCastOp::create(b, loc, b.getIndexType(), v)
          .getResult();
    };
    auto clamp = [&](Value v, Value lo) {
      return arith::MinSIOp::create(
                 b, loc, arith::MaxSIOp::create(b, loc, v, lo), total)
          .getResult();
    };
    Value start = clamp(at(seq), zero);
    Value end = clamp(at(next), start);
    return std::array<Value, 3>{start, end,
                                arith::SubIOp::create(b, loc, end, start)};
  };
  // Ordinary query rows over a paged cache: the whole batch row.
  auto [qs, qe, ql] =
      op.isVarlen() ? rows(op.getCuSeqlensQ(), totalQueries)
                    : std::array<Value, 3>{zero, totalQueries, totalQueries};
  if (op.isPaged()) {
    Value keys = buildPagedKeyCount(b, loc, op, seq);
    return {qs, qe, ql, Value(), keys, keys};
  }
  auto [ks, ke, kl] = rows(op.getCuSeqlensK(), totalKeys);
  return {qs, qe, ql, ks, ke, kl};
}

/// In a packed batch a capture computed from Q's or K's sequence length
/// (memref.dim of dim 2: the bottom-right diagonal's shift, a variant's)
/// means the sequence's own: the capture rebuilt inside the program with
/// those lengths. Anything else is kept.
Value perSequence(OpBuilder &b, SdpaOp op, const Sequence &s, Value v,
                  IRMapping &mapping) {
  if (Value mapped = mapping.lookupOrNull(v))
    return mapped;
  Operation *def = v.getDefiningOp();
  if (!def)
    return v;
  if (auto dim = dyn_cast<memref::DimOp>(def)) {
    std::optional<int64_t> index = dim.getConstantIndex();
    Value source = dim.getSource();
    Value length;
    if (index == 2 && (source == op.getQuery() || source == op.getOutput()))
      length = s.qLen;
    else if (index == 2 && (source == op.getKey() || source == op.getValue()))
      length = s.kLen;
    else
      return v;
    mapping.map(v, length);
    return length;
  }
  if (def->getNumRegions() != 0 || !isPure(def))
    return v;
  bool changed = false;
  for (Value operand : def->getOperands())
    changed |= perSequence(b, op, s, operand, mapping) != operand;
  if (!changed)
    return v;
  Operation *clone = b.clone(*def, mapping);
  return clone->getResult(cast<OpResult>(v).getResultNumber());
}

LogicalResult tileSdpa(SdpaOp op) {
  ConfigAttr config = ConfigAttr::lookup(op);
  if (!config)
    return op.emitOpError("has no attn.config on its function: run "
                          "attn-configure first");
  int64_t blockM = config.getBlockM(), blockN = config.getBlockN();
  OpBuilder b(op);
  Location loc = op.getLoc();
  MemRefType qType = op.getQuery().getType();
  int64_t headDim = qType.getDimSize(3);
  int64_t valueDim = op.getValue().getType().getDimSize(3);

  Type elementType = qType.getElementType();
  Type f32 = b.getF32Type();
  auto cst = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  auto [batch, heads, numQueries, kvHeads, numKeys, group, scale] =
      buildSizes(b, loc, op.getQuery(), op.getKey(), op.getScale());
  // FP8: the scores of the dequantised inputs are scale·dq·dk·QKᵀ, and O
  // carries dv over the probabilities' factor (attn.online_attention).
  Value outputScale;
  if (op.isFp8()) {
    Value qk =
        arith::MulFOp::create(b, loc, op.getDescaleQ(), op.getDescaleK());
    scale = arith::MulFOp::create(b, loc, scale, qk);
    Value inverseProbScale = arith::ConstantOp::create(
        b, loc, b.getF32FloatAttr(1.0f / OnlineAttentionOp::kFp8ProbScale));
    outputScale =
        arith::MulFOp::create(b, loc, op.getDescaleV(), inverseProbScale);
  }
  Value cBlockM = cst(blockM), cBlockN = cst(blockN);
  Value queryTiles = arith::CeilDivSIOp::create(b, loc, numQueries, cBlockM);
  Value unpackedTiles = queryTiles;
  // The built-in mask becomes part of the mask_mod: one mechanism from here.
  appendBuiltinMask(b, loc, op.getMask(),
                    buildDiagonalShift(b, loc, op.getMask(), numQueries,
                                       numKeys),
                    op.getScoreMod(), op.getMaskMod(), op.getCapturesMutable());
  op.setMask(MaskKind::None);

  // With packing (decoding with grouped-query attention) a query tile holds
  // the rows of the `group` query heads of one K/V head, end to end: the
  // grid runs over K/V heads and K, V are read once per group. In a packed
  // (variable-length) batch the same holds per sequence: the rows of
  // sequence b's qLen_b queries, group · qLen_b of them, from its first row.
  bool pack = config.getPackGqa();
  bool varlen = op.isVarlen();
  bool paged = op.isPaged();
  Value rowsPerHead, packedRows, gridHeads = pack ? kvHeads : heads;
  if (pack && !varlen) {
    rowsPerHead = numQueries;
    packedRows = arith::MulIOp::create(b, loc, group, numQueries);
    queryTiles = arith::CeilDivSIOp::create(b, loc, packedRows, cBlockM);
  }
  Value queryBound = packedRows ? packedRows : numQueries;
  // Padding rows of a packed tile belong to no head: a mod indexing a
  // capture by head would read past it.
  bool modsReadMemory = false;
  for (Region *mod : {&op.getScoreMod(), &op.getMaskMod()})
    mod->walk([&](memref::LoadOp) { modsReadMemory = true; });
  if (pack && modsReadMemory)
    return op.emitOpError("cannot pack query heads (pack_gqa) with a "
                          "score_mod or mask_mod that reads a capture");
  // A packed batch: the grid runs over its sequences and the longest
  // one's query tiles (packed: its group's rows).
  Value gridBatch = batch;
  if (varlen) {
    Value offsets = memref::DimOp::create(b, loc, op.getCuSeqlensQ(), 0);
    Value zero = cst(0);
    Value sequences = arith::SubIOp::create(b, loc, offsets, cst(1));
    gridBatch = arith::MaxSIOp::create(b, loc, sequences, zero);
    Value maxQueries =
        arith::MaxSIOp::create(b, loc, op.getMaxSeqlenQ(), cst(0));
    unpackedTiles = arith::CeilDivSIOp::create(b, loc, maxQueries, cBlockM);
    queryTiles = pack ? arith::CeilDivSIOp::create(
                            b, loc,
                            arith::MulIOp::create(b, loc, group, maxQueries),
                            cBlockM)
                            .getResult()
                      : unpackedTiles;
  }
  // Split-KV (SplitKv.h): num_splits programs per batch row, then a merge
  // grid. A count below one is taken as one (a kernel argument: never a
  // division by zero).
  bool split = op.isSplit();
  Value splits = split ? arith::MaxSIOp::create(b, loc, op.getNumSplits(),
                                                cst(1))
                             .getResult()
                       : Value();
  Value totalQueries = numQueries, totalKeys = numKeys;

  auto grid = TileGridOp::create(
      b, loc,
      split ? arith::MulIOp::create(b, loc, gridBatch, splits).getResult()
            : gridBatch,
      gridHeads, queryTiles);
  if (split)
    grid->setAttr(::attn::abi::kGridAttr,
                  b.getStringAttr(::attn::abi::kGridOverSplits));
  b.setInsertionPointToStart(&grid.getBodyBlock());
  Value bIdx = grid.getBatchIndex(), hIdx = grid.getHeadIndex();
  Value gridIdx = bIdx, splitIdx;
  if (split) {
    splitIdx = arith::RemUIOp::create(b, loc, bIdx, splits);
    bIdx = arith::DivUIOp::create(b, loc, bIdx, splits);
  }
  Value kvHead = pack ? hIdx : arith::DivUIOp::create(b, loc, hIdx, group);
  Value qHead = pack ? arith::MulIOp::create(b, loc, hIdx, group) : hIdx;
  Value row = arith::MulIOp::create(b, loc, grid.getTileIndex(), cBlockM);
  // Where the tile's rows are in memory (`batch`, `qRow`, `qEnd`, `kStart`,
  // `kEnd`) and where they are in their sequence (`row` of `numQueries`,
  // keys of `numKeys`, the masks' and mods' positions): the same without
  // packing; a packed batch's sequence starts at a row of its own.
  // A packed tile of a packed batch: its rows are counted from the
  // sequence's first (`qStart`, the loads' and stores' `start`), and
  // `qEnd` counts the sequence's packed rows.
  Value memBatch = bIdx, qRow = row, qEnd = queryBound, kStart, kEnd = numKeys;
  Value qStart;
  SmallVector<Value> captures(op.getCaptures());
  if (varlen || paged) {
    Sequence s = buildSequence(b, loc, op, bIdx, numQueries, numKeys);
    IRMapping mapping;
    for (Value &capture : captures)
      capture = perSequence(b, op, s, capture, mapping);
    if (varlen && pack) {
      memBatch = cst(0);
      qStart = s.qStart;
      qEnd = arith::MulIOp::create(b, loc, group, s.qLen);
      // A sequence without queries stores nothing (qEnd = 0); one row per
      // head keeps the row arithmetic free of a division by zero.
      rowsPerHead = arith::MaxSIOp::create(b, loc, s.qLen, cst(1));
    } else if (varlen) {
      memBatch = cst(0);
      qRow = arith::AddIOp::create(b, loc, s.qStart, row);
      qEnd = s.qEnd;
    }
    kStart = s.kStart;
    kEnd = s.kEnd;
    numQueries = s.qLen;
    numKeys = s.kLen;
  }
  MaskStructure mask(op.getMaskMod(), captures);

  auto qTile = RankedTensorType::get({blockM, headDim}, elementType);
  auto kTile = RankedTensorType::get({blockN, headDim}, elementType);
  auto vTile = RankedTensorType::get({blockN, valueDim}, elementType);
  auto rowType = RankedTensorType::get({blockM}, f32);
  auto accType = RankedTensorType::get({blockM, valueDim}, f32);
  Value q = LoadTileOp::create(b, loc, qTile, op.getQuery(), memBatch, qHead,
                               qRow, qEnd, rowsPerHead, Value(), qStart);
  Value m0 = splat(b, loc, rowType, -std::numeric_limits<float>::infinity());
  Value l0 = splat(b, loc, rowType, 0.0f);
  Value acc0 = splat(b, loc, accType, 0.0f);

  // Only the K/V tiles some query of this tile may see are visited (a
  // packed tile may hold any query).
  auto [firstQuery, lastQuery] =
      buildQueryRange(b, loc, row, blockM, numQueries, pack);
  auto [lower, upper] =
      mask.keyRange(b, loc, firstQuery, lastQuery, numKeys, blockN);
  // A tile past its sequence's queries visits no K/V tile (and stores
  // nothing): it ends at once.
  if (varlen)
    upper = arith::SelectOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, row,
                              pack ? qEnd : numQueries),
        upper, lower);
  if (split)
    std::tie(lower, upper) = buildSplitKeyRange(b, loc, lower, upper, blockN,
                                                splitIdx, splits);
  auto loop = scf::ForOp::create(
      b, loc, lower, upper, cBlockN, ValueRange{m0, l0, acc0},
      [&](OpBuilder &lb, Location ll, Value kv, ValueRange state) {
        Value kRow = kStart ? arith::AddIOp::create(lb, ll, kStart, kv) : kv;
        // Over a paged cache the rows are gathered through the sequence's
        // row of the block table.
        Value kvBatch = paged ? bIdx : memBatch;
        Value k = LoadTileOp::create(lb, ll, kTile, op.getKey(), kvBatch,
                                     kvHead, kRow, kEnd, Value(),
                                     op.getBlockTable());
        Value v = LoadTileOp::create(lb, ll, vTile, op.getValue(), kvBatch,
                                     kvHead, kRow, kEnd, Value(),
                                     op.getBlockTable());
        bool mods = !op.getScoreMod().empty() || !op.getMaskMod().empty();
        auto step = OnlineAttentionOp::create(
            lb, ll, rowType, rowType, accType, q, k, v, state[0], state[1],
            state[2], row, kv, numQueries, numKeys, scale, rowsPerHead,
            mods ? bIdx : Value(), mods ? qHead : Value(), captures,
            MaskKindAttr::get(lb.getContext(), MaskKind::None),
            op.getPositiveScaleAttr());
        // The variant travels with each step, cloned (it reads only its
        // arguments).
        IRMapping none;
        op.getScoreMod().cloneInto(&step.getScoreMod(), none);
        op.getMaskMod().cloneInto(&step.getMaskMod(), none);
        scf::YieldOp::create(lb, ll, step.getResults());
      });
  // A split's partial: O_s in f32 and its LSE, at workspace row
  // memBatch · n + s: the program's own batch index without a packed batch
  // (memBatch = b), which keeps nothing more live through the K/V loop,
  // s with one (memBatch = 0).
  auto outTile = RankedTensorType::get(
      {blockM, valueDim},
      split ? f32 : op.getOutput().getType().getElementType());
  auto fin = FinalizeOp::create(b, loc, outTile, rowType, loop.getResult(2),
                                loop.getResult(0), loop.getResult(1),
                                outputScale);
  Value out = op.getOutput(), lseOut = op.getLse(), outBatch = memBatch;
  if (split) {
    out = op.getOutputPartial();
    lseOut = op.getLsePartial();
    outBatch = varlen ? splitIdx : gridIdx;
  }
  StoreTileOp::create(b, loc, fin.getOutput(), out, outBatch, qHead, qRow,
                      qEnd, rowsPerHead, qStart);
  if (lseOut)
    StoreTileOp::create(b, loc, fin.getLse(), lseOut, outBatch, qHead, qRow,
                        qEnd, rowsPerHead, qStart);
  if (split) {
    // The merge runs over the forward's unpacked query tiles, each program
    // over the rows its forward program would store.
    b.setInsertionPointAfter(grid);
    buildSplitMerge(
        b, loc, op, blockM, splits, gridBatch, unpackedTiles,
        [&](OpBuilder &rb, Location rl, Value seq,
            Value tile) -> std::array<Value, 3> {
          Value first = arith::MulIOp::create(
              rb, rl, tile, arith::ConstantIndexOp::create(rb, rl, blockM));
          if (!varlen)
            return {seq, first, totalQueries};
          Sequence s =
              buildSequence(rb, rl, op, seq, totalQueries, totalKeys);
          return {arith::ConstantIndexOp::create(rb, rl, 0),
                  arith::AddIOp::create(rb, rl, s.qStart, first), s.qEnd};
        });
  }
  op.erase();
  return success();
}


/// attn.sdpa_backward as two grids (FlashAttention-2's backward without
/// atomics, so the result is the same from run to run):
///  1. per query tile: the row terms delta = rowsum(dO ∘ O), stored to the
///     workspace, then dQ = scale · Σ dS K over the K/V tiles it sees;
///  2. per K/V tile: dK = scale · Σ dSᵀ Q and dV = Σ Pᵀ dO over the query
///     tiles that see it, of every query head of its group (GQA sums them
///     here), with keys-major score tiles so that both are plain products.
/// In both grids a CTA owns block_m rows of its side (queries, then keys)
/// and each step of its loop reads block_n rows of the other, as in the
/// forward: one warp count splits both grids' rows, and both kernels' score
/// tiles are block_m x block_n.
/// With a dQ accumulator (`dq_accum`) grid 1 forms only the row terms,
/// grid 2 also adds each pair's dS K into the accumulator (atomically: K/V
/// tiles share query rows), and a third grid per query tile stores
/// scale · accumulator as dQ: S and dP are formed once per tile pair.
LogicalResult tileSdpaBackward(SdpaBackwardOp op) {
  ConfigAttr config = ConfigAttr::lookup(op);
  if (!config)
    return op.emitOpError("has no attn.config on its function: run "
                          "attn-configure first");
  int64_t blockM = config.getBlockM(), blockN = config.getBlockN();
  OpBuilder b(op);
  Location loc = op.getLoc();
  MemRefType qType = op.getQuery().getType();
  int64_t headDim = qType.getDimSize(3);
  int64_t valueDim = op.getValue().getType().getDimSize(3);
  Type element = qType.getElementType();
  Type f32 = b.getF32Type();
  auto cst = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  auto [batch, heads, numQueries, kvHeads, numKeys, group, scale] =
      buildSizes(b, loc, op.getQuery(), op.getKey(), op.getScale());
  Value cBlockM = cst(blockM), cBlockN = cst(blockN), one = cst(1);
  appendBuiltinMask(b, loc, op.getMask(),
                    buildDiagonalShift(b, loc, op.getMask(), numQueries,
                                       numKeys),
                    op.getScoreMod(), op.getMaskMod(), op.getCapturesMutable());
  op.setMask(MaskKind::None);
  MaskStructure mask(op.getMaskMod(), op.getCaptures());
  bool mods = !op.getScoreMod().empty() || !op.getMaskMod().empty();

  // Both grids: a CTA owns block_m rows of its side (Q, dO, O; or K, V)
  // and each step reads block_n rows of the other; D columns (Q, K, dQ,
  // dK) or Dv (dO, O, V, dV).
  auto ownD = RankedTensorType::get({blockM, headDim}, element);
  auto ownDv = RankedTensorType::get({blockM, valueDim}, element);
  auto stepD = RankedTensorType::get({blockN, headDim}, element);
  auto stepDv = RankedTensorType::get({blockN, valueDim}, element);
  auto scoreType = RankedTensorType::get({blockM, blockN}, element);
  auto accD = RankedTensorType::get({blockM, headDim}, f32);
  auto accDv = RankedTensorType::get({blockM, valueDim}, f32);
  auto stepAccD = RankedTensorType::get({blockN, headDim}, f32);
  // The row terms: of the own rows (dQ grid), of a step's (K/V grid).
  auto rowType = RankedTensorType::get({blockM}, f32);
  auto colType = RankedTensorType::get({1, blockN}, f32);

  // One backward step; its regions are the op's, cloned.
  auto step = [&](OpBuilder &sb, Location sl, Type result, Value q, Value k,
                  Value v, Value dO, Value lse, Value delta, Value row,
                  Value kv, Value bIdx, Value head, bool keysMajor) {
    auto grad = ScoreGradOp::create(
        sb, sl, result, result, q, k, v, dO, lse, delta, row, kv, numQueries,
        numKeys, scale, mods ? bIdx : Value(), mods ? head : Value(),
        op.getCaptures(), op.getPositiveScaleAttr(),
        keysMajor ? sb.getUnitAttr() : UnitAttr());
    IRMapping none;
    op.getScoreMod().cloneInto(&grad.getScoreMod(), none);
    op.getMaskMod().cloneInto(&grad.getMaskMod(), none);
    return grad;
  };
  // x · scale (dQ, dK: the products summed dS, the gradient of the scaled
  // scores), rounded to the element type.
  auto finish = [&](OpBuilder &fb, Location fl, Value acc, bool scaled) {
    auto accType = cast<RankedTensorType>(acc.getType());
    auto out = RankedTensorType::get(accType.getShape(), element);
    return MapOp::create(
        fb, fl, out, acc, ValueRange(),
        [&](OpBuilder &nb, Location nl, ValueRange, ValueRange e) {
          Value x = e[0];
          if (scaled)
            x = arith::MulFOp::create(nb, nl, x, scale);
          if (element.isF32())
            return x;
          return arith::TruncFOp::create(nb, nl, element, x).getResult();
        });
  };

  Value dqAccum = op.getGradQueryAccum();
  Value queryTiles = arith::CeilDivSIOp::create(b, loc, numQueries, cBlockM);

  // 1. Query tiles: delta, then (deterministic) dQ.
  {
    auto grid = TileGridOp::create(b, loc, batch, heads, queryTiles);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&grid.getBodyBlock());
    Value bIdx = grid.getBatchIndex(), hIdx = grid.getHeadIndex();
    Value kvHead = arith::DivUIOp::create(b, loc, hIdx, group);
    Value row = arith::MulIOp::create(b, loc, grid.getTileIndex(), cBlockM);
    // Q and the LSE for dQ (the deterministic form only).
    Value q, lse;
    if (!dqAccum)
      q = LoadTileOp::create(b, loc, ownD, op.getQuery(), bIdx, hIdx, row,
                             numQueries, Value());
    Value dO = LoadTileOp::create(b, loc, ownDv, op.getGradOutput(), bIdx,
                                  hIdx, row, numQueries, Value());
    Value o = LoadTileOp::create(b, loc, ownDv, op.getOutput(), bIdx, hIdx,
                                 row, numQueries, Value());
    if (!dqAccum)
      lse = LoadTileOp::create(b, loc, rowType, op.getLse(), bIdx, hIdx, row,
                               numQueries, Value());
    auto product = MapOp::create(
        b, loc, RankedTensorType::get({blockM, valueDim}, f32),
        ValueRange{dO, o}, ValueRange(),
        [&](OpBuilder &nb, Location nl, ValueRange, ValueRange e) {
          auto ext = [&](Value x) {
            return x.getType().isF32()
                       ? x
                       : Value(arith::ExtFOp::create(nb, nl, f32, x));
          };
          Value oF32 = ext(e[1]);
          Value dOF32 = ext(e[0]);
          return arith::MulFOp::create(nb, nl, dOF32, oF32).getResult();
        });
    Value delta = ReduceOp::create(b, loc, ReduceKind::Add, product,
                                   splat(b, loc, rowType, 0.0f));
    StoreTileOp::create(b, loc, delta, op.getDelta(), bIdx, hIdx, row,
                        numQueries, Value());
    // The deterministic form: dQ = scale · Σ dS K over the keys it sees.
    if (!dqAccum) {
      auto [firstQuery, lastQuery] =
          buildQueryRange(b, loc, row, blockM, numQueries, false);
      auto [lower, upper] =
          mask.keyRange(b, loc, firstQuery, lastQuery, numKeys, blockN);
      auto loop = scf::ForOp::create(
          b, loc, lower, upper, cBlockN, ValueRange{splat(b, loc, accD, 0.0f)},
          [&](OpBuilder &lb, Location ll, Value kv, ValueRange state) {
            Value k = LoadTileOp::create(lb, ll, stepD, op.getKey(), bIdx,
                                         kvHead, kv, numKeys, Value());
            Value v = LoadTileOp::create(lb, ll, stepDv, op.getValue(), bIdx,
                                         kvHead, kv, numKeys, Value());
            auto grad = step(lb, ll, scoreType, q, k, v, dO, lse, delta, row,
                             kv, bIdx, hIdx, /*keysMajor=*/false);
            Value acc = MatmulOp::create(lb, ll, grad.getGradScores(), k,
                                         state[0], false, false);
            scf::YieldOp::create(lb, ll, acc);
          });
      StoreTileOp::create(b, loc, finish(b, loc, loop.getResult(0), true),
                          op.getGradQuery(), bIdx, hIdx, row, numQueries,
                          Value());
    }
  }

  // 2. K/V tiles: dK and dV over the query tiles of the group's heads, in
  //    one grid, or (splitGrads) dK in one and dV in another: each then
  //    holds one accumulator, at the cost of recomputing Sᵀ.
  bool splitGrads =
      !config.isHost() && ::attn::compiler::splitsBackwardGrads(headDim);
  auto keyGrid = [&](bool withK, bool withV) {
    Value keyTiles = arith::CeilDivSIOp::create(b, loc, numKeys, cBlockM);
    auto grid = TileGridOp::create(b, loc, batch, kvHeads, keyTiles);
    grid->setAttr(::attn::abi::kGridAttr,
                  b.getStringAttr(::attn::abi::kGridOverKeys));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&grid.getBodyBlock());
    Value bIdx = grid.getBatchIndex(), kvHead = grid.getHeadIndex();
    Value kv = arith::MulIOp::create(b, loc, grid.getTileIndex(), cBlockM);
    Value k = LoadTileOp::create(b, loc, ownD, op.getKey(), bIdx, kvHead, kv,
                                 numKeys, Value());
    Value v = LoadTileOp::create(b, loc, ownDv, op.getValue(), bIdx, kvHead,
                                 kv, numKeys, Value());
    Value lastKey = arith::SubIOp::create(
        b, loc, arith::MinSIOp::create(
                    b, loc, arith::AddIOp::create(b, loc, kv, cBlockM),
                    numKeys),
        one);
    auto [lower, upper] =
        mask.queryRange(b, loc, kv, lastKey, numQueries, blockN);
    // One loop over (query head of the group, query tile) pairs, head
    // outermost, so that a GPU mapping pipelines its copies as it does a
    // single K/V loop's.
    Value firstHead = arith::MulIOp::create(b, loc, kvHead, group);
    Value zero = cst(0);
    Value tiles = arith::MaxSIOp::create(
        b, loc,
        arith::CeilDivSIOp::create(
            b, loc, arith::SubIOp::create(b, loc, upper, lower), cBlockN),
        zero);
    Value pairs = arith::MulIOp::create(b, loc, group, tiles);
    SmallVector<Value> inits;
    if (withK)
      inits.push_back(splat(b, loc, accD, 0.0f));
    if (withV)
      inits.push_back(splat(b, loc, accDv, 0.0f));
    auto heads = scf::ForOp::create(
        b, loc, zero, pairs, one, inits,
        [&](OpBuilder &lb, Location ll, Value it, ValueRange state) {
          // The pair's head and tile by a 32-bit division: a group's pairs
          // number its query rows / block_n, far below 2^32 for any tensor
          // that fits a device's memory, and a GPU divides 64-bit values in
          // a long sequence whose operands stay live in two registers each.
          auto i32 = lb.getI32Type();
          auto narrow = [&](Value v) {
            return arith::IndexCastUIOp::create(lb, ll, i32, v);
          };
          Value it32 = narrow(it), tiles32 = narrow(tiles);
          Value pairHead = arith::DivUIOp::create(lb, ll, it32, tiles32);
          Value pairTile = arith::SubIOp::create(
              lb, ll, it32, arith::MulIOp::create(lb, ll, pairHead, tiles32));
          auto widen = [&](Value v) {
            return arith::IndexCastUIOp::create(lb, ll, lb.getIndexType(), v);
          };
          Value h = arith::AddIOp::create(lb, ll, firstHead, widen(pairHead));
          Value row = arith::AddIOp::create(
              lb, ll, lower,
              arith::MulIOp::create(lb, ll, widen(pairTile), cBlockN));
          Value q = LoadTileOp::create(lb, ll, stepD, op.getQuery(), bIdx, h,
                                       row, numQueries, Value());
          Value dO = LoadTileOp::create(lb, ll, stepDv, op.getGradOutput(),
                                        bIdx, h, row, numQueries, Value());
          Value lse = LoadTileOp::create(lb, ll, colType, op.getLse(), bIdx, h,
                                         row, numQueries, Value());
          Value delta = LoadTileOp::create(lb, ll, colType, op.getDelta(),
                                           bIdx, h, row, numQueries, Value());
          auto grad = step(lb, ll, scoreType, q, k, v, dO, lse, delta, row,
                           kv, bIdx, h, /*keysMajor=*/true);
          // With the accumulator dV's product comes first: Pᵀ is dead
          // before dQ's part (a third accumulator tile) is live beside dK
          // and dV (the GPU kernels' registers, docs/design.md).
          Value dv;
          auto productV = [&] {
            if (withV)
              dv = MatmulOp::create(lb, ll, grad.getProbs(), dO, state.back(),
                                    false, false);
          };
          if (dqAccum)
            productV();
          SmallVector<Value> next;
          if (withK)
            next.push_back(MatmulOp::create(lb, ll, grad.getGradScores(), q,
                                            state[0], false, false));
          // dQ's part of this pair, (dSᵀ)ᵀ K, added into the accumulator
          // (with dK: a split kernel pair forms it once).
          if (withK && dqAccum) {
            Value part = MatmulOp::create(lb, ll, grad.getGradScores(), k,
                                          splat(lb, ll, stepAccD, 0.0f),
                                          /*transposeLhs=*/true, false);
            StoreTileOp::create(lb, ll, part, dqAccum, bIdx, h, row,
                                numQueries, Value(), Value(),
                                /*accumulate=*/true);
          }
          if (!dqAccum)
            productV();
          if (withV)
            next.push_back(dv);
          scf::YieldOp::create(lb, ll, next);
        });
    if (withK)
      StoreTileOp::create(b, loc, finish(b, loc, heads.getResult(0), true),
                          op.getGradKey(), bIdx, kvHead, kv, numKeys, Value());
    if (withV)
      StoreTileOp::create(b, loc,
                          finish(b, loc, heads.getResults().back(), false),
                          op.getGradValue(), bIdx, kvHead, kv, numKeys,
                          Value());
  };
  if (splitGrads) {
    keyGrid(true, false);
    keyGrid(false, true);
  } else {
    keyGrid(true, true);
  }

  // 3. With the accumulator: dQ = scale · accumulator, per query tile.
  if (dqAccum) {
    auto grid = TileGridOp::create(b, loc, batch, heads, queryTiles);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&grid.getBodyBlock());
    Value bIdx = grid.getBatchIndex(), hIdx = grid.getHeadIndex();
    Value row = arith::MulIOp::create(b, loc, grid.getTileIndex(), cBlockM);
    Value acc = LoadTileOp::create(b, loc, accD, dqAccum, bIdx, hIdx, row,
                                   numQueries, Value());
    StoreTileOp::create(b, loc, finish(b, loc, acc, true), op.getGradQuery(),
                        bIdx, hIdx, row, numQueries, Value());
  }
  op.erase();
  return success();
}

struct AttnTilePass : mlir::attn::impl::AttnTileBase<AttnTilePass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (isa<SdpaOp, SdpaBackwardOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      LogicalResult tiled = isa<SdpaOp>(op)
                                ? tileSdpa(cast<SdpaOp>(op))
                                : tileSdpaBackward(cast<SdpaBackwardOp>(op));
      if (failed(tiled))
        return signalPassFailure();
    }
  }
};

} // namespace
