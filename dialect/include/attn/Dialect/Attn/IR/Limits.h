//===- Limits.h - the largest kernels attn compiles, MLIR-free --*- C++ -*-===//
//
// Bounds on tiles, head dims and CTAs, named once: the tile policy checks a
// configuration against them before any IR exists, the dialect's verifiers
// check IR written by hand, and the runtime checks a call's sizes, so that
// no input can make the compiler run away or a pass abort.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_IR_LIMITS_H
#define ATTN_DIALECT_ATTN_IR_LIMITS_H

#include <cstdint>

namespace mlir::attn {

/// Query rows or keys per tile, and any side of a static tile. The default
/// tiles are at most 128 x 128; a 1024 x 1024 f32 score tile is already 4 MB
/// on the host, and larger tiles only grow compile time and memory (an
/// unbounded block-n once ran the compiler for minutes at 7 GB).
inline constexpr int64_t kMaxTileSide = 1024;

/// Head dims: NVIDIA tiles are multiples of 8 up to 256 (a row of Q, K, V
/// or O in 16-byte pieces); the host takes 1 to 512.
inline constexpr int64_t kMaxNvidiaHeadDim = 256;
inline constexpr int64_t kMaxHostHeadDim = 512;

/// wgmma's k step in 16-bit elements: QKᵀ on wgmma reduces over the head
/// dim in steps of it, so the wgmma mapping takes head dims that are
/// multiples of it (the policy and the wgmma op's verifier).
inline constexpr int64_t kWgmmaK = 16;

/// Threads in one CTA on every NVIDIA GPU.
inline constexpr int64_t kMaxThreadsPerCta = 1024;

/// A warp-specialised kernel's producer: one warpgroup (setmaxnreg acts on
/// whole warpgroups), after the consumers' threads.
inline constexpr int64_t kProducerThreads = 128;

/// Q's shared buffers in a persistent CTA (#attn.config's q_stages): one, or
/// two so that the next work tile's Q loads while this one computes.
inline constexpr int64_t kMaxQStages = 2;

/// The oldest NVIDIA chip the kernels run on: sm_80 has the bf16 mma.sync,
/// cp.async and ldmatrix they are made of (LLVM aborts selecting them for
/// older chips).
inline constexpr int64_t kMinSmVersion = 80;

/// LLVM's optimisation levels for the PTX, O0 to kMaxLlvmOptLevel: the
/// kernels take the highest (a tiered first call's quick kernel O0,
/// TilePolicy.h's kQuickLlvmOptLevel).
inline constexpr int kMaxLlvmOptLevel = 3;

/// Page sizes of a paged K/V cache (rows per page): multiples of
/// kPageSizeStep in [kMinPageSize, kMaxPageSize] (vLLM's 16, FlashInfer's
/// and FlashAttention's up to 256). A multiple of 16 keeps a page's rows a
/// whole number of the NVIDIA mappings' 16-key k blocks.
inline constexpr int64_t kMinPageSize = 16;
inline constexpr int64_t kMaxPageSize = 256;
inline constexpr int64_t kPageSizeStep = 16;
inline constexpr bool isValidPageSize(int64_t size) {
  return size >= kMinPageSize && size <= kMaxPageSize &&
         size % kPageSizeStep == 0;
}

} // namespace mlir::attn

#endif // ATTN_DIALECT_ATTN_IR_LIMITS_H
