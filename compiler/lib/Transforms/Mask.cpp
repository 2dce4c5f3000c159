//===- Mask.cpp - The one definition of the attention masks ---------------===//

#include "attn/Transforms/Mask.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::attn;

Value mlir::attn::buildDiagonalShift(OpBuilder &b, Location loc, MaskKind kind,
                                     Value numQueries, Value numKeys) {
  switch (kind) {
  case MaskKind::None:
    return {};
  case MaskKind::Causal:
    return arith::ConstantIndexOp::create(b, loc, 0);
  case MaskKind::CausalBottomRight:
    return arith::SubIOp::create(b, loc, numKeys, numQueries);
  }
  return {};
}

Value mlir::attn::buildKeyHidden(OpBuilder &b, Location loc, Value query,
                                 Value key, Value numKeys, Value shift) {
  Value hidden =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, key, numKeys);
  if (!shift)
    return hidden;
  Value limit = arith::AddIOp::create(b, loc, query, shift);
  Value above =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, key, limit);
  return arith::OrIOp::create(b, loc, hidden, above);
}

Value mlir::attn::buildKeyEnd(OpBuilder &b, Location loc, Value rowEnd,
                              Value numKeys, Value shift) {
  if (!shift)
    return numKeys;
  Value end = arith::AddIOp::create(b, loc, rowEnd, shift);
  end = arith::MaxSIOp::create(b, loc, end,
                               arith::ConstantIndexOp::create(b, loc, 0));
  return arith::MinSIOp::create(b, loc, numKeys, end);
}

Value mlir::attn::buildTileNeedsMask(OpBuilder &b, Location loc, Value row,
                                     Value col, int64_t blockN, Value numKeys,
                                     Value shift) {
  Value tileEnd = arith::AddIOp::create(
      b, loc, col, arith::ConstantIndexOp::create(b, loc, blockN));
  Value needed = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt,
                                       tileEnd, numKeys);
  if (!shift)
    return needed;
  Value lastKey = arith::SubIOp::create(
      b, loc, tileEnd, arith::ConstantIndexOp::create(b, loc, 1));
  Value firstLimit = arith::AddIOp::create(b, loc, row, shift);
  Value crosses = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt,
                                        lastKey, firstLimit);
  return arith::OrIOp::create(b, loc, needed, crosses);
}
