//===- OrderWarpgroups.cpp - warpgroups issue QKᵀ in turn -----------------===//
//
// With TMA there is no CTA barrier per tile (attn-nv-pipeline-copies), so
// warpgroup 0 may run up to S - 1 tiles ahead of the others. A named
// barrier must not get two arrivals of warpgroup 0 before the others sync
// once, so the turn is numbered by the K tile it reads (its stage use) and
// rotates over S sets of barriers: tile k + S is copied only after every
// warp released tile k, which it does after its wait for QKᵀ(k), hence
// after its turn k.
//
//===----------------------------------------------------------------------===//

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
      ConfigAttr config = ConfigAttr::lookup(op);
      int64_t warpgroups = config.getWarps() / 4;
      OpBuilder b(op);
      Value number;
      IntegerAttr rotation;
      if (config.getTma() && !config.getBarrierPerTile()) {
        auto stage = op.getRhs().getDefiningOp<SlotOp>();
        if (!stage) {
          op.emitOpError("attn-nv-order-warpgroups: with tma, QKᵀ must read "
                         "K from a stage (attn_nv.slot) whose index numbers "
                         "the turn");
          return signalPassFailure();
        }
        number = stage.getIndex();
        rotation = b.getI64IntegerAttr(config.getStages());
      }
      auto turn = WarpgroupTurnOp::create(b, op.getLoc(), op->getResultTypes(),
                                          b.getI64IntegerAttr(warpgroups),
                                          number, rotation);
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
