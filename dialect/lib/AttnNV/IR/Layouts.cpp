//===- Layouts.cpp - which thread holds which tile element ----------------===//

#include "attn/Dialect/AttnNV/IR/Layouts.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using namespace mlir::attn::nv;

Value mlir::attn::nv::constI32(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIntOp::create(b, loc, v, 32);
}

Value mlir::attn::nv::constIndex(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

std::optional<DistributedTile> DistributedTile::get(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.getEncoding())
    return std::nullopt;
  DistributedTile t;
  Attribute enc = tensor.getEncoding();
  if (auto acc = dyn_cast<AccLayoutAttr>(enc)) {
    t.kind_ = Kind::Acc;
    t.warps_ = acc.getWarps();
    t.colGroups_ = acc.getColGroups();
  } else if (auto rows = dyn_cast<RowsLayoutAttr>(enc)) {
    t.kind_ = Kind::Rows;
    t.warps_ = rows.getWarps();
    t.partial_ = rows.getPartial();
  } else if (auto cols = dyn_cast<ColsLayoutAttr>(enc)) {
    t.kind_ = Kind::Cols;
    t.warps_ = cols.getWarps();
  } else if (auto a = dyn_cast<OperandALayoutAttr>(enc)) {
    t.kind_ = Kind::OperandA;
    t.warps_ = a.getWarps();
  } else {
    return std::nullopt;
  }
  t.rows_ = tensor.getDimSize(0);
  t.cols_ = tensor.getRank() == 2 ? tensor.getDimSize(1) / t.colGroups_ : 1;
  t.elementType_ = tensor.getElementType();
  return t;
}

int64_t DistributedTile::kBlockCols() const {
  return elementType_ && elementType_.getIntOrFloatBitWidth() == 8 ? 32 : 16;
}

int64_t DistributedTile::valuesPerThread() const {
  switch (kind_) {
  case Kind::Acc:
    return mTiles() * colBlocks() * 4;
  case Kind::Rows:
    return mTiles() * 2;
  case Kind::Cols:
    return (cols_ + kColsPerLaneRound - 1) / kColsPerLaneRound * 2;
  case Kind::OperandA:
    return mTiles() * kBlocks() * 4;
  }
  return 0;
}

ElementOffset DistributedTile::offset(int64_t i) const {
  if (kind_ == Kind::Rows)
    return {16 * (i / 2) + 8 * (i % 2), 0};
  if (kind_ == Kind::Cols)
    return {0, kColsPerLaneRound * (i / 2) + i % 2};
  int64_t perTile = colBlocks() * 4;
  int64_t mTile = i / perTile, block = (i % perTile) / 4, e = i % 4;
  return {16 * mTile + 8 * (e / 2), 8 * block + e % 2};
}

int64_t DistributedTile::rowSlot(int64_t i) const {
  if (kind_ == Kind::Rows)
    return i;
  int64_t perTile = colBlocks() * 4;
  return (i / perTile) * 2 + (i % 4) / 2;
}

DistributedTile::ColHolder DistributedTile::colHolder(int64_t i) const {
  // Column 8j + 2t + e: round j / 8, held by quad j % 8 (lane 4 (j % 8) + t).
  int64_t perTile = colBlocks() * 4;
  int64_t block = (i % perTile) / 4, blocksPerRound = kColsPerLaneRound / 8;
  return {2 * (block / blocksPerRound) + i % 2, block % blocksPerRound};
}

/// The first row of warp `warp` (i32) of `t` (of its column group).
static Value warpRowOf(OpBuilder &b, Location loc, const DistributedTile &t,
                       Value warp) {
  Value rowWarp = t.colGroups() > 1
                      ? arith::RemUIOp::create(b, loc, warp,
                                               constI32(b, loc, t.rowWarps()))
                            .getResult()
                      : warp;
  return arith::MulIOp::create(b, loc, rowWarp,
                               constI32(b, loc, 16 * t.mTiles()));
}

/// The first column of warp `warp`'s column group of `t`.
static Value groupColOf(OpBuilder &b, Location loc, const DistributedTile &t,
                        Value warp) {
  Value group =
      arith::DivUIOp::create(b, loc, warp, constI32(b, loc, t.rowWarps()));
  return arith::MulIOp::create(b, loc, group, constI32(b, loc, t.cols()));
}

std::pair<Value, Value> DistributedTile::warpBase(OpBuilder &b,
                                                  Location loc) const {
  Value tid = NVVM::ThreadIdXOp::create(b, loc, b.getI32Type());
  Value warp = arith::DivUIOp::create(b, loc, tid, constI32(b, loc, 32));
  Value row = warpRowOf(b, loc, *this, warp);
  Value col = colGroups_ > 1 ? groupColOf(b, loc, *this, warp)
                             : constI32(b, loc, 0);
  return {row, col};
}

std::pair<Value, Value> DistributedTile::threadBase(OpBuilder &b,
                                                    Location loc) const {
  Type i32 = b.getI32Type();
  Value tid = NVVM::ThreadIdXOp::create(b, loc, i32);
  Value warp = arith::DivUIOp::create(b, loc, tid, constI32(b, loc, 32));
  Value lane = arith::RemUIOp::create(b, loc, tid, constI32(b, loc, 32));
  Value quad = arith::DivUIOp::create(b, loc, lane, constI32(b, loc, 4));
  Value row, quadCol;
  if (kind_ == Kind::Cols) {
    row = constI32(b, loc, 0);
    quadCol = arith::MulIOp::create(b, loc, quad, constI32(b, loc, 8));
  } else {
    row = arith::AddIOp::create(b, loc, warpRowOf(b, loc, *this, warp), quad);
  }
  Value two = constI32(b, loc, 2);
  Value col = arith::MulIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, lane, constI32(b, loc, 4)), two);
  if (colGroups_ > 1)
    col = arith::AddIOp::create(b, loc, col, groupColOf(b, loc, *this, warp));
  if (quadCol)
    col = arith::AddIOp::create(b, loc, quadCol, col);
  Type index = b.getIndexType();
  return {arith::IndexCastUIOp::create(b, loc, index, row),
          arith::IndexCastUIOp::create(b, loc, index, col)};
}

RankedTensorType mlir::attn::nv::getRowsType(RankedTensorType acc,
                                              Type elementType) {
  int64_t warps = cast<AccLayoutAttr>(acc.getEncoding()).getWarps();
  return RankedTensorType::get(
      {acc.getDimSize(0)}, elementType,
      RowsLayoutAttr::get(acc.getContext(), warps));
}

//===----------------------------------------------------------------------===//
// Shared memory
//===----------------------------------------------------------------------===//

SharedGeometry::SharedGeometry(SmemType type)
    : layout(type.getLayout()), rows(type.getRows()), cols(type.getCols()),
      elementBytes(type.getElementType().getIntOrFloatBitWidth() / 8) {}

int64_t SharedGeometry::storedCols() const {
  return storedSharedCols(layout != SharedLayout::Padded, cols, elementBytes);
}

int64_t SharedGeometry::pitch() const {
  return layout == SharedLayout::Padded
             ? storedCols() * elementBytes + kRowPaddingBytes
             : kSwizzleRowBytes;
}

int64_t SharedGeometry::tileBytes() const {
  return sharedTileBytes(layout != SharedLayout::Padded, rows, cols,
                         elementBytes);
}

Value SharedGeometry::chunkOffset(OpBuilder &b, Location loc, Value row,
                                  Value chunk) const {
  auto c = [&](int64_t v) { return constI32(b, loc, v); };
  if (layout == SharedLayout::Padded) {
    Value chunkBytes = arith::MulIOp::create(b, loc, chunk, c(16));
    Value rowBytes = arith::MulIOp::create(b, loc, row, c(pitch()));
    return arith::AddIOp::create(b, loc, rowBytes, chunkBytes);
  }
  // Block chunk / 8 of 128 bytes; in it, row r at 128·r and 16-byte chunk c
  // at 16·(c ^ key), key = r % 8 or, for pairs, (r % 4)·2 + (r / 4) % 2
  // (the SmemType's description).
  Value block = arith::DivUIOp::create(b, loc, chunk, c(8));
  Value inBlock = arith::RemUIOp::create(b, loc, chunk, c(8));
  Value key = arith::AndIOp::create(b, loc, row, c(7));
  if (layout == SharedLayout::SwizzlePairs)
    key = arith::OrIOp::create(
        b, loc,
        arith::ShLIOp::create(b, loc, arith::AndIOp::create(b, loc, row, c(3)),
                              c(1)),
        arith::AndIOp::create(b, loc, arith::ShRUIOp::create(b, loc, row, c(2)),
                              c(1)));
  Value swizzled = arith::XOrIOp::create(b, loc, inBlock, key);
  Value off = arith::MulIOp::create(b, loc, block, c(rows * 128));
  off = arith::AddIOp::create(b, loc, off,
                              arith::MulIOp::create(b, loc, row, c(128)));
  return arith::AddIOp::create(b, loc, off,
                               arith::MulIOp::create(b, loc, swizzled, c(16)));
}
