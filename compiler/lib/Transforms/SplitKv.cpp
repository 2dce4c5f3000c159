//===- SplitKv.cpp - split-KV ranges and the merge of the partials --------===//

#include "attn/Transforms/SplitKv.h"

#include "attn/Compiler/KernelABI.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::attn;

std::pair<Value, Value> mlir::attn::buildSplitKeyRange(
    OpBuilder &b, Location loc, Value lower, Value upper, int64_t blockN,
    Value split, Value numSplits) {
  auto cst = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  Value blockSize = cst(blockN);
  Value zero = cst(0);
  Value keys = arith::SubIOp::create(b, loc, upper, lower);
  Value tiles = arith::CeilDivSIOp::create(
      b, loc, arith::MaxSIOp::create(b, loc, keys, zero), blockSize);
  Value spanBlockSize = cst(blockN);
  Value span = arith::MulIOp::create(
      b, loc, arith::CeilDivSIOp::create(b, loc, tiles, numSplits),
      spanBlockSize);
  Value first = arith::MinSIOp::create(
      b, loc,
      arith::AddIOp::create(b, loc, lower,
                            arith::MulIOp::create(b, loc, split, span)),
      upper);
  Value last = arith::MinSIOp::create(
      b, loc, arith::AddIOp::create(b, loc, first, span), upper);
  return {first, last};
}

void mlir::attn::buildSplitMerge(OpBuilder &b, Location loc, SdpaOp op,
                                 int64_t blockM, Value numSplits, Value batch,
                                 Value queryTiles, const SplitRowsFn &rows) {
  OpBuilder::InsertionGuard guard(b);
  Type f32 = b.getF32Type();
  int64_t valueDim = op.getOutput().getType().getDimSize(3);
  auto rowType = RankedTensorType::get({blockM}, f32);
  auto accType = RankedTensorType::get({blockM, valueDim}, f32);
  auto outType = RankedTensorType::get(
      {blockM, valueDim}, op.getOutput().getType().getElementType());
  auto splat = [&](RankedTensorType type, float value) {
    return arith::ConstantOp::create(
        b, loc, type, DenseElementsAttr::get(type, b.getF32FloatAttr(value)));
  };
  auto f32Const = [&](OpBuilder &nb, Location nl, float v) {
    return arith::ConstantOp::create(nb, nl, nb.getF32FloatAttr(v))
        .getResult();
  };
  Value heads = memref::DimOp::create(b, loc, op.getOutput(), 1);
  auto grid = TileGridOp::create(b, loc, batch, heads, queryTiles);
  grid->setAttr(::attn::abi::kGridAttr,
                b.getStringAttr(::attn::abi::kGridOverRows));
  b.setInsertionPointToStart(&grid.getBodyBlock());
  Value head = grid.getHeadIndex();
  auto [memBatch, row, bound] =
      rows(b, loc, grid.getBatchIndex(), grid.getTileIndex());
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value count = numSplits;
  Value first = arith::MulIOp::create(b, loc, memBatch, count);
  const float negInf = -std::numeric_limits<float>::infinity();

  // The seed's merge with each split's normalised output O_s as u_b and
  // LSE_s as its max (l_b = 1), in base-2 units as the forward's m:
  // m' = max(m, x), base = m' (0 when -inf: no -inf - -inf), alpha =
  // 2^(m - base), beta = 2^(x - base), l' = alpha·l + beta, u' = alpha·u +
  // beta·O_s. A split without keys (x = -inf) adds nothing.
  auto loop = scf::ForOp::create(
      b, loc, zero, count, one,
      ValueRange{splat(rowType, negInf), splat(rowType, 0.0f),
                 splat(accType, 0.0f)},
      [&](OpBuilder &lb, Location ll, Value s, ValueRange state) {
        Value part = arith::AddIOp::create(lb, ll, first, s);
        Value lse = LoadTileOp::create(lb, ll, rowType, op.getLsePartial(),
                                       part, head, row, bound, Value());
        Value o = LoadTileOp::create(lb, ll, accType, op.getOutputPartial(),
                                     part, head, row, bound, Value());
        auto map = [&](RankedTensorType type, ValueRange inputs,
                       auto body) -> Value {
          return MapOp::create(
              lb, ll, type, inputs, ValueRange(),
              [&](OpBuilder &nb, Location nl, ValueRange, ValueRange e) {
                return body(nb, nl, e);
              });
        };
        Value x = map(rowType, lse, [&](OpBuilder &nb, Location nl,
                                        ValueRange e) -> Value {
          return arith::MulFOp::create(nb, nl, e[0],
                                       f32Const(nb, nl, float(M_LOG2E)));
        });
        Value m = map(rowType, {state[0], x},
                      [&](OpBuilder &nb, Location nl, ValueRange e) -> Value {
                        return arith::MaxNumFOp::create(nb, nl, e[0], e[1]);
                      });
        Value base =
            map(rowType, m, [&](OpBuilder &nb, Location nl, ValueRange e) {
              Value empty =
                  arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ,
                                        e[0], f32Const(nb, nl, negInf));
              return arith::SelectOp::create(nb, nl, empty,
                                             f32Const(nb, nl, 0.0f), e[0])
                  .getResult();
            });
        auto scaleBy = [&](Value v) {
          return map(rowType, {v, base},
                     [&](OpBuilder &nb, Location nl, ValueRange e) -> Value {
                       return math::Exp2Op::create(
                           nb, nl, arith::SubFOp::create(nb, nl, e[0], e[1]));
                     });
        };
        Value alpha = scaleBy(state[0]), beta = scaleBy(x);
        Value l = map(rowType, {state[1], alpha, beta},
                      [&](OpBuilder &nb, Location nl, ValueRange e) -> Value {
                        return arith::AddFOp::create(
                            nb, nl, arith::MulFOp::create(nb, nl, e[0], e[1]),
                            e[2]);
                      });
        Value acc =
            map(accType, {state[2], o, alpha, beta},
                [&](OpBuilder &nb, Location nl, ValueRange e) -> Value {
                  Value fromO = arith::MulFOp::create(nb, nl, e[1], e[3]);
                  Value fromAcc = arith::MulFOp::create(nb, nl, e[0], e[2]);
                  return arith::AddFOp::create(nb, nl, fromAcc, fromO);
                });
        scf::YieldOp::create(lb, ll, ValueRange{m, l, acc});
      });
  auto fin = FinalizeOp::create(b, loc, outType, rowType, loop.getResult(2),
                                loop.getResult(0), loop.getResult(1),
                                /*outputScale=*/Value());
  StoreTileOp::create(b, loc, fin.getOutput(), op.getOutput(), memBatch, head,
                      row, bound, Value());
  if (Value lse = op.getLse())
    StoreTileOp::create(b, loc, fin.getLse(), lse, memBatch, head, row, bound,
                        Value());
}
