//===- WarpSpecialize.cpp - consumer warpgroups and a producer ------------===//
//
// attn_nv.warp_specialize becomes a branch on the thread id: the consumers
// (threads below consumer_threads) raise their register limit and run
// their region; the producer warpgroup lowers its limit and its first
// thread runs the producer region. setmaxnreg is warpgroup-wide (.sync
// .aligned), so the branch on thread id < a multiple of 128 keeps each
// warpgroup on one side of it.
//
//===----------------------------------------------------------------------===//

#include "Patterns.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::nv;

namespace {

struct WarpSpecialize : OpConversionPattern<WarpSpecializeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(WarpSpecializeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    // The launch's block size is the config's (Kernel.cpp): it must hold
    // these consumers and the producer warpgroup.
    ConfigAttr config = configOf(op);
    int64_t consumers = op.getConsumerThreads();
    if (!config || !config.getWarpSpecialize() ||
        consumers != 32 * config.getWarps())
      return op.emitOpError("needs a kernel configured with warp_specialize "
                            "and consumer_threads = 32 x warps");
    Location loc = op.getLoc();
    Value tid = threadId(rewriter, loc);
    Value limit = constI32(rewriter, loc, consumers);
    Value isConsumer = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::ult, tid, limit);
    auto branch = scf::IfOp::create(rewriter, loc, TypeRange{}, isConsumer,
                                    /*withElseRegion=*/true);
    auto inline_ = [&](Region &region, Operation *before) {
      Block &block = region.front();
      rewriter.eraseOp(block.getTerminator());
      rewriter.inlineBlockBefore(&block, before);
    };
    rewriter.setInsertionPoint(branch.thenYield());
    NVVM::SetMaxRegisterOp::create(
        rewriter, loc, static_cast<int32_t>(op.getConsumerRegisters()),
        NVVM::SetMaxRegisterAction::increase);
    inline_(op.getConsumers(), branch.thenYield());

    rewriter.setInsertionPoint(branch.elseYield());
    NVVM::SetMaxRegisterOp::create(
        rewriter, loc, static_cast<int32_t>(op.getProducerRegisters()),
        NVVM::SetMaxRegisterAction::decrease);
    Value elected = arith::CmpIOp::create(rewriter, loc,
                                          arith::CmpIPredicate::eq, tid, limit);
    auto first = scf::IfOp::create(rewriter, loc, TypeRange{}, elected,
                                   /*withElseRegion=*/false);
    inline_(op.getProducer(), first.thenYield());
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void mlir::attn::nv::populateWarpSpecializePatterns(
    TileTypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<WarpSpecialize>(converter, patterns.getContext());
}
