//===- Layouts.h - which thread holds which tile element --------*- C++ -*-===//
//
// The one place that knows the register layouts of attn_nv (#attn_nv.acc,
// #attn_nv.rows, #attn_nv.operand_a) as arithmetic: how many values each
// thread holds, where each sits relative to the thread's base, and that base
// as IR. Every lowering that touches elements (maps, reductions, stores, the
// tensor-core ops) goes through it, and so do the shared-memory layouts'
// byte geometry (SharedGeometry).
//
// Register layouts (g = lane / 4, t = lane % 4, warp w of W):
//  * a warp owns M / W consecutive rows, as mTiles() 16-row m tiles; an acc
//    tile with G column groups is G tiles of N / G columns side by side,
//    group k held by warps [k·W/G, (k + 1)·W/G) (cols() counts a group's);
//  * acc: per m tile i and 8-column block j, value ((i·J) + j)·4 + e at
//    (16i + 8·(e / 2), 8j + e % 2) from the base (16·mTiles()·w + g, 2t);
//    J = colBlocks() counts columns rounded up to a multiple of 16;
//  * rows: value 2i + h at row 16i + 8h from the same base row;
//  * cols: each lane holds two adjacent columns of every 64, value 2r + e
//    at column 64r + e from the base (0, 8g + 2t): what one load a lane
//    gives; a map that broadcasts it over an acc tile moves each column to
//    the lanes that need it there (colHolder);
//  * operand_a: per m tile i and k block k (16 columns, 32 of 8-bit
//    elements), registers (i·K + k)·4 + r of mma's A fragment (two 16-bit
//    or four 8-bit elements each).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTNNV_IR_LAYOUTS_H
#define ATTN_DIALECT_ATTNNV_IR_LAYOUTS_H

#include "attn/Dialect/AttnNV/IR/AttnNV.h"
#include "attn/Dialect/AttnNV/IR/SharedTileBytes.h"

#include <optional>

namespace mlir::attn::nv {

/// Columns of one round of a #attn_nv.cols tile: 32 lanes, two adjacent
/// columns each.
inline constexpr int64_t kColsPerLaneRound = 64;

/// Offset of one of a thread's values from the thread's base.
struct ElementOffset {
  int64_t row = 0, col = 0;
};

/// A tile type with a register layout, as arithmetic.
class DistributedTile {
public:
  enum class Kind { Acc, Rows, Cols, OperandA };

  /// The layout of `type`; nullopt when it is not a tensor with a register
  /// layout of attn_nv.
  static std::optional<DistributedTile> get(Type type);

  Kind kind() const { return kind_; }
  /// A rows tile whose quad holds partial values (the sum is the element).
  bool partial() const { return partial_; }
  int64_t warps() const { return warps_; }
  int64_t rows() const { return rows_; }
  /// Columns (1 for row tiles); of one column group (acc with col_groups).
  int64_t cols() const { return cols_; }
  /// Column groups of an acc tile (1 otherwise): see the file comment.
  int64_t colGroups() const { return colGroups_; }
  /// Warps that split the rows of one column group.
  int64_t rowWarps() const { return warps_ / colGroups_; }
  Type elementType() const { return elementType_; }

  /// 16-row m tiles per warp.
  int64_t mTiles() const { return rows_ / (16 * rowWarps()); }
  /// 8-column blocks per m tile (acc), columns rounded up to 16.
  int64_t colBlocks() const { return (cols_ + 15) / 16 * 2; }
  /// Columns of one k block of an operand_a tile: 16 for 16-bit elements,
  /// 32 for 8-bit ones (e4m3: four elements a register).
  int64_t kBlockCols() const;
  /// k blocks per m tile (operand_a), columns rounded up to kBlockCols().
  int64_t kBlocks() const { return (cols_ + kBlockCols() - 1) / kBlockCols(); }
  /// Values each thread holds: elements (acc, rows) or 32-bit registers of
  /// two or four elements (operand_a).
  int64_t valuesPerThread() const;
  /// Offset of value `i` (acc, rows) from this thread's base.
  ElementOffset offset(int64_t i) const;
  /// The row tile value (#attn_nv.rows of the same warps) that holds the
  /// row of value `i` of an acc tile.
  int64_t rowSlot(int64_t i) const;
  /// Where the column of value `i` of an acc tile (one column group) is in
  /// a #attn_nv.cols tile: its value `slot` in lane 4·quad + lane % 4.
  struct ColHolder {
    int64_t slot, quad;
  };
  ColHolder colHolder(int64_t i) const;
  /// Whether value `i` of an acc tile lies in a padding column (>= cols()).
  bool isPadding(int64_t i) const { return offset(i).col >= cols_; }

  /// This thread's base (row, column) as index values: (16·mTiles()·(warp
  /// mod rowWarps()) + lane / 4, cols()·(warp / rowWarps()) + 2·(lane %
  /// 4)); (0, 8·(lane / 4) + 2·(lane % 4)) for a cols tile.
  std::pair<Value, Value> threadBase(OpBuilder &b, Location loc) const;
  /// This thread's warp's first element (row, column) as i32 values:
  /// (16·mTiles()·(warp mod rowWarps()), cols()·(warp / rowWarps())); the
  /// warp holds rows [row, row + 16·mTiles()) of those columns. Not for cols
  /// tiles.
  std::pair<Value, Value> warpBase(OpBuilder &b, Location loc) const;

private:
  Kind kind_ = Kind::Acc;
  int64_t warps_ = 1, rows_ = 0, cols_ = 1, colGroups_ = 1;
  bool partial_ = false;
  Type elementType_;
};

/// The type of a row tile with the rows layout matching `acc` (an acc tile
/// or its layout's warps).
RankedTensorType getRowsType(RankedTensorType acc, Type elementType);

/// Byte geometry of a shared-memory tile (one stage of an !attn_nv.smem).
struct SharedGeometry {
  SharedLayout layout;
  int64_t rows, cols, elementBytes;

  explicit SharedGeometry(SmemType type);
  /// Columns stored per row: cols rounded up to 16 (padded) or to whole
  /// 128-byte blocks (swizzle_128b: 64 16-bit or 128 8-bit columns).
  int64_t storedCols() const;
  /// Bytes between rows (padded) or within one 128-byte block's row
  /// (swizzle_128b: 128).
  int64_t pitch() const;
  int64_t tileBytes() const;
  /// Byte offset of 16-byte chunk `chunk` (of storedCols / 8) of row `row`;
  /// i32 values.
  Value chunkOffset(OpBuilder &b, Location loc, Value row, Value chunk) const;
};

/// i32 / index constant helpers shared by the layout code and lowerings.
Value constI32(OpBuilder &b, Location loc, int64_t v);
Value constIndex(OpBuilder &b, Location loc, int64_t v);

} // namespace mlir::attn::nv

#endif // ATTN_DIALECT_ATTNNV_IR_LAYOUTS_H
