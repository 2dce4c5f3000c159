//===- GlobalAccess.cpp - tiles between registers and global memory -------===//
//
// An output tile (#attn_nv.acc, 16-bit) is stored as 4-byte pairs: each
// thread holds two adjacent columns per 8-column block; an f32 one (split-KV's
// partial outputs) as 8-byte pairs, or, accumulating (the backward's dQ
// parts), as one relaxed vector reduction per pair (red.global.add.v2.f32,
// PTX ISA 8.1: the pass records it on the gpu.module, kMinPTXVersionAttr;
// nothing waits on it). A row tile (the
// LSE, #attn_nv.rows) is stored by the first thread of each quad, which
// holds its rows; a null pointer skips it (the LSE is optional).
// A tile read elementwise rather than by a product (the backward's O and
// dO for its row terms; the LSE and the row terms themselves, as rows or
// columns) is loaded straight into its register layout, each thread its own
// elements, zeros past the bound (selected, not branched around); row terms
// as columns two a lane of every 64 (#attn_nv.cols), which the maps that
// use them hand out by shuffles (Elementwise.cpp).
//
//===----------------------------------------------------------------------===//

#include "Patterns.h"

#include "attn/Target/PTX.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::nv;

namespace {

/// red.global.add.v2.f32 is PTX ISA 8.1 (sm_90 and newer; the atomic
/// backward exists on wgmma only, attn-configure).
constexpr int kVectorRedPTXVersion = 81;

/// Adds the adjacent f32 `lo` and `hi` to global `address` (8-byte aligned)
/// and address + 4 by one relaxed vector reduction: one request for the
/// 8 bytes where two scalar atomics made two, each half of them -- a warp's
/// pairs fill 32-byte sectors (4 lanes a row) instead of hitting each twice.
void addPair(OpBuilder &b, Location loc, Value address, Value lo, Value hi) {
  Ptx::emit(b, loc, Type(), {address, lo, hi},
            "red.relaxed.gpu.global.add.v2.f32 [$0], {$1, $2};", "l,f,f");
}

struct StoreTile : OpConversionPattern<StoreTileOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(StoreTileOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto tile = DistributedTile::get(op.getTile().getType());
    // A cols tile has no m tile: as an acc one it would store nothing.
    if (!tile || tile->kind() == DistributedTile::Kind::OperandA ||
        tile->kind() == DistributedTile::Kind::Cols || tile->partial() ||
        (tile->kind() == DistributedTile::Kind::Acc &&
         tile->elementType().getIntOrFloatBitWidth() != 16 &&
         !tile->elementType().isF32()))
      return op.emitOpError("stores 16-bit or f32 #attn_nv.acc tiles and "
                            "#attn_nv.rows tiles (not partial sums), got ")
             << op.getTile().getType();
    bool accumulate = op.getAccumulate();
    if (accumulate && (tile->kind() != DistributedTile::Kind::Acc ||
                       !tile->elementType().isF32()))
      return op.emitOpError("accumulates f32 #attn_nv.acc tiles, got ")
             << op.getTile().getType();
    ConfigAttr config = configOf(op);
    if (accumulate && (!config || !config.isWgmma()))
      return op.emitOpError("accumulates in wgmma kernels only (sm_90a: "
                            "red.global.add.v2.f32), got mapping '")
             << (config ? config.getMapping() : StringRef()) << "'";
    if (accumulate)
      if (auto module = op->getParentOfType<gpu::GPUModuleOp>())
        rewriter.modifyOpInPlace(module, [&] {
          module->setAttr(kMinPTXVersionAttr,
                          rewriter.getI32IntegerAttr(kVectorRedPTXVersion));
        });
    auto &b = rewriter;
    Location loc = op.getLoc();
    auto dest = cast<MemRefType>(op.getDest().getType());
    GlobalTensor global(adaptor.getDest(), dest);
    Value ptr = global.ptr;
    Value batch = adaptor.getBatch().front(), head = adaptor.getHead().front(),
          row = adaptor.getRow().front(), bound = adaptor.getBound().front();
    Value rowsPerHead = adaptor.getRowsPerHead().empty()
                            ? Value()
                            : adaptor.getRowsPerHead().front();
    Value start =
        adaptor.getStart().empty() ? Value() : adaptor.getStart().front();
    // Element offset of (packed) row `query` of dest[batch, head].
    auto rowOffset = [&](OpBuilder &ob, Value query) {
      auto [h, n] = getPackedRowPosition(ob, loc, head, query, rowsPerHead,
                                         start);
      return global.rowElements(ob, loc, batch, h, n);
    };
    auto [baseRow, baseCol] = tile->threadBase(b, loc);
    Value first = arith::AddIOp::create(b, loc, row, baseRow);
    ValueRange values = adaptor.getTile();
    Value guard;
    if (tile->kind() == DistributedTile::Kind::Rows) {
      // One thread of each quad; a null pointer skips the store.
      Value four = constI32(b, loc, 4);
      Value lane = arith::RemUIOp::create(b, loc, threadId(b, loc), four);
      Value leader = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                           lane, constI32(b, loc, 0));
      Value null = LLVM::ZeroOp::create(b, loc, ptr.getType());
      Value given =
          LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ne, ptr, null);
      guard = arith::AndIOp::create(b, loc, leader, given);
    }
    int64_t slots = tile->kind() == DistributedTile::Kind::Rows
                        ? tile->valuesPerThread()
                        : 2 * tile->mTiles();
    for (int64_t slot = 0; slot < slots; ++slot) {
      int64_t mTile = slot / 2, half = slot % 2;
      Value query = arith::AddIOp::create(
          b, loc, first, constIndex(b, loc, 16 * mTile + 8 * half));
      Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                           query, bound);
      if (guard)
        inside = arith::AndIOp::create(b, loc, inside, guard);
      scf::IfOp::create(b, loc, inside, [&](OpBuilder &nb, Location nl) {
        Value rowOff = rowOffset(nb, query);
        if (tile->kind() == DistributedTile::Kind::Rows) {
          LLVM::StoreOp::create(nb, nl, values[slot],
                                global.address(nb, nl, rowOff),
                                /*alignment=*/4);
        } else {
          rowOff = arith::AddIOp::create(nb, nl, rowOff, baseCol);
          int64_t blocks = tile->colBlocks();
          Type element = tile->elementType();
          for (int64_t n = 0; 8 * n < tile->cols(); ++n) {
            size_t at = (mTile * blocks + n) * 4 + 2 * half;
            auto column = [&] {
              return arith::AddIOp::create(nb, nl, rowOff,
                                           constIndex(nb, nl, 8 * n));
            };
            if (accumulate) {
              Value off = column();
              addPair(nb, nl, global.address(nb, nl, off), values[at],
                      values[at + 1]);
              continue;
            }
            Value pair;
            if (element.isF32()) {
              pair = vectorPair(nb, nl, values[at], values[at + 1]);
            } else {
              pair = packPair(nb, nl, values[at], values[at + 1], element);
              if (element.isF16())
                pair = LLVM::BitcastOp::create(nb, nl, nb.getI32Type(), pair);
            }
            Value off = column();
            LLVM::StoreOp::create(nb, nl, pair, global.address(nb, nl, off),
                                  /*alignment=*/element.isF32() ? 8 : 4);
          }
        }
        scf::YieldOp::create(nb, nl);
      });
    }
    rewriter.eraseOp(op);
    return success();
  }
};

struct LoadTile : OpConversionPattern<LoadTileOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(LoadTileOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto tile = DistributedTile::get(op.getType());
    if (!tile || tile->kind() == DistributedTile::Kind::OperandA)
      return op.emitOpError("loads into #attn_nv.acc, #attn_nv.rows or "
                            "#attn_nv.cols tiles, got ")
             << op.getType();
    if (op.getPages())
      return op.emitOpError("gathers the rows of a paged cache only into "
                            "shared memory (attn_nv.copy_async)");
    auto &b = rewriter;
    Location loc = op.getLoc();
    auto source = cast<MemRefType>(op.getSource().getType());
    GlobalTensor global(adaptor.getSource(), source);
    Value batch = adaptor.getBatch().front(), head = adaptor.getHead().front(),
          row = adaptor.getRow().front(), bound = adaptor.getBound().front();
    Value rowsPerHead = adaptor.getRowsPerHead().empty()
                            ? Value()
                            : adaptor.getRowsPerHead().front();
    Value start =
        adaptor.getStart().empty() ? Value() : adaptor.getStart().front();
    // Branch-free: every value loads from a position clamped into the
    // sequence, and one past the bound becomes zero by a select (a tile is
    // only loaded for a sequence that has a row).
    Type element = tile->elementType();
    Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(element));
    Value zeroIndex = constIndex(b, loc, 0);
    Value last = arith::MaxSIOp::create(
        b, loc, arith::SubIOp::create(b, loc, bound, constIndex(b, loc, 1)),
        zeroIndex);
    // The value at source row `query`, column `col` (null: the row term).
    auto loadAt = [&](Value query, Value col) -> Value {
      Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                           query, bound);
      Value clamped = arith::MinSIOp::create(b, loc, query, last);
      auto [h, n2] = getPackedRowPosition(b, loc, head, clamped,
                                           rowsPerHead, start);
      Value at = global.rowElements(b, loc, batch, h, n2);
      if (col)
        at = arith::AddIOp::create(b, loc, at, col);
      Value v = LLVM::LoadOp::create(
          b, loc, element, global.address(b, loc, at),
          element.getIntOrFloatBitWidth() / 8, /*isVolatile=*/false,
          /*isNonTemporal=*/false, /*isInvariant=*/true);
      return arith::SelectOp::create(b, loc, inside, v, zero);
    };
    // A cols tile's elements are row terms of consecutive sequence
    // positions: its column is the position (Layouts.h).
    bool cols = tile->kind() == DistributedTile::Kind::Cols;
    SmallVector<Value> values;
    auto [baseRow, baseCol] = tile->threadBase(b, loc);
    for (int64_t i = 0, n = tile->valuesPerThread(); i < n; ++i) {
      ElementOffset off = tile->offset(i);
      Value query = arith::AddIOp::create(
          b, loc, row,
          cols ? arith::AddIOp::create(b, loc, baseCol,
                                       constIndex(b, loc, off.col))
               : arith::AddIOp::create(b, loc, baseRow,
                                       constIndex(b, loc, off.row)));
      Value col;
      if (tile->kind() == DistributedTile::Kind::Acc)
        col =
            arith::AddIOp::create(b, loc, baseCol, constIndex(b, loc, off.col));
      values.push_back(loadAt(query, col));
    }
    rewriter.replaceOpWithMultiple(op, {values});
    return success();
  }
};

} // namespace

void mlir::attn::nv::populateGlobalAccessPatterns(
    TileTypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<StoreTile, LoadTile>(converter, patterns.getContext());
}
