//===- Tile.cpp - attn.sdpa to a grid of query tiles and a K/V loop -------===//

#include "attn/Compiler/TilePolicy.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"

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

LogicalResult tileSdpa(SdpaOp op, int64_t blockM, int64_t blockN,
                       bool wgmma) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  MemRefType qType = op.getQuery().getType();
  int64_t headDim = qType.getDimSize(3);
  int64_t valueDim = op.getValue().getType().getDimSize(3);
  auto [defM, defN] = ::attn::compiler::defaultTileSizes(headDim, wgmma);
  if (blockM == 0)
    blockM = defM;
  if (blockN == 0)
    blockN = defN;
  if (blockM <= 0 || blockN <= 0)
    return op.emitOpError() << "tile sizes must be positive, got block-m="
                            << blockM << " block-n=" << blockN;

  Type elementType = qType.getElementType();
  Type f32 = b.getF32Type();
  auto cst = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  Value batch = memref::DimOp::create(b, loc, op.getQuery(), 0);
  Value heads = memref::DimOp::create(b, loc, op.getQuery(), 1);
  Value numQueries = memref::DimOp::create(b, loc, op.getQuery(), 2);
  Value numKeys = memref::DimOp::create(b, loc, op.getKey(), 2);
  Value cBlockM = cst(blockM), cBlockN = cst(blockN), zero = cst(0);
  Value queryTiles = arith::CeilDivSIOp::create(b, loc, numQueries, cBlockM);
  Value scale = op.getScale();
  if (!scale)
    scale = arith::ConstantOp::create(
        b, loc, b.getF32FloatAttr(1.0f / std::sqrt(float(headDim))));

  auto grid = TileGridOp::create(b, loc, batch, heads, queryTiles);
  b.setInsertionPointToStart(&grid.getBodyBlock());
  Value bIdx = grid.getBatchIndex(), hIdx = grid.getHeadIndex();
  Value row = arith::MulIOp::create(b, loc, grid.getTileIndex(), cBlockM);

  auto qTile = RankedTensorType::get({blockM, headDim}, elementType);
  auto kTile = RankedTensorType::get({blockN, headDim}, elementType);
  auto vTile = RankedTensorType::get({blockN, valueDim}, elementType);
  auto rowType = RankedTensorType::get({blockM}, f32);
  auto accType = RankedTensorType::get({blockM, valueDim}, f32);
  Value q = LoadTileOp::create(b, loc, qTile, op.getQuery(), bIdx, hIdx, row);
  Value m0 = splat(b, loc, rowType, -std::numeric_limits<float>::infinity());
  Value l0 = splat(b, loc, rowType, 0.0f);
  Value acc0 = splat(b, loc, accType, 0.0f);

  // Keys past the last one any row of this tile may see are never visited.
  Value upper = numKeys;
  MaskKind mask = op.getMask();
  if (mask != MaskKind::None) {
    Value rowEnd = arith::AddIOp::create(b, loc, row, cBlockM);
    if (mask == MaskKind::CausalBottomRight) {
      Value shift = arith::SubIOp::create(b, loc, numKeys, numQueries);
      rowEnd = arith::AddIOp::create(b, loc, rowEnd, shift);
      rowEnd = arith::MaxSIOp::create(b, loc, rowEnd, zero);
    }
    upper = arith::MinSIOp::create(b, loc, upper, rowEnd);
  }

  auto loop = KvLoopOp::create(b, loc, zero, upper, cBlockN, m0, l0, acc0);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&loop.getBodyBlock());
    Value kv = loop.getInductionVar();
    Value k = LoadTileOp::create(b, loc, kTile, op.getKey(), bIdx, hIdx, kv);
    Value v = LoadTileOp::create(b, loc, vTile, op.getValue(), bIdx, hIdx, kv);
    auto step = OnlineAttentionOp::create(
        b, loc, rowType, rowType, accType, q, k, v, loop.getMaxArg(), loop.getSumArg(), loop.getAccArg(),
        row, kv, numQueries, numKeys, scale,
        MaskKindAttr::get(b.getContext(), mask));
    YieldOp::create(b, loc, step.getResults());
  }
  auto outTile = RankedTensorType::get({blockM, valueDim}, elementType);
  auto fin = FinalizeOp::create(b, loc, outTile, rowType, loop.getAcc(),
                                loop.getMax(), loop.getSum());
  StoreTileOp::create(b, loc, fin.getOutput(), op.getOutput(), bIdx, hIdx, row);
  if (Value lse = op.getLse())
    StoreTileOp::create(b, loc, fin.getLse(), lse, bIdx, hIdx, row);
  op.erase();
  return success();
}

struct AttnTilePass : mlir::attn::impl::AttnTileBase<AttnTilePass> {
  using Base::Base;
  void runOnOperation() override {
    if (tensorCore != "mma.sync" && tensorCore != "wgmma") {
      getOperation()->emitError("attn-tile: tensor-core must be mma.sync or "
                                "wgmma, got '")
          << tensorCore << "'";
      return signalPassFailure();
    }
    SmallVector<SdpaOp> ops;
    getOperation()->walk([&](SdpaOp op) { ops.push_back(op); });
    for (SdpaOp op : ops)
      if (failed(tileSdpa(op, blockM, blockN, tensorCore == "wgmma")))
        return signalPassFailure();
  }
};

} // namespace
