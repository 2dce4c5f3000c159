//===- ScoreModGrad.cpp - The derivative of a score_mod -------------------===//

#include "attn/Dialect/Attn/IR/ScoreModGrad.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Ops whose result does not change under a small change of a float operand
/// (comparisons, roundings): their results carry no derivative.
bool isPiecewiseConstant(Operation *op) {
  return isa<arith::CmpFOp, arith::FPToSIOp, arith::FPToUIOp, math::FloorOp,
             math::CeilOp, math::RoundOp, math::RoundEvenOp, math::TruncOp>(
      op);
}

/// Ops with a derivative rule in `tangentOf`.
bool hasRule(Operation *op) {
  return isa<arith::AddFOp, arith::SubFOp, arith::MulFOp, arith::DivFOp,
             arith::NegFOp, arith::MaximumFOp, arith::MaxNumFOp,
             arith::MinimumFOp, arith::MinNumFOp, arith::SelectOp,
             arith::ExtFOp, arith::TruncFOp, math::TanhOp, math::ExpOp,
             math::Exp2Op, math::LogOp, math::Log2Op, math::SqrtOp,
             math::AbsFOp>(op);
}

/// Forward-mode differentiation of a region's ops with respect to one of
/// its block arguments. Without a builder it only tracks which values
/// depend on it (the verifier); with one it clones each op and builds its
/// tangent.
struct Differentiator {
  Differentiator(OpBuilder *b, Location loc) : b(b), loc(loc) {}

  OpBuilder *b;
  Location loc;
  IRMapping primal;
  DenseMap<Value, Value> tangent; // original value -> tangent (built)
  DenseSet<Value> depends;        // original values that depend on the score

  Value mapped(Value v) { return primal.lookupOrDefault(v); }
  Value zero(Type type) {
    return arith::ConstantOp::create(*b, loc, b->getFloatAttr(type, 0.0));
  }
  Value constant(Type type, double value) {
    return arith::ConstantOp::create(*b, loc, b->getFloatAttr(type, value));
  }
  /// The tangent of an original value; null when it does not depend on
  /// the score (zero terms are left out, not multiplied: x · 0 does not
  /// fold in IEEE arithmetic).
  Value t(Value v) { return tangent.lookup(v); }
  /// `t(v)`, or an explicit zero.
  Value tOrZero(Value v) {
    Value tv = t(v);
    return tv ? tv : zero(v.getType());
  }
  Value mul(Value x, Value y) { return arith::MulFOp::create(*b, loc, x, y); }
  Value add(Value x, Value y) {
    if (!x || !y)
      return x ? x : y;
    return arith::AddFOp::create(*b, loc, x, y);
  }
  Value neg(Value x) { return arith::NegFOp::create(*b, loc, x); }
  Value sub(Value x, Value y) {
    if (!y)
      return x;
    if (!x)
      return neg(y);
    return arith::SubFOp::create(*b, loc, x, y);
  }
  Value div(Value x, Value y) { return arith::DivFOp::create(*b, loc, x, y); }
  /// x · y, null when x is (a zero tangent).
  Value mulT(Value x, Value y) { return x ? mul(x, y) : Value(); }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(*b, loc, c, x, y);
  }
  Value cmp(arith::CmpFPredicate pred, Value x, Value y) {
    return arith::CmpFOp::create(*b, loc, pred, x, y);
  }

  /// The tangent of `op`'s result (`op` original, `clone` its copy); at
  /// least one operand depends on the score.
  Value tangentOf(Operation *op, Operation *clone) {
    Value y = clone->getResult(0);
    Type type = y.getType();
    auto x = [&](unsigned i) { return mapped(op->getOperand(i)); };
    auto tx = [&](unsigned i) { return t(op->getOperand(i)); };
    using P = arith::CmpFPredicate;
    return llvm::TypeSwitch<Operation *, Value>(op)
        .Case([&](arith::AddFOp) { return add(tx(0), tx(1)); })
        .Case([&](arith::SubFOp) { return sub(tx(0), tx(1)); })
        .Case([&](arith::MulFOp) {
          Value viaRhs = mulT(tx(1), x(0));
          return add(mulT(tx(0), x(1)), viaRhs);
        })
        .Case([&](arith::DivFOp) { // (a' - y b') / b
          return div(sub(tx(0), mulT(tx(1), y)), x(1));
        })
        .Case([&](arith::NegFOp) { return neg(tx(0)); })
        .Case<arith::MaximumFOp, arith::MaxNumFOp>([&](Operation *) {
          Value rhs = tOrZero(op->getOperand(1));
          Value lhs = tOrZero(op->getOperand(0));
          return select(cmp(P::OGE, x(0), x(1)), lhs, rhs);
        })
        .Case<arith::MinimumFOp, arith::MinNumFOp>([&](Operation *) {
          Value rhs = tOrZero(op->getOperand(1));
          Value lhs = tOrZero(op->getOperand(0));
          return select(cmp(P::OLE, x(0), x(1)), lhs, rhs);
        })
        .Case([&](arith::SelectOp) {
          if (!tx(1) && !tx(2)) // only the condition depends: piecewise
            return Value();
          Value onFalse = tOrZero(op->getOperand(2));
          Value onTrue = tOrZero(op->getOperand(1));
          return select(x(0), onTrue, onFalse);
        })
        .Case([&](arith::ExtFOp) {
          return arith::ExtFOp::create(*b, loc, type, tx(0)).getResult();
        })
        .Case([&](arith::TruncFOp) {
          return arith::TruncFOp::create(*b, loc, type, tx(0)).getResult();
        })
        .Case([&](math::TanhOp) { // (1 - y²) x'
          Value ySquared = mul(y, y);
          return mul(tx(0), sub(constant(type, 1.0), ySquared));
        })
        .Case([&](math::ExpOp) { return mul(tx(0), y); })
        .Case([&](math::Exp2Op) {
          return mul(tx(0), mul(y, constant(type, M_LN2)));
        })
        .Case([&](math::LogOp) { return div(tx(0), x(0)); })
        .Case([&](math::Log2Op) {
          return div(tx(0), mul(x(0), constant(type, M_LN2)));
        })
        .Case([&](math::SqrtOp) {
          return div(tx(0), mul(constant(type, 2.0), y));
        })
        .Case([&](math::AbsFOp) {
          Value negated = neg(tx(0));
          return select(cmp(P::OLT, x(0), zero(type)), negated, tx(0));
        })
        .Default([&](Operation *) { return Value(); });
  }

  /// Walks `block` from `score`; `owner` names the op in diagnostics.
  LogicalResult run(Block &block, Value score, Operation *owner) {
    depends.insert(score);
    if (b)
      tangent[score] = constant(score.getType(), 1.0);
    for (Operation &op : block) {
      if (op.hasTrait<OpTrait::IsTerminator>())
        break;
      bool onScore = llvm::any_of(op.getOperands(), [&](Value v) {
        return depends.contains(v);
      });
      Operation *clone = b ? b->clone(op, primal) : nullptr;
      if (!onScore || isPiecewiseConstant(&op))
        continue;
      // select's condition may depend on the score (piecewise); a value
      // operand that does is differentiated.
      if (!hasRule(&op) || op.getNumResults() != 1 ||
          !isa<FloatType>(op.getResult(0).getType()))
        return op.emitOpError()
               << "in the score_mod of '" << owner->getName()
               << "' cannot be differentiated with respect to the score "
                  "(rules: arith add/sub/mul/div/neg/max/min/select/extf/"
                  "truncf, math tanh/exp/exp2/log/log2/sqrt/absf)";
      depends.insert(op.getResult(0));
      if (b)
        if (Value tv = tangentOf(&op, clone))
          tangent[op.getResult(0)] = tv;
    }
    return success();
  }
};

} // namespace

LogicalResult mlir::attn::verifyScoreModDifferentiable(Operation *owner,
                                                       Region &mod) {
  if (mod.empty())
    return success();
  Differentiator d(nullptr, owner->getLoc());
  Block &block = mod.front();
  return d.run(block, block.getArgument(0), owner);
}

std::pair<Value, Value> mlir::attn::buildScoreModWithDerivative(
    OpBuilder &b, Location loc, Region &mod, ValueRange leading,
    ValueRange captures) {
  Block &block = mod.front();
  Differentiator d(&b, loc);
  d.primal.map(block.getArguments().take_front(leading.size()), leading);
  d.primal.map(block.getArguments().drop_front(leading.size()), captures);
  Value score = block.getArgument(0);
  // The score's tangent is 1: d(mod)/d(score).
  (void)d.run(block, score, block.getParentOp());
  Value yielded = cast<YieldOp>(block.getTerminator()).getValues()[0];
  return {d.mapped(yielded), d.tOrZero(yielded)};
}
