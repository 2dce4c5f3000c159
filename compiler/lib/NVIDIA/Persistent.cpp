//===- Persistent.cpp - CTAs that loop over the grid's work tiles ---------===//
//
// Input: a kernel with a persistent #attn.config, its attn.tile_grid (B, H,
// T) fully scheduled (after attn-nv-warp-specialize, before shared memory
// is placed). Output:
//
//   attn_nv.persistent_grid {
//   ^bb0(%cta: index, %ctas: index):
//     scf.for %w = %cta to B · H · T step %ctas {
//       %b, %h, %t = decodeWorkTile(%w)
//       the grid's body, unchanged (Q's copy, the barriers' init, the
//       K/V loop, the epilogue)
//       nvvm.barrier0                 // every warp is done with the tile
//       attn_nv.inval_barriers ...    // so the next tile may init them
//     }
//   }
//
// The body stays the one a CTA per tile runs, so every schedule (cp.async
// or TMA stages, products in flight, warpgroup turns) is the same code; a
// work tile ends with all its copies waited for and its products retired,
// and the CTA barrier makes the shared buffers and mbarriers free for the
// next one.
//
// With a producer warpgroup (attn_nv.warp_specialize) no CTA barrier may
// end a tile, and the point is overlap: the buffers and barriers are set
// up once, then each side loops over the same work tiles, carrying the
// ring's base (the K/V tiles of the CTA's earlier work tiles):
//
//   warp_specialize consumers {
//     for w (base) { decode; the prologue (positions, n, Q's copy and
//       wait); bar.sync 15; the K/V loop and epilogue, every ring use u
//       as base + u; bar.sync 15; base += n }
//   } producer {
//     for w (base) { decode; the prologue's pure ops (n, positions);
//       for u in [0, n): copy_tma tile u -> use base + u; base += n }
//   }
//
// so the producer loads the next work tile's first stages, paced only by
// the empty barriers, while the consumers compute and store this one.
//
//===----------------------------------------------------------------------===//

#include "attn/NVIDIA/Passes.h"

#include "attn/Dialect/AttnNV/IR/Barriers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::attn::nv {
#define GEN_PASS_DEF_ATTNNVPERSISTENT
#include "attn/NVIDIA/Passes.h.inc"
} // namespace mlir::attn::nv

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::nv;

namespace {

struct WorkTile {
  Value batch, head, tile;
};

/// Work tile w of a grid of B × H × T tiles, the one definition of the
/// order: tile-major, w = (t' · B + b) · H + h, with t = T − 1 − t' when
/// the grid is reversed (causal: the longest query tiles first). A wave of
/// CTAs thus takes one query tile of many heads -- tiles of equal length --
/// and each CTA's later tiles are never longer than its earlier ones.
/// The divisions are 32-bit (the runtime refuses more than 2^31 - 1 work
/// tiles): NVPTX guards each 64-bit one with a branch on its operands'
/// high bits, a branch on the loop's induction variable.
WorkTile decodeWorkTile(OpBuilder &b, Location loc, Value w, Value batch,
                        Value heads, Value tiles, bool reverse) {
  Type i32 = b.getI32Type(), index = b.getIndexType();
  Value w32 = arith::IndexCastUIOp::create(b, loc, i32, w);
  Value batch32 = arith::IndexCastUIOp::create(b, loc, i32, batch);
  Value heads32 = arith::IndexCastUIOp::create(b, loc, i32, heads);
  Value perTile = arith::MulIOp::create(b, loc, batch32, heads32);
  Value slot32 = arith::DivUIOp::create(b, loc, w32, perTile);
  Value within = arith::RemUIOp::create(b, loc, w32, perTile);
  Value batchOf = arith::DivUIOp::create(b, loc, within, heads32);
  Value headOf = arith::RemUIOp::create(b, loc, within, heads32);
  WorkTile out;
  out.batch = arith::IndexCastUIOp::create(b, loc, index, batchOf);
  out.head = arith::IndexCastUIOp::create(b, loc, index, headOf);
  out.tile = arith::IndexCastUIOp::create(b, loc, index, slot32);
  if (reverse) {
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    Value last = arith::SubIOp::create(b, loc, tiles, one);
    out.tile = arith::SubIOp::create(b, loc, last, out.tile);
  }
  return out;
}

/// The persistent grid that replaces a tile grid: its body's block (the
/// CTA, the CTA count) and the work-tile count B · H · T.
struct Shell {
  Block *body;
  Value cta, ctas, work;
};

Shell createShell(TileGridOp grid) {
  Location loc = grid.getLoc();
  OpBuilder b(grid);
  Value perTile = arith::MulIOp::create(b, loc, grid.getBatch(),
                                        grid.getHeads());
  Value work = arith::MulIOp::create(b, loc, perTile, grid.getQueryTiles());
  auto persistent = PersistentGridOp::create(b, loc);
  Block *body = new Block();
  persistent.getBody().push_back(body);
  Type index = b.getIndexType();
  Value cta = body->addArgument(index, loc);
  Value ctas = body->addArgument(index, loc);
  return {body, cta, ctas, work};
}

/// The loop over this CTA's work tiles, at `b`, carrying `inits`; its
/// body starts with the decoded tile. Without `inits` the body has its
/// terminator; with them the caller yields.
scf::ForOp workLoop(OpBuilder &b, TileGridOp grid, ConfigAttr config,
                    const Shell &shell, ValueRange inits, WorkTile &tile) {
  Location loc = grid.getLoc();
  auto loop = scf::ForOp::create(b, loc, shell.cta, shell.work, shell.ctas,
                                 inits);
  OpBuilder lb = OpBuilder::atBlockBegin(loop.getBody());
  tile = decodeWorkTile(lb, loc, loop.getInductionVar(), grid.getBatch(),
                        grid.getHeads(), grid.getQueryTiles(),
                        config.getReverseGrid());
  return loop;
}

/// A grid without a producer: the grid's body, unchanged, runs once per
/// work tile; a CTA barrier and the barriers' invalidation end each tile.
void makePersistentPlain(TileGridOp grid, ConfigAttr config) {
  Location loc = grid.getLoc();
  Shell shell = createShell(grid);
  OpBuilder b = OpBuilder::atBlockBegin(shell.body);
  WorkTile tile;
  scf::ForOp loop = workLoop(b, grid, config, shell, {}, tile);
  Block &gridBody = grid.getBodyBlock();
  gridBody.getArgument(0).replaceAllUsesWith(tile.batch);
  gridBody.getArgument(1).replaceAllUsesWith(tile.head);
  gridBody.getArgument(2).replaceAllUsesWith(tile.tile);
  Block *loopBody = loop.getBody();
  loopBody->getOperations().splice(loopBody->getTerminator()->getIterator(),
                                   gridBody.getOperations());
  // The next work tile overwrites the shared buffers and initializes the
  // mbarriers again: every warp must be past its last read and wait.
  b.setInsertionPoint(loopBody->getTerminator());
  NVVM::Barrier0Op::create(b, loc);
  SmallVector<AllocBarriersOp> barriers;
  loopBody->walk([&](AllocBarriersOp op) { barriers.push_back(op); });
  for (AllocBarriersOp op : barriers)
    InvalBarriersOp::create(b, loc, op.getBarriers());
  grid.erase();
}

/// `bar.sync kConsumerBarrier, threads`: the consumer warpgroups alone.
void consumerBarrier(OpBuilder &b, Location loc, int64_t threads) {
  Value id = arith::ConstantIntOp::create(b, loc, kConsumerBarrier, 32);
  Value count = arith::ConstantIntOp::create(b, loc, threads, 32);
  NVVM::BarrierOp::create(b, loc, Type(), id, count,
                          NVVM::BarrierReductionAttr(), Value());
}

/// Makes `op`'s stage index (`index`, a use of the K/V ring within the
/// work tile) a use of the CTA's ring: `base` + index.
template <typename Op>
void offsetUse(Op op, OpOperand &index, Value base) {
  OpBuilder b(op);
  index.set(arith::AddIOp::create(b, op.getLoc(), base, index.get()));
}

/// Whether the producer may compute `op` of the prologue again for its own
/// work tile: pure ops, and reads of kernel arguments (a document
/// variant's boundaries, searched in global memory) -- nothing that
/// touches what the consumers write.
bool recomputable(Operation *op) {
  return !op->walk([](Operation *inner) {
              bool ok = isa<memref::LoadOp>(inner) ||
                        inner->hasTrait<OpTrait::HasRecursiveMemoryEffects>() ||
                        isMemoryEffectFree(inner);
              return ok ? WalkResult::advance() : WalkResult::interrupt();
            })
              .wasInterrupted();
}

/// Whether every value `op` (or an op inside it) reads from `region`,
/// outside `op`, has a clone in `mapping`.
bool operandsMapped(Operation *op, Region &region, const IRMapping &mapping) {
  return !op->walk([&](Operation *inner) {
              for (Value v : inner->getOperands()) {
                Operation *owner = v.getParentRegion()->getParentOp();
                if (region.isAncestor(v.getParentRegion()) &&
                    !op->isAncestor(owner) && !mapping.contains(v))
                  return WalkResult::interrupt();
              }
              return WalkResult::advance();
            })
              .wasInterrupted();
}

/// A grid split by attn-nv-warp-specialize: the producer runs ahead
/// across work tiles (module comment).
LogicalResult makePersistentProducer(TileGridOp grid, WarpSpecializeOp split,
                                     ConfigAttr config) {
  Location loc = grid.getLoc();
  Block &gridBody = grid.getBodyBlock();
  if (split->getBlock() != &gridBody || split->getNextNode() != nullptr)
    return split.emitOpError("attn-nv-persistent: the warp_specialize must "
                             "end the grid's body");
  // The producer: constants and one loop of copies.
  Block &producer = split.getProducer().front();
  scf::ForOp copies;
  bool oneLoop = true;
  for (Operation &op : producer.without_terminator()) {
    if (auto loop = dyn_cast<scf::ForOp>(op))
      oneLoop &= !std::exchange(copies, loop);
    else
      oneLoop &= op.getNumRegions() == 0 && isMemoryEffectFree(&op);
  }
  if (!copies || !oneLoop)
    return split.emitOpError("attn-nv-persistent: the producer must be one "
                             "loop of copies (attn-nv-warp-specialize's)");
  // The prologue: buffers and barriers for the whole CTA; tile 0's copy
  // (the producer issues it now) goes; the rest runs per work tile in the
  // consumers (Q's copy; positions and the tile count, which the producer
  // recomputes), its last CTA barrier (after Q's wait) as theirs, the
  // others dropped (the barriers' init is done once).
  SmallVector<Operation *> shared, perTile, dropped;
  Operation *qBarrier = nullptr;
  for (Operation &op : llvm::make_range(gridBody.begin(), split->getIterator())) {
    if (isa<AllocSharedOp, AllocBarriersOp, InitBarriersOp>(op)) {
      shared.push_back(&op);
    } else if (isa<NVVM::Barrier0Op>(op)) {
      dropped.push_back(&op);
      qBarrier = &op;
    } else if (op.walk([](CopyTmaOp) { return WalkResult::interrupt(); })
                   .wasInterrupted()) {
      bool onlyCopies = true;
      op.walk([&](Operation *inner) {
        onlyCopies &= inner == &op ||
                      isa<CopyTmaOp, SlotOp, scf::YieldOp>(inner);
      });
      if (!onlyCopies)
        return op.emitOpError("attn-nv-persistent: tile 0's copies must stand "
                              "alone (the producer issues them)");
      dropped.push_back(&op);
    } else {
      perTile.push_back(&op);
    }
  }
  if (!qBarrier)
    return split.emitOpError("attn-nv-persistent: no prologue CTA barrier "
                             "(expected attn-nv-warp-specialize's form)");
  Value count = copies.getUpperBound();

  Shell shell = createShell(grid);
  for (Operation *op : shared)
    op->moveBefore(shell.body, shell.body->end());
  OpBuilder b = OpBuilder::atBlockEnd(shell.body);
  // Every thread sees the barriers initialized before either side uses
  // them; the rings' uses then run on across work tiles.
  NVVM::Barrier0Op::create(b, loc);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  split->moveBefore(shell.body, shell.body->end());

  // The producer: per work tile, the positions again (what it may
  // recompute: it shares no value with the consumers' tile), then tiles
  // 0 .. n - 1 of the tile into uses base + u.
  OpBuilder pb(copies);
  WorkTile tile;
  scf::ForOp produce = workLoop(pb, grid, config, shell, zero, tile);
  Block *produceBody = produce.getBody();
  IRMapping mapping;
  mapping.map(gridBody.getArgument(0), tile.batch);
  mapping.map(gridBody.getArgument(1), tile.head);
  mapping.map(gridBody.getArgument(2), tile.tile);
  pb.setInsertionPointToEnd(produceBody);
  for (Operation *op : perTile)
    if (recomputable(op) &&
        operandsMapped(op, *gridBody.getParent(), mapping))
      pb.clone(*op, mapping);
  copies->moveBefore(produceBody, produceBody->end());
  pb.setInsertionPoint(copies);
  copies.setLowerBound(arith::ConstantIndexOp::create(pb, loc, 0));
  Value base = produce.getRegionIterArg(0);
  WalkResult foreign = copies.walk([&](Operation *op) {
    for (OpOperand &operand : op->getOpOperands()) {
      if (Value to = mapping.lookupOrNull(operand.get())) {
        operand.set(to);
      } else if (gridBody.getParent()->isAncestor(
                     operand.get().getParentRegion())) {
        op->emitOpError("attn-nv-persistent: the producer reads a value "
                        "of the consumers' prologue that it cannot "
                        "recompute (side effects other than global reads)");
        return WalkResult::interrupt();
      }
    }
    if (auto copy = dyn_cast<CopyTmaOp>(op))
      offsetUse(copy, copy.getUseMutable(), base);
    else if (auto slot = dyn_cast<SlotOp>(op))
      offsetUse(slot, slot.getIndexMutable(), base);
    return WalkResult::advance();
  });
  if (foreign.wasInterrupted())
    return failure();
  pb.setInsertionPointToEnd(produceBody);
  Value produced = arith::AddIOp::create(pb, loc, base, copies.getUpperBound());
  scf::YieldOp::create(pb, loc, produced);

  // The consumers: per work tile, the prologue (Q's copy, its wait),
  // their barrier where the CTA barrier after Q's wait was, the loop and
  // the epilogue with the ring's uses offset by base, and their barrier
  // again: Q's buffer and the warpgroups' order are free for the next
  // tile.
  Block &consumers = split.getConsumers().front();
  Operation *consumersEnd = consumers.getTerminator();
  OpBuilder cb = OpBuilder::atBlockBegin(&consumers);
  scf::ForOp consume = workLoop(cb, grid, config, shell, zero, tile);
  Block *consumeBody = consume.getBody();
  gridBody.getArgument(0).replaceAllUsesWith(tile.batch);
  gridBody.getArgument(1).replaceAllUsesWith(tile.head);
  gridBody.getArgument(2).replaceAllUsesWith(tile.tile);
  int64_t threads = split.getConsumerThreads();
  bool placed = false;
  auto placeBarrier = [&] {
    cb.setInsertionPointToEnd(consumeBody);
    consumerBarrier(cb, loc, threads);
    placed = true;
  };
  for (Operation *op : perTile) {
    if (!placed && qBarrier->isBeforeInBlock(op))
      placeBarrier();
    op->moveBefore(consumeBody, consumeBody->end());
  }
  if (!placed)
    placeBarrier();
  consumeBody->getOperations().splice(
      consumeBody->end(), consumers.getOperations(),
      std::next(consume->getIterator()), consumersEnd->getIterator());
  base = consume.getRegionIterArg(0);
  consumeBody->walk([&](Operation *op) {
    if (auto wait = dyn_cast<WaitBarrierOp>(op))
      offsetUse(wait, wait.getUseMutable(), base);
    else if (auto arrive = dyn_cast<ArriveBarrierOp>(op))
      offsetUse(arrive, arrive.getUseMutable(), base);
    else if (auto slot = dyn_cast<SlotOp>(op))
      offsetUse(slot, slot.getIndexMutable(), base);
  });
  cb.setInsertionPointToEnd(consumeBody);
  consumerBarrier(cb, loc, threads);
  Value consumed = arith::AddIOp::create(cb, loc, base, count);
  scf::YieldOp::create(cb, loc, consumed);

  for (Operation *op : dropped)
    op->erase();
  grid.erase();
  // What only tile 0's copy or the producer's clones needed.
  IRRewriter rewriter(split.getContext());
  (void)runRegionDCE(rewriter, split->getRegions());
  return success();
}

LogicalResult makePersistent(TileGridOp grid, ConfigAttr config) {
  SmallVector<WarpSpecializeOp> splits;
  grid.walk([&](WarpSpecializeOp op) { splits.push_back(op); });
  if (splits.empty()) {
    makePersistentPlain(grid, config);
    return success();
  }
  if (splits.size() > 1)
    return splits[1].emitOpError("attn-nv-persistent: one warp_specialize "
                                 "a grid");
  return makePersistentProducer(grid, splits.front(), config);
}

struct AttnNVPersistentPass
    : nv::impl::AttnNVPersistentBase<AttnNVPersistentPass> {
  void runOnOperation() override {
    SmallVector<TileGridOp> grids;
    getOperation()->walk([&](TileGridOp grid) {
      ConfigAttr config = ConfigAttr::lookup(grid);
      if (config && !config.isHost() && config.getPersistent())
        grids.push_back(grid);
    });
    for (TileGridOp grid : grids)
      if (failed(makePersistent(grid, ConfigAttr::lookup(grid))))
        return signalPassFailure();
  }
};

} // namespace
