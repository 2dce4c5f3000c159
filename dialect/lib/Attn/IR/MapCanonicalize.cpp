//===- MapCanonicalize.cpp - attn.map canonicalization patterns -----------===//
//
// A map's body runs once per element of a score tile (16384 times per
// 128 x 128 tile), so an op that does not depend on the element costs that
// many times what it needs to. Two rewrites remove such work:
//  * HoistMapInvariants moves a pure op whose operands are all defined
//    outside the body (a mod's `1 / cap`) to just before the map;
//  * FoldUniformFactors turns `(x · a) · b`, a and b uniform (defined
//    outside the body), into `x · (a · b)` with `a · b` before the map --
//    only where both products allow reassociation (fastmath<reassoc>). The
//    scores' scale, a softcap's `1 / cap` and `cap`, and the softmax's
//    log2(e) meet that way: 4 multiplies a score become 2.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::attn;

namespace {

bool definedOutside(Value value, MapOp map) {
  return !map.getBody().isAncestor(value.getParentRegion());
}

/// Pure, region-free ops of the body whose operands come from outside it.
struct HoistMapInvariants : OpRewritePattern<MapOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MapOp map,
                                PatternRewriter &rewriter) const override {
    bool changed = false;
    for (Operation &op :
         llvm::make_early_inc_range(map.getBodyBlock().without_terminator())) {
      if (op.getNumRegions() != 0 || !isPure(&op) ||
          !llvm::all_of(op.getOperands(),
                        [&](Value v) { return definedOutside(v, map); }))
        continue;
      rewriter.moveOpBefore(&op, map);
      changed = true;
    }
    return success(changed);
  }
};

/// `(x · a) · b` -> `x · (a · b)` for uniform a, b, where both products
/// carry fastmath<reassoc> and `x · a` has no other use.
struct FoldUniformFactors : OpRewritePattern<MapOp> {
  using OpRewritePattern::OpRewritePattern;

  static bool reassociates(arith::MulFOp op) {
    return arith::bitEnumContainsAll(op.getFastmath(),
                                     arith::FastMathFlags::reassoc);
  }

  LogicalResult matchAndRewrite(MapOp map,
                                PatternRewriter &rewriter) const override {
    bool changed = false;
    SmallVector<arith::MulFOp> products(
        map.getBodyBlock().getOps<arith::MulFOp>());
    for (arith::MulFOp outer : products) {
      if (!reassociates(outer))
        continue;
      for (unsigned side : {0u, 1u}) {
        Value b = outer->getOperand(1 - side);
        auto inner = outer->getOperand(side).getDefiningOp<arith::MulFOp>();
        if (!definedOutside(b, map) || !inner || !inner->hasOneUse() ||
            inner->getBlock() != &map.getBodyBlock() || !reassociates(inner))
          continue;
        Value x = inner.getLhs(), a = inner.getRhs();
        if (definedOutside(x, map))
          std::swap(x, a);
        if (!definedOutside(a, map) || definedOutside(x, map))
          continue;
        arith::FastMathFlags flags = outer.getFastmath() & inner.getFastmath();
        rewriter.setInsertionPoint(map);
        Value ab = arith::MulFOp::create(rewriter, outer.getLoc(), a, b, flags);
        rewriter.setInsertionPoint(outer);
        rewriter.replaceOpWithNewOp<arith::MulFOp>(outer, x, ab, flags);
        rewriter.eraseOp(inner);
        changed = true;
        break;
      }
    }
    return success(changed);
  }
};

} // namespace

void MapOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                        MLIRContext *context) {
  patterns.add<HoistMapInvariants, FoldUniformFactors>(context);
}
