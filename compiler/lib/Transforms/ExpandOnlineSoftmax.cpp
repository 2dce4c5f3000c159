//===- ExpandOnlineSoftmax.cpp - the fused online-attention loop body -----===//

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"

#include <cmath>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNEXPANDONLINESOFTMAX
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

void expand(OnlineAttentionOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  auto qType = cast<RankedTensorType>(op.getQuery().getType());
  auto kType = cast<RankedTensorType>(op.getKey().getType());
  int64_t blockM = qType.getDimSize(0), blockN = kType.getDimSize(0);
  Type f32 = b.getF32Type();

  // One multiplier: the softmax scale and the change of base to 2.
  Value log2e = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(M_LOG2E));
  Value scale = arith::MulFOp::create(b, loc, op.getScale(), log2e);
  auto scoresType = RankedTensorType::get({blockM, blockN}, f32);
  Value s = QKOp::create(b, loc, scoresType, op.getQuery(), op.getKey(), scale);
  s = MaskOp::create(b, loc, s.getType(), s, op.getRow(), op.getCol(), op.getNumQueries(),
                     op.getNumKeys(), op.getMaskAttr());
  auto probsType =
      RankedTensorType::get({blockM, blockN}, qType.getElementType());
  auto sm = OnlineSoftmaxOp::create(b, loc, probsType, op.getMax().getType(),
                                    op.getMax().getType(),
                                    op.getMax().getType(), s, op.getMax(),
                                    op.getSum());
  Value acc = PVOp::create(b, loc, op.getAcc().getType(), sm.getProbs(), op.getValue(), op.getAcc(),
                           sm.getAlpha());
  op.replaceAllUsesWith(ValueRange{sm.getNewMax(), sm.getNewSum(), acc});
  op.erase();
}

struct AttnExpandOnlineSoftmaxPass
    : mlir::attn::impl::AttnExpandOnlineSoftmaxBase<AttnExpandOnlineSoftmaxPass> {
  void runOnOperation() override {
    SmallVector<OnlineAttentionOp> ops;
    getOperation()->walk([&](OnlineAttentionOp op) { ops.push_back(op); });
    for (OnlineAttentionOp op : ops)
      expand(op);
  }
};

} // namespace
