//===- SharedPlacement.h - where buffers go in shared memory ----*- C++ -*-===//
//
// The placement rule of a kernel's shared memory, MLIR-free:
// attn-nv-allocate-shared places the buffers by it, and attn-nv-stage-tables
// checks by it that a table's stages fit before adding them.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_NVIDIA_SHAREDPLACEMENT_H
#define ATTN_NVIDIA_SHAREDPLACEMENT_H

#include "attn/Dialect/AttnNV/IR/SharedTileBytes.h"

#include <cstdint>

namespace mlir::attn::nv {

/// Buffers placed one after the other, each aligned.
class SharedPlacement {
public:
  /// The swizzle pattern follows address bits: swizzled tiles start on a
  /// 1024-byte boundary, and the kernel aligns the base of dynamic shared
  /// memory (which promises 16 bytes) at run time, within this slack.
  static constexpr int64_t kSwizzleAlign = 1024;
  static constexpr int64_t kChunkAlign = 16;

  /// Places a tile buffer of `bytes`; returns its offset.
  int64_t placeTiles(int64_t bytes, bool swizzled) {
    swizzled_ |= swizzled;
    return place(bytes, swizzled ? kSwizzleAlign : kChunkAlign);
  }
  /// Places `count` mbarriers; returns the first one's offset.
  int64_t placeBarriers(int64_t count) {
    return place(kMbarrierBytes * count, kMbarrierBytes);
  }
  bool empty() const { return end_ == 0; }
  /// The dynamic shared memory the kernel asks for (with the slack that
  /// aligns its base where a tile is swizzled).
  int64_t total() const { return end_ + (swizzled_ ? kSwizzleAlign : 0); }

private:
  int64_t place(int64_t bytes, int64_t align) {
    int64_t offset = (end_ + align - 1) / align * align;
    end_ = offset + bytes;
    return offset;
  }
  int64_t end_ = 0;
  bool swizzled_ = false;
};

} // namespace mlir::attn::nv

#endif // ATTN_NVIDIA_SHAREDPLACEMENT_H
