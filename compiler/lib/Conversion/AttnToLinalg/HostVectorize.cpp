//===- HostVectorize.cpp - the host tile program in vector registers ------===//
//
// After convert-attn-to-linalg, on tensors: matrix products become
// register-blocked vector.fma loops, the other linalg ops (maps, row
// reductions) are tiled to rows and vectorized by MLIR's linalg vectorizer.
// The scalar loops this replaces ran at ~3 GFLOP/s on one core.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorTransforms.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNHOSTVECTORIZE
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {

/// Accumulator vectors a product keeps in registers (of AVX-512's 32; the
/// rest hold the rhs row and the broadcast lhs element).
constexpr int64_t kAccumulators = 16;
/// Vector widths tried, widest first (f32 lanes: AVX-512, AVX, SSE).
constexpr int64_t kWidths[] = {16, 8, 4};
/// Most accumulator vectors per row (so several rows share each rhs load).
constexpr int64_t kMaxColumnVectors = 4;

/// A linalg.generic that is acc[i, j] += lhs · rhs over k, the form
/// convert-attn-to-linalg gives attn.matmul: which operand is transposed.
struct Product {
  bool transposeLhs, transposeRhs;
};

std::optional<Product> matchProduct(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      op.getNumLoops() != 3 || !op.hasPureTensorSemantics())
    return std::nullopt;
  auto iterators = op.getIteratorTypesArray();
  if (iterators[0] != utils::IteratorType::parallel ||
      iterators[1] != utils::IteratorType::parallel ||
      iterators[2] != utils::IteratorType::reduction)
    return std::nullopt;
  MLIRContext *ctx = op.getContext();
  AffineExpr i, j, k;
  bindDims(ctx, i, j, k);
  auto map = [&](AffineExpr a, AffineExpr b) {
    return AffineMap::get(3, 0, {a, b}, ctx);
  };
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (maps[2] != map(i, j))
    return std::nullopt;
  Product p;
  if (maps[0] == map(i, k))
    p.transposeLhs = false;
  else if (maps[0] == map(k, i))
    p.transposeLhs = true;
  else
    return std::nullopt;
  if (maps[1] == map(k, j))
    p.transposeRhs = false;
  else if (maps[1] == map(j, k))
    p.transposeRhs = true;
  else
    return std::nullopt;
  // The body: acc + ext(lhs) * ext(rhs).
  Block &body = op.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto add = yield.getValues()[0].getDefiningOp<arith::AddFOp>();
  if (!add || add.getLhs() != body.getArgument(2))
    return std::nullopt;
  auto mul = add.getRhs().getDefiningOp<arith::MulFOp>();
  if (!mul || !add.getType().isF32())
    return std::nullopt;
  auto operand = [&](Value v, unsigned arg) {
    if (auto ext = v.getDefiningOp<arith::ExtFOp>())
      v = ext.getIn();
    return v == body.getArgument(arg);
  };
  if (!operand(mul.getLhs(), 0) || !operand(mul.getRhs(), 1))
    return std::nullopt;
  return p;
}

Value toF32(OpBuilder &b, Location loc, Value v, Type f32Type) {
  return v.getType() == f32Type ? v : arith::ExtFOp::create(b, loc, f32Type, v);
}

/// Rewrites the product `op` as R x C accumulator vectors of W lanes per
/// block of the output, each summed over k in order with vector.fma.
LogicalResult vectorizeProduct(RewriterBase &rewriter, linalg::GenericOp op,
                               Product product) {
  Value lhs = op.getDpsInputs()[0], rhs = op.getDpsInputs()[1];
  Value acc = op.getDpsInits()[0];
  auto accType = cast<RankedTensorType>(acc.getType());
  auto lhsType = cast<RankedTensorType>(lhs.getType());
  auto rhsType = cast<RankedTensorType>(rhs.getType());
  if (!accType.hasStaticShape() || !lhsType.hasStaticShape() ||
      !rhsType.hasStaticShape())
    return failure();
  int64_t m = accType.getDimSize(0), n = accType.getDimSize(1);
  int64_t kSize = lhsType.getDimSize(product.transposeLhs ? 0 : 1);
  int64_t width = 0;
  for (int64_t w : kWidths)
    if (n % w == 0) {
      width = w;
      break;
    }
  if (!width)
    return failure();
  int64_t columns = std::min(n / width, kMaxColumnVectors);
  while ((n / width) % columns)
    --columns;
  int64_t rows = std::max<int64_t>(1, kAccumulators / columns);
  while (m % rows)
    --rows;

  Location loc = op.getLoc();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  Type f32 = rewriter.getF32Type();
  // A transposed rhs is copied once into a [K, N] tile: the inner loads
  // then read contiguous lanes (for Q·Kᵀ, a K tile transposed per K/V step).
  if (product.transposeRhs) {
    Value init = tensor::EmptyOp::create(
        rewriter, loc, ArrayRef<int64_t>{kSize, n}, rhsType.getElementType());
    rhs = linalg::TransposeOp::create(rewriter, loc, rhs, init,
                                      ArrayRef<int64_t>{1, 0})
              .getResult()[0];
  }
  auto index = [&](OpBuilder &b, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value zero = index(rewriter, 0), one = index(rewriter, 1);
  auto vecF32 = VectorType::get({width}, f32);
  auto vecRhs = VectorType::get({width}, rhsType.getElementType());
  SmallVector<bool> inBounds{true};

  Value rowStep = index(rewriter, rows);
  Value rowEnd = index(rewriter, m);
  auto rowLoop = scf::ForOp::create(
      rewriter, loc, zero, rowEnd, rowStep, ValueRange{acc},
      [&](OpBuilder &b, Location, Value i0, ValueRange rowArgs) {
        Value colStep = index(b, columns * width);
        Value colEnd = index(b, n);
        auto colLoop = scf::ForOp::create(
            b, loc, zero, colEnd, colStep, ValueRange{rowArgs[0]},
            [&](OpBuilder &b, Location, Value j0, ValueRange colArgs) {
              Value tile = colArgs[0];
              SmallVector<Value> rowIdx, colIdx;
              for (int64_t r = 0; r < rows; ++r)
                rowIdx.push_back(
                    arith::AddIOp::create(b, loc, i0, index(b, r)));
              for (int64_t c = 0; c < columns; ++c)
                colIdx.push_back(
                    arith::AddIOp::create(b, loc, j0, index(b, c * width)));
              SmallVector<Value> sums;
              Value pad = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
              for (int64_t r = 0; r < rows; ++r)
                for (int64_t c = 0; c < columns; ++c)
                  sums.push_back(vector::TransferReadOp::create(
                      b, loc, vecF32, tile, ValueRange{rowIdx[r], colIdx[c]},
                      pad, inBounds));
              auto kLoop = scf::ForOp::create(
                  b, loc, zero, index(b, kSize), one, sums,
                  [&](OpBuilder &b, Location, Value k, ValueRange partial) {
                    SmallVector<Value> rhsRow;
                    Value rhsPad = arith::ConstantOp::create(
                        b, loc, b.getZeroAttr(rhsType.getElementType()));
                    for (int64_t c = 0; c < columns; ++c)
                      rhsRow.push_back(toF32(
                          b, loc,
                          vector::TransferReadOp::create(
                              b, loc, vecRhs, rhs, ValueRange{k, colIdx[c]},
                              rhsPad, inBounds),
                          vecF32));
                    SmallVector<Value> next;
                    for (int64_t r = 0; r < rows; ++r) {
                      Value a = tensor::ExtractOp::create(
                          b, loc, lhs,
                          product.transposeLhs ? ValueRange{k, rowIdx[r]}
                                               : ValueRange{rowIdx[r], k});
                      Value splat = vector::BroadcastOp::create(
                          b, loc, vecF32, toF32(b, loc, a, f32));
                      for (int64_t c = 0; c < columns; ++c)
                        next.push_back(vector::FMAOp::create(
                            b, loc, splat, rhsRow[c],
                            partial[r * columns + c]));
                    }
                    scf::YieldOp::create(b, loc, next);
                  });
              for (int64_t r = 0; r < rows; ++r)
                for (int64_t c = 0; c < columns; ++c)
                  tile = vector::TransferWriteOp::create(
                             b, loc, kLoop.getResult(r * columns + c), tile,
                             ValueRange{rowIdx[r], colIdx[c]}, inBounds)
                             .getResult();
              scf::YieldOp::create(b, loc, tile);
            });
        scf::YieldOp::create(b, loc, colLoop.getResult(0));
      });
  rewriter.replaceOp(op, rowLoop.getResult(0));
  return success();
}

/// Tiles a static rank-2 op to single rows and vectorizes the row; a rank-1
/// op is vectorized whole. Ops the vectorizer rejects stay as they are.
void vectorizeRows(RewriterBase &rewriter, linalg::LinalgOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumLoops() > 2 ||
      op.getNumLoops() == 0 || op.hasDynamicShape() ||
      failed(linalg::vectorizeOpPrecondition(op)))
    return;
  Operation *target = op;
  rewriter.setInsertionPoint(op);
  if (op.getNumLoops() == 2 && op.getStaticLoopRanges()[0] > 1) {
    scf::SCFTilingOptions options;
    options.setTileSizes({rewriter.getIndexAttr(1), rewriter.getIndexAttr(0)});
    FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
        rewriter, cast<TilingInterface>(op.getOperation()), options);
    if (failed(tiled))
      return;
    rewriter.replaceOp(op, tiled->replacements);
    target = tiled->tiledOps.back();
  }
  rewriter.setInsertionPoint(target);
  FailureOr<linalg::VectorizationResult> result =
      linalg::vectorize(rewriter, target);
  if (failed(result))
    return;
  if (!result->replacements.empty())
    rewriter.replaceOp(target, result->replacements);
  else
    rewriter.eraseOp(target);
}

struct AttnHostVectorizePass
    : mlir::attn::impl::AttnHostVectorizeBase<AttnHostVectorizePass> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> ops;
    getOperation()->walk([&](linalg::LinalgOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : ops) {
      auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
      if (generic)
        if (std::optional<Product> product = matchProduct(generic)) {
          (void)vectorizeProduct(rewriter, generic, *product);
          continue;
        }
      vectorizeRows(rewriter, op);
    }
    // One-row vectors become 1-D ones, reductions and transfers the forms
    // the LLVM lowering takes.
    RewritePatternSet patterns(&getContext());
    vector::populateCastAwayVectorLeadingOneDimPatterns(patterns);
    vector::populateVectorMultiReductionLoweringPatterns(
        patterns, vector::VectorMultiReductionLowering::InnerReduction);
    vector::populateVectorBroadcastLoweringPatterns(patterns);
    vector::populateSinkVectorOpsPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
