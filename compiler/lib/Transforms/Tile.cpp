//===- Tile.cpp - attn.sdpa to a grid of query tiles and a K/V loop -------===//

#include "attn/Transforms/Mask.h"
#include "attn/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#include <cmath>
#include <limits>

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
  Value batch = memref::DimOp::create(b, loc, op.getQuery(), 0);
  Value heads = memref::DimOp::create(b, loc, op.getQuery(), 1);
  Value numQueries = memref::DimOp::create(b, loc, op.getQuery(), 2);
  Value kvHeads = memref::DimOp::create(b, loc, op.getKey(), 1);
  Value numKeys = memref::DimOp::create(b, loc, op.getKey(), 2);
  Value cBlockM = cst(blockM), cBlockN = cst(blockN), zero = cst(0);
  Value queryTiles = arith::CeilDivSIOp::create(b, loc, numQueries, cBlockM);
  // Grouped-query attention: query heads [g·G, (g + 1)·G) share K/V head g.
  Value group = arith::DivUIOp::create(b, loc, heads, kvHeads);
  Value scale = op.getScale();
  if (!scale)
    scale = arith::ConstantOp::create(
        b, loc, b.getF32FloatAttr(1.0f / std::sqrt(float(headDim))));
  // The built-in mask becomes part of the mask_mod: one mechanism from here.
  appendBuiltinMask(b, loc, op.getMask(),
                    buildDiagonalShift(b, loc, op.getMask(), numQueries,
                                       numKeys),
                    op.getScoreMod(), op.getMaskMod(), op.getCapturesMutable());
  op.setMask(MaskKind::None);
  MaskStructure mask(op.getMaskMod(), op.getCaptures());

  // With packing (decoding with grouped-query attention) a query tile holds
  // the rows of the `group` query heads of one K/V head, end to end: the
  // grid runs over K/V heads and K, V are read once per group.
  bool pack = config.getPackGqa();
  Value rowsPerHead, packedRows, gridHeads = heads;
  if (pack) {
    rowsPerHead = numQueries;
    packedRows = arith::MulIOp::create(b, loc, group, numQueries);
    queryTiles = arith::CeilDivSIOp::create(b, loc, packedRows, cBlockM);
    gridHeads = kvHeads;
  }
  Value queryBound = pack ? packedRows : numQueries;
  // Padding rows of a packed tile belong to no head: a mod indexing a
  // capture by head would read past it.
  bool modsReadMemory = false;
  for (Region *mod : {&op.getScoreMod(), &op.getMaskMod()})
    mod->walk([&](memref::LoadOp) { modsReadMemory = true; });
  if (pack && modsReadMemory)
    return op.emitOpError("cannot pack query heads (pack_gqa) with a "
                          "score_mod or mask_mod that reads a capture");

  auto grid = TileGridOp::create(b, loc, batch, gridHeads, queryTiles);
  b.setInsertionPointToStart(&grid.getBodyBlock());
  Value bIdx = grid.getBatchIndex(), hIdx = grid.getHeadIndex();
  Value kvHead = pack ? hIdx : arith::DivUIOp::create(b, loc, hIdx, group);
  Value qHead = pack ? arith::MulIOp::create(b, loc, hIdx, group) : hIdx;
  Value row = arith::MulIOp::create(b, loc, grid.getTileIndex(), cBlockM);

  auto qTile = RankedTensorType::get({blockM, headDim}, elementType);
  auto kTile = RankedTensorType::get({blockN, headDim}, elementType);
  auto vTile = RankedTensorType::get({blockN, valueDim}, elementType);
  auto rowType = RankedTensorType::get({blockM}, f32);
  auto accType = RankedTensorType::get({blockM, valueDim}, f32);
  Value q = LoadTileOp::create(b, loc, qTile, op.getQuery(), bIdx, qHead, row,
                               queryBound, rowsPerHead);
  Value m0 = splat(b, loc, rowType, -std::numeric_limits<float>::infinity());
  Value l0 = splat(b, loc, rowType, 0.0f);
  Value acc0 = splat(b, loc, accType, 0.0f);

  // Only the K/V tiles some query of this tile may see are visited (a
  // packed tile may hold any query).
  auto [firstQuery, lastQuery] =
      buildQueryRange(b, loc, row, blockM, numQueries, pack);
  auto [lower, upper] =
      mask.keyRange(b, loc, firstQuery, lastQuery, numKeys, blockN);
  auto loop = scf::ForOp::create(
      b, loc, lower, upper, cBlockN, ValueRange{m0, l0, acc0},
      [&](OpBuilder &lb, Location ll, Value kv, ValueRange state) {
        Value k = LoadTileOp::create(lb, ll, kTile, op.getKey(), bIdx, kvHead,
                                     kv, numKeys, Value());
        Value v = LoadTileOp::create(lb, ll, vTile, op.getValue(), bIdx,
                                     kvHead, kv, numKeys, Value());
        bool mods = !op.getScoreMod().empty() || !op.getMaskMod().empty();
        auto step = OnlineAttentionOp::create(
            lb, ll, rowType, rowType, accType, q, k, v, state[0], state[1],
            state[2], row, kv, numQueries, numKeys, scale, rowsPerHead,
            mods ? bIdx : Value(), mods ? qHead : Value(), op.getCaptures(),
            MaskKindAttr::get(lb.getContext(), MaskKind::None),
            op.getPositiveScaleAttr());
        // The variant travels with each step, cloned (it reads only its
        // arguments).
        IRMapping none;
        op.getScoreMod().cloneInto(&step.getScoreMod(), none);
        op.getMaskMod().cloneInto(&step.getMaskMod(), none);
        scf::YieldOp::create(lb, ll, step.getResults());
      });
  auto outTile = RankedTensorType::get({blockM, valueDim}, elementType);
  auto fin = FinalizeOp::create(b, loc, outTile, rowType, loop.getResult(2),
                                loop.getResult(0), loop.getResult(1));
  StoreTileOp::create(b, loc, fin.getOutput(), op.getOutput(), bIdx, qHead,
                      row, queryBound, rowsPerHead);
  if (Value lse = op.getLse())
    StoreTileOp::create(b, loc, fin.getLse(), lse, bIdx, qHead, row,
                        queryBound, rowsPerHead);
  op.erase();
  return success();
}

struct AttnTilePass : mlir::attn::impl::AttnTileBase<AttnTilePass> {
  void runOnOperation() override {
    SmallVector<SdpaOp> ops;
    getOperation()->walk([&](SdpaOp op) { ops.push_back(op); });
    for (SdpaOp op : ops)
      if (failed(tileSdpa(op)))
        return signalPassFailure();
  }
};

} // namespace
