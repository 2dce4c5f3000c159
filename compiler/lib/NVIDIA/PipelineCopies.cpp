//===- PipelineCopies.cpp - K/V copies tiles ahead, multi-buffered --------===//
//
// Input (attn-nv-assign-layouts): every copy followed by its own commit,
// wait, fence and barrier, and a barrier ending the K/V loop's body. A
// copy's position in the loop follows from the induction variable (the K/V
// tile at it, or the backward's (head, query tile) pair decoded from it);
// the prefetch recomputes it for the next iteration. The barriers and fence
// around an attn_nv.store_shared (the atomic backward's dSᵀ) are not the
// copies' and stay where they are.
// Output, with S = stages and the loop counting tiles (kv = lo + it · step):
//
//   copy Q; commit
//   if (lo < hi) copy K, V (lo) -> stage 0;  commit
//   [plain: wait 1 (Q done); fence; barrier; Q -> registers]
//   for it:
//     mma.sync:  if (kv + step < hi) copy K, V (kv + step) -> stage it + 1
//                commit; wait 1; fence; barrier
//     wgmma:     wait 0; fence; barrier
//                [the body's first product (QKᵀ), issued]
//                if (kv + step < hi) copy K, V (kv + step) -> stage it + 1
//                commit
//     ... products read stage it ...
//     [S = 2, unless wgmma with the plain schedule: barrier]
//
// The wgmma plain schedule over cp.async copies S - 1 tiles ahead instead
// of one (A = S - 1: the prologue issues tiles 0 .. A - 1, a group each;
// the header waits with A - 1 groups pending; the loop copies tile
// it + A): it leaves no product in flight past an iteration, so the stage
// of tile it + S - 1, last read by iteration it - 1, is free once every
// thread passed the barrier of iteration it. A decode kernel (packed GQA
// heads over a paged cache, TilePolicy) then keeps two K/V tiles in
// flight, where one tile ahead leaves nothing in flight from a tile's
// arrival until the next tile's copies are issued.
//
// The stage a prefetch overwrites was read by iteration it + 1 - S. With
// three stages every thread finished that before the barrier of iteration
// it - 1 (mma.sync) or it (wgmma: a product left in flight from iteration
// it - 1 by the pipelined schedules is retired before the barrier of
// iteration it), so one barrier per tile suffices. With two stages a second
// barrier ends the tile, except where the prefetch follows this iteration's
// barrier and no product stays in flight across it (wgmma, plain schedule).
//
// wgmma kernels issue the copies behind QKᵀ so that their address
// arithmetic (a few instructions per 16-byte chunk) overlaps the tensor
// cores rather than delaying the product.
//
// In a kernel whose loop is bound by registers (the backward's,
// RegisterBound.h) the loop's cp.async copies are `strided` (their
// addresses derived in the loop, not hoisted out of it); the prologue's and
// the forward's are not.
//
// With `tma` the loop's copies are bulk tensor copies (attn_nv.copy_tma)
// from the kernel's tensor maps, which this pass appends to the function
// (KernelABI.h's kTensorMaps), each stage of K and of V with two mbarriers:
// "full" (the copy's bytes arrived) and "empty" (every warp released it).
// Both are initialized before the first copy (then a barrier). Q's tile is
// a bulk copy too, on a barrier of its own, issued before that barrier and
// waited for once before the loop, where Q's map describes it (a whole
// tile of Q's rows; packed heads and sequences keep Q's cp.async, waited
// for there with a fence and a barrier). The header
// waits on the full barriers of tile it only; each warp arrives on the
// empty barrier of a stage after the wgmma wait that retired its product
// reading it (attn-nv-pipeline-wgmma moves P·V's release to the wait that
// retires P·V when it leaves it in flight), and the copy into a stage
// first waits (thread 0) for the release of the tile it held. No CTA
// barrier per tile: the warpgroups are coupled only through the stages.
// The copy of tile it + 1, issued before this iteration's QKᵀ wait, waits
// for tile it + 1 - S: released by then with S >= 2 when products are
// waited for at once, S >= 3 when P·V stays in flight one iteration (which
// #attn.config requires of the pipelined schedules). A packed batch's
// copies, bounded by their sequence's end, take the ragged maps
// (KernelABI.h's TensorMapForm), whose zero fill starts at that end.
//
//===----------------------------------------------------------------------===//

#include "attn/NVIDIA/Passes.h"

#include "RegisterBound.h"
#include "TensorRows.h"

#include "attn/Compiler/KernelABI.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/MapVector.h"

#include <functional>

namespace mlir::attn::nv {
#define GEN_PASS_DEF_ATTNNVPIPELINECOPIES
#include "attn/NVIDIA/Passes.h.inc"
} // namespace mlir::attn::nv

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::nv;

namespace {

/// The barrier before an attn_nv.store_shared and the proxy fence and
/// barrier after it (the backward's dSᵀ buffer, toSharedLhs in
/// attn-nv-assign-layouts) order that buffer's writes and wgmma's reads,
/// not copies: they stay.
bool guardsSharedStore(Operation *op) {
  Operation *prev = op->getPrevNode();
  if (isa<NVVM::Barrier0Op>(op) &&
      isa_and_present<StoreSharedOp>(op->getNextNode()))
    return true;
  if (isa<NVVM::FenceProxyOp>(op))
    return isa_and_present<StoreSharedOp>(prev);
  return isa<NVVM::Barrier0Op>(op) && isa_and_present<NVVM::FenceProxyOp>(prev) &&
         isa_and_present<StoreSharedOp>(prev->getPrevNode());
}

bool isCopySync(Operation *op) {
  return isa<NVVM::CpAsyncCommitGroupOp, NVVM::CpAsyncWaitGroupOp,
             NVVM::FenceProxyOp, NVVM::Barrier0Op>(op) &&
         !guardsSharedStore(op);
}

void eraseCopySync(Block &block, Operation *stopAt = nullptr) {
  SmallVector<Operation *> dead;
  for (Operation &op : block) {
    if (&op == stopAt)
      break;
    if (isCopySync(&op))
      dead.push_back(&op);
  }
  for (Operation *op : dead)
    op->erase();
}

struct Pipeliner {
  ConfigAttr config;
  TileGridOp grid;
  /// Set by addTensorMaps: the maps are KernelABI.h's ragged form, the
  /// copies bounded by their sequence's end in a packed (1, H, N, D) batch.
  bool ragged = false;

  LogicalResult run();

private:
  /// Appends the tensor maps of the loop's copies to the kernel function
  /// (KernelABI.h's kTensorMaps, in that order) and sets `ragged`; a copy
  /// TMA cannot make (a source that is not K or V, packed heads, a paged
  /// cache, a bound other than the tensor's rows in a batched view, copies
  /// of both map forms) is a diagnostic.
  LogicalResult addTensorMaps(ArrayRef<CopyAsyncOp> copies,
                              llvm::DenseMap<Value, Value> &maps);

  /// Q's copy before the loop when a tensor map can make it: a whole tile
  /// of Q's own rows (bounded by Nq, no packed heads or sequence start)
  /// into a swizzled buffer; null otherwise (it stays cp.async).
  CopyAsyncOp queryCopyForTma(Block &gridBody, scf::ForOp loop);

  /// Each warp releases use `it` of a staged buffer (its empty barriers)
  /// after the wait that retires each product of `body` reading it.
  LogicalResult releaseStages(Block &body,
                              const llvm::MapVector<Value, Value> &empties,
                              Value it);

  void waitAndBarrier(OpBuilder &b, Location loc, int64_t pending) {
    NVVM::CpAsyncWaitGroupOp::create(b, loc, pending);
    if (config.isWgmma())
      NVVM::FenceProxyOp::create(
          b, loc, NVVM::ProxyKind::async_shared,
          NVVM::SharedSpaceAttr::get(b.getContext(),
                                     NVVM::SharedSpace::shared_cta));
    NVVM::Barrier0Op::create(b, loc);
  }
};

LogicalResult Pipeliner::run() {
  Block &gridBody = grid.getBodyBlock();
  scf::ForOp loop;
  for (auto f : gridBody.getOps<scf::ForOp>()) {
    if (f.getBody()->getOps<CopyAsyncOp>().empty())
      continue;
    if (loop)
      return grid.emitOpError("attn-nv-pipeline-copies: more than one loop "
                              "copies tiles; only one K/V loop is pipelined");
    loop = f;
  }
  if (!loop)
    return success(); // nothing copied in a loop: nothing to pipeline
  if (loop.getNumRegionIterArgs() != loop.getNumResults())
    return loop.emitOpError("attn-nv-pipeline-copies: unexpected loop form");
  int64_t stages = config.getStages();
  bool pipelined = config.getSchedule() != "plain";
  Location loc = loop.getLoc();
  MLIRContext *ctx = grid.getContext();

  SmallVector<CopyAsyncOp> kvCopies =
      llvm::to_vector(loop.getBody()->getOps<CopyAsyncOp>());
  // A copy's position must follow from the induction variable alone (the
  // K/V tile at it; the backward's (head, query tile) pair decoded from
  // it): pure ops of the body, or values from outside the loop, so that
  // the prefetch can compute the next iteration's.
  Value iv = loop.getInductionVar();
  std::function<bool(Value)> fromInduction = [&](Value v) {
    if (v == iv)
      return true;
    if (auto arg = dyn_cast<BlockArgument>(v))
      return !loop->isAncestor(arg.getOwner()->getParentOp());
    Operation *def = v.getDefiningOp();
    if (!loop->isProperAncestor(def))
      return true;
    return def->getNumRegions() == 0 && isMemoryEffectFree(def) &&
           llvm::all_of(def->getOperands(), fromInduction);
  };
  // A captured table's score tiles (attn-nv-stage-tables) are staged with
  // them.
  SmallVector<CopyTableAsyncOp> tableCopies =
      llvm::to_vector(loop.getBody()->getOps<CopyTableAsyncOp>());
  SmallVector<Operation *> copies;
  llvm::append_range(copies, kvCopies);
  llvm::append_range(copies, tableCopies);
  auto destOf = [](Operation *copy) -> Value {
    if (auto table = dyn_cast<CopyTableAsyncOp>(copy))
      return table.getDest();
    return cast<CopyAsyncOp>(copy).getDest();
  };
  for (Operation *copy : copies)
    if (!llvm::all_of(copy->getOperands(), [&](Value v) {
          return v == destOf(copy) || fromInduction(v);
        }))
      return copy->emitOpError("attn-nv-pipeline-copies: the position of a "
                               "tile copied in the loop must follow from the "
                               "induction variable");
  bool tma = config.getTma();
  // With TMA, stages released by per-warp empty barriers; otherwise by a
  // CTA barrier per tile, as cp.async's are.
  bool emptyBarriers = tma && !config.getBarrierPerTile();
  // A table's copies stay cp.async: with a CTA barrier per tile they join
  // it (their group waited for before it, their stage refilled after it);
  // per-warp empty mbarriers would not cover them.
  if (emptyBarriers && !tableCopies.empty())
    return tableCopies.front().emitOpError(
        "attn-nv-pipeline-copies: a table's copies (cp.async) do not join the "
        "empty mbarriers of a TMA kernel's stages (no barrier_per_tile)");
  // Tiles the copies run ahead (the header above).
  int64_t ahead = config.isWgmma() && !pipelined && !tma ? stages - 1 : 1;
  llvm::DenseMap<Value, Value> tensorMaps; // source argument -> its map
  if (tma && failed(addTensorMaps(kvCopies, tensorMaps)))
    return failure();
  CopyAsyncOp queryCopy = tma ? queryCopyForTma(gridBody, loop) : nullptr;
  for (CopyAsyncOp copy : kvCopies)
    if (copy.getTransposed() && (!tma || ragged))
      return copy.emitOpError("attn-nv-pipeline-copies: a transposed tile "
                              "(8-bit P·V's V) is copied by a transposed "
                              "TMA map, which needs a TMA kernel that is not "
                              "variable-length");
  // The synchronous form goes; this pass writes the schedule.
  eraseCopySync(gridBody, loop);
  eraseCopySync(*loop.getBody());
  SmallVector<LoadOperandOp> registerLoads =
      llvm::to_vector(gridBody.getOps<LoadOperandOp>());

  // Staged buffers for the copies of the loop (with TMA, their barriers).
  llvm::MapVector<Value, Value> staged; // one-tile buffer -> S stages
  llvm::MapVector<Value, Value> barriers; // one-tile buffer -> S barriers
  llvm::MapVector<Value, Value> empties;  // ... -> S release barriers
  for (Operation *copy : copies) {
    auto alloc = destOf(copy).getDefiningOp<AllocSharedOp>();
    if (!alloc)
      return copy->emitOpError("attn-nv-pipeline-copies: destination must be "
                               "an attn_nv.alloc_shared buffer");
    auto type = cast<SmemType>(alloc.getType());
    SmallVector<int64_t> shape = {stages};
    llvm::append_range(shape, type.getShape());
    OpBuilder b(alloc);
    staged[alloc] = AllocSharedOp::create(
        b, alloc.getLoc(),
        SmemType::get(ctx, shape, type.getElementType(), type.getLayout()),
        IntegerAttr());
    // TMA's tiles complete on mbarriers; a table's cp.async on its group.
    bool bulk = tma && isa<CopyAsyncOp>(copy);
    if (bulk)
      barriers[alloc] = AllocBarriersOp::create(
          b, alloc.getLoc(), BarriersType::get(ctx, stages), IntegerAttr());
    if (emptyBarriers && bulk)
      empties[alloc] = AllocBarriersOp::create(
          b, alloc.getLoc(), BarriersType::get(ctx, stages), IntegerAttr());
  }
  // Q's barrier after the stages' (buffers are placed in this order: no
  // swizzled buffer's 1024-byte alignment follows it).
  Value queryBarrier;
  if (queryCopy) {
    Value last = !empties.empty()    ? empties.back().second
                 : !barriers.empty() ? barriers.back().second
                                     : staged.back().second;
    OpBuilder qb(ctx);
    qb.setInsertionPointAfterValue(last);
    queryBarrier = AllocBarriersOp::create(qb, loc, BarriersType::get(ctx, 1),
                                           IntegerAttr());
  }

  // Tile count, then the prologue: Q's group, the first K/V tile's group.
  OpBuilder b(loop);
  Value lo = loop.getLowerBound(), hi = loop.getUpperBound(),
        step = loop.getStep();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  // Ragged maps' coordinates need each source's rows N.
  llvm::DenseMap<Value, Value> rowsOf;
  if (ragged)
    for (CopyAsyncOp copy : kvCopies)
      if (!rowsOf.count(copy.getSource()))
        rowsOf[copy.getSource()] =
            memref::DimOp::create(b, loc, copy.getSource(), 2);
  if (!queryCopy)
    NVVM::CpAsyncCommitGroupOp::create(b, loc); // Q (copied above)
  // The copies of the iteration whose induction value is `at`: their
  // position recomputed from it (a clone of what the body computes; the
  // body may already have moved into the new loop).
  Operation *newLoopOp = nullptr;
  auto inBody = [&](Operation *def) {
    return loop->isProperAncestor(def) ||
           (newLoopOp && newLoopOp->isProperAncestor(def));
  };
  // A loop bound by registers takes the strided form of its cp.async copies
  // (attn_nv.copy_async's `strided`), whose addresses stay in the loop. The
  // forward's keep hoisted per-chunk addresses, which cost it no spill and
  // ran 3-7 % faster (H200, mma.sync, D = 128; BENCHMARKS version 49);
  // copies before a loop take them too (the paged wgmma kernel's Q spilled
  // 16 bytes strided).
  bool stridedInLoop =
      loopBoundByRegisters(grid->getParentOfType<FunctionOpInterface>());
  auto issue = [&](OpBuilder &ib, Value at, Value stage, bool inLoop) {
    IRMapping mapping;
    mapping.map(iv, at);
    std::function<Value(Value)> valueAt = [&](Value v) -> Value {
      if (Value mapped = mapping.lookupOrNull(v))
        return mapped;
      Operation *def = v.getDefiningOp();
      if (!def || !inBody(def))
        return v;
      for (Value operand : def->getOperands())
        valueAt(operand);
      return ib.clone(*def, mapping)
          ->getResult(cast<OpResult>(v).getResultNumber());
    };
    for (CopyAsyncOp copy : kvCopies) {
      Value slot = SlotOp::create(
          ib, loc, cast<SmemType>(copy.getDest().getType()),
          staged[copy.getDest()], stage);
      // One statement each: the IR's order must not depend on the order in
      // which the C++ compiler evaluates arguments.
      Value batch = valueAt(copy.getBatch());
      Value head = valueAt(copy.getHead());
      Value row = valueAt(copy.getRow());
      Value bound = valueAt(copy.getBound());
      if (tma) {
        // Ragged maps: the tile at (row + N - end, head, end) (KernelABI.h).
        if (ragged) {
          Value rows = rowsOf.lookup(copy.getSource());
          Value shifted = arith::AddIOp::create(ib, loc, row, rows);
          row = arith::SubIOp::create(ib, loc, shifted, bound);
          batch = bound;
        }
        CopyTmaOp::create(ib, loc, tensorMaps.lookup(copy.getSource()), batch,
                          head, row, slot, barriers[copy.getDest()], stage,
                          empties.lookup(copy.getDest()),
                          /*single_thread=*/false, copy.getTransposed());
        continue;
      }
      Value rowsPerHead =
          copy.getRowsPerHead() ? valueAt(copy.getRowsPerHead()) : Value();
      auto next =
          CopyAsyncOp::create(ib, loc, copy.getSource(), batch, head, row,
                              bound, rowsPerHead, slot, copy.getPages());
      if (inLoop && stridedInLoop && !rowsPerHead && !copy.getPages())
        next.setStrided(true);
    }
    for (CopyTableAsyncOp copy : tableCopies) {
      Value slot = SlotOp::create(
          ib, loc, cast<SmemType>(copy.getDest().getType()),
          staged[copy.getDest()], stage);
      Value row = valueAt(copy.getRow());
      Value col = valueAt(copy.getCol());
      Value rows = valueAt(copy.getRows());
      Value cols = valueAt(copy.getCols());
      CopyTableAsyncOp::create(ib, loc, copy.getSource(), row, col, rows, cols,
                               slot);
    }
  };
  if (tma) {
    // Thread 0 initializes them; every thread may wait once past this.
    for (auto [single, bars] : barriers)
      InitBarriersOp::create(b, loc, bars);
    // One arrival per warp releases a stage.
    for (auto [single, bars] : empties)
      InitBarriersOp::create(b, loc, bars, config.getWarps());
    // Q's tile goes first, on a barrier of its own.
    if (queryCopy) {
      InitBarriersOp::create(b, loc, queryBarrier);
      CopyTmaOp::create(b, loc, tensorMaps.lookup(queryCopy.getSource()),
                        queryCopy.getBatch(), queryCopy.getHead(),
                        queryCopy.getRow(), queryCopy.getDest(), queryBarrier,
                        zero);
      queryCopy->erase();
    }
    NVVM::Barrier0Op::create(b, loc);
  }
  // The copies of tile `at` into `stage` when it is a tile (< hi), then
  // (cp.async, a table's with TMA) their group, empty or not: the waits
  // count groups.
  auto issueGroup = [&](OpBuilder &gb, Value at, Value stage, bool inLoop) {
    Value any =
        arith::CmpIOp::create(gb, loc, arith::CmpIPredicate::slt, at, hi);
    scf::IfOp::create(gb, loc, any, [&](OpBuilder &ib, Location il) {
      issue(ib, at, stage, inLoop);
      scf::YieldOp::create(ib, il);
    });
    if (!tma || !tableCopies.empty())
      NVVM::CpAsyncCommitGroupOp::create(gb, loc);
  };
  Value at = lo;
  for (int64_t t = 0; t < ahead; ++t) {
    Value stage = zero;
    if (t > 0) {
      at = arith::AddIOp::create(b, loc, at, step);
      stage = arith::ConstantIndexOp::create(b, loc, t);
    }
    issueGroup(b, at, stage, /*inLoop=*/false);
  }
  if (queryBarrier) {
    // Every thread waits for Q here, whether or not it reads it: the
    // output's store may reuse its buffer (attn-nv-store-output-tma).
    WaitBarrierOp::create(b, loc, queryBarrier, zero);
  } else if (!pipelined || tma) {
    // Q is done when at most the first K/V groups are in flight (with TMA
    // Q's is the only group, and this is the only wait for it).
    waitAndBarrier(b, loc, tma ? 0 : ahead);
    for (LoadOperandOp load : registerLoads)
      load->moveBefore(b.getInsertionBlock(), b.getInsertionPoint());
  }

  // The loop over tile indices.
  Value span = arith::SubIOp::create(b, loc, hi, lo);
  Value iters = arith::CeilDivSIOp::create(b, loc, span, step);
  iters = arith::MaxSIOp::create(b, loc, iters, zero);
  auto newLoop =
      scf::ForOp::create(b, loc, zero, iters, one, loop.getInitArgs());
  newLoopOp = newLoop;
  Block *body = newLoop.getBody();
  OpBuilder nb = OpBuilder::atBlockBegin(body);
  Value it = newLoop.getInductionVar();
  Value kv = arith::AddIOp::create(nb, loc, lo,
                                   arith::MulIOp::create(nb, loc, it, step));
  Value next, nextIt;
  if (ahead == 1) {
    next = arith::AddIOp::create(nb, loc, kv, step);
    nextIt = arith::AddIOp::create(nb, loc, it, one);
  } else {
    Value aheadIndex = arith::ConstantIndexOp::create(nb, loc, ahead);
    next = arith::AddIOp::create(
        nb, loc, kv, arith::MulIOp::create(nb, loc, step, aheadIndex));
    nextIt = arith::AddIOp::create(nb, loc, it, aheadIndex);
  }
  auto prefetch = [&]() { issueGroup(nb, next, nextIt, /*inLoop=*/true); };
  // Copies behind QKᵀ (wgmma) or before the wait (mma.sync): header.
  bool behindProduct = config.isWgmma();
  if (tma) {
    for (auto [single, bars] : barriers)
      WaitBarrierOp::create(nb, loc, bars, it);
    if (!emptyBarriers)
      waitAndBarrier(nb, loc, 0);
  } else if (behindProduct) {
    waitAndBarrier(nb, loc, ahead - 1);
  } else {
    prefetch();
    waitAndBarrier(nb, loc, 1);
  }
  // The products read this iteration's stage.
  llvm::MapVector<Value, Value> slots;
  for (auto [single, buffer] : staged)
    slots[single] = SlotOp::create(nb, loc, cast<SmemType>(single.getType()),
                                   buffer, it);

  // Move the old body over.
  Block *old = loop.getBody();
  body->getOperations().splice(nb.getInsertionPoint(), old->getOperations(),
                               old->begin(), std::prev(old->end()));
  if (behindProduct) {
    auto products = body->getOps<WgmmaOp>();
    if (!products.empty())
      nb.setInsertionPointAfter(*products.begin());
    prefetch();
  }
  if (emptyBarriers && failed(releaseStages(*body, empties, it)))
    return failure();
  auto oldYield = cast<scf::YieldOp>(old->getTerminator());
  OpBuilder yb = OpBuilder::atBlockEnd(body);
  // The second barrier of two stages: header.
  if (stages < 3 && !(behindProduct && !pipelined) && !emptyBarriers)
    NVVM::Barrier0Op::create(yb, loc);
  scf::YieldOp::create(yb, loc, oldYield.getOperands());
  loop.getInductionVar().replaceAllUsesWith(kv);
  for (auto [oldArg, newArg] :
       llvm::zip(loop.getRegionIterArgs(), newLoop.getRegionIterArgs()))
    oldArg.replaceAllUsesWith(newArg);
  for (Operation *copy : copies)
    copy->erase();
  for (auto [single, buffer] : staged) {
    single.replaceUsesWithIf(slots[single], [&](OpOperand &use) {
      return newLoop->isProperAncestor(use.getOwner());
    });
  }
  loop.replaceAllUsesWith(newLoop.getResults());
  loop.erase();
  for (auto [single, buffer] : staged)
    if (single.use_empty())
      single.getDefiningOp()->erase();
  return success();
}

LogicalResult
Pipeliner::releaseStages(Block &body,
                         const llvm::MapVector<Value, Value> &empties,
                         Value it) {
  // One arrival per warp and use: after the wait of the last product that
  // reads the stage (the backward reads Q and dO twice a step; wgmma groups
  // retire in order, so the earlier readers are done by then).
  llvm::MapVector<Value, WgmmaWaitOp> lastReads;
  for (WgmmaOp product : llvm::to_vector(body.getOps<WgmmaOp>())) {
    for (Value operand : {Value(product.getLhs()), Value(product.getRhs())}) {
      Value empty = empties.lookup(operand);
      if (!empty)
        continue;
      auto wait = product->hasOneUse()
                      ? dyn_cast<WgmmaWaitOp>(*product->user_begin())
                      : WgmmaWaitOp();
      if (!wait || wait->getBlock() != &body)
        return product.emitOpError(
            "attn-nv-pipeline-copies: a product reading a TMA stage must be "
            "followed by its own wait (the stage is released after it)");
      WgmmaWaitOp &last = lastReads[empty];
      if (!last || last->isBeforeInBlock(wait))
        last = wait;
    }
  }
  for (auto [empty, wait] : lastReads) {
    OpBuilder b(wait->getContext());
    b.setInsertionPointAfter(wait);
    ArriveBarrierOp::create(b, wait.getLoc(), empty, it);
  }
  return success();
}

/// Whether `fn` is a kernel of the backward (its maps are
/// kBackwardTensorMaps).
static bool isBackwardKernel(func::FuncOp fn) {
  return fn && ::attn::abi::isBackwardKernel(fn.getName());
}

CopyAsyncOp Pipeliner::queryCopyForTma(Block &gridBody, scf::ForOp loop) {
  auto fn = grid->getParentOfType<func::FuncOp>();
  // The backward's maps have boxes of block_n rows: its tiles before the
  // loop stay cp.async.
  if (!fn || fn.getNumArguments() == 0 || isBackwardKernel(fn))
    return nullptr;
  Value q = fn.getArgument(0);
  for (auto copy : gridBody.getOps<CopyAsyncOp>()) {
    if (copy.getSource() != q || !copy->isBeforeInBlock(loop))
      continue;
    auto dest = cast<SmemType>(copy.getDest().getType());
    if (rowsOf(copy.getBound()) == q && !copy.getRowsPerHead() &&
        !copy.getStart() &&
        !copy.getPages() && !copy.getTransposed() && dest.getRank() == 2 &&
        dest.getLayout() == SharedLayout::Swizzle128B &&
        dest.getRows() <= kMaxTmaBoxRows &&
        copy.getDest().getDefiningOp<AllocSharedOp>())
      return copy;
  }
  return nullptr;
}

LogicalResult Pipeliner::addTensorMaps(ArrayRef<CopyAsyncOp> copies,
                                       llvm::DenseMap<Value, Value> &maps) {
  namespace abi = ::attn::abi;
  auto fn = grid->getParentOfType<func::FuncOp>();
  // The forward's loop reads K and V; the backward's either K and V or Q
  // and dO, all of them mapped.
  bool backward = isBackwardKernel(fn);
  ArrayRef<abi::TensorMapArg> mapped =
      backward ? ArrayRef(abi::kBackwardTensorMaps)
               : ArrayRef(abi::kTensorMaps).take_front(abi::kKeyValueMapCount);
  auto isMapped = [&](Value v) {
    auto arg = dyn_cast<BlockArgument>(v);
    return arg && fn && arg.getOwner() == &fn.getBody().front() &&
           llvm::any_of(mapped, [&](const abi::TensorMapArg &m) {
             return unsigned(m.tensor) == arg.getArgNumber();
           });
  };
  std::optional<bool> form; // ragged, once a copy decided it
  for (CopyAsyncOp copy : copies) {
    bool kv = isMapped(copy.getSource());
    // Tiled maps' rows end at N (K's and V's, one length): a copy bounded
    // by N of either is what the copy engine's zero fill gives. Any other
    // bound (a packed sequence's end) needs the ragged maps, which view a
    // batch of one.
    Value rows = rowsOf(copy.getBound());
    bool wholeRows = rows && isMapped(rows);
    // A packed batch's tiles are all at batch 0 (the ragged maps view one).
    bool packed = matchPattern(copy.getBatch(), m_Zero());
    if (!kv || copy.getRowsPerHead() || copy.getPages() ||
        !(wholeRows || packed))
      return copy.emitOpError(
          "attn-nv-pipeline-copies: tma loads whole tiles of a mapped kernel "
          "argument (K or V; Q or dO in the backward) bounded by its rows, "
          "or by a sequence's end in a packed batch (no packed heads, pages "
          "or other bounds)");
    if (form && *form != !wholeRows)
      return copy.emitOpError(
          "attn-nv-pipeline-copies: tma copies bounded by the tensor's rows "
          "and by a sequence's end need maps of two forms");
    form = !wholeRows;
  }
  ragged = form.value_or(false);
  Location loc = fn.getLoc();
  Builder b(fn.getContext());
  auto ptr = LLVM::LLVMPointerType::get(fn.getContext());
  for (const abi::TensorMapArg &m : backward
                                        ? ArrayRef(abi::kBackwardTensorMaps)
                                        : ArrayRef(abi::kTensorMaps)) {
    Value source = fn.getArgument(m.tensor);
    if (failed(fn.insertArgument(fn.getNumArguments(), ptr,
                                 b.getDictionaryAttr({}), loc)))
      return fn.emitOpError("attn-nv-pipeline-copies: cannot add the tensor "
                            "map of argument #")
             << m.tensor;
    maps[source] = fn.getArgument(fn.getNumArguments() - 1);
  }
  return success();
}

struct AttnNVPipelineCopiesPass
    : mlir::attn::nv::impl::AttnNVPipelineCopiesBase<AttnNVPipelineCopiesPass> {
  void runOnOperation() override {
    SmallVector<TileGridOp> grids;
    getOperation()->walk([&](TileGridOp grid) { grids.push_back(grid); });
    for (TileGridOp grid : grids) {
      ConfigAttr config = ConfigAttr::lookup(grid);
      if (!config || config.isHost())
        continue;
      if (failed(Pipeliner{config, grid}.run()))
        return signalPassFailure();
    }
  }
};

} // namespace
