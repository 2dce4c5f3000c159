//===- Tile.cpp - attn.sdpa to a grid of query tiles and a K/V loop -------===//

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

std::pair<int64_t, int64_t> mlir::attn::defaultTileSizes(int64_t headDim,
                                                         bool wgmma) {
  // wgmma (sm_90a). D = 128, 256: two warpgroups of 64 rows, one CTA per SM;
  // S takes block-n / 2 registers a thread and O head-dim / 2, so 128 keys
  // fit up to D = 128 and 64 beyond. D = 64: one warpgroup with 64 keys,
  // several CTAs per SM, 14% faster there than 128x128 (H200,
  // docs/BENCHMARKS.md). Head dims that are not a multiple of 64 stay on
  // mma.sync.
  if (wgmma && headDim % 64 == 0) {
    if (headDim == 64)
      return {64, 64};
    return {128, headDim <= 128 ? 128 : 64};
  }
  // On the NVIDIA mapping (4 warps) block-m = 128 gives each warp two 16-row
  // m tiles, so every K/V fragment read from shared memory feeds two mma:
  // with one m tile per warp, shared-memory bandwidth limits the tensor
  // cores. Where that does not fit in 255 registers without spilling
  // (ptxas -v, with and without a mask), fewer rows or keys.
  // Measured on an H200: docs/BENCHMARKS.md.
  if (headDim <= 64)
    return {128, 64};
  if (headDim <= 96)
    return {64, 64};
  if (headDim <= 128)
    return {128, 32};
  return {64, 32};
}

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
  auto [defM, defN] = defaultTileSizes(headDim, wgmma);
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
