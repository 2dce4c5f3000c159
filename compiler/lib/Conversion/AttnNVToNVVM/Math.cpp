//===- Math.cpp - exp2, log2, tanh and maxNum as NVVM/LLVM intrinsics -----===//
//
// convert-gpu-to-nvvm would send math.exp2 / math.log2 (and maxnumf) to
// libdevice calls.
// The softmax takes ex2.approx.ftz (one MUFU.EX2: results below 2^-126
// do not matter next to the row's largest term, 1) and lg2.approx.
//
//===----------------------------------------------------------------------===//

#include "Patterns.h"

#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::nv;

namespace {

template <typename Op>
struct ApproxIntrinsic : OpConversionPattern<Op> {
  ApproxIntrinsic(TypeConverter &converter, MLIRContext *ctx, StringRef name)
      : OpConversionPattern<Op>(converter, ctx), name(name) {}

  LogicalResult
  matchAndRewrite(Op op, typename Op::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!op.getType().isF32())
      return op.emitOpError("only f32 is supported on NVIDIA");
    rewriter.replaceOpWithNewOp<LLVM::CallIntrinsicOp>(
        op, op.getType(), rewriter.getStringAttr(name),
        ValueRange{adaptor.getOperand()});
    return success();
  }

  std::string name;
};

/// IEEE maxNum as LLVM's intrinsic (max.f32); the GPU conversion would call
/// libdevice.
struct MaxNum : OpConversionPattern<arith::MaxNumFOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(arith::MaxNumFOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<LLVM::MaxNumOp>(op, adaptor.getLhs(),
                                                adaptor.getRhs());
    return success();
  }
};

/// tanh(x) = 1 - 2 / (2^(2·log2(e)·x) + 1): one ex2.approx and one
/// rcp.approx (a soft-capped score, cap · tanh(s / cap), must stay accurate
/// to the bf16 rounding of P: tanh.approx's 2^-11 is not). Large |x| gives
/// exactly ±1 (2^x overflows to inf, rcp(inf) = 0).
struct Tanh : OpConversionPattern<math::TanhOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(math::TanhOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!op.getType().isF32())
      return op.emitOpError("only f32 is supported on NVIDIA");
    Location loc = op.getLoc();
    Type f32 = rewriter.getF32Type();
    auto cst = [&](double v) {
      return LLVM::ConstantOp::create(rewriter, loc, f32,
                                      rewriter.getF32FloatAttr(v));
    };
    Value x = LLVM::FMulOp::create(rewriter, loc, adaptor.getOperand(),
                                   cst(2.0 * M_LOG2E));
    Value e = LLVM::CallIntrinsicOp::create(
                  rewriter, loc, f32,
                  rewriter.getStringAttr("llvm.nvvm.ex2.approx.ftz.f32"),
                  ValueRange{x})
                  .getResult(0);
    Value r = LLVM::CallIntrinsicOp::create(
                  rewriter, loc, f32,
                  rewriter.getStringAttr("llvm.nvvm.rcp.approx.ftz.f"),
                  ValueRange{LLVM::FAddOp::create(rewriter, loc, e, cst(1.0))})
                  .getResult(0);
    Value twoR = LLVM::FMulOp::create(rewriter, loc, r, cst(2.0));
    Value y = LLVM::FSubOp::create(rewriter, loc, cst(1.0), twoR);
    rewriter.replaceOp(op, y);
    return success();
  }
};

} // namespace

void mlir::attn::nv::populateMathPatterns(TileTypeConverter &converter,
                                          RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<ApproxIntrinsic<math::Exp2Op>>(converter, ctx,
                                              "llvm.nvvm.ex2.approx.ftz.f32");
  patterns.add<ApproxIntrinsic<math::Log2Op>>(converter, ctx,
                                              "llvm.nvvm.lg2.approx.f");
  patterns.add<MaxNum, Tanh>(converter, ctx);
}
