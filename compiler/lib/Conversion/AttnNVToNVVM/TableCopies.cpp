//===- TableCopies.cpp - a captured table's tiles through shared memory ---===//
//
// attn_nv.copy_table_async: every thread issues cp.async of pieces of the
// tile, consecutive threads consecutive pieces of a row (coalesced). Pieces
// are 16-byte chunks where the table allows them, which only the call
// knows (a bias tensor's pointer and strides are arguments): unit column
// stride, rows 16-byte aligned, and the tile spanning less than 2^31 bytes
// (32-bit offsets, as the K/V copies'); else single elements at 64-bit
// offsets. One uniform branch picks them per tile.
// attn_nv.load_shared: each thread reads its accumulator elements, two
// adjacent columns (8 bytes) a load.
//
//===----------------------------------------------------------------------===//

#include "Patterns.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::nv;

namespace {

/// f32 elements in a 16-byte chunk of a shared tile.
constexpr int64_t kElementsPerChunk = 4;
constexpr int64_t kElementBytes = 4;

struct CopyTableAsync : OpConversionPattern<CopyTableAsyncOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(CopyTableAsyncOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    ConfigAttr config = configOf(op);
    if (!config || config.isHost())
      return op.emitOpError("needs the kernel's NVIDIA attn.config");
    ValueRange params = adaptor.getSource();
    if (params.size() != 5)
      return op.emitOpError("copies from a kernel argument (pointer, sizes, "
                            "strides)");
    auto &b = rewriter;
    SharedGeometry geometry(cast<SmemType>(op.getDest().getType()));
    Type i32 = b.getI32Type(), i64 = b.getI64Type();
    Value ptr = params[0], stride0 = params[3], stride1 = params[4];
    auto toI32 = [&](Value index) {
      return arith::IndexCastOp::create(b, loc, i32, index).getResult();
    };
    auto toI64 = [&](Value index) {
      return arith::IndexCastOp::create(b, loc, i64, index).getResult();
    };
    Value row = adaptor.getRow().front(), col = adaptor.getCol().front();
    Value rows = adaptor.getRows().front(), cols = adaptor.getCols().front();
    Value smemOffset = adaptor.getDest().front();
    SharedBase smem = SharedBase::get(b, loc, op);
    // The tile's first element, or the table's first when the tile starts
    // past the table (its pieces copy 0 bytes from a valid address).
    Value rowInside =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, row, rows);
    Value colInside =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, col, cols);
    Value inside = arith::AndIOp::create(b, loc, rowInside, colInside);
    Value rowPart = LLVM::MulOp::create(b, loc, toI64(row), stride0);
    Value colPart = LLVM::MulOp::create(b, loc, toI64(col), stride1);
    Value first = LLVM::AddOp::create(b, loc, rowPart, colPart);
    Value firstPtr = LLVM::GEPOp::create(b, loc, ptr.getType(), b.getF32Type(),
                                         ptr, ValueRange{first});
    Value tileBase = arith::SelectOp::create(b, loc, inside, firstPtr, ptr);
    Value rowsLeft = toI32(arith::SubIOp::create(b, loc, rows, row));
    Value colsLeft = toI32(arith::SubIOp::create(b, loc, cols, col));
    Value rowStride = arith::TruncIOp::create(b, loc, i32, stride0);
    Value tid = threadId(b, loc);
    int64_t threads = config.getThreads();
    auto c32 = [&](OpBuilder &ob, int64_t v) { return constI32(ob, loc, v); };
    auto c64 = [&](OpBuilder &ob, int64_t v) {
      return LLVM::ConstantOp::create(ob, loc, i64, ob.getI64IntegerAttr(v))
          .getResult();
    };

    // i1: tile row r and column c (i32) lie inside the table.
    auto inTable = [&](OpBuilder &vb, Value r, Value c) -> Value {
      Value inRows = arith::CmpIOp::create(vb, loc, arith::CmpIPredicate::slt,
                                           r, rowsLeft);
      Value inCols = arith::CmpIOp::create(vb, loc, arith::CmpIPredicate::slt,
                                           c, colsLeft);
      return arith::AndIOp::create(vb, loc, inRows, inCols);
    };

    // 16-byte chunks at 32-bit offsets, chunk t, t + threads, ... of
    // thread t, unrolled (their offsets are loop-invariant: LLVM keeps them
    // in registers across the K/V loop, as the K/V copies').
    auto copyChunks = [&](OpBuilder &pb) {
      int64_t perRow = geometry.cols / kElementsPerChunk;
      int64_t total = geometry.rows * perRow;
      for (int64_t at = 0; at < total; at += threads) {
        Value piece = arith::AddIOp::create(pb, loc, tid, c32(pb, at));
        auto body = [&](OpBuilder &bb) {
          Value r = arith::DivUIOp::create(bb, loc, piece, c32(bb, perRow));
          Value chunk = arith::RemUIOp::create(bb, loc, piece, c32(bb, perRow));
          Value c =
              arith::MulIOp::create(bb, loc, chunk, c32(bb, kElementsPerChunk));
          Value dst = arith::AddIOp::create(
              bb, loc, smemOffset, geometry.chunkOffset(bb, loc, r, chunk));
          Value valid = inTable(bb, r, c);
          // Unit column stride: the chunk's bytes follow its row's.
          Value rowElements = arith::MulIOp::create(bb, loc, r, rowStride);
          Value elementsIn = arith::AddIOp::create(bb, loc, rowElements, c);
          Value bytes = arith::MulIOp::create(bb, loc, elementsIn,
                                              c32(bb, kElementBytes));
          bytes = arith::SelectOp::create(bb, loc, valid, bytes, c32(bb, 0));
          Value from = LLVM::GEPOp::create(bb, loc, ptr.getType(),
                                           bb.getI8Type(), tileBase,
                                           ValueRange{bytes});
          // The row's last chunk may hold fewer columns: zero-fill past.
          Value left = arith::SubIOp::create(bb, loc, colsLeft, c);
          left = arith::MinSIOp::create(bb, loc, left,
                                        c32(bb, kElementsPerChunk));
          Value leftBytes =
              arith::MulIOp::create(bb, loc, left, c32(bb, kElementBytes));
          Value size =
              arith::SelectOp::create(bb, loc, valid, leftBytes, c32(bb, 0));
          NVVM::CpAsyncOp::create(bb, loc, smem.at(bb, loc, dst), from,
                                  kElementsPerChunk * kElementBytes,
                                  NVVM::LoadCacheModifierKind::CG, size);
        };
        if (at + threads <= total) {
          body(pb);
          continue;
        }
        Value inTile = arith::CmpIOp::create(pb, loc, arith::CmpIPredicate::ult,
                                             piece, c32(pb, total));
        scf::IfOp::create(pb, loc, inTile, [&](OpBuilder &nb, Location nl) {
          body(nb);
          scf::YieldOp::create(nb, nl);
        });
      }
    };

    // Single elements at 64-bit offsets: a loop from the thread's index
    // (no constant trip count, so LLVM does not unroll it and hoist 64-bit
    // offsets per element out of the K/V loop: 312 bytes spilled at
    // D = 128 when it did).
    auto copyElements = [&](OpBuilder &lb) {
      Type index = lb.getIndexType();
      Value first = arith::IndexCastUIOp::create(lb, loc, index, tid);
      Value total = constIndex(lb, loc, geometry.rows * geometry.cols);
      Value step = constIndex(lb, loc, threads);
      scf::ForOp::create(
          lb, loc, first, total, step, ValueRange{},
          [&](OpBuilder &bb, Location bl, Value element, ValueRange) {
            Value e = arith::IndexCastUIOp::create(bb, loc, i32, element);
            Value r = arith::DivUIOp::create(bb, loc, e, c32(bb, geometry.cols));
            Value c = arith::RemUIOp::create(bb, loc, e, c32(bb, geometry.cols));
            Value chunk =
                arith::DivUIOp::create(bb, loc, c, c32(bb, kElementsPerChunk));
            Value inChunk =
                arith::RemUIOp::create(bb, loc, c, c32(bb, kElementsPerChunk));
            Value inChunkBytes =
                arith::MulIOp::create(bb, loc, inChunk, c32(bb, kElementBytes));
            Value dst = arith::AddIOp::create(
                bb, loc, geometry.chunkOffset(bb, loc, r, chunk), inChunkBytes);
            dst = arith::AddIOp::create(bb, loc, smemOffset, dst);
            Value valid = inTable(bb, r, c);
            Value r64 = arith::ExtUIOp::create(bb, loc, i64, r);
            Value c64v = arith::ExtUIOp::create(bb, loc, i64, c);
            Value rowElements = LLVM::MulOp::create(bb, loc, r64, stride0);
            Value colElements = LLVM::MulOp::create(bb, loc, c64v, stride1);
            Value elementsIn =
                LLVM::AddOp::create(bb, loc, rowElements, colElements);
            elementsIn = arith::SelectOp::create(bb, loc, valid, elementsIn,
                                                 c64(bb, 0));
            Value from =
                LLVM::GEPOp::create(bb, loc, ptr.getType(), bb.getF32Type(),
                                    tileBase, ValueRange{elementsIn});
            Value full = c32(bb, kElementBytes);
            Value none = c32(bb, 0);
            Value size = arith::SelectOp::create(bb, loc, valid, full, none);
            NVVM::CpAsyncOp::create(bb, loc, smem.at(bb, loc, dst), from,
                                    kElementBytes,
                                    NVVM::LoadCacheModifierKind::CA, size);
            scf::YieldOp::create(bb, bl);
          });
    };

    // Chunks: unit column stride, rows 16 bytes apart, the tile's first
    // element 16-byte aligned, and the tile under 2^31 bytes.
    // One op-creating call a statement: the IR's order must not depend on
    // the order in which the C++ compiler evaluates arguments.
    auto isZero = [&](Value v) {
      Value zero = c64(b, 0);
      return LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq, v, zero)
          .getResult();
    };
    Value unit = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq, stride1,
                                      c64(b, 1));
    Value rowRest = LLVM::AndOp::create(b, loc, stride0,
                                        c64(b, kElementsPerChunk - 1));
    Value rowAligned = isZero(rowRest);
    Value address = LLVM::PtrToIntOp::create(b, loc, i64, tileBase);
    Value baseRest = LLVM::AndOp::create(
        b, loc, address, c64(b, kElementsPerChunk * kElementBytes - 1));
    Value baseAligned = isZero(baseRest);
    int64_t maxRowStride =
        (int64_t(1) << 31) / (geometry.rows * kElementBytes);
    Value small = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ult,
                                       stride0, c64(b, maxRowStride));
    Value vector = arith::AndIOp::create(b, loc, unit, rowAligned);
    vector = arith::AndIOp::create(b, loc, vector, baseAligned);
    vector = arith::AndIOp::create(b, loc, vector, small);
    scf::IfOp::create(
        b, loc, vector,
        [&](OpBuilder &tb, Location tl) {
          copyChunks(tb);
          scf::YieldOp::create(tb, tl);
        },
        [&](OpBuilder &eb, Location el) {
          copyElements(eb);
          scf::YieldOp::create(eb, el);
        });
    rewriter.eraseOp(op);
    return success();
  }
};

/// Each thread's pairs of adjacent accumulator columns, one 8-byte load
/// each at their place in the tile's layout; padding columns read as 0.
struct LoadShared : OpConversionPattern<LoadSharedOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(LoadSharedOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto &b = rewriter;
    Location loc = op.getLoc();
    auto tile = *DistributedTile::get(op.getResult().getType());
    SharedGeometry geometry(cast<SmemType>(op.getSource().getType()));
    Type i32 = b.getI32Type(), f32 = b.getF32Type();
    auto pairType = VectorType::get({2}, f32);
    SharedBase smem = SharedBase::get(b, loc, op);
    Value base = adaptor.getSource().front();
    auto [baseRow, baseCol] = tile.threadBase(b, loc);
    baseRow = arith::IndexCastOp::create(b, loc, i32, baseRow);
    baseCol = arith::IndexCastOp::create(b, loc, i32, baseCol);
    SmallVector<Value> values;
    for (int64_t i = 0; i < tile.valuesPerThread(); i += 2) {
      if (tile.isPadding(i)) {
        Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
        values.append({zero, zero});
        continue;
      }
      ElementOffset off = tile.offset(i);
      Value row =
          arith::AddIOp::create(b, loc, baseRow, constI32(b, loc, off.row));
      Value col =
          arith::AddIOp::create(b, loc, baseCol, constI32(b, loc, off.col));
      Value chunk = arith::DivUIOp::create(b, loc, col,
                                           constI32(b, loc, kElementsPerChunk));
      Value inChunk = arith::RemUIOp::create(
          b, loc, col, constI32(b, loc, kElementsPerChunk));
      Value inChunkBytes = arith::MulIOp::create(
          b, loc, inChunk, constI32(b, loc, kElementBytes));
      Value at = arith::AddIOp::create(
          b, loc, geometry.chunkOffset(b, loc, row, chunk), inChunkBytes);
      at = arith::AddIOp::create(b, loc, base, at);
      Value pair = LLVM::LoadOp::create(b, loc, pairType, smem.at(b, loc, at),
                                        /*alignment=*/8);
      for (int64_t e = 0; e < 2; ++e)
        values.push_back(LLVM::ExtractElementOp::create(
            b, loc, pair, LLVM::ConstantOp::create(b, loc, i32,
                                                   b.getI32IntegerAttr(e))));
    }
    rewriter.replaceOpWithMultiple(op, {values});
    return success();
  }
};

} // namespace

void mlir::attn::nv::populateTableCopyPatterns(TileTypeConverter &converter,
                                               RewritePatternSet &patterns) {
  patterns.add<CopyTableAsync, LoadShared>(converter, patterns.getContext());
}
