//===- Elementwise.cpp - maps, splat constants, layout conversion ---------===//
//
// A map runs its body once per value the thread holds (Layouts.h): its
// coordinates are the thread's base plus the value's constant offset plus
// the map's offsets; row-tile inputs give the value of the element's row,
// 1xC inputs (#attn_nv.cols) that of its column. Integers derived from the
// coordinates convert to float once per thread (AffineCoords.h).
//
//===----------------------------------------------------------------------===//

#include "AffineCoords.h"
#include "Patterns.h"

#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::nv;

namespace {

struct Map : OpConversionPattern<MapOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(MapOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    std::optional<DistributedTile> out = DistributedTile::get(op.getType());
    if (!out || out->kind() == DistributedTile::Kind::OperandA)
      return op.emitOpError("needs a result with an #attn_nv.acc, "
                            "#attn_nv.rows or #attn_nv.cols layout, got ")
             << op.getType();
    Location loc = op.getLoc();
    Block &body = op.getBodyBlock();
    int64_t rank = op.getRank();
    // Coordinates only where the body reads them.
    bool usesCoords = llvm::any_of(
        body.getArguments().take_front(rank),
        [](BlockArgument arg) { return !arg.use_empty(); });
    Value baseRow, baseCol;
    if (usesCoords) {
      std::tie(baseRow, baseCol) = out->threadBase(rewriter, loc);
      ValueRange offsets = op.getOffsets();
      if (!offsets.empty()) {
        baseRow = arith::AddIOp::create(rewriter, loc, baseRow, offsets[0]);
        if (rank == 2)
          baseCol = arith::AddIOp::create(rewriter, loc, baseCol, offsets[1]);
      }
    }
    // How each input holds the result's values: the same layout, the rows
    // or the columns of the result's accumulator layout.
    enum class Broadcast { None, Rows, Cols };
    SmallVector<Broadcast> broadcast;
    for (Value input : op.getInputs()) {
      auto inType = cast<RankedTensorType>(input.getType());
      Broadcast how = Broadcast::None;
      if (rank == 2 && inType.getRank() == 1)
        how = Broadcast::Rows;
      else if (rank == 2 && inType.getDimSize(0) == 1 &&
               op.getType().getDimSize(0) != 1)
        how = Broadcast::Cols;
      std::optional<DistributedTile> in = DistributedTile::get(inType);
      auto expected = how == Broadcast::Rows   ? DistributedTile::Kind::Rows
                      : how == Broadcast::Cols ? DistributedTile::Kind::Cols
                                               : out->kind();
      if (!in || in->kind() != expected || in->warps() != out->warps() ||
          (in->partial() && !out->partial() && out->kind() == expected))
        return op.emitOpError("input ")
               << input.getType() << " is not distributed like the result "
               << op.getType();
      broadcast.push_back(how);
    }
    SmallVector<Value> results;
    AffineCoords affine(rewriter, loc, body);
    for (int64_t i = 0, n = out->valuesPerThread(); i < n; ++i) {
      IRMapping mapping;
      affine.startValue();
      if (usesCoords) {
        ElementOffset off = out->offset(i);
        mapping.map(body.getArgument(0),
                    arith::AddIOp::create(rewriter, loc, baseRow,
                                          constIndex(rewriter, loc, off.row)));
        affine.setCoordinate(body.getArgument(0), baseRow, off.row);
        if (rank == 2) {
          mapping.map(
              body.getArgument(1),
              arith::AddIOp::create(rewriter, loc, baseCol,
                                    constIndex(rewriter, loc, off.col)));
          affine.setCoordinate(body.getArgument(1), baseCol, off.col);
        }
      }
      for (auto [j, values] : llvm::enumerate(adaptor.getInputs()))
        mapping.map(op.getInputArg(j),
                    values[broadcast[j] == Broadcast::Rows   ? out->rowSlot(i)
                           : broadcast[j] == Broadcast::Cols ? out->colSlot(i)
                                                             : i]);
      for (Operation &inner : body.without_terminator())
        affine.clone(inner, mapping);
      results.push_back(mapping.lookup(op.getYielded()));
    }
    rewriter.replaceOpWithMultiple(op, {results});
    return success();
  }
};

/// A splat tile constant: the scalar, once per value.
struct SplatConstant : OpConversionPattern<arith::ConstantOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(arith::ConstantOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    std::optional<DistributedTile> tile = DistributedTile::get(op.getType());
    auto splat = dyn_cast<SplatElementsAttr>(op.getValue());
    if (!tile)
      return failure();
    if (tile->kind() == DistributedTile::Kind::OperandA)
      return op.emitOpError("an #attn_nv.operand_a tile cannot be a "
                            "constant: convert an #attn_nv.acc tile");
    if (!splat)
      return op.emitOpError("a tile constant must be a splat on NVIDIA");
    Value v = arith::ConstantOp::create(
        rewriter, op.getLoc(), cast<TypedAttr>(splat.getSplatValue<Attribute>()));
    rewriter.replaceOpWithMultiple(
        op, {SmallVector<Value>(tile->valuesPerThread(), v)});
    return success();
  }
};

/// Accumulator fragments -> A fragments: blocks 2k and 2k + 1 of an m tile
/// form k block k; pairs are packed (and rounded) into one register.
/// Partial row sums -> rows: each quad adds its four values.
struct ConvertLayout : OpConversionPattern<ConvertLayoutOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ConvertLayoutOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto from = *DistributedTile::get(op.getSource().getType());
    auto to = *DistributedTile::get(op.getType());
    ValueRange v = adaptor.getSource();
    Location loc = op.getLoc();
    if (from.kind() == DistributedTile::Kind::Rows) {
      SmallVector<Value> sums;
      for (Value p : v) {
        for (int mask : {1, 2})
          p = arith::AddFOp::create(rewriter, loc, p,
                                    shuffleXor(rewriter, loc, p, mask));
        sums.push_back(p);
      }
      rewriter.replaceOpWithMultiple(op, {sums});
      return success();
    }
    int64_t blocks = from.colBlocks();
    SmallVector<Value> regs;
    for (int64_t i = 0; i < from.mTiles(); ++i)
      for (int64_t j = 0; j < 2 * to.kBlocks(); j += 2) {
        ValueRange lo = v.slice((i * blocks + j) * 4, 4);
        ValueRange hi = v.slice((i * blocks + j + 1) * 4, 4);
        Type e = to.elementType();
        regs.push_back(packPair(rewriter, loc, lo[0], lo[1], e));
        regs.push_back(packPair(rewriter, loc, lo[2], lo[3], e));
        regs.push_back(packPair(rewriter, loc, hi[0], hi[1], e));
        regs.push_back(packPair(rewriter, loc, hi[2], hi[3], e));
      }
    rewriter.replaceOpWithMultiple(op, {regs});
    return success();
  }
};

} // namespace

void mlir::attn::nv::populateElementwisePatterns(TileTypeConverter &converter,
                                                 RewritePatternSet &patterns) {
  patterns.add<Map, SplatConstant, ConvertLayout>(converter,
                                                  patterns.getContext());
}
