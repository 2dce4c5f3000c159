//===- TensorRows.h - a bound that is a tensor's own rows -------*- C++ -*-===//
//
// A copy or store of a tile may be done by TMA when its bound is the rows of
// the tensor its map describes (a map's box stops there): the passes that
// decide it ask the same question of a bound.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_NVIDIA_TENSORROWS_H
#define ATTN_NVIDIA_TENSORROWS_H

#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::attn::nv {

/// The (B, H, N, D) tensor whose rows N `bound` is (`memref.dim %t, 2`),
/// or null.
inline Value rowsOf(Value bound) {
  auto dim = bound.getDefiningOp<memref::DimOp>();
  return dim && dim.getConstantIndex() == std::optional<int64_t>(2)
             ? dim.getSource()
             : Value();
}

} // namespace mlir::attn::nv

#endif // ATTN_NVIDIA_TENSORROWS_H
