//===- OrderWarpgroups.cpp - warpgroups issue QKᵀ in turn -----------------===//

#include "attn/NVIDIA/Passes.h"

namespace mlir::attn::nv {
#define GEN_PASS_DEF_ATTNNVORDERWARPGROUPS
#include "attn/NVIDIA/Passes.h.inc"
} // namespace mlir::attn::nv

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::nv;

namespace {

struct AttnNVOrderWarpgroupsPass
    : mlir::attn::nv::impl::AttnNVOrderWarpgroupsBase<
          AttnNVOrderWarpgroupsPass> {
  void runOnOperation() override {
    SmallVector<WgmmaOp> products;
    getOperation()->walk([&](WgmmaOp op) {
      ConfigAttr config = ConfigAttr::lookup(op);
      // QKᵀ: both operands in shared memory. Not already ordered.
      if (config && config.getOrderedIssue() &&
          isa<SmemType>(op.getLhs().getType()) &&
          !op->getParentOfType<WarpgroupTurnOp>())
        products.push_back(op);
    });
    for (WgmmaOp op : products) {
      int64_t warpgroups = ConfigAttr::lookup(op).getWarps() / 4;
      OpBuilder b(op);
      auto turn = WarpgroupTurnOp::create(b, op.getLoc(), op->getResultTypes(),
                                          b.getI64IntegerAttr(warpgroups));
      Block *block = new Block();
      turn.getBody().push_back(block);
      op->replaceAllUsesWith(turn.getResults());
      op->moveBefore(block, block->end());
      OpBuilder yb = OpBuilder::atBlockEnd(block);
      nv::YieldOp::create(yb, op.getLoc(), op->getResults());
    }
  }
};

} // namespace
