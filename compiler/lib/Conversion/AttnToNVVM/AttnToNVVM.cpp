//===- AttnToNVVM.cpp - tile-level attn onto NVIDIA tensor cores ----------===//
//
// Maps one attn.tile_grid per function onto a gpu.func kernel, FlashAttention-2
// style (sm_80 and newer):
//  * a CTA per query tile of 16·W·M rows; each warp owns M 16-row m tiles;
//  * tiles are distributed over the registers in the mma.sync m16n8k16
//    layouts, see Fragments.h: a tile value becomes a list of per-thread
//    scalars;
//  * Q, K and V are copied to shared memory with cp.async (16 bytes a thread);
//    K and V rotate through two or three stages so the next tile loads during the
//    current one's math; rows are padded by 16 bytes, which makes every
//    ldmatrix conflict-free without a swizzle;
//  * P never leaves the registers: the QKᵀ accumulator layout is repacked into
//    the A operand of the P·V product.
//
//===----------------------------------------------------------------------===//

#include "attn/Compiler/TilePolicy.h"
#include "attn/Conversion/Passes.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "Fragments.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::attn {
#define GEN_PASS_DEF_CONVERTATTNTONVVM
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::nvidia;

namespace {

/// Kernel parameters standing for one memref argument of the function.
struct MemRefParams {
  Value ptr;                   // !llvm.ptr<1>, the first element
  SmallVector<Value> sizes;    // index
  SmallVector<Value> strides;  // index, in elements
};

class KernelEmitter {
public:
  KernelEmitter(OpBuilder &b, Location loc, const TileConfig &cfg)
      : b(b), loc(loc), cfg(cfg), f(b, loc, cfg) {}

  LogicalResult emit(func::FuncOp fn, TileGridOp grid, gpu::GPUFuncOp kernel);

private:
  LogicalResult emitBody(Block &block);
  LogicalResult emitOp(Operation *op);
  LogicalResult emitKvLoop(KvLoopOp loop);
  /// The wgmma K/V loop, software-pipelined (TileConfig::pipelined): returns
  /// std::nullopt, having emitted nothing, when the body is not the
  /// qk / [mask] / online_softmax / pv chain it knows.
  std::optional<LogicalResult>
  emitPipelinedKvLoop(KvLoopOp loop, ArrayRef<LoadTileOp> loads);
  void emitStore(StoreTileOp op);
  /// Issues the cp.async copies of a tile into shared memory at `smemOffset`.
  void issueTileCopy(LoadTileOp op, Value row, Value smemOffset);
  /// The copies of the K/V tiles at `kv` into `stage`.
  void issueStage(ArrayRef<LoadTileOp> loads, Value kv, Value stage);
  /// The copies of the tiles at kv + step into `stage`, unless past `upper`.
  void prefetchNext(ArrayRef<LoadTileOp> loads, Value kv, Value step,
                    Value upper, Value stage);
  /// Orders this thread's cp.async writes (generic proxy) before wgmma's
  /// reads of shared memory (async proxy).
  void fenceCopiesForWgmma();
  /// The fragments of the loop's (max, sum, acc) results, from `results`.
  void setLoopResults(KvLoopOp loop, ValueRange results);
  Value idx(Value v) { return mapping.lookup(v); }
  /// A copy of the fragment of tile `v` (a copy: inserting into `frags`
  /// may move the stored vectors).
  SmallVector<Value> get(Value v) {
    auto it = frags.find(v);
    if (it == frags.end())
      llvm::report_fatal_error("attn-to-nvvm: a tile value has no fragment");
    return it->second;
  }

  OpBuilder &b;
  Location loc;
  const TileConfig &cfg;
  Fragments f;
  IRMapping mapping;
  DenseMap<Value, MemRefParams> memrefs;
  DenseMap<Value, SmallVector<Value>> frags;
  /// Shared-memory byte offset of each K/V tile in the current stage.
  DenseMap<Value, Value> stagedTiles;
  /// Scores held unscaled, with the scale the softmax must apply.
  DenseMap<Value, Value> pendingScale;
  /// The Q tile, copied to shared memory but not yet in registers.
  Value pendingQuery;
  Value batch, head;
};

LogicalResult KernelEmitter::emit(func::FuncOp fn, TileGridOp grid,
                                  gpu::GPUFuncOp kernel) {
  Block &entry = kernel.getBody().front();
  b.setInsertionPointToStart(&entry);
  // Function arguments -> kernel parameters.
  unsigned param = 0;
  for (BlockArgument arg : fn.getArguments()) {
    if (!isa<MemRefType, FloatType, IndexType, IntegerType>(arg.getType()))
      return fn.emitOpError("argument #")
             << arg.getArgNumber() << " of type " << arg.getType()
             << " cannot be a kernel parameter (memrefs and scalars only)";
    if (auto memref = dyn_cast<MemRefType>(arg.getType())) {
      MemRefParams p;
      p.ptr = entry.getArgument(param++);
      for (int64_t i = 0; i < memref.getRank(); ++i)
        p.sizes.push_back(f.toIndex(entry.getArgument(param++)));
      for (int64_t i = 0; i < memref.getRank(); ++i)
        p.strides.push_back(f.toIndex(entry.getArgument(param++)));
      memrefs[arg] = std::move(p);
    } else {
      mapping.map(arg, entry.getArgument(param++));
    }
  }
  f.init();
  // Scalar code before the grid (sizes, tile counts, the scale).
  for (Operation &op : fn.getBody().front()) {
    if (&op == grid.getOperation())
      break;
    if (auto dim = dyn_cast<memref::DimOp>(op)) {
      std::optional<int64_t> index = dim.getConstantIndex();
      auto it = memrefs.find(dim.getSource());
      if (!index || it == memrefs.end())
        return dim.emitOpError("unsupported in an attn kernel");
      mapping.map(dim.getResult(), it->second.sizes[*index]);
      continue;
    }
    if (failed(emitOp(&op)))
      return failure();
  }
  // Grid coordinates: x = query tile, y = head, z = batch.
  // With a causal mask the last query tiles visit the most K/V tiles: start
  // them first, so that the short ones fill the tail of the grid. (wgmma
  // only: on mma.sync, D = 64, the extra value made ptxas spill.)
  Value tile = f.blockIndex(0);
  if (cfg.masked && cfg.wgmma) {
    Value tiles = arith::IndexCastUIOp::create(
        b, loc, b.getIndexType(),
        NVVM::GridDimXOp::create(b, loc, b.getI32Type()));
    tile = arith::SubIOp::create(
        b, loc, arith::SubIOp::create(b, loc, tiles, f.constIndex(1)), tile);
  }
  mapping.map(grid.getTileIndex(), tile);
  head = f.blockIndex(1);
  batch = f.blockIndex(2);
  mapping.map(grid.getHeadIndex(), head);
  mapping.map(grid.getBatchIndex(), batch);
  if (failed(emitBody(grid.getBodyBlock())))
    return failure();
  gpu::ReturnOp::create(b, loc);
  return success();
}

LogicalResult KernelEmitter::emitBody(Block &block) {
  for (Operation &op : block.without_terminator())
    if (failed(emitOp(&op)))
      return failure();
  if (!block.empty() && !block.back().hasTrait<OpTrait::IsTerminator>())
    return emitOp(&block.back());
  return success();
}

LogicalResult KernelEmitter::emitOp(Operation *op) {
  if (auto cst = dyn_cast<arith::ConstantOp>(op)) {
    if (auto splat = dyn_cast<SplatElementsAttr>(cst.getValue())) {
      auto type = cast<RankedTensorType>(cst.getType());
      float v = splat.getSplatValue<APFloat>().convertToFloat();
      frags[cst] = f.splat(type, v);
      return success();
    }
  }
  if (auto load = dyn_cast<LoadTileOp>(op)) {
    // The query tile: copied now, moved to registers once the first K/V
    // copies are in flight (see emitKvLoop).
    if (pendingQuery || frags.count(load))
      return load.emitOpError("only one tile load outside attn.kv_loop is "
                              "supported by the NVIDIA mapping");
    issueTileCopy(load, idx(load.getRow()), f.constI32(cfg.queryOffset()));
    NVVM::CpAsyncCommitGroupOp::create(b, loc);
    pendingQuery = load;
    return success();
  }
  if (auto loop = dyn_cast<KvLoopOp>(op))
    return emitKvLoop(loop);
  if (auto qk = dyn_cast<QKOp>(op)) {
    auto it = stagedTiles.find(qk.getKey());
    if (it == stagedTiles.end() || !frags.count(qk.getQuery()))
      return qk.emitOpError("key must be a tile loaded in the enclosing "
                            "attn.kv_loop and query a tile loaded before it");
    frags[qk] = f.qk(get(qk.getQuery()), it->second);
    pendingScale[qk] = idx(qk.getScale());
    return success();
  }
  if (auto mask = dyn_cast<MaskOp>(op)) {
    pendingScale[mask] = pendingScale.lookup(mask.getScores());
    frags[mask] = f.mask(get(mask.getScores()), idx(mask.getRow()),
                         idx(mask.getCol()), idx(mask.getNumQueries()),
                         idx(mask.getNumKeys()), mask.getMask());
    return success();
  }
  if (auto sm = dyn_cast<OnlineSoftmaxOp>(op)) {
    OnlineSoftmaxFrags r =
        f.onlineSoftmax(get(sm.getScores()), pendingScale.lookup(sm.getScores()),
                        get(sm.getMax()), get(sm.getSum()));
    frags[sm.getProbs()] = r.probs;
    frags[sm.getNewMax()] = r.max;
    frags[sm.getNewSum()] = r.sum;
    frags[sm.getAlpha()] = r.alpha;
    return success();
  }
  if (auto pv = dyn_cast<PVOp>(op)) {
    auto it = stagedTiles.find(pv.getValue());
    if (it == stagedTiles.end())
      return pv.emitOpError("value must be a tile loaded in the enclosing "
                            "attn.kv_loop");
    frags[pv] = f.pv(get(pv.getProbs()), it->second, get(pv.getAcc()),
                     get(pv.getAlpha()));
    return success();
  }
  if (auto fin = dyn_cast<FinalizeOp>(op)) {
    FinalizeFrags r =
        f.finalize(get(fin.getAcc()), get(fin.getMax()), get(fin.getSum()));
    frags[fin.getOutput()] = r.output;
    frags[fin.getLse()] = r.lse;
    return success();
  }
  if (auto store = dyn_cast<StoreTileOp>(op)) {
    emitStore(store);
    return success();
  }
  if (isa<AttnDialect>(op->getDialect()))
    return op->emitOpError("must be expanded (attn-expand-online-softmax) "
                           "before convert-attn-to-nvvm");
  if (op->getNumRegions() || !isPure(op) ||
      llvm::any_of(op->getResultTypes(),
                   [](Type t) { return isa<ShapedType>(t); }))
    return op->emitOpError("unsupported in an attn kernel body");
  b.clone(*op, mapping);
  return success();
}

void KernelEmitter::issueTileCopy(LoadTileOp op, Value row, Value smemOffset) {
  MemRefParams &p = memrefs[op.getSource()];
  auto type = cast<RankedTensorType>(op.getResult().getType());
  f.copyTileAsync(p.ptr, p.strides, p.sizes[2], batch, head, row,
                  type.getDimSize(0), smemOffset);
}

void KernelEmitter::issueStage(ArrayRef<LoadTileOp> loads, Value kv,
                               Value stage) {
  for (auto [i, load] : llvm::enumerate(loads))
    issueTileCopy(load, kv, f.kvStageOffset(i, stage));
}

void KernelEmitter::prefetchNext(ArrayRef<LoadTileOp> loads, Value kv,
                                 Value step, Value upper, Value stage) {
  Value next = arith::AddIOp::create(b, loc, kv, step);
  Value hasNext =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, next, upper);
  scf::IfOp::create(b, loc, hasNext, [&](OpBuilder &nb, Location nl) {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
    issueStage(loads, next, stage);
    scf::YieldOp::create(b, nl);
  });
}

void KernelEmitter::fenceCopiesForWgmma() {
  NVVM::FenceProxyOp::create(
      b, loc, NVVM::ProxyKind::async_shared,
      NVVM::SharedSpaceAttr::get(b.getContext(),
                                 NVVM::SharedSpace::shared_cta));
}

void KernelEmitter::setLoopResults(KvLoopOp loop, ValueRange results) {
  size_t rowN = get(loop.getInitMax()).size();
  frags[loop.getMax()] = llvm::to_vector(results.take_front(rowN));
  frags[loop.getSum()] = llvm::to_vector(results.slice(rowN, rowN));
  frags[loop.getAcc()] = llvm::to_vector(results.drop_front(2 * rowN));
}

LogicalResult KernelEmitter::emitKvLoop(KvLoopOp loop) {
  if (!pendingQuery)
    return loop.emitOpError("expects the query tile to be loaded before it");
  Block &body = loop.getBodyBlock();
  SmallVector<LoadTileOp> loads;
  for (auto load : body.getOps<LoadTileOp>()) {
    if (load.getRow() != loop.getInductionVar() ||
        !memrefs.count(load.getSource()) ||
        llvm::any_of(ValueRange{load.getBatch(), load.getHead()},
                     [&](Value v) { return v.getParentBlock() == &body; }))
      return load.emitOpError("K/V tiles must be loaded at the loop's "
                              "induction variable from a kernel argument");
    loads.push_back(load);
  }
  if (loads.size() != 2)
    return loop.emitOpError("expects exactly two tile loads (K and V) in "
                            "the loop body, got ")
           << loads.size();
  Value lower = idx(loop.getLower()), upper = idx(loop.getUpper()),
        step = idx(loop.getStep());
  if (cfg.pipelined())
    if (std::optional<LogicalResult> done = emitPipelinedKvLoop(loop, loads))
      return *done;
  // Prologue: the first K/V tiles, then Q into registers while they fly.
  issueStage(loads, lower, f.constI32(0));
  NVVM::CpAsyncCommitGroupOp::create(b, loc);
  NVVM::CpAsyncWaitGroupOp::create(b, loc, 1);
  NVVM::Barrier0Op::create(b, loc);
  frags[pendingQuery] =
      cfg.queryInRegisters()
          ? f.loadQueryFragments(f.constI32(cfg.queryOffset()))
          : SmallVector<Value>();

  SmallVector<Value> init;
  for (Value v : {loop.getInitMax(), loop.getInitSum(), loop.getInitAcc()})
    llvm::append_range(init, get(v));
  Value span = arith::SubIOp::create(b, loc, upper, lower);
  Value iters = arith::CeilDivSIOp::create(b, loc, span, step);
  iters = arith::MaxSIOp::create(b, loc, iters, f.constIndex(0));
  auto forOp = scf::ForOp::create(b, loc, f.constIndex(0), iters,
                                  f.constIndex(1), init);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(forOp.getBody());
  Value it = forOp.getInductionVar();
  Value kv = arith::AddIOp::create(
      b, loc, lower, arith::MulIOp::create(b, loc, it, step));
  mapping.map(loop.getInductionVar(), kv);
  Value stage = f.stageOf(it, 0);
  // Prefetch the next tiles into the other stage.
  prefetchNext(loads, kv, step, upper, f.stageOf(it, 1));
  NVVM::CpAsyncCommitGroupOp::create(b, loc);
  NVVM::CpAsyncWaitGroupOp::create(b, loc, 1);
  if (cfg.wgmma)
    fenceCopiesForWgmma();
  NVVM::Barrier0Op::create(b, loc);
  for (auto [i, load] : llvm::enumerate(loads))
    stagedTiles[load] = f.kvStageOffset(i, stage);

  // Loop-carried state.
  ValueRange carried = forOp.getRegionIterArgs();
  size_t rowN = get(loop.getInitMax()).size();
  frags[loop.getMaxArg()] = llvm::to_vector(carried.take_front(rowN));
  frags[loop.getSumArg()] = llvm::to_vector(carried.slice(rowN, rowN));
  frags[loop.getAccArg()] = llvm::to_vector(carried.drop_front(2 * rowN));
  for (Operation &op : body.without_terminator())
    if (!isa<LoadTileOp>(op) && failed(emitOp(&op)))
      return failure();
  auto yield = cast<YieldOp>(body.getTerminator());
  SmallVector<Value> nextState;
  for (Value v : yield.getValues())
    llvm::append_range(nextState, get(v));
  // With two stages, the next iteration's prefetch overwrites this one's
  // stage: every warp must be done with it first. With three, the stage it
  // overwrites was last read two iterations back, before the barrier that
  // follows the wait at the top of this iteration.
  if (cfg.stages < 3)
    NVVM::Barrier0Op::create(b, loc);
  scf::YieldOp::create(b, loc, nextState);

  setLoopResults(loop, forOp.getResults());
  return success();
}

std::optional<LogicalResult>
KernelEmitter::emitPipelinedKvLoop(KvLoopOp loop, ArrayRef<LoadTileOp> loads) {
  // Match the chain qk -> [mask] -> online_softmax -> pv -> yield; every
  // other op of the body must be scalar (emitted again where needed).
  Block &body = loop.getBodyBlock();
  QKOp qk;
  MaskOp mask;
  OnlineSoftmaxOp softmax;
  PVOp pv;
  SmallVector<Operation *> scalars;
  for (Operation &op : body.without_terminator()) {
    if (isa<LoadTileOp>(op))
      continue;
    if (auto o = dyn_cast<QKOp>(op); o && !qk)
      qk = o;
    else if (auto o = dyn_cast<MaskOp>(op); o && !mask)
      mask = o;
    else if (auto o = dyn_cast<OnlineSoftmaxOp>(op); o && !softmax)
      softmax = o;
    else if (auto o = dyn_cast<PVOp>(op); o && !pv)
      pv = o;
    else if (op.getNumRegions() == 0 && isPure(&op) &&
             llvm::none_of(op.getResultTypes(),
                           [](Type t) { return isa<ShapedType>(t); }))
      scalars.push_back(&op);
    else
      return std::nullopt;
  }
  auto yield = cast<YieldOp>(body.getTerminator());
  if (!qk || !softmax || !pv)
    return std::nullopt;
  Value scores = mask ? mask.getResult() : qk.getResult();
  auto keyIt = llvm::find_if(
      loads, [&](LoadTileOp l) { return l.getResult() == qk.getKey(); });
  auto valueIt = llvm::find_if(
      loads, [&](LoadTileOp l) { return l.getResult() == pv.getValue(); });
  if ((mask && mask.getScores() != qk.getResult()) ||
      softmax.getScores() != scores ||
      softmax.getMax() != loop.getMaxArg() ||
      softmax.getSum() != loop.getSumArg() ||
      pv.getProbs() != softmax.getProbs() ||
      pv.getAlpha() != softmax.getAlpha() || pv.getAcc() != loop.getAccArg() ||
      keyIt == loads.end() || valueIt == loads.end() ||
      qk.getQuery() != pendingQuery ||
      !llvm::equal(yield.getValues(),
                   ValueRange{softmax.getNewMax(), softmax.getNewSum(),
                              pv.getResult()}))
    return std::nullopt;
  size_t keyIdx = keyIt - loads.begin(), valueIdx = valueIt - loads.begin();

  // Two schedules (below). In both, a P·V reading tile j - 1 is retired by
  // every thread before it reaches the barrier at the top of iteration
  // j + 1, and the copies of tile j + 2 into that stage start only after
  // that barrier.
  Value lower = idx(loop.getLower()), upper = idx(loop.getUpper()),
        step = idx(loop.getStep());
  issueStage(loads, lower, f.constI32(0));
  NVVM::CpAsyncCommitGroupOp::create(b, loc);
  frags[pendingQuery] = SmallVector<Value>(); // wgmma reads Q from smem
  Value span = arith::SubIOp::create(b, loc, upper, lower);
  Value iters = arith::CeilDivSIOp::create(b, loc, span, step);
  iters = arith::MaxSIOp::create(b, loc, iters, f.constIndex(0));

  // Top of iteration `it` (tile at `kv`): its copies are done and visible to
  // wgmma (async proxy) in every thread; then the next tile's copies start.
  auto top = [&](Value it, Value kv) {
    NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);
    fenceCopiesForWgmma();
    NVVM::Barrier0Op::create(b, loc);
    prefetchNext(loads, kv, step, upper, f.stageOf(it, 1));
    NVVM::CpAsyncCommitGroupOp::create(b, loc);
    mapping.map(loop.getInductionVar(), kv);
    for (Operation *op : scalars)
      b.clone(*op, mapping);
  };
  // Mask and online softmax of `s` (QKᵀ of the tile at the mapped kv).
  auto softmaxOf = [&](SmallVector<Value> s, ArrayRef<Value> max,
                       ArrayRef<Value> sum) {
    if (mask)
      s = f.mask(s, idx(mask.getRow()), idx(mask.getCol()),
                 idx(mask.getNumQueries()), idx(mask.getNumKeys()),
                 mask.getMask());
    return f.onlineSoftmax(s, idx(qk.getScale()), max, sum);
  };
  auto keyOffset = [&](Value stage) { return f.kvStageOffset(keyIdx, stage); };
  auto valueOffset = [&](Value stage) {
    return f.kvStageOffset(valueIdx, stage);
  };

  SmallVector<Value> initMax = get(loop.getInitMax()),
                     initSum = get(loop.getInitSum()),
                     initAcc = get(loop.getInitAcc());
  size_t rowN = initMax.size(), accN = initAcc.size();
  auto kvOf = [&](Value it) {
    return arith::AddIOp::create(b, loc, lower,
                                 arith::MulIOp::create(b, loc, it, step))
        .getResult();
  };
  auto rows = [&](ArrayRef<Value> max, ArrayRef<Value> sum) {
    SmallVector<Value> v(max);
    llvm::append_range(v, sum);
    return v;
  };
  // Tile 0: its QKᵀ and softmax, before the loop.
  auto firstTile = [&]() {
    Value zero = f.constIndex(0);
    top(zero, lower);
    return softmaxOf(
        f.wgmmaWait(f.wgmmaQKIssue(keyOffset(f.stageOf(zero, 0)))), initMax,
        initSum);
  };
  // The loop over tiles 1 ... iters - 1, the builder at the start of its body
  // (after that tile's top); returns it and its carried values.
  auto laterTiles = [&](ValueRange init) {
    auto forOp = scf::ForOp::create(b, loc, f.constIndex(1), iters,
                                    f.constIndex(1), init);
    b.setInsertionPointToStart(forOp.getBody());
    Value it = forOp.getInductionVar();
    top(it, kvOf(it));
    return std::make_pair(
        forOp, llvm::to_vector_of<Value>(forOp.getRegionIterArgs()));
  };
  // Iteration j issues QKᵀ of tile j, then P·V of tile j - 1 (rescaled by
  // alpha of j - 1; P of j - 1 carried in registers), waits for QKᵀ alone
  // and runs the mask and softmax of tile j while the tensor cores finish
  // that P·V. Tile 0's QKᵀ comes before the loop, the last P·V after it.
  auto overlapSchedule = [&]() -> SmallVector<Value> {
    OnlineSoftmaxFrags first = firstTile();
    // Tiles 1 ... iters - 1, carrying (m, l, acc, P, alpha).
    SmallVector<Value> carriedInit = rows(first.max, first.sum);
    llvm::append_range(carriedInit, initAcc);
    llvm::append_range(carriedInit, first.probs);
    llvm::append_range(carriedInit, first.alpha);
    size_t probN = first.probs.size();
    OpBuilder::InsertionGuard g(b);
    auto [forOp, carriedVec] = laterTiles(carriedInit);
    Value it = forOp.getInductionVar();
    ArrayRef<Value> carried(carriedVec);
    ArrayRef<Value> max = carried.take_front(rowN),
                    sum = carried.slice(rowN, rowN),
                    acc = carried.slice(2 * rowN, accN),
                    probs = carried.slice(2 * rowN + accN, probN),
                    alpha = carried.drop_front(2 * rowN + accN + probN);
    SmallVector<Value> s = f.wgmmaQKIssue(keyOffset(f.stageOf(it, 0)));
    SmallVector<Value> o = f.wgmmaPVIssue(
        probs, valueOffset(f.stageOf(it, -1)), f.rescale(acc, alpha));
    OnlineSoftmaxFrags cur = softmaxOf(f.wgmmaWait(s, 1), max, sum);
    // P of tile j - 1 passes through the last wait too: its registers are
    // read by the running P·V until then.
    SmallVector<Value> done(o);
    llvm::append_range(done, probs);
    done = f.wgmmaWait(done);
    SmallVector<Value> next = rows(cur.max, cur.sum);
    llvm::append_range(next, ArrayRef<Value>(done).take_front(accN));
    llvm::append_range(next, cur.probs);
    llvm::append_range(next, cur.alpha);
    scf::YieldOp::create(b, loc, next);

    // The last tile's P·V.
    b.setInsertionPointAfter(forOp);
    SmallVector<Value> resVec = llvm::to_vector_of<Value>(forOp.getResults());
    ArrayRef<Value> res(resVec);
    SmallVector<Value> out(res.take_front(2 * rowN));
    llvm::append_range(
        out, f.wgmmaWait(f.wgmmaPVIssue(
                 res.slice(2 * rowN + accN, probN),
                 valueOffset(f.stageOf(iters, -1)),
                 f.rescale(res.slice(2 * rowN, accN),
                              res.drop_front(2 * rowN + accN + probN)))));
    return out;
  };
  // Iteration j's P·V is left running through iteration j + 1's copies,
  // barrier and QKᵀ issue; the wait for that QKᵀ ends it too (groups retire
  // in order). Every value that reaches the wait after the loop comes from a
  // wgmma (tile 0's P·V is issued before the loop): a constant there would
  // make ptxas serialize the wgmma pipeline.
  auto runningSchedule = [&]() -> SmallVector<Value> {
    OnlineSoftmaxFrags first = firstTile();
    SmallVector<Value> carriedInit = rows(first.max, first.sum);
    llvm::append_range(
        carriedInit,
        f.wgmmaPVIssue(first.probs, valueOffset(f.stageOf(f.constIndex(0), 0)),
                       f.rescale(initAcc, first.alpha)));
    OpBuilder::InsertionGuard g(b);
    auto [forOp, carriedVec] = laterTiles(carriedInit);
    Value it = forOp.getInductionVar();
    ArrayRef<Value> carried(carriedVec);
    SmallVector<Value> regs = f.wgmmaQKIssue(keyOffset(f.stageOf(it, 0)));
    size_t sN = regs.size();
    llvm::append_range(regs, carried.drop_front(2 * rowN));
    regs = f.wgmmaWait(regs);
    OnlineSoftmaxFrags cur =
        softmaxOf(SmallVector<Value>(ArrayRef<Value>(regs).take_front(sN)),
                  carried.take_front(rowN), carried.slice(rowN, rowN));
    SmallVector<Value> next = rows(cur.max, cur.sum);
    llvm::append_range(
        next, f.wgmmaPVIssue(cur.probs, valueOffset(f.stageOf(it, 0)),
                             f.rescale(ArrayRef<Value>(regs).drop_front(sN),
                                          cur.alpha)));
    scf::YieldOp::create(b, loc, next);

    b.setInsertionPointAfter(forOp);
    SmallVector<Value> resVec = llvm::to_vector_of<Value>(forOp.getResults());
    ArrayRef<Value> res(resVec);
    SmallVector<Value> out(res.take_front(2 * rowN));
    llvm::append_range(out, f.wgmmaWait(res.drop_front(2 * rowN)));
    return out;
  };

  SmallVector<Type> resultTypes(2 * rowN + accN, b.getF32Type());
  Value any = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, iters,
                                    f.constIndex(0));
  auto ifOp = scf::IfOp::create(b, loc, resultTypes, any, /*withElse=*/true);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifOp.elseBlock());
    SmallVector<Value> init = rows(initMax, initSum);
    llvm::append_range(init, initAcc);
    scf::YieldOp::create(b, loc, init);

    b.setInsertionPointToStart(ifOp.thenBlock());
    scf::YieldOp::create(b, loc,
                         cfg.softmaxOverlapsPV() ? overlapSchedule()
                                                 : runningSchedule());
  }
  setLoopResults(loop, ifOp.getResults());
  return success();
}

void KernelEmitter::emitStore(StoreTileOp op) {
  MemRefParams &p = memrefs[op.getDest()];
  auto type = cast<RankedTensorType>(op.getTile().getType());
  if (type.getRank() == 2)
    f.storeOutput(get(op.getTile()), p.ptr, p.strides, p.sizes[2], batch,
                  head, idx(op.getRow()), type.getElementType());
  else
    f.storeRows(get(op.getTile()), p.ptr, p.strides, p.sizes[2], batch,
                head, idx(op.getRow()));
}

/// Kernel parameter types: (ptr, sizes..., strides...) per memref argument.
SmallVector<Type> kernelParamTypes(func::FuncOp fn) {
  MLIRContext *ctx = fn.getContext();
  SmallVector<Type> types;
  for (Type t : fn.getArgumentTypes()) {
    if (auto memref = dyn_cast<MemRefType>(t)) {
      types.push_back(LLVM::LLVMPointerType::get(ctx, 1));
      types.append(2 * memref.getRank(), IntegerType::get(ctx, 64));
    } else {
      types.push_back(t);
    }
  }
  return types;
}

/// Reads the tile configuration off the tile-level IR and checks that the
/// mapping supports it.
FailureOr<TileConfig> readConfig(TileGridOp grid, int64_t warps,
                                 int64_t stages, StringRef tensorCore,
                                 StringRef chip) {
  LoadTileOp query, key;
  grid.walk([&](LoadTileOp op) {
    if (isa<TileGridOp>(op->getParentOp()))
      query = op;
    else if (!key)
      key = op;
  });
  if (!query || !key)
    return grid.emitOpError("expects a query tile load and K/V tile loads");
  auto q = cast<RankedTensorType>(query.getType());
  auto k = cast<RankedTensorType>(key.getType());
  TileConfig cfg;
  cfg.stages = stages;
  cfg.blockM = q.getDimSize(0);
  cfg.blockN = k.getDimSize(0);
  cfg.headDim = q.getDimSize(1);
  cfg.elementType = q.getElementType();
  if (!cfg.elementType.isBF16() && !cfg.elementType.isF16())
    return query.emitOpError("the NVIDIA mapping supports bf16 and f16 "
                             "tiles, got ")
           << cfg.elementType;
  if (!::attn::compiler::isTensorCoreName(tensorCore))
    return grid.emitOpError("tensor-core must be auto, mma.sync or wgmma, "
                            "got '")
           << tensorCore << "'";
  std::string noWgmma = ::attn::compiler::wgmmaUnsupportedReason(
      chip, cfg.headDim, cfg.blockM, cfg.blockN, warps);
  if (tensorCore == "wgmma" && !noWgmma.empty())
    return grid.emitOpError("tensor-core=wgmma ") << noWgmma;
  cfg.wgmma = tensorCore == "wgmma" ||
              (tensorCore == "auto" && noWgmma.empty());
  if (warps == 0)
    warps = ::attn::compiler::defaultWarps(cfg.wgmma, cfg.blockM);
  cfg.warps = warps;
  if (cfg.blockM % (16 * warps) != 0)
    return query.emitOpError("query tile of ")
           << cfg.blockM << " rows is not a whole number of 16-row tiles for "
           << "each of warps=" << warps;
  if (cfg.blockN % 16 != 0)
    return key.emitOpError("K/V tiles must have a multiple of 16 rows, got ")
           << cfg.blockN;
  if (cfg.headDim % 8 != 0 || cfg.headDim < 8 || cfg.headDim > 256)
    return query.emitOpError("head dim must be a multiple of 8 in [8, 256], "
                             "got ")
           << cfg.headDim;
  if (stages != 0 && stages != 2 && stages != 3)
    return grid.emitOpError("stages must be 2, 3 or 0 (automatic), got ")
           << stages;
  if (stages == 0) {
    // Three stages drop a barrier per K/V tile (see emitKvLoop) where they
    // still leave room for two CTAs per SM (228 KB of shared memory).
    // A wgmma CTA of two or more warpgroups needs so many registers that it
    // runs alone on its SM; one warpgroup can share it with another CTA.
    cfg.stages = 3;
    bool alone = cfg.wgmma && cfg.warps > 4;
    if (cfg.sharedBytes() > (alone ? 227 : 113) * 1024)
      cfg.stages = 2;
  }
  grid.walk([&](MaskOp op) { cfg.masked |= op.getMask() != MaskKind::None; });
  // (wgmma kernels have one m tile per warp.)
  cfg.conditionalRescale =
      cfg.masked && cfg.mTiles() > 1 && cfg.paddedDim() > 64;
  bool sameDims = true;
  grid.walk([&](LoadTileOp op) {
    sameDims &= cast<RankedTensorType>(op.getType()).getDimSize(1) ==
                cfg.headDim;
  });
  if (!sameDims)
    return grid.emitOpError("the NVIDIA mapping needs Dv = D");
  return cfg;
}

struct ConvertAttnToNVVMPass
    : mlir::attn::impl::ConvertAttnToNVVMBase<ConvertAttnToNVVMPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> kernels;
    for (auto fn : module.getOps<func::FuncOp>())
      if (!fn.getOps<TileGridOp>().empty())
        kernels.push_back(fn);
    if (kernels.empty())
      return;
    MLIRContext *ctx = &getContext();
    OpBuilder b(ctx);
    b.setInsertionPointToEnd(module.getBody());
    auto gpuModule = gpu::GPUModuleOp::create(b, module.getLoc(), "attn_kernels");
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    b.getUnitAttr());
    b.setInsertionPointToStart(gpuModule.getBody());
    Fragments::declareSharedMemory(b, module.getLoc());

    for (func::FuncOp fn : kernels) {
      auto grids = llvm::to_vector(fn.getOps<TileGridOp>());
      if (grids.size() != 1 || !fn.getResultTypes().empty()) {
        fn.emitOpError("an attn kernel function must hold one attn.tile_grid "
                       "and return nothing");
        return signalPassFailure();
      }
      FailureOr<TileConfig> cfg =
          readConfig(grids[0], warps, stages, tensorCore, chip);
      if (failed(cfg))
        return signalPassFailure();
      b.setInsertionPointToEnd(gpuModule.getBody());
      auto kernel = gpu::GPUFuncOp::create(
          b, fn.getLoc(), fn.getName(),
          b.getFunctionType(kernelParamTypes(fn), {}));
      kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(),
                      b.getUnitAttr());
      int32_t threads = static_cast<int32_t>(cfg->threads());
      kernel.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr({threads, 1, 1}));
      // Without a CTAs-per-SM hint ptxas aims at high occupancy and spills
      // the accumulators; one CTA per SM lets it use what it needs.
      kernel->setAttr("nvvm.minctasm", b.getI32IntegerAttr(1));
      // Launch metadata for the runtime (copied into the gpu.object).
      gpuModule->setAttr("attn.threads", b.getI32IntegerAttr(threads));
      gpuModule->setAttr("attn.block_m", b.getI32IntegerAttr(cfg->blockM));
      gpuModule->setAttr("attn.shared_bytes",
                         b.getI32IntegerAttr(cfg->sharedBytes()));
      OpBuilder kb(kernel.getBody());
      KernelEmitter emitter(kb, fn.getLoc(), *cfg);
      if (failed(emitter.emit(fn, grids[0], kernel)))
        return signalPassFailure();
      fn.erase();
    }
  }
};

} // namespace
