//===- Decompose.cpp - attention steps as generic tile ops ----------------===//
//
// The one definition of the online softmax and the epilogue (the mask's is
// Mask.cpp). Both mappings lower only the generic ops this produces.
//
// One step, c = scale · log2(e), S = Q Kᵀ:
//   positive scale:  T = mask(S);        m' = max(m, c · rowmax(T));
//                    P = 2^(c·T − b)     (one fused multiply-add)
//   any scale:       T = mask(c · S);    m' = max(m, rowmax(T));
//                    P = 2^(T − b)
//   b = m' unless m' = −inf (no key seen yet), then 0, so no −inf − −inf;
//   alpha = 2^(m − b);  l' = alpha · l + rowsum(P);
//   acc' = alpha · acc + round(P) · V.
// A score_mod forces the second form with T = log2(e) · score_mod(scale · S)
// (it must see the real scaled score). The mask -- past Nk, or not seen by
// the mask_mod -- runs only on tiles that can hold a hidden key (an scf.if
// on MaskStructure's "all seen"), as an elementwise map over each score's
// (query, key) coordinates with the mask_mod inlined.
//
//===----------------------------------------------------------------------===//

#include "attn/Transforms/Mask.h"
#include "attn/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#include <cmath>
#include <limits>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNDECOMPOSE
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

/// Builds tile maps and the scalar ops of their bodies.
struct TileBuilder {
  OpBuilder &b;
  Location loc;

  Value f32(float v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }
  Value splat(RankedTensorType type, float v) {
    return arith::ConstantOp::create(
        b, loc, type, DenseElementsAttr::get(type, b.getF32FloatAttr(v)));
  }
  using Body = function_ref<Value(OpBuilder &, Location, ValueRange coords,
                                  ValueRange elems)>;
  Value map(RankedTensorType type, ValueRange inputs, Body body,
            ValueRange offsets = {}) {
    return MapOp::create(b, loc, type, inputs, offsets, body);
  }
};

/// Scalar ops inside map bodies.
Value mul(OpBuilder &b, Location loc, Value x, Value y, bool contract = false) {
  auto fm = contract ? arith::FastMathFlags::contract
                     : arith::FastMathFlags::none;
  return arith::MulFOp::create(b, loc, x, y, fm);
}
Value sub(OpBuilder &b, Location loc, Value x, Value y, bool contract = false) {
  auto fm = contract ? arith::FastMathFlags::contract
                     : arith::FastMathFlags::none;
  return arith::SubFOp::create(b, loc, x, y, fm);
}

/// The mod's body cloned at the builder with its block arguments bound to
/// `leading` then `captures`; returns the value it yields.
Value inlineMod(OpBuilder &b, Region &mod, ValueRange leading,
                ValueRange captures) {
  Block &block = mod.front();
  IRMapping mapping;
  mapping.map(block.getArguments().take_front(leading.size()), leading);
  mapping.map(block.getArguments().drop_front(leading.size()), captures);
  for (Operation &inner : block.without_terminator())
    b.clone(inner, mapping);
  return mapping.lookup(cast<YieldOp>(block.getTerminator()).getValues()[0]);
}

void decompose(OnlineAttentionOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  TileBuilder t{b, loc};
  auto qType = cast<RankedTensorType>(op.getQuery().getType());
  auto kType = cast<RankedTensorType>(op.getKey().getType());
  auto rowType = cast<RankedTensorType>(op.getMax().getType());
  int64_t blockM = qType.getDimSize(0), blockN = kType.getDimSize(0);
  auto scoreType = RankedTensorType::get({blockM, blockN}, b.getF32Type());
  auto probType =
      RankedTensorType::get({blockM, blockN}, qType.getElementType());
  Region &scoreMod = op.getScoreMod();
  // A score_mod sees the real scaled score: scale first.
  bool positive = op.getPositiveScale() && scoreMod.empty();

  // Hand-written steps may still carry a built-in mask kind.
  if (op.getMask() != MaskKind::None) {
    appendBuiltinMask(b, loc, op.getMask(),
                      buildDiagonalShift(b, loc, op.getMask(),
                                         op.getNumQueries(), op.getNumKeys()),
                      scoreMod, op.getMaskMod(), op.getCapturesMutable());
    op.setMask(MaskKind::None);
  }
  Region &maskMod = op.getMaskMod();
  ValueRange captures = op.getCaptures();
  // Packed rows: row p is query p mod rows_per_head of head head + p / rows.
  Value rowsPerHead = op.getRowsPerHead();
  // A mod that reads memory sees clamped positions: a tile's rows and keys
  // past the bounds are computed (then dropped or masked) but must not
  // read past a capture.
  auto readsMemory = [](Region &mod) {
    return !mod.empty() &&
           llvm::any_of(mod.front(), [](Operation &inner) {
             return isa<memref::LoadOp>(inner);
           });
  };
  bool clamp = readsMemory(scoreMod) || readsMemory(op.getMaskMod());
  Value lastRow, lastCol;
  if (clamp) {
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    lastRow = arith::SubIOp::create(b, loc, op.getNumQueries(), one);
    lastCol = arith::SubIOp::create(b, loc, op.getNumKeys(), one);
  }
  auto key = [&](OpBuilder &nb, Location nl, Value col) -> Value {
    return clamp ? Value(arith::MinSIOp::create(nb, nl, col, lastCol)) : col;
  };
  auto position = [&](OpBuilder &nb, Location nl,
                      Value row) -> std::pair<Value, Value> {
    if (!rowsPerHead)
      return {clamp ? Value(arith::MinSIOp::create(nb, nl, row, lastRow))
                    : row,
              op.getHead()};
    // Without a head operand (a hand-written step with a built-in mask
    // only) no mod reads the head.
    if (!op.getHead())
      return {arith::RemUIOp::create(nb, nl, row, rowsPerHead), Value()};
    Value head = arith::AddIOp::create(
        nb, nl, op.getHead(),
        arith::DivUIOp::create(nb, nl, row, rowsPerHead));
    return {arith::RemUIOp::create(nb, nl, row, rowsPerHead), head};
  };
  SmallVector<Value, 2> at{op.getRow(), op.getCol()};

  // One multiplier: the softmax scale and the change of base to 2.
  Value log2e = t.f32(static_cast<float>(M_LOG2E));
  Value c = arith::MulFOp::create(b, loc, op.getScale(), log2e);
  Value s = MatmulOp::create(b, loc, op.getQuery(), op.getKey(),
                             t.splat(scoreType, 0.0f), /*transposeLhs=*/false,
                             /*transposeRhs=*/true);
  if (!scoreMod.empty())
    s = t.map(
        scoreType, s,
        [&](OpBuilder &nb, Location nl, ValueRange ij, ValueRange e) {
          auto [query, head] = position(nb, nl, ij[0]);
          Value scaled = mul(nb, nl, e[0], op.getScale());
          Value modded = inlineMod(
              nb, scoreMod,
              {scaled, op.getBatch(), head, query, key(nb, nl, ij[1])},
              captures);
          return mul(nb, nl, modded, log2e);
        },
        at);
  else if (!positive)
    s = t.map(scoreType, s, [&](OpBuilder &nb, Location nl, ValueRange,
                                ValueRange e) { return mul(nb, nl, e[0], c); });

  // The mask, on tiles that may hide a key: past the keys, or not seen by
  // the mask_mod everywhere (Mask.h).
  Value blockNValue = arith::ConstantIndexOp::create(b, loc, blockN);
  Value tileEnd = arith::AddIOp::create(b, loc, op.getCol(), blockNValue);
  Value needsMask = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt,
                                          tileEnd, op.getNumKeys());
  if (!maskMod.empty()) {
    // A packed tile may hold any query of its heads.
    auto [firstQuery, lastQuery] = buildQueryRange(
        b, loc, op.getRow(), blockM, op.getNumQueries(), bool(rowsPerHead));
    Value lastKey = arith::SubIOp::create(
        b, loc, tileEnd, arith::ConstantIndexOp::create(b, loc, 1));
    Value allSeen = MaskStructure(maskMod, captures)
                        .tileAllSeen(b, loc, firstQuery, lastQuery,
                                     op.getCol(), lastKey);
    Value notAllSeen = arith::XOrIOp::create(
        b, loc, allSeen,
        arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1));
    needsMask = arith::OrIOp::create(b, loc, needsMask, notAllSeen);
  }
  Value negInf = t.f32(kNegInf);
  auto ifOp = scf::IfOp::create(
      b, loc, needsMask,
      [&](OpBuilder &tb, Location tl) {
        TileBuilder tt{tb, tl};
        Value masked = tt.map(
            scoreType, s,
            [&](OpBuilder &nb, Location nl, ValueRange ij, ValueRange e) {
              Value hidden = buildKeyPastEnd(nb, nl, ij[1], op.getNumKeys());
              if (!maskMod.empty()) {
                auto [query, head] = position(nb, nl, ij[0]);
                Value seen = inlineMod(
                    nb, maskMod,
                    {op.getBatch(), head, query, key(nb, nl, ij[1])},
                    captures);
                Value unseen = arith::XOrIOp::create(
                    nb, nl, seen,
                    arith::ConstantIntOp::create(nb, nl, nb.getI1Type(), 1));
                hidden = arith::OrIOp::create(nb, nl, hidden, unseen);
              }
              return arith::SelectOp::create(nb, nl, hidden, negInf, e[0])
                  .getResult();
            },
            at);
        scf::YieldOp::create(tb, tl, masked);
      },
      [&](OpBuilder &eb, Location el) { scf::YieldOp::create(eb, el, s); });
  Value scores = ifOp.getResult(0);

  // m' = max(m, rowmax): with a positive scale over the unscaled scores.
  Value max = op.getMax();
  Value newMax;
  if (positive) {
    Value rowMax = ReduceOp::create(b, loc, ReduceKind::Max, scores,
                                    t.splat(rowType, kNegInf));
    newMax = t.map(rowType, {rowMax, max},
                   [&](OpBuilder &nb, Location nl, ValueRange, ValueRange e) {
                     return arith::MaxNumFOp::create(
                                nb, nl, mul(nb, nl, e[0], c), e[1])
                         .getResult();
                   });
  } else {
    newMax = ReduceOp::create(b, loc, ReduceKind::Max, scores, max);
  }
  // The exponent base: m', or 0 while no key has been seen (m' = -inf).
  Value base = t.map(rowType, newMax,
                     [&](OpBuilder &nb, Location nl, ValueRange, ValueRange e) {
                       Value unseen = arith::CmpFOp::create(
                           nb, nl, arith::CmpFPredicate::OEQ, e[0], negInf);
                       return arith::SelectOp::create(nb, nl, unseen,
                                                      t.f32(0.0f), e[0])
                           .getResult();
                     });
  Value alpha =
      t.map(rowType, {max, base},
            [&](OpBuilder &nb, Location nl, ValueRange, ValueRange e) {
              return math::Exp2Op::create(nb, nl, sub(nb, nl, e[0], e[1]))
                  .getResult();
            });
  Value probs =
      t.map(scoreType, {scores, base},
            [&](OpBuilder &nb, Location nl, ValueRange, ValueRange e) {
              Value x = positive ? mul(nb, nl, e[0], c, /*contract=*/true)
                                 : e[0];
              return math::Exp2Op::create(
                         nb, nl, sub(nb, nl, x, e[1], /*contract=*/true))
                  .getResult();
            });
  Value rowSum = ReduceOp::create(b, loc, ReduceKind::Add, probs,
                                  t.splat(rowType, 0.0f));
  Value newSum =
      t.map(rowType, {op.getSum(), alpha, rowSum},
            [&](OpBuilder &nb, Location nl, ValueRange, ValueRange e) {
              return arith::AddFOp::create(nb, nl, mul(nb, nl, e[1], e[0]),
                                           e[2])
                  .getResult();
            });
  // P is rounded to the element type of V for the product.
  Value rounded = probs;
  if (!qType.getElementType().isF32())
    rounded =
        t.map(probType, probs,
              [&](OpBuilder &nb, Location nl, ValueRange, ValueRange e) {
                return arith::TruncFOp::create(nb, nl,
                                               qType.getElementType(), e[0])
                    .getResult();
              });
  auto accType = cast<RankedTensorType>(op.getAcc().getType());
  Value rescaled =
      t.map(accType, {op.getAcc(), alpha},
            [&](OpBuilder &nb, Location nl, ValueRange, ValueRange e) {
              return mul(nb, nl, e[0], e[1]);
            });
  Value acc = MatmulOp::create(b, loc, rounded, op.getValue(), rescaled,
                               /*transposeLhs=*/false, /*transposeRhs=*/false);
  op.replaceAllUsesWith(ValueRange{newMax, newSum, acc});
  op.erase();
}

void decompose(FinalizeOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  TileBuilder t{b, loc};
  auto rowType = cast<RankedTensorType>(op.getSum().getType());
  auto outType = cast<RankedTensorType>(op.getOutput().getType());
  // l = 0 only when every key of the row was masked: O = 0, LSE = -inf.
  Value inverse =
      t.map(rowType, op.getSum(),
            [&](OpBuilder &nb, Location nl, ValueRange, ValueRange e) {
              Value zero = t.f32(0.0f);
              Value empty = arith::CmpFOp::create(
                  nb, nl, arith::CmpFPredicate::OEQ, e[0], zero);
              Value inv = arith::DivFOp::create(nb, nl, t.f32(1.0f), e[0]);
              return arith::SelectOp::create(nb, nl, empty, zero, inv)
                  .getResult();
            });
  Type outElement = outType.getElementType();
  Value out = t.map(outType, {op.getAcc(), inverse},
                    [&](OpBuilder &nb, Location nl, ValueRange, ValueRange e) {
                      Value o = mul(nb, nl, e[0], e[1]);
                      if (outElement.isF32())
                        return o;
                      return arith::TruncFOp::create(nb, nl, outElement, o)
                          .getResult();
                    });
  // LSE = ln 2 · (m + log2 l): m is in base-2 units.
  Value lse = t.map(
      rowType, {op.getMax(), op.getSum()},
      [&](OpBuilder &nb, Location nl, ValueRange, ValueRange e) {
        Value empty = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ,
                                            e[1], t.f32(0.0f));
        Value log2l = math::Log2Op::create(nb, nl, e[1]);
        Value v = mul(nb, nl, arith::AddFOp::create(nb, nl, e[0], log2l),
                      t.f32(static_cast<float>(M_LN2)));
        return arith::SelectOp::create(nb, nl, empty, t.f32(kNegInf), v)
            .getResult();
      });
  op.replaceAllUsesWith(ValueRange{out, lse});
  op.erase();
}

struct AttnDecomposePass
    : mlir::attn::impl::AttnDecomposeBase<AttnDecomposePass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (isa<OnlineAttentionOp, FinalizeOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      if (auto step = dyn_cast<OnlineAttentionOp>(op))
        decompose(step);
      else
        decompose(cast<FinalizeOp>(op));
    }
  }
};

} // namespace
