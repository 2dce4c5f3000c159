//===- SharedTileBytes.h - byte size of a shared-memory tile ----*- C++ -*-===//
//
// The byte layout of one stage of an !attn_nv.smem tile as plain arithmetic,
// MLIR-free: the tile policy sizes shared memory from it before any IR
// exists, SharedGeometry (Layouts.h) lays tiles out by it.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTNNV_IR_SHAREDTILEBYTES_H
#define ATTN_DIALECT_ATTNNV_IR_SHAREDTILEBYTES_H

#include <cstdint>

namespace mlir::attn::nv {

/// Padded tiles (mma.sync, ldmatrix) store columns in multiples of 16 and
/// 16 extra bytes per row, which put the 8 rows one ldmatrix reads in 8
/// different bank groups.
inline constexpr int64_t kPaddedColumnMultiple = 16;
inline constexpr int64_t kRowPaddingBytes = 16;
/// Swizzled tiles (wgmma, 128-byte swizzle) store blocks of 128-byte rows:
/// 64 columns of 16-bit elements, 128 of 8-bit ones (e4m3).
inline constexpr int64_t kSwizzleRowBytes = 128;
constexpr int64_t swizzleBlockCols(int64_t elementBytes) {
  return kSwizzleRowBytes / elementBytes;
}

/// Rows of one TMA box (a swizzled tile's 128-byte block is one box): the
/// bound of cuTensorMapEncodeTiled's box sides.
inline constexpr int64_t kMaxTmaBoxRows = 256;
/// Rows of one TMA store box (attn_nv.store_tma): one warp's rows of a
/// wgmma accumulator, so that each warp stores what it wrote itself.
inline constexpr int64_t kTmaStoreRows = 16;
/// An mbarrier object (!attn_nv.barriers): 8 bytes, 8-byte aligned.
inline constexpr int64_t kMbarrierBytes = 8;

/// Columns stored per row: whole swizzle blocks, or multiples of 16.
constexpr int64_t storedSharedCols(bool swizzled, int64_t cols,
                                   int64_t elementBytes) {
  int64_t multiple =
      swizzled ? swizzleBlockCols(elementBytes) : kPaddedColumnMultiple;
  return (cols + multiple - 1) / multiple * multiple;
}

/// Bytes of one stage of a rows x cols tile.
constexpr int64_t sharedTileBytes(bool swizzled, int64_t rows, int64_t cols,
                                  int64_t elementBytes) {
  int64_t rowBytes = storedSharedCols(swizzled, cols, elementBytes) *
                     elementBytes;
  return rows * (swizzled ? rowBytes : rowBytes + kRowPaddingBytes);
}

} // namespace mlir::attn::nv

#endif // ATTN_DIALECT_ATTNNV_IR_SHAREDTILEBYTES_H
