//===- Stores.cpp - tiles from registers to global memory -----------------===//
//
// An output tile (#attn_nv.acc, 16-bit) is stored as 4-byte pairs: each
// thread holds two adjacent columns per 8-column block. A row tile (the
// LSE, #attn_nv.rows) is stored by the first thread of each quad, which
// holds its rows; a null pointer skips it (the LSE is optional).
//
//===----------------------------------------------------------------------===//

#include "Patterns.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::nv;

namespace {

struct StoreTile : OpConversionPattern<StoreTileOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(StoreTileOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto tile = DistributedTile::get(op.getTile().getType());
    if (!tile || tile->kind() == DistributedTile::Kind::OperandA ||
        tile->partial() ||
        (tile->kind() == DistributedTile::Kind::Acc &&
         tile->elementType().getIntOrFloatBitWidth() != 16))
      return op.emitOpError("stores 16-bit #attn_nv.acc tiles and "
                            "#attn_nv.rows tiles (not partial sums), got ")
             << op.getTile().getType();
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
    // Element offset of (packed) row `query` of dest[batch, head].
    auto rowOffset = [&](OpBuilder &ob, Value query) {
      auto [h, n] = getPackedRowPosition(ob, loc, head, query, rowsPerHead);
      return global.rowElements(ob, loc, batch, h, n);
    };
    auto [baseRow, baseCol] = tile->threadBase(b, loc);
    Value first = arith::AddIOp::create(b, loc, row, baseRow);
    ValueRange values = adaptor.getTile();
    Value guard;
    if (tile->kind() == DistributedTile::Kind::Rows) {
      // One thread of each quad; a null pointer skips the store.
      Value lane =
          arith::RemUIOp::create(b, loc, threadId(b, loc), constI32(b, loc, 4));
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
            Value pair = packPair(nb, nl, values[at], values[at + 1], element);
            if (element.isF16())
              pair = LLVM::BitcastOp::create(nb, nl, nb.getI32Type(), pair);
            Value off = arith::AddIOp::create(nb, nl, rowOff,
                                              constIndex(nb, nl, 8 * n));
            LLVM::StoreOp::create(nb, nl, pair, global.address(nb, nl, off),
                                  /*alignment=*/4);
          }
        }
        scf::YieldOp::create(nb, nl);
      });
    }
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void mlir::attn::nv::populateStorePatterns(TileTypeConverter &converter,
                                           RewritePatternSet &patterns) {
  patterns.add<StoreTile>(converter, patterns.getContext());
}
