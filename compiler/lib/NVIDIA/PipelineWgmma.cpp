//===- PipelineWgmma.cpp - wgmma products in flight across iterations -----===//
//
// Input: the K/V loop after attn-nv-pipeline-copies, each wgmma followed by
// its wait: QKᵀ (operands in shared memory) and P·V (P in registers), the
// waited P·V yielded as the new accumulator. Both schedules peel tile 0
// before the loop, inside `if (tiles > 0)`:
//
// pv_in_flight                        softmax_overlaps_pv
//   tile 0: QKᵀ, wait, softmax,         tile 0: QKᵀ, wait, softmax
//           P·V issued                  for j >= 1:
//   for j >= 1:                           issue QKᵀ(j)
//     issue QKᵀ(j)                        issue P·V(j - 1)
//     wait 0: QKᵀ(j) and P·V(j - 1)       wait 1: QKᵀ(j)
//     softmax(j); issue P·V(j)            softmax(j)
//   wait 0: the last P·V                  wait 0: P·V(j - 1), its P
//                                       issue P·V(last); wait 0
//
// With TMA each warp releases V's stage after the wait that retires the
// P·V reading it (attn_nv.arrive_barrier, placed right behind P·V's wait
// by attn-nv-pipeline-copies): those releases move with the wait, for the
// tile before (j - 1) in the loop and for the last tile after it. K's
// release follows the QKᵀ wait, which stays in its iteration.
//
//===----------------------------------------------------------------------===//

#include "attn/NVIDIA/Passes.h"

#include "attn/Compiler/KernelABI.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

namespace mlir::attn::nv {
#define GEN_PASS_DEF_ATTNNVPIPELINEWGMMA
#include "attn/NVIDIA/Passes.h.inc"
} // namespace mlir::attn::nv

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::nv;

namespace {

/// The products of one K/V loop body and how the accumulator flows.
struct LoopProducts {
  scf::ForOp loop;
  WgmmaOp qk, pv;
  WgmmaWaitOp qkWait, pvWait;
  unsigned accIndex = 0; // the iter arg / result carrying the accumulator
  MapOp rescale;         // acc · alpha, the P·V accumulator operand
  ConvertLayoutOp probs; // P as A fragments
  SlotOp valueSlot;      // V's stage
  SmallVector<ArriveBarrierOp> pvReleases; // right behind pvWait

  bool isPvRelease(Operation *op) {
    return llvm::is_contained(pvReleases, dyn_cast<ArriveBarrierOp>(op));
  }
  /// The releases of V's stage of tile `use`, at b.
  void releaseValues(OpBuilder &b, Value use) {
    for (ArriveBarrierOp r : pvReleases)
      ArriveBarrierOp::create(b, r.getLoc(), r.getBarriers(), use);
  }

  Value accArg() { return loop.getRegionIterArgs()[accIndex]; }
};

WgmmaWaitOp soleWait(WgmmaOp op) {
  if (!op->hasOneUse())
    return {};
  return dyn_cast<WgmmaWaitOp>(*op->user_begin());
}

FailureOr<LoopProducts> match(scf::ForOp loop) {
  LoopProducts p;
  p.loop = loop;
  // The loop counts tiles (attn-nv-pipeline-copies): tile 0 is peeled and
  // stages are tile indices.
  if (!matchPattern(loop.getStep(), m_One()))
    return loop.emitOpError("attn-nv-pipeline-wgmma: expects the K/V loop "
                            "to count tiles with step 1 (run "
                            "attn-nv-pipeline-copies first)");
  auto wgmmas = llvm::to_vector(loop.getBody()->getOps<WgmmaOp>());
  if (wgmmas.size() != 2)
    return loop.emitOpError("attn-nv-pipeline-wgmma: expects two products "
                            "(QKᵀ, P·V) in the K/V loop, found ")
           << wgmmas.size();
  p.qk = wgmmas[0];
  p.pv = wgmmas[1];
  p.qkWait = soleWait(p.qk);
  p.pvWait = soleWait(p.pv);
  if (!p.qkWait || !p.pvWait || p.qkWait.getValues().size() != 1 ||
      p.pvWait.getValues().size() != 1)
    return loop.emitOpError("attn-nv-pipeline-wgmma: each product must be "
                            "followed by its own wait");
  if (!isa<SmemType>(p.qk.getLhs().getType()))
    return p.qk.emitOpError("attn-nv-pipeline-wgmma: the first product "
                            "(QKᵀ) must read both operands from shared "
                            "memory");
  Value acc = p.pvWait.getResult(0);
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  if (!acc.hasOneUse() || acc.use_begin()->getOwner() != yield)
    return p.pv.emitOpError("attn-nv-pipeline-wgmma: the P·V result must "
                            "only be yielded as the new accumulator");
  p.accIndex = acc.use_begin()->getOperandNumber();
  for (Operation *next = p.pvWait->getNextNode();
       auto release = dyn_cast_or_null<ArriveBarrierOp>(next);
       next = next->getNextNode()) {
    if (release.getUse() != loop.getInductionVar())
      return release.emitOpError("attn-nv-pipeline-wgmma: the release behind "
                                 "P·V's wait must be of this iteration's "
                                 "stage");
    p.pvReleases.push_back(release);
  }
  p.rescale = p.pv.getAcc().getDefiningOp<MapOp>();
  p.probs = p.pv.getLhs().getDefiningOp<ConvertLayoutOp>();
  p.valueSlot = p.pv.getRhs().getDefiningOp<SlotOp>();
  if (!p.rescale || p.rescale.getInputs().size() != 2 ||
      p.rescale.getInputs()[0] != p.accArg() || !p.rescale->hasOneUse() ||
      !p.probs || !p.probs->hasOneUse() || !p.valueSlot)
    return p.pv.emitOpError("attn-nv-pipeline-wgmma: P·V must take P "
                            "converted to A fragments, V from its stage and "
                            "the rescaled accumulator of the loop");
  // The accumulator must not be touched before the QKᵀ wait retires the
  // P·V still writing it.
  for (Operation *user : p.accArg().getUsers())
    if (user != p.rescale.getOperation() &&
        !p.qkWait->isBeforeInBlock(user))
      return user->emitOpError("attn-nv-pipeline-wgmma: reads the "
                               "accumulator before the QKᵀ wait");
  return p;
}

/// Wraps `build` in `if (lb < ub) { build } else { init }` replacing the
/// loop's results.
void peelUnderGuard(scf::ForOp loop,
                    function_ref<SmallVector<Value>(OpBuilder &)> build) {
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  Value any = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                    loop.getLowerBound(),
                                    loop.getUpperBound());
  auto ifOp = scf::IfOp::create(b, loc, loop.getResultTypes(), any,
                                /*withElseRegion=*/true);
  OpBuilder tb = OpBuilder::atBlockBegin(ifOp.thenBlock());
  scf::YieldOp::create(tb, loc, build(tb));
  OpBuilder eb = OpBuilder::atBlockBegin(ifOp.elseBlock());
  scf::YieldOp::create(eb, loc, loop.getInitArgs());
  loop.replaceAllUsesWith(ifOp.getResults());
  loop.erase();
}

/// The mapping of the loop's induction variable and carried values to `iv`
/// and `carried` (an iteration cloned outside the loop, or in a new loop).
IRMapping iterationMapping(scf::ForOp loop, Value iv, ValueRange carried) {
  IRMapping m;
  m.map(loop.getInductionVar(), iv);
  for (auto [arg, value] : llvm::zip(loop.getRegionIterArgs(), carried))
    m.map(arg, value);
  return m;
}

/// The loop over tiles 1 ... n - 1 (`loop` itself ran tile 0), carrying
/// `carried`.
scf::ForOp laterTiles(OpBuilder &b, scf::ForOp loop, ValueRange carried) {
  Location loc = loop.getLoc();
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value lb = arith::AddIOp::create(b, loc, loop.getLowerBound(), one);
  return scf::ForOp::create(b, loc, lb, loop.getUpperBound(), loop.getStep(),
                            carried);
}

/// P·V of tile j left in flight; retired by the QKᵀ wait of tile j + 1.
void pvInFlight(LoopProducts &p) {
  scf::ForOp loop = p.loop;
  Location loc = loop.getLoc();
  Block *body = loop.getBody();
  peelUnderGuard(loop, [&](OpBuilder &b) {
    // Tile 0.
    IRMapping first =
        iterationMapping(loop, loop.getLowerBound(), loop.getInitArgs());
    for (Operation &op : body->without_terminator()) {
      if (&op == p.pvWait.getOperation()) {
        first.map(p.pvWait.getResult(0), first.lookup(p.pv.getResult()));
        continue;
      }
      if (!p.isPvRelease(&op))
        b.clone(op, first);
    }
    auto yield = cast<scf::YieldOp>(body->getTerminator());
    SmallVector<Value> carried;
    for (Value v : yield.getOperands())
      carried.push_back(first.lookup(v));
    // Tiles 1 ... n - 1.
    scf::ForOp rest = laterTiles(b, loop, carried);
    OpBuilder lb2 = OpBuilder::atBlockBegin(rest.getBody());
    IRMapping later = iterationMapping(loop, rest.getInductionVar(),
                                       rest.getRegionIterArgs());
    for (Operation &op : body->without_terminator()) {
      if (&op == p.pvWait.getOperation()) {
        later.map(p.pvWait.getResult(0), later.lookup(p.pv.getResult()));
        continue;
      }
      if (p.isPvRelease(&op))
        continue;
      if (&op == p.qkWait.getOperation()) {
        // One wait retires this QKᵀ and the P·V of the tile before.
        Value acc = rest.getRegionIterArgs()[p.accIndex];
        auto wait = WgmmaWaitOp::create(
            lb2, loc, TypeRange{p.qkWait.getResult(0).getType(), acc.getType()},
            ValueRange{later.lookup(p.qk.getResult()), acc},
            p.qkWait.getPendingAttr());
        later.map(p.qkWait.getResult(0), wait.getResult(0));
        later.map(p.accArg(), wait.getResult(1));
        if (!p.pvReleases.empty()) {
          Value one = arith::ConstantIndexOp::create(lb2, loc, 1);
          p.releaseValues(lb2, arith::SubIOp::create(
                                   lb2, loc, rest.getInductionVar(), one));
        }
        continue;
      }
      lb2.clone(op, later);
    }
    SmallVector<Value> next;
    for (Value v : yield.getOperands())
      next.push_back(later.lookup(v));
    scf::YieldOp::create(lb2, loc, next);
    // The last P·V.
    SmallVector<Value> results = llvm::to_vector_of<Value>(rest.getResults());
    Value acc = results[p.accIndex];
    results[p.accIndex] =
        WgmmaWaitOp::create(b, loc, acc.getType(), acc,
                            b.getI64IntegerAttr(0))
            .getResult(0);
    if (!p.pvReleases.empty()) {
      Value one = arith::ConstantIndexOp::create(b, loc, 1);
      p.releaseValues(
          b, arith::SubIOp::create(b, loc, loop.getUpperBound(), one));
    }
    return results;
  });
}

/// The softmax of tile j while P·V of tile j - 1 runs.
void softmaxOverlapsPV(LoopProducts &p) {
  scf::ForOp loop = p.loop;
  Location loc = loop.getLoc();
  Block *body = loop.getBody();
  auto yield = cast<scf::YieldOp>(body->getTerminator());
  Value alpha = p.rescale.getInputs()[1];
  Value buffer = p.valueSlot.getBuffer();
  auto isStageB = [&](Operation *op) {
    return op == p.rescale.getOperation() || op == p.pv.getOperation() ||
           op == p.pvWait.getOperation() || p.isPvRelease(op);
  };
  // P·V of the tile before: rescale(acc, alpha) then the product.
  auto issuePV = [&](OpBuilder &b, IRMapping &m, Value acc, Value probs,
                     Value prevAlpha, Value stage) {
    m.map(p.accArg(), acc);
    m.map(alpha, prevAlpha);
    Value rescaled = b.clone(*p.rescale, m)->getResult(0);
    Value slot = SlotOp::create(b, loc, p.valueSlot.getType(), buffer, stage);
    auto pv = WgmmaOp::create(b, loc, p.pv.getType(), probs, slot, rescaled,
                              p.pv.getTransposeRhsAttr());
    pv.setAdvanceInPtx(p.pv.getAdvanceInPtx());
    return pv.getResult();
  };
  peelUnderGuard(loop, [&](OpBuilder &b) {
    // Tile 0: stage A only.
    IRMapping first =
        iterationMapping(loop, loop.getLowerBound(), loop.getInitArgs());
    for (Operation &op : body->without_terminator())
      if (!isStageB(&op))
        b.clone(op, first);
    SmallVector<Value> carried;
    for (auto [i, v] : llvm::enumerate(yield.getOperands()))
      carried.push_back(i == p.accIndex ? loop.getInitArgs()[i]
                                        : first.lookup(v));
    carried.push_back(first.lookup(p.probs.getResult()));
    carried.push_back(first.lookup(alpha));
    // Tiles 1 ... n - 1, carrying P and alpha of the tile before.
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    scf::ForOp rest = laterTiles(b, loop, carried);
    OpBuilder rb = OpBuilder::atBlockBegin(rest.getBody());
    unsigned n = loop.getNumRegionIterArgs();
    ValueRange args = rest.getRegionIterArgs();
    Value prevProbs = args[n], prevAlpha = args[n + 1];
    IRMapping later = iterationMapping(loop, rest.getInductionVar(),
                                       args.take_front(n));
    Value pv, prevStage;
    for (Operation &op : body->without_terminator()) {
      if (isStageB(&op))
        continue;
      if (&op == p.qkWait.getOperation()) {
        // P·V of the tile before goes right behind this tile's QKᵀ.
        prevStage = arith::SubIOp::create(
            rb, loc, rest.getInductionVar(), one);
        IRMapping stageB = later;
        pv = issuePV(rb, stageB, args[p.accIndex], prevProbs, prevAlpha,
                     prevStage);
        auto wait = WgmmaWaitOp::create(
            rb, loc, p.qkWait.getResult(0).getType(),
            later.lookup(p.qk.getResult()), rb.getI64IntegerAttr(1));
        later.map(p.qkWait.getResult(0), wait.getResult(0));
        continue;
      }
      rb.clone(op, later);
    }
    // P of the tile before passes through the wait: the running P·V reads
    // its registers until then.
    auto done = WgmmaWaitOp::create(rb, loc,
                                    TypeRange{pv.getType(), prevProbs.getType()},
                                    ValueRange{pv, prevProbs},
                                    rb.getI64IntegerAttr(0));
    p.releaseValues(rb, prevStage);
    SmallVector<Value> next;
    for (auto [i, v] : llvm::enumerate(yield.getOperands()))
      next.push_back(i == p.accIndex ? done.getResult(0) : later.lookup(v));
    next.push_back(later.lookup(p.probs.getResult()));
    next.push_back(later.lookup(alpha));
    scf::YieldOp::create(rb, loc, next);
    // The last tile's P·V.
    ValueRange res = rest.getResults();
    Value lastStage =
        arith::SubIOp::create(b, loc, loop.getUpperBound(), one);
    IRMapping last;
    Value lastPV = issuePV(b, last, res[p.accIndex], res[n], res[n + 1],
                           lastStage);
    SmallVector<Value> results = llvm::to_vector_of<Value>(res.take_front(n));
    results[p.accIndex] =
        WgmmaWaitOp::create(b, loc, TypeRange{lastPV.getType(), res[n].getType()},
                            ValueRange{lastPV, res[n]},
                            b.getI64IntegerAttr(0))
            .getResult(0);
    p.releaseValues(b, lastStage);
    return results;
  });
}

struct AttnNVPipelineWgmmaPass
    : mlir::attn::nv::impl::AttnNVPipelineWgmmaBase<AttnNVPipelineWgmmaPass> {
  void runOnOperation() override {
    SmallVector<std::pair<scf::ForOp, StringRef>> loops;
    WalkResult walk = getOperation()->walk([&](TileGridOp grid) {
      ConfigAttr config = ConfigAttr::lookup(grid);
      if (!config || config.getSchedule() == "plain")
        return WalkResult::advance();
      // Split-KV's merge grid has no products: nothing to keep in flight.
      auto over = grid->getAttrOfType<StringAttr>(::attn::abi::kGridAttr);
      if (over && over.getValue() == ::attn::abi::kGridOverRows)
        return WalkResult::advance();
      scf::ForOp loop;
      for (auto f : grid.getBodyBlock().getOps<scf::ForOp>())
        if (!f.getBody()->getOps<WgmmaOp>().empty())
          loop = f;
      if (!loop) {
        grid.emitOpError("attn-nv-pipeline-wgmma: schedule ")
            << config.getSchedule() << " needs a K/V loop of wgmma products";
        return WalkResult::interrupt();
      }
      loops.push_back({loop, config.getSchedule()});
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();
    for (auto [loop, schedule] : loops) {
      FailureOr<LoopProducts> p = match(loop);
      if (failed(p))
        return signalPassFailure();
      if (schedule == "pv_in_flight")
        pvInFlight(*p);
      else
        softmaxOverlapsPV(*p);
    }
  }
};

} // namespace
