//===- AttnToLinalg.cpp - tile-level attn to scf/linalg for the host ------===//
//
// The host mapping of the tile-level IR. Loops become scf.for, tile math
// becomes linalg.generic on tensors; upstream bufferization and the LLVM
// lowering do the rest. Speed is not the aim: this path checks the tiling and
// the online softmax numerically where no GPU is present.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/Passes.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/IRMapping.h"

#include <cmath>
#include <limits>

namespace mlir::attn {
#define GEN_PASS_DEF_CONVERTATTNTOLINALG
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

Value f32Const(OpBuilder &b, Location loc, float v) {
  return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
}

/// Converts an f32 to `type` (f32, f16 or bf16) or back.
Value convert(OpBuilder &b, Location loc, Value v, Type type) {
  if (v.getType() == type)
    return v;
  if (type.getIntOrFloatBitWidth() < v.getType().getIntOrFloatBitWidth())
    return arith::TruncFOp::create(b, loc, type, v);
  return arith::ExtFOp::create(b, loc, type, v);
}

Value emptyLike(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                Type elementType) {
  return tensor::EmptyOp::create(b, loc, shape, elementType);
}

Value filled(OpBuilder &b, Location loc, ArrayRef<int64_t> shape, float v) {
  Value empty = emptyLike(b, loc, shape, b.getF32Type());
  return linalg::FillOp::create(b, loc, f32Const(b, loc, v), empty)
      .getResult(0);
}

/// linalg.generic over `rank` loops with the given maps and iterator kinds;
/// `body` receives the block arguments and returns the yielded values.
Value generic(OpBuilder &b, Location loc, ValueRange inputs, Value init,
              ArrayRef<AffineMap> maps,
              ArrayRef<utils::IteratorType> iterators,
              function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  auto op = linalg::GenericOp::create(
      b, loc, init.getType(), inputs, init, maps, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        linalg::YieldOp::create(nb, nl, body(nb, nl, args));
      });
  return op.getResult(0);
}

struct Maps {
  MLIRContext *ctx;
  AffineExpr d0, d1, d2;
  explicit Maps(MLIRContext *ctx) : ctx(ctx) {
    bindDims(ctx, d0, d1, d2);
  }
  AffineMap get(unsigned dims, ArrayRef<AffineExpr> results) const {
    return AffineMap::get(dims, 0, results, ctx);
  }
};

using utils::IteratorType;
constexpr IteratorType kPar = IteratorType::parallel;
constexpr IteratorType kRed = IteratorType::reduction;

Value lowerLoad(OpBuilder &b, LoadTileOp op) {
  Location loc = op.getLoc();
  auto type = cast<RankedTensorType>(op.getResult().getType());
  Value numRows = memref::DimOp::create(b, loc, op.getSource(), 2);
  auto gen = tensor::GenerateOp::create(b, loc, type, ValueRange{});
  Block *block = b.createBlock(&gen.getBody(), {}, {b.getIndexType(), b.getIndexType()},
                               {loc, loc});
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(block);
  Value row = arith::AddIOp::create(b, loc, op.getRow(), block->getArgument(0));
  Value inBounds = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                         row, numRows);
  Type elementType = type.getElementType();
  auto ifOp = scf::IfOp::create(
      b, loc, inBounds,
      [&](OpBuilder &tb, Location tl) {
        Value v = memref::LoadOp::create(
            tb, tl, op.getSource(),
            ValueRange{op.getBatch(), op.getHead(), row, block->getArgument(1)});
        scf::YieldOp::create(tb, tl, v);
      },
      [&](OpBuilder &eb, Location el) {
        Value zero = arith::ConstantOp::create(eb, el, eb.getZeroAttr(elementType));
        scf::YieldOp::create(eb, el, zero);
      });
  tensor::YieldOp::create(b, loc, ifOp.getResult(0));
  return gen.getResult();
}

void lowerStore(OpBuilder &b, StoreTileOp op) {
  Location loc = op.getLoc();
  auto type = cast<RankedTensorType>(op.getTile().getType());
  Value numRows = memref::DimOp::create(b, loc, op.getDest(), 2);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value rows = arith::ConstantIndexOp::create(b, loc, type.getDimSize(0));
  Value left = arith::SubIOp::create(b, loc, numRows, op.getRow());
  Value count = arith::MinSIOp::create(b, loc, rows, left);
  scf::ForOp::create(
      b, loc, zero, count, one, ValueRange{},
      [&](OpBuilder &rb, Location rl, Value i, ValueRange) {
        Value row = arith::AddIOp::create(rb, rl, op.getRow(), i);
        if (type.getRank() == 1) {
          Value v = tensor::ExtractOp::create(rb, rl, op.getTile(), i);
          memref::StoreOp::create(rb, rl, v, op.getDest(),
                                  ValueRange{op.getBatch(), op.getHead(), row});
          scf::YieldOp::create(rb, rl);
          return;
        }
        Value cols = arith::ConstantIndexOp::create(rb, rl, type.getDimSize(1));
        scf::ForOp::create(
            rb, rl, zero, cols, one, ValueRange{},
            [&](OpBuilder &cb, Location cl, Value j, ValueRange) {
              Value v = tensor::ExtractOp::create(cb, cl, op.getTile(),
                                                  ValueRange{i, j});
              memref::StoreOp::create(
                  cb, cl, v, op.getDest(),
                  ValueRange{op.getBatch(), op.getHead(), row, j});
              scf::YieldOp::create(cb, cl);
            });
        scf::YieldOp::create(rb, rl);
      });
}

Value lowerQK(OpBuilder &b, QKOp op, const Maps &m) {
  Location loc = op.getLoc();
  auto type = cast<RankedTensorType>(op.getScores().getType());
  Value init = filled(b, loc, type.getShape(), 0.0f);
  Type f32 = b.getF32Type();
  Value product = generic(
      b, loc, {op.getQuery(), op.getKey()}, init,
      {m.get(3, {m.d0, m.d2}), m.get(3, {m.d1, m.d2}), m.get(3, {m.d0, m.d1})},
      {kPar, kPar, kRed}, [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value q = convert(nb, nl, a[0], f32), k = convert(nb, nl, a[1], f32);
        Value qk = arith::MulFOp::create(nb, nl, q, k);
        return Value(arith::AddFOp::create(nb, nl, a[2], qk));
      });
  AffineMap id = m.get(2, {m.d0, m.d1});
  return generic(b, loc, {}, product, {id}, {kPar, kPar},
                 [&](OpBuilder &nb, Location nl, ValueRange a) {
                   return Value(
                       arith::MulFOp::create(nb, nl, a[0], op.getScale()));
                 });
}

Value lowerMask(OpBuilder &b, MaskOp op, const Maps &m) {
  Location loc = op.getLoc();
  AffineMap id = m.get(2, {m.d0, m.d1});
  MaskKind kind = op.getMask();
  return generic(
      b, loc, {}, op.getScores(), {id}, {kPar, kPar},
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value i = linalg::IndexOp::create(nb, nl, 0);
        Value j = linalg::IndexOp::create(nb, nl, 1);
        Value query = arith::AddIOp::create(nb, nl, op.getRow(), i);
        Value key = arith::AddIOp::create(nb, nl, op.getCol(), j);
        Value hidden = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::sge,
                                             key, op.getNumKeys());
        if (kind != MaskKind::None) {
          Value limit = query;
          if (kind == MaskKind::CausalBottomRight) {
            Value shift = arith::SubIOp::create(nb, nl, op.getNumKeys(),
                                                op.getNumQueries());
            limit = arith::AddIOp::create(nb, nl, query, shift);
          }
          Value above = arith::CmpIOp::create(
              nb, nl, arith::CmpIPredicate::sgt, key, limit);
          hidden = arith::OrIOp::create(nb, nl, hidden, above);
        }
        return Value(arith::SelectOp::create(nb, nl, hidden,
                                             f32Const(nb, nl, kNegInf), a[0]));
      });
}

/// The exponent base: m, or 0 while m is -inf (no key seen yet), so that
/// exp2(-inf - base) is 0 and never exp2(-inf + inf) = NaN.
Value safeBase(OpBuilder &b, Location loc, Value m) {
  Value isInf = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, m,
                                      f32Const(b, loc, kNegInf));
  return arith::SelectOp::create(b, loc, isInf, f32Const(b, loc, 0.0f), m);
}

void lowerOnlineSoftmax(OpBuilder &b, OnlineSoftmaxOp op, const Maps &m) {
  Location loc = op.getLoc();
  auto sType = cast<RankedTensorType>(op.getScores().getType());
  auto pType = cast<RankedTensorType>(op.getProbs().getType());
  AffineMap id2 = m.get(2, {m.d0, m.d1}), row2 = m.get(2, {m.d0});
  AffineMap id1 = m.get(1, {m.d0});
  // m' = max(m, rowmax(S))
  Value newMax = generic(b, loc, {op.getScores()}, op.getMax(), {id2, row2},
                         {kPar, kRed},
                         [&](OpBuilder &nb, Location nl, ValueRange a) {
                           return Value(
                               arith::MaximumFOp::create(nb, nl, a[0], a[1]));
                         });
  // p = exp2(S - base(m')), kept in f32 for the row sum.
  Value p32 = generic(
      b, loc, {op.getScores(), newMax},
      emptyLike(b, loc, sType.getShape(), b.getF32Type()), {id2, row2, id2},
      {kPar, kPar}, [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value d = arith::SubFOp::create(nb, nl, a[0], safeBase(nb, nl, a[1]));
        return Value(math::Exp2Op::create(nb, nl, d));
      });
  Value probs = generic(
      b, loc, {p32},
      emptyLike(b, loc, pType.getShape(), pType.getElementType()), {id2, id2},
      {kPar, kPar}, [&](OpBuilder &nb, Location nl, ValueRange a) {
        return convert(nb, nl, a[0], pType.getElementType());
      });
  // alpha = exp2(m - base(m'))
  auto rowShape = cast<RankedTensorType>(op.getMax().getType()).getShape();
  Value alpha = generic(
      b, loc, {op.getMax(), newMax}, emptyLike(b, loc, rowShape, b.getF32Type()),
      {id1, id1, id1}, {kPar}, [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value d = arith::SubFOp::create(nb, nl, a[0], safeBase(nb, nl, a[1]));
        return Value(math::Exp2Op::create(nb, nl, d));
      });
  // l' = alpha * l + rowsum(p)
  Value scaledSum = generic(
      b, loc, {alpha, op.getSum()}, emptyLike(b, loc, rowShape, b.getF32Type()),
      {id1, id1, id1}, {kPar}, [&](OpBuilder &nb, Location nl, ValueRange a) {
        return Value(arith::MulFOp::create(nb, nl, a[0], a[1]));
      });
  Value newSum = generic(b, loc, {p32}, scaledSum, {id2, row2}, {kPar, kRed},
                         [&](OpBuilder &nb, Location nl, ValueRange a) {
                           return Value(
                               arith::AddFOp::create(nb, nl, a[0], a[1]));
                         });
  op.getProbs().replaceAllUsesWith(probs);
  op.getNewMax().replaceAllUsesWith(newMax);
  op.getNewSum().replaceAllUsesWith(newSum);
  op.getAlpha().replaceAllUsesWith(alpha);
}

Value lowerPV(OpBuilder &b, PVOp op, const Maps &m) {
  Location loc = op.getLoc();
  AffineMap id2 = m.get(2, {m.d0, m.d1}), row2 = m.get(2, {m.d0});
  Value scaled = generic(b, loc, {op.getAlpha()}, op.getAcc(), {row2, id2},
                         {kPar, kPar},
                         [&](OpBuilder &nb, Location nl, ValueRange a) {
                           return Value(
                               arith::MulFOp::create(nb, nl, a[0], a[1]));
                         });
  Type f32 = b.getF32Type();
  return generic(
      b, loc, {op.getProbs(), op.getValue()}, scaled,
      {m.get(3, {m.d0, m.d2}), m.get(3, {m.d2, m.d1}), m.get(3, {m.d0, m.d1})},
      {kPar, kPar, kRed}, [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value p = convert(nb, nl, a[0], f32), v = convert(nb, nl, a[1], f32);
        Value pv = arith::MulFOp::create(nb, nl, p, v);
        return Value(arith::AddFOp::create(nb, nl, a[2], pv));
      });
}

void lowerFinalize(OpBuilder &b, FinalizeOp op, const Maps &m) {
  Location loc = op.getLoc();
  auto oType = cast<RankedTensorType>(op.getOutput().getType());
  auto rowShape = cast<RankedTensorType>(op.getMax().getType()).getShape();
  AffineMap id2 = m.get(2, {m.d0, m.d1}), row2 = m.get(2, {m.d0});
  AffineMap id1 = m.get(1, {m.d0});
  // l = 0 only when every key of the row was masked: O = 0, LSE = -inf.
  Value out = generic(
      b, loc, {op.getAcc(), op.getSum()},
      emptyLike(b, loc, oType.getShape(), oType.getElementType()),
      {id2, row2, id2}, {kPar, kPar},
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value zero = f32Const(nb, nl, 0.0f);
        Value empty = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ,
                                            a[1], zero);
        Value q = arith::DivFOp::create(nb, nl, a[0], a[1]);
        Value o = arith::SelectOp::create(nb, nl, empty, zero, q);
        return convert(nb, nl, o, oType.getElementType());
      });
  Value lse = generic(
      b, loc, {op.getMax(), op.getSum()},
      emptyLike(b, loc, rowShape, b.getF32Type()), {id1, id1, id1}, {kPar},
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value empty = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ,
                                            a[1], f32Const(nb, nl, 0.0f));
        Value scaled = arith::MulFOp::create(nb, nl, a[0],
                                             f32Const(nb, nl, M_LN2));
        Value v = arith::AddFOp::create(nb, nl, scaled,
                                        math::LogOp::create(nb, nl, a[1]));
        return Value(arith::SelectOp::create(nb, nl, empty,
                                             f32Const(nb, nl, kNegInf), v));
      });
  op.getOutput().replaceAllUsesWith(out);
  op.getLse().replaceAllUsesWith(lse);
}

/// attn.kv_loop -> scf.for carrying (m, l, acc).
void lowerKvLoop(OpBuilder &b, KvLoopOp op) {
  auto loop = scf::ForOp::create(b, op.getLoc(), op.getLower(), op.getUpper(),
                                 op.getStep(),
                                 ValueRange{op.getInitMax(), op.getInitSum(),
                                            op.getInitAcc()});
  Block *body = loop.getBody();
  Block &old = op.getBodyBlock();
  auto yield = cast<YieldOp>(old.getTerminator());
  OpBuilder yb = OpBuilder::atBlockEnd(&old);
  scf::YieldOp::create(yb, yield.getLoc(), yield.getValues());
  yield.erase();
  // scf.for's builder added an empty body; move the old block's ops into it.
  body->getOperations().splice(body->end(), old.getOperations());
  for (auto [from, to] :
       llvm::zip(old.getArguments(), body->getArguments()))
    from.replaceAllUsesWith(to);
  op.replaceAllUsesWith(loop.getResults());
}

/// attn.tile_grid -> three nested scf.for loops.
void lowerGrid(OpBuilder &b, TileGridOp op) {
  Location loc = op.getLoc();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  SmallVector<Value, 3> ivs;
  for (Value bound : {op.getBatch(), op.getHeads(), op.getQueryTiles()}) {
    auto loop = scf::ForOp::create(b, loc, zero, bound, one);
    ivs.push_back(loop.getInductionVar());
    b.setInsertionPointToStart(loop.getBody());
  }
  Block &old = op.getBodyBlock();
  for (auto [arg, iv] : llvm::zip(old.getArguments(), ivs))
    arg.replaceAllUsesWith(iv);
  Block *inner = b.getInsertionBlock();
  inner->getOperations().splice(b.getInsertionPoint(), old.getOperations());
}

struct ConvertAttnToLinalgPass
    : mlir::attn::impl::ConvertAttnToLinalgBase<ConvertAttnToLinalgPass> {
  void runOnOperation() override {
    Maps maps(&getContext());
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (isa<AttnDialect>(op->getDialect()) && !isa<YieldOp>(op))
        ops.push_back(op);
    });
    // Post-order walk: a loop's body is converted before the loop itself.
    for (Operation *op : ops) {
      OpBuilder b(op);
      if (auto load = dyn_cast<LoadTileOp>(op))
        load.getResult().replaceAllUsesWith(lowerLoad(b, load));
      else if (auto store = dyn_cast<StoreTileOp>(op))
        lowerStore(b, store);
      else if (auto qk = dyn_cast<QKOp>(op))
        qk.getScores().replaceAllUsesWith(lowerQK(b, qk, maps));
      else if (auto mask = dyn_cast<MaskOp>(op))
        mask.getResult().replaceAllUsesWith(lowerMask(b, mask, maps));
      else if (auto sm = dyn_cast<OnlineSoftmaxOp>(op))
        lowerOnlineSoftmax(b, sm, maps);
      else if (auto pv = dyn_cast<PVOp>(op))
        pv.getResult().replaceAllUsesWith(lowerPV(b, pv, maps));
      else if (auto fin = dyn_cast<FinalizeOp>(op))
        lowerFinalize(b, fin, maps);
      else if (auto loop = dyn_cast<KvLoopOp>(op))
        lowerKvLoop(b, loop);
      else if (auto grid = dyn_cast<TileGridOp>(op))
        lowerGrid(b, grid);
      else {
        op->emitOpError("must be tiled and expanded (attn-tile, "
                        "attn-expand-online-softmax) before "
                        "convert-attn-to-linalg");
        return signalPassFailure();
      }
      op->erase();
    }
  }
};

} // namespace
