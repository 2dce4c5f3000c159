//===- Persist.cpp - a warp-specialized CTA loops over work tiles ---------===//
//
// Input (attn-nv-warp-specialize's form): the grid's body is
//
//   allocations, barrier inits, values of the work tile (%b, %h, %t)
//   copy_tma Q into %q, %qfull[0]               (thread 0)
//   nvvm.barrier0
//   scf.if (tiles) { copy_tma K/V tile 0 ... }  (thread 0)
//   wait_barrier %qfull[0]
//   attn_nv.warp_specialize consumers { K/V loop, epilogue }
//                           producer { tiles 1 .. n - 1 }
//
// Output: the body keeps the allocations, the inits (with a one-stage
// %qempty of one arrival per consumer warp) and the CTA barrier; each side
// loops over rounds r of G = gridDim.x work tiles, taking w = r·G + c
// (r even) or r·G + G - 1 - c (r odd) for CTA c while w < B·H·T, carrying
// (base, k): the K/V tiles and work tiles it has passed.
//
//   consumers: for r { if (w < B·H·T) { (%b, %h, %t) = work_tile w; the
//                      tile's values; wait_barrier %qfull[k]; K/V loop and
//                      epilogue with every stage use u as base + u;
//                      arrive_barrier %qempty[k] } }
//   producer:  for r { if (...) { ...; tile 0's copies (use base);
//                      copy_tma Q into %q, %qfull[k] after %qempty;
//                      tiles 1 .. n - 1 (base + u) } }
//
// Q's buffer holds the output for its TMA store (attn-nv-store-output-tma),
// which waits until the copy engine has read it: the consumers release Q's
// buffer after it. With one buffer (q_stages = 1) tile 0's copy comes before
// Q's, so it overlaps the epilogue of the work tile before. With two
// (q_stages = 2) Q's buffer, %qfull and %qempty get a stage dim, each side
// reads slot k of it, and the producer copies Q first: work tile k's Q waits
// only for work tile k - 2's store, so it loads while k - 1 computes. Then
// the store does not wait for its read either (no_wait): work tile k
// releases k - 1's buffer after its first K/V stage release
// (wait_stores_read, arrive_barrier %qempty[k - 1]), and the consumers wait
// for the last store after their loop.
//
//===----------------------------------------------------------------------===//

#include "attn/NVIDIA/Passes.h"

#include "RegisterSplit.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::attn::nv {
#define GEN_PASS_DEF_ATTNNVPERSIST
#include "attn/NVIDIA/Passes.h.inc"
} // namespace mlir::attn::nv

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::nv;

namespace {

/// The prologue's parts that become per work tile.
struct Prologue {
  WarpSpecializeOp split;
  CopyTmaOp qCopy;
  scf::IfOp firstTile;
  WaitBarrierOp qWait;
  /// Ops computing values of the work tile, in order (at most reading).
  SmallVector<Operation *> tileValues;
  /// The K/V tile count both sides loop to (the producer's loop bound).
  Value count;
};

/// Whether `op` and the ops in its regions at most read memory: then each
/// side can compute it again per work tile. Such reads are of captures (a
/// document mask's ids, kernel arguments the kernel never writes).
bool readsOnly(Operation *op) {
  std::optional<SmallVector<MemoryEffects::EffectInstance>> effects =
      getEffectsRecursively(op);
  return effects && llvm::all_of(*effects, [](const auto &effect) {
           return isa<MemoryEffects::Read>(effect.getEffect());
         });
}

FailureOr<Prologue> findPrologue(TileGridOp grid) {
  Prologue p;
  Block &body = grid.getBodyBlock();
  for (Operation &op : body)
    if (auto split = dyn_cast<WarpSpecializeOp>(op))
      p.split = split;
  if (!p.split)
    return grid.emitOpError("attn-nv-persist: no attn_nv.warp_specialize "
                            "(persistent needs warp_specialize)");
  DenseSet<Value> ofTile(body.getArguments().begin(),
                         body.getArguments().end());
  for (Operation &op : body) {
    if (&op == p.split.getOperation())
      break;
    if (auto copy = dyn_cast<CopyTmaOp>(op)) {
      if (p.qCopy)
        return copy.emitOpError("attn-nv-persist: a second copy in the "
                                "prologue (expected Q's alone)");
      p.qCopy = copy;
      continue;
    }
    if (auto branch = dyn_cast<scf::IfOp>(op);
        branch && !branch.getBody()->getOps<CopyTmaOp>().empty()) {
      if (p.firstTile)
        return branch.emitOpError("attn-nv-persist: a second branch of "
                                  "copies in the prologue");
      p.firstTile = branch;
      continue;
    }
    if (auto wait = dyn_cast<WaitBarrierOp>(op)) {
      if (!p.qCopy || wait.getBarriers() != p.qCopy.getBarriers())
        return wait.emitOpError("attn-nv-persist: the prologue's wait must "
                                "be Q's");
      p.qWait = wait;
      continue;
    }
    // An op depends on the work tile through its operands or through a
    // value its regions read (a document's key search is an scf.while).
    bool dependsOnTile =
        op.walk([&](Operation *inner) {
            return llvm::any_of(inner->getOperands(),
                                [&](Value v) { return ofTile.contains(v); })
                       ? WalkResult::interrupt()
                       : WalkResult::advance();
          }).wasInterrupted();
    if (!dependsOnTile)
      continue;
    if (!readsOnly(&op))
      return op.emitOpError("attn-nv-persist: a value of the work tile must "
                            "be computed by ops that at most read memory");
    p.tileValues.push_back(&op);
    ofTile.insert(op.result_begin(), op.result_end());
  }
  if (!p.qCopy || !p.qWait || !p.firstTile)
    return grid.emitOpError("attn-nv-persist: expected Q's copy_tma, tile "
                            "0's copies and Q's wait in the prologue");
  for (auto loop : p.split.getProducer().getOps<scf::ForOp>())
    p.count = loop.getUpperBound();
  if (!p.count)
    return p.split.emitOpError("attn-nv-persist: no K/V loop in the "
                               "producer region");
  return p;
}

/// Every K/V stage use under `root` (not Q's barriers) as base + use.
void offsetStageUses(Operation *root, Value base, Value qFull, Value qEmpty) {
  auto offset = [&](Operation *op, OpOperand &use) {
    OpBuilder b(op);
    use.set(arith::AddIOp::create(b, op->getLoc(), use.get(), base));
  };
  auto ofStages = [&](Value barriers) {
    return barriers != qFull && barriers != qEmpty;
  };
  root->walk([&](Operation *op) {
    if (auto o = dyn_cast<SlotOp>(op))
      offset(op, o.getIndexMutable());
    else if (auto o = dyn_cast<WaitBarrierOp>(op);
             o && ofStages(o.getBarriers()))
      offset(op, o.getUseMutable());
    else if (auto o = dyn_cast<ArriveBarrierOp>(op);
             o && ofStages(o.getBarriers()))
      offset(op, o.getUseMutable());
    else if (auto o = dyn_cast<CopyTmaOp>(op); o && ofStages(o.getBarriers()))
      offset(op, o.getUseMutable());
    else if (auto o = dyn_cast<WarpgroupTurnOp>(op)) {
      if (o.getTurn())
        offset(op, o.getTurnMutable()[0]);
    }
  });
}

/// Two Q buffers: work tile k's consumers release Q's buffer of work tile
/// k - 1 once their first QKᵀ retired (after the K/V loop's first release of
/// a K/V stage; after the loop when it ran no tile), waiting then for that
/// tile's output store to have read it -- not right after issuing the store,
/// where each warp stalled on it (ncu, the short batch: 5 % of the warps'
/// samples). Q's copy of work tile k + 1 still starts while k computes.
bool deferQRelease(Block &iteration, Value k, Value qFull, Value qEmpty,
                   Location loc) {
  StoreTmaOp store;
  scf::ForOp kvLoop;
  ArriveBarrierOp kRelease;
  for (Operation &op : iteration) {
    if (auto s = dyn_cast<StoreTmaOp>(op))
      store = s;
    auto loop = dyn_cast<scf::ForOp>(op);
    if (!loop || kvLoop)
      continue;
    for (auto arrive : loop.getBody()->getOps<ArriveBarrierOp>()) {
      if (arrive.getBarriers() == qFull || arrive.getBarriers() == qEmpty)
        continue;
      kvLoop = loop;
      kRelease = arrive;
      break;
    }
  }
  // Another shape (the loop's releases nested deeper, or no TMA store):
  // the caller releases right after the epilogue.
  if (!store || !kvLoop)
    return false;
  store.setNoWait(true);
  auto release = [&](OpBuilder &b, Location at) {
    Value one = arith::ConstantIndexOp::create(b, at, 1);
    Value previous = arith::SubIOp::create(b, at, k, one);
    WaitStoresReadOp::create(b, at);
    ArriveBarrierOp::create(b, at, qEmpty, previous);
    scf::YieldOp::create(b, at);
  };
  auto afterFirst = [&](OpBuilder &b, Value cond) {
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value notFirst =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, k, zero);
    cond = arith::AndIOp::create(b, loc, cond, notFirst);
    scf::IfOp::create(b, loc, cond, release);
  };
  OpBuilder b(kRelease);
  b.setInsertionPointAfter(kRelease);
  afterFirst(b, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                      kvLoop.getInductionVar(),
                                      kvLoop.getLowerBound()));
  b.setInsertionPointAfter(kvLoop);
  afterFirst(b, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                      kvLoop.getLowerBound(),
                                      kvLoop.getUpperBound()));
  return true;
}

LogicalResult persist(TileGridOp grid, ConfigAttr config) {
  FailureOr<Prologue> found = findPrologue(grid);
  if (failed(found))
    return failure();
  Prologue &p = *found;
  Location loc = grid.getLoc();
  Value qFull = p.qCopy.getBarriers();
  int64_t qStages = config.getQStages();
  Value qSingle = p.qCopy.getDest();
  auto qAlloc = qSingle.getDefiningOp<AllocSharedOp>();
  auto qTile = cast<SmemType>(qSingle.getType());
  if (qStages > 1) {
    if (!qAlloc || qTile.getRank() != 2)
      return p.qCopy.emitOpError("attn-nv-persist: q_stages = ")
             << qStages << " needs Q's buffer to be one tile's alloc_shared";
    qFull.setType(BarriersType::get(qFull.getContext(), qStages));
  }

  // Q's release: one arrival per consumer warp, initialized with Q's.
  auto qInit = llvm::find_if(qFull.getUsers(), [](Operation *user) {
    return isa<InitBarriersOp>(user);
  });
  if (qInit == qFull.getUsers().end())
    return p.qCopy.emitOpError("attn-nv-persist: Q's barrier is never "
                               "initialized");
  OpBuilder b(qFull.getDefiningOp());
  b.setInsertionPointAfter(qFull.getDefiningOp());
  Value qEmpty = AllocBarriersOp::create(b, loc, qFull.getType(),
                                         /*offset=*/IntegerAttr());
  b.setInsertionPointAfter(*qInit);
  InitBarriersOp::create(b, loc, qEmpty, config.getWarps());
  // Q's stages: each work tile k reads slot k (set up in loopOver).
  Value qStaged;
  if (qStages > 1) {
    OpBuilder ab(qAlloc);
    SmallVector<int64_t> shape{qStages};
    llvm::append_range(shape, qTile.getShape());
    qStaged = AllocSharedOp::create(ab, qAlloc.getLoc(),
                                    SmemType::get(qAlloc.getContext(), shape,
                                                  qTile.getElementType(),
                                                  qTile.getLayout()),
                                    /*offset=*/IntegerAttr());
  }

  // The work tiles, in rounds of G = gridDim.x: CTA c takes w = r·G + c in
  // even rounds and r·G + G - 1 - c in odd ones, so that along a grid
  // ordered longest first a CTA's long tiles pair with short ones (round
  // robin left causal @ 16k 1.5x the greedy launch's time, simulated and
  // measured: docs/BENCHMARKS.md version 34).
  b.setInsertionPoint(p.split);
  Type i32 = b.getI32Type(), index = b.getIndexType();
  auto toIndex = [&](Value v) {
    return arith::IndexCastUIOp::create(b, loc, index, v).getResult();
  };
  Value cta = toIndex(NVVM::BlockIdXOp::create(b, loc, i32));
  Value ctas = toIndex(NVVM::GridDimXOp::create(b, loc, i32));
  Value works = arith::MulIOp::create(b, loc, grid.getBatch(), grid.getHeads());
  works = arith::MulIOp::create(b, loc, works, grid.getQueryTiles());
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value rounds = arith::CeilDivUIOp::create(b, loc, works, ctas);
  Value last = arith::SubIOp::create(b, loc, ctas, one);
  Value mirrored = arith::SubIOp::create(b, loc, last, cta);

  // Wraps `region`'s ops in the loop over work tiles; `head` adds what
  // comes before them in a work tile (after the tile's values), `tail`
  // what comes after.
  auto loopOver = [&](Region &region,
                      function_ref<void(OpBuilder &, IRMapping &, Value)> head,
                      function_ref<void(OpBuilder &, Value)> tail) {
    Block &block = region.front();
    Operation *terminator = block.getTerminator();
    OpBuilder lb(&block, block.begin());
    auto loop =
        scf::ForOp::create(lb, loc, zero, rounds, one, ValueRange{zero, zero});
    Value base = loop.getRegionIterArg(0), k = loop.getRegionIterArg(1);
    OpBuilder rb = OpBuilder::atBlockBegin(loop.getBody());
    Value round = loop.getInductionVar();
    Value parity = arith::AndIOp::create(rb, loc, round, one);
    Value odd =
        arith::CmpIOp::create(rb, loc, arith::CmpIPredicate::ne, parity, zero);
    Value place = arith::SelectOp::create(rb, loc, odd, mirrored, cta);
    Value w = arith::MulIOp::create(rb, loc, round, ctas);
    w = arith::AddIOp::create(rb, loc, w, place);
    Value inGrid =
        arith::CmpIOp::create(rb, loc, arith::CmpIPredicate::ult, w, works);
    auto work = scf::IfOp::create(rb, loc, TypeRange{index, index}, inGrid,
                                  /*withElseRegion=*/true);
    scf::YieldOp::create(rb, loc, work.getResults());
    OpBuilder skip = work.getElseBodyBuilder();
    scf::YieldOp::create(skip, loc, ValueRange{base, k});
    Block *iteration = work.thenBlock();
    iteration->getOperations().splice(iteration->end(), block.getOperations(),
                                      std::next(loop->getIterator()),
                                      terminator->getIterator());
    OpBuilder ib(iteration, iteration->begin());
    auto tile =
        WorkTileOp::create(ib, loc, index, index, index, w, grid.getBatch(),
                           grid.getHeads(), grid.getQueryTiles());
    IRMapping mapping;
    mapping.map(grid.getBatchIndex(), tile.getBatch());
    mapping.map(grid.getHeadIndex(), tile.getHead());
    mapping.map(grid.getTileIndex(), tile.getTile());
    for (Operation *op : p.tileValues)
      ib.clone(*op, mapping);
    // The moved ops read the clones.
    Operation *workOp = work;
    for (const auto &pair : mapping.getValueMap()) {
      Value from = pair.first;
      from.replaceUsesWithIf(pair.second, [workOp](OpOperand &use) {
        return workOp->isProperAncestor(use.getOwner());
      });
    }
    head(ib, mapping, k);
    offsetStageUses(work, base, qFull, qEmpty);
    if (qStaged) {
      OpBuilder sb(iteration, iteration->begin());
      Value slot = SlotOp::create(sb, loc, qTile, qStaged, k);
      qSingle.replaceUsesWithIf(slot, [workOp](OpOperand &use) {
        return workOp->isProperAncestor(use.getOwner());
      });
    }
    OpBuilder eb = OpBuilder::atBlockEnd(iteration);
    tail(eb, k);
    Value n = mapping.lookupOrDefault(p.count);
    Value nextBase = arith::AddIOp::create(eb, loc, base, n);
    Value nextK = arith::AddIOp::create(eb, loc, k, one);
    scf::YieldOp::create(eb, loc, ValueRange{nextBase, nextK});
  };

  // Consumers: wait for Q; at the end release its buffer (with two, in the
  // next work tile: deferQRelease).
  bool deferred = false;
  loopOver(
      p.split.getConsumers(),
      [&](OpBuilder &ib, IRMapping &, Value k) {
        WaitBarrierOp::create(ib, loc, qFull, k);
      },
      [&](OpBuilder &eb, Value k) {
        deferred =
            qStages > 1 && deferQRelease(*eb.getBlock(), k, qFull, qEmpty, loc);
        if (!deferred)
          ArriveBarrierOp::create(eb, loc, qEmpty, k);
      });
  if (deferred) {
    // The last work tile's store reads its buffer before the CTA ends.
    Block &consumers = p.split.getConsumers().front();
    OpBuilder eb(&consumers, std::next(consumers.begin()));
    WaitStoresReadOp::create(eb, loc);
  }
  // Producer: tile 0 (its use offset with the rest) and Q after its
  // release -- Q first when it has two buffers, whose release is a work tile
  // older -- then the loop of tiles 1 .. n - 1.
  loopOver(
      p.split.getProducer(),
      [&](OpBuilder &ib, IRMapping &mapping, Value k) {
        auto copyQ = [&] {
          auto q = cast<CopyTmaOp>(ib.clone(*p.qCopy, mapping));
          q.getUseMutable().assign(k);
          q.getEmptyMutable().assign(qEmpty);
          q.setSingleThread(true);
        };
        if (qStages > 1)
          copyQ();
        Operation *tile0 = ib.clone(*p.firstTile, mapping);
        tile0->walk([](CopyTmaOp copy) { copy.setSingleThread(true); });
        if (qStages == 1)
          copyQ();
      },
      [](OpBuilder &, Value) {});

  // A search per work tile (a loop that reads memory: a document mask's key
  // range) now runs in the producer too: give it the registers for it.
  if (llvm::any_of(p.tileValues, [](Operation *op) {
        return op->getNumRegions() != 0 && !isMemoryEffectFree(op);
      })) {
    int64_t groups = (p.split.getConsumerThreads() + kWarpgroupThreads - 1) /
                     kWarpgroupThreads;
    RegisterSplit registers = registerSplit(groups, /*producerSearches=*/true);
    p.split.setConsumerRegisters(registers.consumer);
    p.split.setProducerRegisters(registers.producer);
  }

  // The prologue keeps what runs once a CTA.
  p.qWait->erase();
  p.firstTile->erase();
  p.qCopy->erase();
  for (Operation *op : llvm::reverse(p.tileValues)) {
    if (!op->use_empty())
      return op->emitOpError("attn-nv-persist: a value of the work tile is "
                             "read outside the two sides");
    op->erase();
  }
  if (qStaged) {
    if (!qSingle.use_empty())
      return qAlloc.emitOpError("attn-nv-persist: Q's buffer is read "
                                "outside the two sides");
    qAlloc->erase();
  }
  return success();
}

struct AttnNVPersistPass
    : mlir::attn::nv::impl::AttnNVPersistBase<AttnNVPersistPass> {
  void runOnOperation() override {
    SmallVector<TileGridOp> grids;
    getOperation()->walk([&](TileGridOp grid) { grids.push_back(grid); });
    for (TileGridOp grid : grids) {
      ConfigAttr config = ConfigAttr::lookup(grid);
      if (!config || !config.getPersistent())
        continue;
      if (failed(persist(grid, config)))
        return signalPassFailure();
    }
  }
};

} // namespace
