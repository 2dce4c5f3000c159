//===- Tma.cpp - mbarriers and bulk tensor (TMA) tile copies --------------===//
//
// A barrier buffer is its byte offset, as a tile buffer is. Thread 0 alone
// initializes the barriers and issues each tile's copies (the copy engine
// moves the whole tile), after waiting for the stage's release where the
// copy names "empty" barriers; every thread waits on the barrier of the
// tile it reads; each warp releases a stage with one arrival. Barrier use u
// is barrier u mod count in phase floor(u / count).
//
//===----------------------------------------------------------------------===//

#include "Patterns.h"

#include "attn/Compiler/KernelABI.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::nv;

namespace {

// The runtime encodes each map's box as one swizzle block of a tile row.
static_assert(::attn::abi::kTmaBoxBytes == kSwizzleRowBytes,
              "a TMA box's row is one 128-byte swizzle block");

/// How long one mbarrier.try_wait may suspend the thread before it tests
/// again (ns; CUTLASS's value).
constexpr int64_t kWaitSuspendNs = 0x989680;

/// The TMA boxes of a swizzled tile: one per 128-byte block of columns
/// (boxCols elements), each block `blockBytes` apart.
struct TmaBoxes {
  int64_t boxCols, blocks, blockBytes;

  static TmaBoxes of(SmemType tile) {
    int64_t elementBytes = tile.getElementType().getIntOrFloatBitWidth() / 8;
    int64_t boxCols = swizzleBlockCols(elementBytes);
    return {boxCols,
            storedSharedCols(/*swizzled=*/true, tile.getCols(), elementBytes) /
                boxCols,
            tile.getRows() * kSwizzleRowBytes};
  }
};

/// Runs `body` in thread 0 only.
void inThreadZero(OpBuilder &b, Location loc,
                  function_ref<void(OpBuilder &)> body) {
  // One statement each: the IR's order must not depend on the host
  // compiler's argument evaluation order (docs/testing.md).
  Value zero = constI32(b, loc, 0);
  Value thread = threadId(b, loc);
  Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                      thread, zero);
  scf::IfOp::create(b, loc, first, [&](OpBuilder &tb, Location tl) {
    body(tb);
    scf::YieldOp::create(tb, tl);
  });
}

/// Use `use` (index) of the barriers at `offset` (i32) as i32: a tile
/// index never reaches 2^31.
Value useIndex(OpBuilder &b, Location loc, Value use) {
  return arith::IndexCastUIOp::create(b, loc, b.getI32Type(), use);
}

/// The barrier of use `u` (i32) of `count` barriers at `offset`.
Value barrierOfUse(OpBuilder &b, Location loc, const SharedBase &smem,
                   Value offset, Value u, int64_t count) {
  Value slot = arith::RemUIOp::create(b, loc, u, constI32(b, loc, count));
  Value at = arith::AddIOp::create(
      b, loc, offset,
      arith::MulIOp::create(b, loc, slot, constI32(b, loc, kMbarrierBytes)));
  return smem.at(b, loc, at);
}

/// The use (i32) and the barrier of an op with `barriers` and `use`
/// operands (wait_barrier, arrive_barrier), lowered.
template <typename OpT, typename Adaptor>
std::pair<Value, Value> useAndBarrier(OpBuilder &b, OpT op, Adaptor adaptor) {
  Location loc = op.getLoc();
  SharedBase smem = SharedBase::get(b, loc, op);
  int64_t count = op.getBarriers().getType().getCount();
  Value u = useIndex(b, loc, adaptor.getUse());
  return {u, barrierOfUse(b, loc, smem, adaptor.getBarriers(), u, count)};
}

/// Waits until `barrier` completed the phase whose parity is that of
/// floor(u / count), or the phase before it with `previous` (which a fresh
/// barrier counts as complete: the first `count` uses pass at once).
void waitForPhase(OpBuilder &b, Location loc, Value barrier, Value u,
                  int64_t count, bool previous) {
  Value one = constI32(b, loc, 1);
  Value phase = arith::DivUIOp::create(b, loc, u, constI32(b, loc, count));
  Value parity = arith::AndIOp::create(b, loc, phase, one);
  if (previous)
    parity = arith::XOrIOp::create(b, loc, parity, one);
  NVVM::MBarrierTryWaitParityOp::create(b, loc, barrier, parity,
                                        constI32(b, loc, kWaitSuspendNs));
}

/// Thread 0: mbarrier.init of each with the op's arrivals, then the fence
/// that makes the initialization visible to the copy engine.
struct InitBarriers : OpConversionPattern<InitBarriersOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(InitBarriersOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    int64_t count = op.getBarriers().getType().getCount();
    SharedBase smem = SharedBase::get(rewriter, loc, op);
    inThreadZero(rewriter, loc, [&](OpBuilder &b) {
      for (int64_t i = 0; i < count; ++i) {
        Value at = arith::AddIOp::create(
            b, loc, adaptor.getBarriers(),
            constI32(b, loc, i * kMbarrierBytes));
        Value arrivals = constI32(b, loc, op.getArrivals());
        Value address = smem.at(b, loc, at);
        NVVM::MBarrierInitOp::create(b, loc, address, arrivals, Value());
      }
      NVVM::FenceMbarrierInitOp::create(b, loc);
    });
    rewriter.eraseOp(op);
    return success();
  }
};

/// Thread 0 (or, single_thread, the producer's thread that runs it): with
/// empty barriers, the wait for the release of use - count;
/// arrive.expect_tx with the tile's bytes, then one cp.async.bulk.tensor.4d
/// per 128-byte block of C columns at coordinates (block · C, row, head,
/// batch) -- transposed, (row + block · C, 0, head, batch) -- into the
/// block's 1024-byte-aligned place.
struct CopyTma : OpConversionPattern<CopyTmaOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(CopyTmaOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto dest = cast<SmemType>(op.getDest().getType());
    int64_t count = op.getBarriers().getType().getCount();
    auto [boxCols, blocks, blockBytes] = TmaBoxes::of(dest);
    SharedBase smem = SharedBase::get(rewriter, loc, op);
    Type i32 = rewriter.getI32Type();
    auto cluster = LLVM::LLVMPointerType::get(
        rewriter.getContext(),
        static_cast<unsigned>(NVVM::NVVMMemorySpace::SharedCluster));
    auto issue = [&](OpBuilder &b) {
      Value u = useIndex(b, loc, adaptor.getUse());
      if (Value empty = adaptor.getEmpty()) {
        Value released = barrierOfUse(b, loc, smem, empty, u, count);
        waitForPhase(b, loc, released, u, count, /*previous=*/true);
      }
      Value barrier =
          barrierOfUse(b, loc, smem, adaptor.getBarriers(), u, count);
      NVVM::MBarrierArriveExpectTxOp::create(
          b, loc, /*res=*/Type(), barrier, constI32(b, loc, op.getTileBytes()),
          NVVM::MemScopeKind::CTA, /*relaxed=*/false, /*predicate=*/Value());
      // One statement each: the IR's order must not depend on the order in
      // which the C++ compiler evaluates arguments.
      Value row = arith::IndexCastUIOp::create(b, loc, i32, adaptor.getRow());
      Value head = arith::IndexCastUIOp::create(b, loc, i32, adaptor.getHead());
      Value batch =
          arith::IndexCastUIOp::create(b, loc, i32, adaptor.getBatch());
      for (int64_t blk = 0; blk < blocks; ++blk) {
        Value at = arith::AddIOp::create(b, loc, adaptor.getDest(),
                                         constI32(b, loc, blk * blockBytes));
        Value to = LLVM::AddrSpaceCastOp::create(b, loc, cluster,
                                                 smem.at(b, loc, at));
        // Transposed (a (B, H, D, N) view): the tile's columns are keys
        // from `row`, its rows the head dim from 0.
        Value col = constI32(b, loc, blk * boxCols);
        Value first = row;
        if (op.getTransposed()) {
          first = constI32(b, loc, 0);
          col = arith::AddIOp::create(b, loc, row, col);
        }
        NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
            b, loc, to, adaptor.getMap(), ValueRange{col, first, head, batch},
            barrier, /*im2colOffsets=*/ValueRange{}, /*multicastMask=*/Value(),
            /*l2CacheHint=*/Value(), NVVM::TMALoadMode::TILE,
            /*isCTAOnly=*/false, /*group=*/NVVM::CTAGroupKindAttr(),
            /*predicate=*/Value());
      }
    };
    if (op.getSingleThread())
      issue(rewriter);
    else
      inThreadZero(rewriter, loc, issue);
    rewriter.eraseOp(op);
    return success();
  }
};

/// Each warp: fence.proxy.async (its generic stores into `source` become
/// visible to the copy engine), bar.warp.sync, then lane 0 (a predicate,
/// not a branch) issues one cp.async.bulk.tensor.4d store per 128-byte block
/// of its 16 rows at coordinates (block · C, row + 16 w, head, batch), commits
/// them as a bulk group and waits until they have read shared memory. The
/// other lanes' commit and wait find no copies of their own.
struct StoreTma : OpConversionPattern<StoreTmaOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(StoreTmaOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto &b = rewriter;
    Location loc = op.getLoc();
    auto [boxCols, blocks, blockBytes] =
        TmaBoxes::of(cast<SmemType>(op.getSource().getType()));
    SharedBase smem = SharedBase::get(b, loc, op);
    Type i32 = b.getI32Type();
    fenceForAsyncProxy(b, loc);
    NVVM::SyncWarpOp::create(b, loc, constI32(b, loc, -1));
    Value thread = threadId(b, loc);
    Value warp = arith::DivUIOp::create(b, loc, thread, constI32(b, loc, 32));
    Value lane = NVVM::LaneIdOp::create(b, loc, i32);
    Value leader = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                         lane, constI32(b, loc, 0));
    Value warpRow =
        arith::MulIOp::create(b, loc, warp, constI32(b, loc, kTmaStoreRows));
    // One statement each: the IR's order must not depend on the order in
    // which the C++ compiler evaluates arguments.
    Value row = arith::IndexCastUIOp::create(b, loc, i32, adaptor.getRow());
    row = arith::AddIOp::create(b, loc, row, warpRow);
    Value head = arith::IndexCastUIOp::create(b, loc, i32, adaptor.getHead());
    Value batch = arith::IndexCastUIOp::create(b, loc, i32, adaptor.getBatch());
    Value warpBytes =
        arith::MulIOp::create(b, loc, warpRow, constI32(b, loc, kSwizzleRowBytes));
    Value first = arith::AddIOp::create(b, loc, adaptor.getSource(), warpBytes);
    for (int64_t blk = 0; blk < blocks; ++blk) {
      Value at = arith::AddIOp::create(b, loc, first,
                                       constI32(b, loc, blk * blockBytes));
      Value col = constI32(b, loc, blk * boxCols);
      NVVM::CpAsyncBulkTensorSharedCTAToGlobalOp::create(
          b, loc, adaptor.getMap(), smem.at(b, loc, at),
          ValueRange{col, row, head, batch}, /*l2CacheHint=*/Value(),
          NVVM::TMAStoreMode::TILE, /*predicate=*/leader);
    }
    NVVM::CpAsyncBulkCommitGroupOp::create(b, loc);
    if (!op.getNoWait())
      NVVM::CpAsyncBulkWaitGroupOp::create(b, loc, /*group=*/0,
                                           /*read=*/b.getUnitAttr());
    rewriter.eraseOp(op);
    return success();
  }
};

/// cp.async.bulk.wait_group.read 0 in every thread (those that committed no
/// store pass at once).
struct WaitStoresRead : OpConversionPattern<WaitStoresReadOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(WaitStoresReadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<NVVM::CpAsyncBulkWaitGroupOp>(
        op, /*group=*/0, /*read=*/rewriter.getUnitAttr());
    return success();
  }
};

/// The accumulating store by the copy engine: each warp stages its values in
/// its rows of the padded f32 buffer and its lanes add one row segment each
/// with cp.reduce.async.bulk (predicated in the PTX, not branched around:
/// a branch between wgmma ops can make ptxas serialise them, C7518).
struct ReduceBulk : OpConversionPattern<ReduceBulkOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ReduceBulkOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto &b = rewriter;
    Location loc = op.getLoc();
    auto tile = *DistributedTile::get(op.getTile().getType());
    SharedGeometry staging(cast<SmemType>(op.getStaging().getType()));
    SharedBase smem = SharedBase::get(b, loc, op);
    GlobalTensor dest(adaptor.getDest(), op.getDest().getType());
    Type i32 = b.getI32Type();
    Value buffer = adaptor.getStaging().front();
    int64_t pitch = staging.pitch();
    // The lanes' reads of the previous use are done (they waited for them).
    NVVM::SyncWarpOp::create(b, loc, constI32(b, loc, -1));
    // This thread's pairs, 8 bytes each at (row, col) of the buffer.
    auto [baseRow, baseCol] = tile.threadBase(b, loc);
    auto toI32 = [&](Value v) {
      return arith::IndexCastUIOp::create(b, loc, i32, v).getResult();
    };
    // One statement per op: the IR's order must not depend on the order in
    // which the C++ compiler evaluates arguments.
    Value rowBytes =
        arith::MulIOp::create(b, loc, toI32(baseRow), constI32(b, loc, pitch));
    Value colBytes =
        arith::MulIOp::create(b, loc, toI32(baseCol), constI32(b, loc, 4));
    Value threadBytes = arith::AddIOp::create(b, loc, rowBytes, colBytes);
    threadBytes = arith::AddIOp::create(b, loc, buffer, threadBytes);
    ValueRange values = adaptor.getTile();
    for (int64_t i = 0; i < tile.valuesPerThread(); i += 2) {
      if (tile.isPadding(i))
        continue;
      ElementOffset at = tile.offset(i);
      Value pair = vectorPair(b, loc, values[i], values[i + 1]);
      Value bytes = arith::AddIOp::create(
          b, loc, threadBytes, constI32(b, loc, at.row * pitch + at.col * 4));
      LLVM::StoreOp::create(b, loc, pair, smem.at(b, loc, bytes),
                            /*alignment=*/8);
    }
    fenceForAsyncProxy(b, loc);
    NVVM::SyncWarpOp::create(b, loc, constI32(b, loc, -1));
    // Lane r adds row r of the warp's rows, its column group's segment.
    auto [warpRow, warpCol] = tile.warpBase(b, loc);
    Value lane = NVVM::LaneIdOp::create(b, loc, i32);
    Value local = arith::AddIOp::create(b, loc, warpRow, lane);
    Type index = b.getIndexType();
    Value row = arith::AddIOp::create(
        b, loc, adaptor.getRow().front(),
        arith::IndexCastUIOp::create(b, loc, index, local));
    Value laneRow = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ult, lane,
        constI32(b, loc, 16 * tile.mTiles()));
    Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                         row, adaptor.getBound().front());
    Value mine = arith::AndIOp::create(b, loc, laneRow, inside);
    Value rowStart = dest.rowElements(b, loc, adaptor.getBatch().front(),
                                      adaptor.getHead().front(), row);
    Value elements = arith::AddIOp::create(
        b, loc, rowStart, arith::IndexCastUIOp::create(b, loc, index, warpCol));
    Value target = dest.address(b, loc, elements);
    Value localBytes =
        arith::MulIOp::create(b, loc, local, constI32(b, loc, pitch));
    Value groupBytes =
        arith::MulIOp::create(b, loc, warpCol, constI32(b, loc, 4));
    Value source = arith::AddIOp::create(b, loc, localBytes, groupBytes);
    source = arith::AddIOp::create(b, loc, buffer, source);
    source = arith::AddIOp::create(b, loc, smem.address, source);
    Value predicate = arith::ExtUIOp::create(b, loc, i32, mine);
    Ptx::emit(b, loc, Type(), {target, source, predicate},
              llvm::formatv("{{\n.reg .pred p;\nsetp.ne.b32 p, $2, 0;\n"
                            "@p cp.reduce.async.bulk.global.shared::cta."
                            "bulk_group.add.f32 [$0], [$1], {0};\n}",
                            tile.cols() * 4)
                  .str(),
              "l,r,r");
    NVVM::CpAsyncBulkCommitGroupOp::create(b, loc);
    NVVM::CpAsyncBulkWaitGroupOp::create(b, loc, /*group=*/0,
                                         /*read=*/b.getUnitAttr());
    rewriter.eraseOp(op);
    return success();
  }
};

/// mbarrier.try_wait.parity in a loop until the use's phase completed.
struct WaitBarrier : OpConversionPattern<WaitBarrierOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(WaitBarrierOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto [u, barrier] = useAndBarrier(rewriter, op, adaptor);
    waitForPhase(rewriter, op.getLoc(), barrier, u,
                 op.getBarriers().getType().getCount(), /*previous=*/false);
    rewriter.eraseOp(op);
    return success();
  }
};

/// bar.warp.sync, then lane 0's mbarrier.arrive (release, CTA scope) on the
/// use's barrier: one arrival per warp. The arrive is predicated, not
/// branched around: a branch between wgmma ops makes ptxas serialise every
/// wgmma of the kernel (C7518, "WG.DP in divergent path"; -20% measured).
struct ArriveBarrier : OpConversionPattern<ArriveBarrierOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ArriveBarrierOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value barrier = useAndBarrier(rewriter, op, adaptor).second;
    NVVM::SyncWarpOp::create(rewriter, loc, constI32(rewriter, loc, -1));
    Value lane = NVVM::LaneIdOp::create(rewriter, loc, rewriter.getI32Type());
    Ptx::emit(rewriter, loc, Type(), {lane, barrier},
              "{\n.reg .pred p;\nsetp.eq.u32 p, $0, 0;\n"
              "@p mbarrier.arrive.shared.b64 _, [$1];\n}",
              "r,l");
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void mlir::attn::nv::populateTmaPatterns(TileTypeConverter &converter,
                                         RewritePatternSet &patterns) {
  patterns.add<AllocatedOffset<AllocBarriersOp>, InitBarriers, CopyTma,
               StoreTma, WaitStoresRead, ReduceBulk, WaitBarrier,
               ArriveBarrier>(
      converter, patterns.getContext());
}
