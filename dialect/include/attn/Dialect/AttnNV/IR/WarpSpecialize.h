//===- WarpSpecialize.h - bounds of setmaxnreg ------------------*- C++ -*-===//
//
// The hardware's bounds on a warp-specialised CTA's register split, shared
// by attn_nv.warp_specialize's verifier and the pass that makes it.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTNNV_IR_WARPSPECIALIZE_H
#define ATTN_DIALECT_ATTNNV_IR_WARPSPECIALIZE_H

#include <cstdint>

namespace mlir::attn::nv {

/// setmaxnreg takes a multiple of 8 in [24, 256], per thread of a warpgroup.
inline constexpr int64_t kMinSetMaxRegisters = 24;
inline constexpr int64_t kMaxSetMaxRegisters = 256;
inline constexpr int64_t kSetMaxRegistersStep = 8;

/// The registers of one SM (and so at most of one CTA), sm_90.
inline constexpr int64_t kRegistersPerSm = 64 * 1024;

/// Threads of a warpgroup: setmaxnreg acts on whole warpgroups.
inline constexpr int64_t kWarpgroupThreads = 128;

} // namespace mlir::attn::nv

#endif // ATTN_DIALECT_ATTNNV_IR_WARPSPECIALIZE_H
