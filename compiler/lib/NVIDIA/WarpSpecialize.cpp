//===- WarpSpecialize.cpp - a producer warpgroup issues the TMA copies ----===//
//
// Input (attn-nv-pipeline-copies with tma, then the schedule passes): the
// prologue that every thread runs -- Q's cp.async, the barriers' init, a
// CTA barrier, tile 0's copy_tma (thread 0), Q's wait and a CTA barrier --
// then the tile count and the K/V loop, whose body (and the peeled first
// tile of the pipelined schedules) prefetches tile it + 1 into use it + 1
// behind QKᵀ. Output:
//
//   prologue (unchanged, all threads: the producer takes part in its CTA
//   barriers and in Q's copy)
//   attn_nv.warp_specialize consumers(32 · warps threads, ...) {
//     the loop and the epilogue, without their copies
//   } producer(...) {
//     for u in [1, n): copy_tma tile u -> use u after %empty {single_thread}
//   }
//
// n is the consumers' loop bound itself (one SSA value, computed before the
// split by every thread), so both sides see the same tiles: causal and
// window ranges included, and with no tile neither side waits on anything.
// Tile 0 stays in the prologue so that its copy overlaps Q's as before.
// The producer's copy of tile u is the loop's copy of tile it + 1 with
// it = u - 1: the same position arithmetic, cloned.
//
//===----------------------------------------------------------------------===//

#include "attn/NVIDIA/Passes.h"

#include "RegisterSplit.h"

#include "attn/Dialect/Attn/IR/Limits.h"
#include "attn/Dialect/AttnNV/IR/WarpSpecialize.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <functional>

namespace mlir::attn::nv {
#define GEN_PASS_DEF_ATTNNVWARPSPECIALIZE
#include "attn/NVIDIA/Passes.h.inc"
} // namespace mlir::attn::nv

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::nv;

namespace {

/// The copy of the tile after the loop's own: `use` = iv + 1.
bool prefetchesNext(CopyTmaOp copy, scf::ForOp loop) {
  auto add = copy.getUse().getDefiningOp<arith::AddIOp>();
  return add && add.getLhs() == loop.getInductionVar() &&
         matchPattern(add.getRhs(), m_One());
}

LogicalResult specialize(TileGridOp grid, ConfigAttr config) {
  Block &body = grid.getBodyBlock();
  SmallVector<CopyTmaOp> copies;
  grid.walk([&](CopyTmaOp copy) { copies.push_back(copy); });
  // The split follows the prologue's last CTA barrier (Q's wait).
  Operation *lastBarrier = nullptr;
  for (Operation &op : body)
    if (isa<NVVM::Barrier0Op>(op))
      lastBarrier = &op;
  if (!lastBarrier)
    return grid.emitOpError("attn-nv-warp-specialize: no prologue CTA "
                            "barrier (expected attn-nv-pipeline-copies' tma "
                            "form)");
  // The loop that prefetches tile it + 1, and the op of the body that
  // holds it: the consumers' region starts there.
  scf::ForOp loop;
  for (CopyTmaOp copy : copies)
    if (auto f = copy->getParentOfType<scf::ForOp>();
        f && grid->isProperAncestor(f) && prefetchesNext(copy, f)) {
      if (loop && loop != f)
        return grid.emitOpError("attn-nv-warp-specialize: more than one loop "
                                "copies K/V tiles");
      loop = f;
    }
  if (!loop)
    return grid.emitOpError("attn-nv-warp-specialize: no K/V loop whose "
                            "copy_tma loads tile it + 1 (use = it + 1)");
  Operation *start = body.findAncestorOpInBlock(*loop);
  if (!start || start->isBeforeInBlock(lastBarrier))
    return loop.emitOpError("attn-nv-warp-specialize: the K/V loop must "
                            "follow the prologue's CTA barriers");
  Value count = loop.getUpperBound();
  Operation *countAt = count.getDefiningOp()
                           ? body.findAncestorOpInBlock(*count.getDefiningOp())
                           : nullptr;
  if (countAt && !countAt->isBeforeInBlock(start))
    return loop.emitOpError("attn-nv-warp-specialize: the tile count must be "
                            "computed before the loop (both sides read it)");
  for (CopyTmaOp copy : copies)
    if (!body.findAncestorOpInBlock(*copy)->isBeforeInBlock(start) &&
        !copy.getEmpty())
      return copy.emitOpError("attn-nv-warp-specialize: a prefetch must wait "
                              "for its stage's release (after %empty)");

  Location loc = grid.getLoc();
  OpBuilder b(start);
  int64_t consumerThreads = 32 * config.getWarps();
  RegisterSplit registers = registerSplit(
      (consumerThreads + kWarpgroupThreads - 1) / kWarpgroupThreads);
  auto split =
      WarpSpecializeOp::create(b, loc, b.getI64IntegerAttr(consumerThreads),
                               b.getI64IntegerAttr(registers.consumer),
                               b.getI64IntegerAttr(registers.producer));
  Block *consumers = new Block();
  split.getConsumers().push_back(consumers);
  Block *producer = new Block();
  split.getProducer().push_back(producer);
  // To the end of the grid's body (which has no terminator).
  consumers->getOperations().splice(
      consumers->end(), body.getOperations(), start->getIterator(),
      body.mightHaveTerminator() ? body.getTerminator()->getIterator()
                                 : body.end());

  // The producer: tiles 1 ... n - 1, each as the loop copies tile it + 1.
  OpBuilder pb = OpBuilder::atBlockBegin(producer);
  Value one = arith::ConstantIndexOp::create(pb, loc, 1);
  auto tiles = scf::ForOp::create(pb, loc, one, count, one);
  pb.setInsertionPoint(tiles.getBody()->getTerminator());
  Value u = tiles.getInductionVar();
  IRMapping mapping;
  mapping.map(loop.getInductionVar(),
              arith::SubIOp::create(pb, loc, u, one).getResult());
  LogicalResult cloned = success();
  std::function<void(Value)> cloneDef = [&](Value v) {
    Operation *def = v.getDefiningOp();
    if (mapping.contains(v) || !def || !loop->isProperAncestor(def))
      return;
    if (def->getNumRegions() != 0 || !isMemoryEffectFree(def)) {
      cloned = def->emitOpError("attn-nv-warp-specialize: the position of a "
                                "copied tile must follow from the induction "
                                "variable");
      return;
    }
    for (Value operand : def->getOperands())
      cloneDef(operand);
    pb.clone(*def, mapping);
  };
  SmallVector<CopyTmaOp> dead;
  for (CopyTmaOp copy : copies) {
    if (!consumers->findAncestorOpInBlock(*copy))
      continue; // tile 0, in the prologue
    dead.push_back(copy);
    if (copy->getParentOfType<scf::ForOp>() != loop)
      continue; // the peeled first tile's prefetch of tile 1
    for (Value operand : copy->getOperands())
      cloneDef(operand);
    auto issued = cast<CopyTmaOp>(pb.clone(*copy, mapping));
    issued.setSingleThread(true);
  }
  if (failed(cloned))
    return failure();
  for (Block *region : {consumers, producer}) {
    OpBuilder end = OpBuilder::atBlockEnd(region);
    nv::YieldOp::create(end, loc);
  }

  // The consumers keep their waits and releases; their copies go, and
  // with them the branches that held them and what only those computed
  // (post-order: an op's nested ops before it, until nothing is dead).
  for (CopyTmaOp copy : dead)
    copy->erase();
  for (bool erased = true; erased;) {
    SmallVector<Operation *> unused;
    split.getConsumers().walk([&](Operation *op) {
      if (isOpTriviallyDead(op))
        unused.push_back(op);
    });
    for (Operation *op : unused)
      op->erase();
    erased = !unused.empty();
  }
  return success();
}

struct AttnNVWarpSpecializePass
    : mlir::attn::nv::impl::AttnNVWarpSpecializeBase<AttnNVWarpSpecializePass> {
  void runOnOperation() override {
    SmallVector<TileGridOp> grids;
    getOperation()->walk([&](TileGridOp grid) { grids.push_back(grid); });
    for (TileGridOp grid : grids) {
      ConfigAttr config = ConfigAttr::lookup(grid);
      if (!config || !config.getWarpSpecialize())
        continue;
      if (failed(specialize(grid, config)))
        return signalPassFailure();
    }
  }
};

} // namespace
