//===- Reduce.cpp - row reductions and warp votes --------------------------===//
//
// A row of an accumulator tile is spread over the four threads of a quad:
// each combines its own values of the row, two butterfly shuffles combine
// the quad, and the initial row value comes last.
//
//===----------------------------------------------------------------------===//

#include "Patterns.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::nv;

namespace {

struct Reduce : OpConversionPattern<ReduceOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ReduceOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto tile = DistributedTile::get(op.getTile().getType());
    auto rows = DistributedTile::get(op.getType());
    if (!tile || tile->kind() != DistributedTile::Kind::Acc || !rows ||
        rows->kind() != DistributedTile::Kind::Rows ||
        rows->warps() != tile->warps() || tile->colGroups() != 1 ||
        (rows->partial() && op.getKind() != ReduceKind::Add))
      return op.emitOpError("needs an #attn_nv.acc tile (no column groups) "
                            "and an #attn_nv.rows result of the same warps "
                            "(partial only for sums)");
    Location loc = op.getLoc();
    bool max = op.getKind() == ReduceKind::Max;
    auto combine = [&](Value x, Value y) -> Value {
      if (max)
        return arith::MaxNumFOp::create(rewriter, loc, x, y);
      return arith::AddFOp::create(rewriter, loc, x, y);
    };
    ValueRange values = adaptor.getTile(), init = adaptor.getInit();
    SmallVector<Value> partial(rows->valuesPerThread());
    // Each value is combined right where it is computed when the values are
    // computed in order in this block (a map's results): the combines then
    // interleave with the map's own instructions (an exp2 and an add per
    // probability) instead of waiting for all of them.
    Block *block = rewriter.getInsertionBlock();
    OpBuilder::InsertPoint end = rewriter.saveInsertionPoint();
    Operation *last = nullptr;
    bool inOrder = true;
    for (Value v : values) {
      Operation *def = v.getDefiningOp();
      if (!def || def->getBlock() != block ||
          (last && !last->isBeforeInBlock(def)) ||
          !def->isBeforeInBlock(&*end.getPoint())) {
        inOrder = false;
        break;
      }
      last = def;
    }
    for (int64_t i = 0, n = tile->valuesPerThread(); i < n; ++i) {
      if (tile->isPadding(i))
        continue;
      if (inOrder)
        rewriter.setInsertionPointAfterValue(values[i]);
      Value &p = partial[tile->rowSlot(i)];
      p = p ? combine(p, values[i]) : values[i];
    }
    rewriter.restoreInsertionPoint(end);
    SmallVector<Value> results;
    for (auto [slot, p] : llvm::enumerate(partial)) {
      // A partial result stays per thread (attn-nv-defer-row-sums).
      if (!rows->partial())
        for (int mask : {1, 2})
          p = combine(p, shuffleXor(rewriter, loc, p, mask));
      results.push_back(combine(init[slot], p));
    }
    rewriter.replaceOpWithMultiple(op, {results});
    return success();
  }
};

/// vote.any over the values of the warp.
struct WarpAny : OpConversionPattern<WarpAnyOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(WarpAnyOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value any = arith::ConstantIntOp::create(rewriter, loc, 0, 1);
    for (Value v : adaptor.getTile())
      any = arith::OrIOp::create(rewriter, loc, any, v);
    rewriter.replaceOpWithNewOp<NVVM::VoteSyncOp>(
        op, rewriter.getI1Type(), constI32(rewriter, loc, -1), any,
        NVVM::VoteSyncKindAttr::get(rewriter.getContext(),
                                    NVVM::VoteSyncKind::any));
    return success();
  }
};

} // namespace

void mlir::attn::nv::populateReducePatterns(TileTypeConverter &converter,
                                            RewritePatternSet &patterns) {
  patterns.add<Reduce, WarpAny>(converter, patterns.getContext());
}
