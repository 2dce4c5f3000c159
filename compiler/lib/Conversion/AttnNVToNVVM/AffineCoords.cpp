//===- AffineCoords.cpp - a map body's integers as base + constant --------===//

#include "AffineCoords.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::attn::nv;

namespace {
bool isUnsigned(arith::CmpIPredicate p) {
  using P = arith::CmpIPredicate;
  return p == P::ult || p == P::ule || p == P::ugt || p == P::uge;
}
} // namespace

std::optional<AffineCoords::Form> AffineCoords::formOf(Value v) {
  if (auto it = forms.find(v); it != forms.end())
    return it->second;
  if (!v.getType().isIntOrIndex())
    return std::nullopt;
  APInt constant;
  if (matchPattern(v, m_ConstantInt(&constant)))
    return constant.getSignificantBits() <= 64 &&
                   std::abs(constant.getSExtValue()) < kExactFloatIntegers
               ? std::optional(Form{Value(), constant.getSExtValue()})
               : std::nullopt;
  if (!uniform(v))
    return std::nullopt;
  return Form{v, 0};
}

bool AffineCoords::uniform(Value v) const {
  // (Mid-conversion a value's block may be detached: no region, not
  // known to be uniform.)
  Region *region = v.getParentRegion();
  return region && !body.getParent()->isAncestor(region);
}

Value AffineCoords::shared(Kind kind, Value lhs, Value rhs, Type type) {
  Value &slot = memo[{unsigned(kind), lhs, rhs, type}];
  if (slot)
    return slot;
  switch (kind) {
  case Kind::Add:
    slot = arith::AddIOp::create(b, loc, lhs, rhs);
    break;
  case Kind::Sub:
    slot = arith::SubIOp::create(b, loc, lhs, rhs);
    break;
  case Kind::Cast:
    slot = arith::IndexCastOp::create(b, loc, type, lhs);
    break;
  case Kind::ToFloat:
    slot = arith::SIToFPOp::create(b, loc, type, lhs);
    break;
  case Kind::Zero:
    slot = arith::ConstantOp::create(b, loc, b.getZeroAttr(type));
    break;
  case Kind::MulF:
    slot = arith::MulFOp::create(b, loc, lhs, rhs);
    break;
  case Kind::Gap:
    slot = gap(lhs, rhs);
    break;
  }
  return slot;
}

Value AffineCoords::gap(Value lhs, Value rhs) {
  Type i64 = b.getI64Type();
  auto c64 = [&](int64_t v) {
    return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v));
  };
  auto asI64 = [&](Value v) -> Value {
    return v.getType().isIndex() ? arith::IndexCastOp::create(b, loc, i64, v)
                                 : v;
  };
  Value l = asI64(lhs);
  Value r = asI64(rhs);
  Value d = arith::SubIOp::create(b, loc, l, r);
  d = arith::MinSIOp::create(b, loc, d, c64(kGapBound));
  d = arith::MaxSIOp::create(b, loc, d, c64(-kGapBound));
  return arith::TruncIOp::create(b, loc, b.getI32Type(), d);
}

Value AffineCoords::materialize(Form form, Type type) {
  return form.base ? form.base : shared(Kind::Zero, Value(), Value(), type);
}

void AffineCoords::clone(Operation &op, IRMapping &mapping) {
  auto operandForms = [&]() -> std::optional<SmallVector<Form, 2>> {
    SmallVector<Form, 2> result;
    for (Value operand : op.getOperands()) {
      std::optional<Form> f = formOf(operand);
      if (!f)
        return std::nullopt;
      result.push_back(*f);
    }
    return result;
  };
  if (auto toFloat = dyn_cast<arith::SIToFPOp>(op)) {
    std::optional<Form> in = formOf(toFloat.getIn());
    if (in && in->base) {
      Value base = shared(Kind::ToFloat, in->base, Value(), toFloat.getType());
      Value result = base;
      if (in->offset != 0)
        result = arith::AddFOp::create(
            b, loc, base,
            arith::ConstantOp::create(
                b, loc, b.getFloatAttr(toFloat.getType(),
                                       double(in->offset))));
      mapping.map(toFloat.getResult(), result);
      floatForms[toFloat.getResult()] = Form{base, in->offset};
      return;
    }
  }
  if (auto mul = dyn_cast<arith::MulFOp>(op);
      mul && mul.getFastmath() == arith::FastMathFlags::none) {
    for (auto [u, x] : {std::pair(mul.getLhs(), mul.getRhs()),
                        std::pair(mul.getRhs(), mul.getLhs())}) {
      auto it = floatForms.find(x);
      if (it == floatForms.end() || !uniform(u))
        continue;
      auto [base, offset] = it->second;
      Type type = mul.getType();
      Value result = shared(Kind::MulF, u, base, type);
      if (offset != 0) {
        // Contracted: one FFMA, u · k + u · base.
        Value k = arith::ConstantOp::create(
            b, loc, b.getFloatAttr(type, double(offset)));
        Value uk = arith::MulFOp::create(b, loc, u, k,
                                         arith::FastMathFlags::contract);
        result = arith::AddFOp::create(b, loc, uk, result,
                                       arith::FastMathFlags::contract);
      }
      mapping.map(mul.getResult(), result);
      return;
    }
  }
  if (auto cmp = dyn_cast<arith::CmpIOp>(op);
      cmp && narrowCompares && cmp.getLhs().getType().isIndex() &&
      !isUnsigned(cmp.getPredicate())) {
    std::optional<Form> l = formOf(cmp.getLhs()), r = formOf(cmp.getRhs());
    if (l && r && (l->base || r->base)) {
      // (bl + ol) pred (br + or)  <=>  (bl - br) pred (or - ol), exactly:
      // |or - ol| < 2 · kExactFloatIntegers, inside the saturation.
      Type index = cmp.getLhs().getType();
      Value d = shared(Kind::Gap, materialize(*l, index),
                       materialize(*r, index), b.getI32Type());
      Value k = arith::ConstantOp::create(
          b, loc, b.getI32IntegerAttr(int32_t(r->offset - l->offset)));
      mapping.map(cmp.getResult(),
                  arith::CmpIOp::create(b, loc, cmp.getPredicate(), d, k));
      return;
    }
  }
  b.clone(op, mapping);
  std::optional<SmallVector<Form, 2>> in = operandForms();
  if (!in || op.getNumResults() != 1)
    return;
  Value result = op.getResult(0);
  Type type = result.getType();
  auto record = [&](Form form) {
    if (std::abs(form.offset) < kExactFloatIntegers)
      forms[result] = form;
  };
  // A null base is 0: a constant right side keeps the left base (both
  // null: a constant); otherwise the bases are combined once.
  auto combine = [&](Kind kind, Form l, Form r, int64_t offset) {
    if (!r.base)
      return Form{l.base, offset};
    if (!l.base && kind == Kind::Add)
      return Form{r.base, offset};
    // One statement each (docs/testing.md: no nested op creation).
    Value rhs = materialize(r, type);
    Value lhs = materialize(l, type);
    return Form{shared(kind, lhs, rhs, type), offset};
  };
  if (isa<arith::AddIOp>(op))
    record(combine(Kind::Add, (*in)[0], (*in)[1],
                   (*in)[0].offset + (*in)[1].offset));
  else if (isa<arith::SubIOp>(op))
    record(combine(Kind::Sub, (*in)[0], (*in)[1],
                   (*in)[0].offset - (*in)[1].offset));
  else if (isa<arith::IndexCastOp>(op) && (*in)[0].base)
    record(Form{shared(Kind::Cast, (*in)[0].base, Value(), type),
                (*in)[0].offset});
}
