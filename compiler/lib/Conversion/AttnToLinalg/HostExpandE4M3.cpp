//===- HostExpandE4M3.cpp - FP8 (e4m3) conversions as bit operations ------===//
//
// The host tile program of an FP8 kernel extends its e4m3 tiles to f32 and
// rounds P to e4m3 (attn-decompose). LLVM has no FP8 type, so each such
// arith.extf / arith.truncf (scalar or vector) becomes integer operations on
// the i8 encoding (sign, 4 exponent bits of bias 7, 3 mantissa bits; no
// infinities, 0x7f / 0xff are NaN).
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNHOSTEXPANDE4M3
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {

/// e4m3's exponent bias, f32's, and the encoding's largest finite value
/// (0x7e = 448) and its NaN (0x7f).
constexpr int32_t kE4M3Bias = 7;
constexpr int32_t kF32Bias = 127;
constexpr int32_t kMaxFinite = 0x7e;
constexpr int32_t kNaN = 0x7f;
/// f32's mantissa bits beyond e4m3's 3.
constexpr int32_t kDroppedBits = 20;
/// The smallest normal e4m3 value, 2^-6, and the subnormals' step, 2^-9.
constexpr float kMinNormal = 0.015625f;
constexpr float kSubnormalSteps = 512.0f;

bool isE4M3(Type type) {
  return isa<Float8E4M3FNType>(getElementTypeOrSelf(type));
}

/// `element` shaped as `like` (a vector of its shape, or the scalar).
Type shapedAs(Type like, Type element) {
  if (auto vec = dyn_cast<VectorType>(like))
    return vec.clone(element);
  return element;
}

/// Builds constants and ops of one shape (scalar or vector).
struct Builder {
  PatternRewriter &rw;
  Location loc;
  Type like; // any type of the shape

  Type i32() { return shapedAs(like, rw.getI32Type()); }
  Type f32() { return shapedAs(like, rw.getF32Type()); }
  Value i32(int64_t v) {
    return arith::ConstantOp::create(rw, loc, i32(),
                                     splat(rw.getI32IntegerAttr(v)));
  }
  Value f32(float v) {
    return arith::ConstantOp::create(rw, loc, f32(),
                                     splat(rw.getF32FloatAttr(v)));
  }
  TypedAttr splat(TypedAttr scalar) {
    if (auto vec = dyn_cast<VectorType>(like))
      return DenseElementsAttr::get(vec.clone(scalar.getType()), scalar);
    return scalar;
  }
};

/// extf: exact. A normal code's exponent and mantissa move into place with
/// the bias changed; a subnormal is its mantissa times 2^-9.
struct ExpandExtF : OpRewritePattern<arith::ExtFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::ExtFOp op,
                                PatternRewriter &rw) const override {
    if (!isE4M3(op.getIn().getType()))
      return failure();
    Location loc = op.getLoc();
    Builder b{rw, loc, op.getIn().getType()};
    Type i8 = shapedAs(b.like, rw.getI8Type());
    Value code = arith::BitcastOp::create(rw, loc, i8, op.getIn());
    Value bits = arith::ExtUIOp::create(rw, loc, b.i32(), code);
    Value magnitude = arith::AndIOp::create(rw, loc, bits, b.i32(0x7f));
    Value signBit = arith::AndIOp::create(rw, loc, bits, b.i32(0x80));
    Value sign = arith::ShLIOp::create(rw, loc, signBit, b.i32(24));
    // Normal: (exponent, mantissa) << 20, rebiased.
    Value shifted =
        arith::ShLIOp::create(rw, loc, magnitude, b.i32(kDroppedBits));
    Value normal = arith::AddIOp::create(rw, loc, shifted,
                                         b.i32((kF32Bias - kE4M3Bias) << 23));
    // Subnormal (exponent 0): mantissa · 2^-9.
    Value steps = arith::UIToFPOp::create(rw, loc, b.f32(), magnitude);
    Value subValue =
        arith::MulFOp::create(rw, loc, steps, b.f32(1.0f / kSubnormalSteps));
    Value subnormal = arith::BitcastOp::create(rw, loc, b.i32(), subValue);
    Value isSub = arith::CmpIOp::create(rw, loc, arith::CmpIPredicate::ult,
                                        magnitude, b.i32(8));
    Value unsignedBits =
        arith::SelectOp::create(rw, loc, isSub, subnormal, normal);
    Value isNaN = arith::CmpIOp::create(rw, loc, arith::CmpIPredicate::eq,
                                        magnitude, b.i32(kNaN));
    Value nanBits = b.i32(0x7fc00000);
    Value magnitudeBits =
        arith::SelectOp::create(rw, loc, isNaN, nanBits, unsignedBits);
    Value all = arith::OrIOp::create(rw, loc, magnitudeBits, sign);
    Value value = arith::BitcastOp::create(rw, loc, b.f32(), all);
    Type out = op.getType();
    if (getElementTypeOrSelf(out).isF32())
      rw.replaceOp(op, value);
    else
      rw.replaceOpWithNewOp<arith::TruncFOp>(op, out, value);
    return success();
  }
};

/// truncf from f32: round to nearest even, finite values past 448 (and
/// infinities) saturate to ±448, NaN stays NaN (cvt.rn.satfinite).
struct ExpandTruncF : OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::TruncFOp op,
                                PatternRewriter &rw) const override {
    if (!isE4M3(op.getType()))
      return failure();
    if (!getElementTypeOrSelf(op.getIn().getType()).isF32())
      return rw.notifyMatchFailure(op, "truncates only f32 to e4m3");
    Location loc = op.getLoc();
    Builder b{rw, loc, op.getIn().getType()};
    Value bits = arith::BitcastOp::create(rw, loc, b.i32(), op.getIn());
    Value high = arith::ShRUIOp::create(rw, loc, bits, b.i32(24));
    Value sign = arith::AndIOp::create(rw, loc, high, b.i32(0x80));
    Value magnitudeBits =
        arith::AndIOp::create(rw, loc, bits, b.i32(0x7fffffff));
    Value magnitude = arith::BitcastOp::create(rw, loc, b.f32(), magnitudeBits);
    // Normal: drop 20 mantissa bits rounding to nearest even, rebias.
    Value lsbShifted =
        arith::ShRUIOp::create(rw, loc, magnitudeBits, b.i32(kDroppedBits));
    Value lsb = arith::AndIOp::create(rw, loc, lsbShifted, b.i32(1));
    Value half = arith::AddIOp::create(rw, loc, lsb,
                                       b.i32((1 << (kDroppedBits - 1)) - 1));
    Value rounded = arith::AddIOp::create(rw, loc, magnitudeBits, half);
    Value kept = arith::ShRUIOp::create(rw, loc, rounded, b.i32(kDroppedBits));
    Value normal = arith::SubIOp::create(rw, loc, kept,
                                         b.i32((kF32Bias - kE4M3Bias) << 3));
    Value saturated =
        arith::MinSIOp::create(rw, loc, normal, b.i32(kMaxFinite));
    // Subnormal: the nearest (even) multiple of 2^-9; 8 steps is 2^-6.
    Value steps =
        arith::MulFOp::create(rw, loc, magnitude, b.f32(kSubnormalSteps));
    Value even = math::RoundEvenOp::create(rw, loc, steps);
    Value subnormal = arith::FPToUIOp::create(rw, loc, b.i32(), even);
    Value isSub = arith::CmpFOp::create(rw, loc, arith::CmpFPredicate::OLT,
                                        magnitude, b.f32(kMinNormal));
    Value finite =
        arith::SelectOp::create(rw, loc, isSub, subnormal, saturated);
    Value isNaN = arith::CmpFOp::create(rw, loc, arith::CmpFPredicate::UNO,
                                        magnitude, magnitude);
    Value code = arith::SelectOp::create(rw, loc, isNaN, b.i32(kNaN), finite);
    Value all = arith::OrIOp::create(rw, loc, code, sign);
    Type i8 = shapedAs(b.like, rw.getI8Type());
    Value byte = arith::TruncIOp::create(rw, loc, i8, all);
    rw.replaceOpWithNewOp<arith::BitcastOp>(op, op.getType(), byte);
    return success();
  }
};

struct AttnHostExpandE4M3Pass
    : mlir::attn::impl::AttnHostExpandE4M3Base<AttnHostExpandE4M3Pass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ExpandExtF, ExpandTruncF>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
