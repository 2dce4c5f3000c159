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

/// tanh as one MUFU.TANH (`tanh.approx.f32`, sm_75 on: LLVM's tanh with
/// afn). A soft-capped score, cap · tanh(s / cap), was computed as
/// 1 - 2 / (2^(2·log2(e)·x) + 1) -- an ex2 and an rcp, two MUFU ops beside
/// the softmax's one ex2 per score, which made softcap cost ~1.9 x plain
/// causal attention (docs/BENCHMARKS.md version 22). tanh.approx's relative
/// error (2^-11) moves a score by |score| · 2^-11, below the bf16 rounding
/// of P for scores up to the cap; FlashAttention's softcap uses the same
/// instruction.
struct Tanh : OpConversionPattern<math::TanhOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(math::TanhOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!op.getType().isF32())
      return op.emitOpError("only f32 is supported on NVIDIA");
    rewriter.replaceOpWithNewOp<LLVM::TanhOp>(
        op, op.getType(), adaptor.getOperand(),
        LLVM::FastmathFlagsAttr::get(op.getContext(),
                                     LLVM::FastmathFlags::afn));
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
