//===- Barriers.h - limits of the CTA's barriers ----------------*- C++ -*-===//
//
// The hardware's bounds on mbarriers and named barriers, shared by the
// verifiers and the lowering.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTNNV_IR_BARRIERS_H
#define ATTN_DIALECT_ATTNNV_IR_BARRIERS_H

#include <cstdint>

namespace mlir::attn::nv {

/// mbarrier.init's arrival count is in [1, 2^20 - 1].
inline constexpr int64_t kMaxMbarrierArrivals = (int64_t(1) << 20) - 1;

/// Named barriers: a CTA has 16 and bar.sync 0 is the CTA barrier, so
/// warpgroup order uses ids 1-15.
inline constexpr int64_t kFirstOrderBarrier = 1;
inline constexpr int64_t kMaxOrderBarriers = 15;

} // namespace mlir::attn::nv

#endif // ATTN_DIALECT_ATTNNV_IR_BARRIERS_H
