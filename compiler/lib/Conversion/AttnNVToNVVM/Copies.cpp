//===- Copies.cpp - shared-memory buffers and cp.async tile copies --------===//

#include "Patterns.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::nv;

namespace {

/// Stage `index mod S`: offset + stage · tile bytes.
struct Slot : OpConversionPattern<SlotOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(SlotOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<SmemType>(op.getBuffer().getType());
    // In 32 bits: a 64-bit remainder is a multi-instruction mul.hi.u64 in
    // every K/V iteration, and a tile index never reaches 2^31.
    Value index = arith::IndexCastUIOp::create(
        rewriter, loc, rewriter.getI32Type(), adaptor.getIndex());
    Value stage = arith::RemUIOp::create(
        rewriter, loc, index, constI32(rewriter, loc, type.getStages()));
    Value off = arith::MulIOp::create(
        rewriter, loc, stage, constI32(rewriter, loc, type.getTileBytes()));
    rewriter.replaceOpWithNewOp<arith::AddIOp>(op, adaptor.getBuffer(), off);
    return success();
  }
};

/// The element offset of key row `row` of a paged cache (`source`, its
/// kernel parameters `sourceParams`) for block-table row `batch`: the page
/// read from the table (its parameters `pages`: pointer, sizes, strides)
/// through the read-only cache, clamped like every lowering
/// (getPagedRowPosition, clampPage).
Value pagedRowElements(OpBuilder &b, Location loc, const GlobalTensor &global,
                       MemRefType source, ValueRange sourceParams,
                       ValueRange pages, Value batch, Value head, Value row) {
  Type index = b.getIndexType(), i32 = b.getI32Type();
  auto asIndex = [&](Value v) {
    return arith::IndexCastOp::create(b, loc, index, v).getResult();
  };
  auto [column, inPage] = getPagedRowPosition(
      b, loc, row, source.getDimSize(2), asIndex(pages[2]));
  // One statement each: the IR's order must not depend on the order in
  // which the C++ compiler evaluates arguments.
  Value rowStart = arith::MulIOp::create(b, loc, batch, asIndex(pages[3]));
  Value columnOffset =
      arith::MulIOp::create(b, loc, column, asIndex(pages[4]));
  Value entry = arith::AddIOp::create(b, loc, rowStart, columnOffset);
  Value at = LLVM::GEPOp::create(
      b, loc, pages[0].getType(), i32, pages[0],
      ValueRange{arith::IndexCastOp::create(b, loc, b.getI64Type(), entry)});
  Value page = LLVM::LoadOp::create(b, loc, i32, at, /*alignment=*/4,
                                    /*isVolatile=*/false,
                                    /*isNonTemporal=*/false,
                                    /*isInvariant=*/true);
  Value number = asIndex(page);
  page = clampPage(b, loc, number, asIndex(sourceParams[1]));
  return global.rowElements(b, loc, page, head, inPage);
}

/// The passes of a tile's copy by `threads` threads, `total` chunks: pass k
/// issues `body(builder, at, k)` for chunks at = k·threads on; the last,
/// partial pass only in the threads that `inLastPass(at)` selects.
void forEachPass(OpBuilder &b, Location loc, int64_t total, int64_t threads,
                 function_ref<Value(int64_t at)> inLastPass,
                 function_ref<void(OpBuilder &, int64_t at, int64_t k)> body) {
  for (int64_t at = 0, k = 0; at < total; at += threads, ++k) {
    if (at + threads <= total) {
      body(b, at, k);
      continue;
    }
    scf::IfOp::create(b, loc, inLastPass(at), [&](OpBuilder &nb, Location nl) {
      body(nb, at, k);
      scf::YieldOp::create(nb, nl);
    });
  }
}

/// A chunk's source address and copy size: `bytes` (32-bit) past the tile's
/// first row `tileBase`, or, where not `valid`, 0 bytes from the first row
/// (cp.async zero-fills; selecting the 32-bit offset rather than the 64-bit
/// pointer is one SEL a chunk instead of two).
std::pair<Value, Value> chunkSource(OpBuilder &b, Location loc, Value tileBase,
                                    Value bytes, Value valid) {
  Value none = constI32(b, loc, 0);
  bytes = arith::SelectOp::create(b, loc, valid, bytes, none);
  Value from = LLVM::GEPOp::create(b, loc, tileBase.getType(), b.getI8Type(),
                                   tileBase, ValueRange{bytes});
  Value size =
      arith::SelectOp::create(b, loc, valid, constI32(b, loc, 16), none);
  return {from, size};
}

/// The strided form of a copy (CopyAsync's `strided`, set on the
/// backward's loop copies), of a tile whose passes each cover whole rows:
/// thread t copies column t mod C of rows t / C + k·(threads /
/// C), pass k. Kept as a value per chunk, a chunk's row, 32-bit source
/// offset and 64-bit shared pointer are loop-invariant, and LLVM hoists
/// them out of the loop: ~40 registers live across the backward's K/V loop
/// for 8 chunks of Q and dO (its spills on mma.sync). So the thread index
/// and the row stride pass through an empty asm in the loop (Ptx::through),
/// everything else derives from them there, and each pass's shared address
/// is the first's 32-bit one plus an immediate in the copy's PTX.
void copyStridedInLoop(OpBuilder &b, Location loc, const SharedBase &smem,
                       const SharedGeometry &geometry, Value tileBase,
                       Value smemOffset, Value tid, Value rowStride,
                       Value rowsLeft, int64_t copiedChunks,
                       int64_t validChunks, int64_t total, int64_t threads) {
  auto c = [&](int64_t v) { return constI32(b, loc, v); };
  SmallVector<Value> pinned = Ptx::through(b, loc, "", {tid, rowStride});
  Value thread = pinned[0], stride = pinned[1];
  Value row0 = arith::DivUIOp::create(b, loc, thread, c(copiedChunks));
  Value col = arith::RemUIOp::create(b, loc, thread, c(copiedChunks));
  Value dst0 = arith::AddIOp::create(
      b, loc, arith::AddIOp::create(b, loc, smem.address, smemOffset),
      geometry.chunkOffset(b, loc, row0, col));
  Value inCols = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, col,
                                       c(validChunks));
  Value rowBytes =
      arith::MulIOp::create(b, loc, stride, c(geometry.elementBytes));
  Value bytes0 = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, row0, rowBytes),
      arith::MulIOp::create(b, loc, col, c(16)));
  int64_t rowsPerPass = threads / copiedChunks;
  auto inLastPass = [&](int64_t at) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, thread,
                                 c(total - at));
  };
  forEachPass(
      b, loc, total, threads, inLastPass,
      [&](OpBuilder &bb, int64_t, int64_t k) {
        Value rowK = arith::AddIOp::create(bb, loc, row0,
                                           constI32(bb, loc, k * rowsPerPass));
        Value valid = arith::AndIOp::create(
            bb, loc,
            arith::CmpIOp::create(bb, loc, arith::CmpIPredicate::slt, rowK,
                                  rowsLeft),
            inCols);
        Value bytes = arith::AddIOp::create(
            bb, loc, bytes0,
            arith::MulIOp::create(bb, loc, rowBytes,
                                  constI32(bb, loc, k * rowsPerPass)));
        auto [from, size] = chunkSource(bb, loc, tileBase, bytes, valid);
        std::string text = "cp.async.cg.shared.global [$0+" +
                           std::to_string(k * rowsPerPass * geometry.pitch()) +
                           "], [$1], 16, $2;";
        Ptx::emit(bb, loc, Type(), {dst0, from, size}, text, "r,l,r");
      });
}

/// Every thread copies 16-byte chunks (thread t: chunks t, t + threads,
/// ...) with cp.async.cg; chunks of rows at or past the bound and columns
/// past the row copy 0 bytes, which fills zeros. A padded tile's row is
/// copied up to its stored columns (ldmatrix reads the 16-column k block
/// that holds the last column); a swizzled tile's only up to its own: wgmma
/// reads no column past them (k steps of 16, N = the columns), so the rest
/// of a partly used 64-column block is never written.
struct CopyAsync : OpConversionPattern<CopyAsyncOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(CopyAsyncOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    ConfigAttr config = configOf(op);
    if (!config || config.isHost())
      return op.emitOpError("needs the kernel's NVIDIA attn.config");
    if (op.getTransposed())
      return op.emitOpError("transposed is a TMA copy (a transposed tensor "
                            "map); cp.async cannot transpose: run "
                            "attn-nv-pipeline-copies with TMA");
    auto &b = rewriter;
    auto dest = cast<SmemType>(op.getDest().getType());
    SharedGeometry geometry(dest);
    auto src = cast<MemRefType>(op.getSource().getType());
    GlobalTensor global(adaptor.getSource(), src);
    Value ptr = global.ptr;
    Type i32 = b.getI32Type(), index = b.getIndexType();
    Value batch = adaptor.getBatch().front(), head = adaptor.getHead().front(),
          row = adaptor.getRow().front(), bound = adaptor.getBound().front();
    Value smemOffset = adaptor.getDest().front();
    Value rowsPerHead = adaptor.getRowsPerHead().empty()
                            ? Value()
                            : adaptor.getRowsPerHead().front();
    Value start =
        adaptor.getStart().empty() ? Value() : adaptor.getStart().front();
    SharedBase smem = SharedBase::get(b, loc, op);
    int64_t chunksPerRow = geometry.storedCols() * geometry.elementBytes / 16;
    int64_t validChunks = geometry.cols * geometry.elementBytes / 16;
    int64_t copiedChunks =
        geometry.layout == SharedLayout::Padded ? chunksPerRow : validChunks;
    int64_t total = geometry.rows * copiedChunks;
    int64_t threads = config.getThreads();
    // One 64-bit pointer to the tile's first row; each chunk adds a 32-bit
    // byte offset. LLVM hoists every chunk's loop-invariant address part out
    // of the K/V loop: 32-bit parts keep that from costing two registers each
    // (the runtime bounds row strides so that a tile spans < 2^31 bytes).
    // Out-of-range chunks copy 0 bytes (zero fill) from a valid address: a
    // tile that starts at or past the bound from `ptr`, any other chunk from
    // the tile's first row, by selecting its 32-bit offset rather than its
    // 64-bit pointer (one SEL a chunk instead of two).
    ValueRange pages = adaptor.getPages();
    Value tileBase;
    if (!rowsPerHead && pages.empty()) {
      Value rowAddress =
          global.address(b, loc, global.rowElements(b, loc, batch, head, row));
      Value inBounds =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, row, bound);
      tileBase = arith::SelectOp::create(b, loc, inBounds, rowAddress, ptr);
    }
    Value rowStride = arith::TruncIOp::create(b, loc, i32, global.strides[2]);
    Value rowsLeft = arith::IndexCastOp::create(
        b, loc, i32, arith::SubIOp::create(b, loc, bound, row));
    Value tid = threadId(b, loc);
    // `strided`, with whole rows a pass (and, swizzled, a multiple of the
    // 8-row XOR period): every pass copies the same column of rows
    // rowsPerPass apart, its shared offset the first pass's plus a
    // constant. Otherwise the per-chunk form below.
    int64_t rowsPerPass = threads / copiedChunks;
    if (op.getStrided() && threads % copiedChunks == 0 &&
        (geometry.layout == SharedLayout::Padded || rowsPerPass % 8 == 0)) {
      copyStridedInLoop(b, loc, smem, geometry, tileBase, smemOffset, tid,
                        rowStride, rowsLeft, copiedChunks, validChunks, total,
                        threads);
      rewriter.eraseOp(op);
      return success();
    }
    // Thread t's chunk of the pass at `at`: t + at (the last pass's, made
    // for its condition, before it).
    DenseMap<int64_t, Value> lastChunk;
    auto inLastPass = [&](int64_t at) {
      Value chunk = lastChunk[at] =
          arith::AddIOp::create(b, loc, tid, constI32(b, loc, at));
      return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, chunk,
                                   constI32(b, loc, total));
    };
    forEachPass(
        b, loc, total, threads, inLastPass,
        [&](OpBuilder &bb, int64_t at, int64_t) {
          Value chunk = lastChunk.lookup(at);
          if (!chunk)
            chunk = arith::AddIOp::create(bb, loc, tid, constI32(bb, loc, at));
          Value r = arith::DivUIOp::create(bb, loc, chunk,
                                           constI32(bb, loc, copiedChunks));
          Value c = arith::RemUIOp::create(bb, loc, chunk,
                                           constI32(bb, loc, copiedChunks));
          Value dst = arith::AddIOp::create(
              bb, loc, smemOffset, geometry.chunkOffset(bb, loc, r, c));
          Value inRows = arith::CmpIOp::create(
              bb, loc, arith::CmpIPredicate::slt, r, rowsLeft);
          Value inCols =
              arith::CmpIOp::create(bb, loc, arith::CmpIPredicate::ult, c,
                                    constI32(bb, loc, validChunks));
          Value valid = arith::AndIOp::create(bb, loc, inRows, inCols);
          Value from, size; // the chunk's source address and bytes copied
          if (rowsPerHead || !pages.empty()) {
            // Packed heads: each row finds its own head (one copy per CTA,
            // of Q, so the 64-bit arithmetic does not matter). A paged cache:
            // each row finds its page in the block table (a row's pages may
            // lie anywhere, so the address is 64-bit).
            Value p = arith::AddIOp::create(
                bb, loc, row, arith::IndexCastUIOp::create(bb, loc, index, r));
            Value chunkBytes = arith::IndexCastUIOp::create(
                bb, loc, index,
                arith::MulIOp::create(bb, loc, c, constI32(bb, loc, 16)));
            Value rowOff;
            if (!pages.empty()) {
              rowOff =
                  pagedRowElements(bb, loc, global, src, adaptor.getSource(),
                                   pages, batch, head, p);
            } else {
              auto [h, n] =
                  getPackedRowPosition(bb, loc, head, p, rowsPerHead, start);
              rowOff = global.rowElements(bb, loc, batch, h, n);
            }
            from = global.address(bb, loc, rowOff, chunkBytes);
            from = arith::SelectOp::create(bb, loc, valid, from, ptr);
            size = arith::SelectOp::create(
                bb, loc, valid, constI32(bb, loc, 16), constI32(bb, loc, 0));
          } else {
            Value colBytes =
                arith::MulIOp::create(bb, loc, c, constI32(bb, loc, 16));
            Value elementBytes = constI32(bb, loc, geometry.elementBytes);
            Value rowBytes = arith::MulIOp::create(
                bb, loc, arith::MulIOp::create(bb, loc, r, rowStride),
                elementBytes);
            Value bytes = arith::AddIOp::create(bb, loc, rowBytes, colBytes);
            std::tie(from, size) = chunkSource(bb, loc, tileBase, bytes, valid);
          }
          NVVM::CpAsyncOp::create(bb, loc, smem.at(bb, loc, dst), from, 16,
                                  NVVM::LoadCacheModifierKind::CG, size);
        });
    rewriter.eraseOp(op);
    return success();
  }
};

/// Stores `pair` (i32) at shared address (`rowAddress` ^ `chunkBytes`) +
/// `bytes`, the XOR inside the inline PTX: LLVM cannot hoist a store's
/// address out of a loop then (see StoreShared).
void storeSwizzled(OpBuilder &b, Location loc, Value rowAddress,
                   int64_t chunkBytes, int64_t bytes, Value pair) {
  std::string text = "{\n.reg .b32 a;\nxor.b32 a, $0, " +
                     std::to_string(chunkBytes) +
                     ";\nst.shared.b32 [a+" + std::to_string(bytes) +
                     "], $1;\n}";
  Ptx::emit(b, loc, Type(), {rowAddress, pair}, text, "r,r");
}

/// Each thread writes its pairs of adjacent accumulator columns as one
/// 32-bit store (rounded to the buffer's 16-bit type) at their place in the
/// tile's layout; padding columns (past the tile's own) are not written.
///
/// Into a swizzle_128b buffer (the atomic backward's dSᵀ, written in its
/// K/V loop) a thread's pairs lie 8·k rows and 8·j columns from its first
/// one: all in its row mod 8 and its column in a chunk, so pair i is at
/// (Y ^ 16 (chunk_i mod 8)) + 128 (row_i - row_0) + (block_i) · rows · 128
/// with one thread value Y (the first pair's row and column, and 16 (row
/// mod 8): bits 6:4 of the 1024-aligned rest are zero, so adding them is
/// XOR-ing them). Each pair's own address (the generic path) was loop-
/// invariant: LLVM hoisted the 16 out of that loop (15 registers live
/// across it, the spills of issue 12); the XOR done in the store's PTX
/// keeps one.
struct StoreShared : OpConversionPattern<StoreSharedOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(StoreSharedOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto &b = rewriter;
    Location loc = op.getLoc();
    auto tile = *DistributedTile::get(op.getTile().getType());
    auto dest = cast<SmemType>(op.getDest().getType());
    SharedGeometry geometry(dest);
    Type element = dest.getElementType(), i32 = b.getI32Type();
    SharedBase smem = SharedBase::get(b, loc, op);
    Value base = adaptor.getDest().front();
    auto [baseRow, baseCol] = tile.threadBase(b, loc);
    baseRow = arith::IndexCastOp::create(b, loc, i32, baseRow);
    baseCol = arith::IndexCastOp::create(b, loc, i32, baseCol);
    ValueRange values = adaptor.getTile();
    bool rowsAndChunksApart = true; // pairs 8·k rows, 8·j columns apart
    for (int64_t i = 0; i < tile.valuesPerThread(); i += 2)
      rowsAndChunksApart &= tile.offset(i).row % 8 == 0 &&
                            tile.offset(i).col % 8 == 0;
    if (geometry.layout == SharedLayout::Swizzle128B && rowsAndChunksApart) {
      constexpr int64_t kRowBytes = 128, kChunkBytes = 16, kChunkCols = 8;
      Value rowBytes =
          arith::MulIOp::create(b, loc, baseRow, constI32(b, loc, kRowBytes));
      Value colBytes = arith::MulIOp::create(
          b, loc, baseCol, constI32(b, loc, geometry.elementBytes));
      Value rowInAtom =
          arith::AndIOp::create(b, loc, baseRow, constI32(b, loc, 7));
      Value swizzle = arith::MulIOp::create(b, loc, rowInAtom,
                                            constI32(b, loc, kChunkBytes));
      Value y = arith::AddIOp::create(b, loc, smem.address, base);
      y = arith::AddIOp::create(b, loc, y, rowBytes);
      y = arith::AddIOp::create(b, loc, y, colBytes);
      y = arith::AddIOp::create(b, loc, y, swizzle);
      for (int64_t i = 0; i < tile.valuesPerThread(); i += 2) {
        if (tile.isPadding(i))
          continue;
        ElementOffset off = tile.offset(i);
        int64_t chunk = off.col / kChunkCols;
        int64_t block = chunk / 8;
        Value pair = packPair(b, loc, values[i], values[i + 1], element);
        if (pair.getType() != i32)
          pair = LLVM::BitcastOp::create(b, loc, i32, pair);
        storeSwizzled(b, loc, y, kChunkBytes * (chunk % 8),
                      block * geometry.rows * kRowBytes + off.row * kRowBytes,
                      pair);
      }
      rewriter.eraseOp(op);
      return success();
    }
    for (int64_t i = 0; i < tile.valuesPerThread(); i += 2) {
      if (tile.isPadding(i))
        continue;
      ElementOffset off = tile.offset(i);
      Value row = arith::AddIOp::create(b, loc, baseRow,
                                        constI32(b, loc, off.row));
      Value col = arith::AddIOp::create(b, loc, baseCol,
                                        constI32(b, loc, off.col));
      Value chunk = arith::DivUIOp::create(b, loc, col, constI32(b, loc, 8));
      Value elementBytes = constI32(b, loc, geometry.elementBytes);
      Value colInChunk =
          arith::RemUIOp::create(b, loc, col, constI32(b, loc, 8));
      Value inChunk = arith::MulIOp::create(b, loc, colInChunk, elementBytes);
      Value at = arith::AddIOp::create(
          b, loc, base,
          arith::AddIOp::create(b, loc,
                                geometry.chunkOffset(b, loc, row, chunk),
                                inChunk));
      Value pair = packPair(b, loc, values[i], values[i + 1], element);
      if (pair.getType() != i32)
        pair = LLVM::BitcastOp::create(b, loc, i32, pair);
      LLVM::StoreOp::create(b, loc, pair, smem.at(b, loc, at),
                            /*alignment=*/4);
    }
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void mlir::attn::nv::populateCopyPatterns(TileTypeConverter &converter,
                                          RewritePatternSet &patterns) {
  patterns.add<AllocatedOffset<AllocSharedOp>, Slot, CopyAsync, StoreShared>(
      converter, patterns.getContext());
}
