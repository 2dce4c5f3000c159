//===- SplitKv.h - How many splits a forward call runs, its workspace -----===//
//
// Split-KV (flash-decoding, KernelABI.h's kSplitArgs): when a call's grid
// (query tiles x heads x batch) cannot fill the GPU, the keys of each query
// tile are divided over num_splits CTAs whose f32 partials a second kernel
// merges. The count is chosen per call from the shape and the SM count
// (chooseNumSplits), or forced (ATTN_JIT_NUM_SPLITS, attn_set_num_splits);
// it is a kernel argument, so a new count never recompiles.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_SPLITKV_H
#define ATTN_RUNTIME_SPLITKV_H

#include "attn/Compiler/KernelABI.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace attn::rt {

/// At most this many splits per query tile (FlashAttention's bound).
inline constexpr int64_t kMaxSplits = 128;
/// CUDA's bound on a grid's z, which the split kernel runs B · num_splits
/// along.
inline constexpr int64_t kMaxGridZ = 65535;
/// The heuristic splits only a grid of fewer CTAs than this fraction of the
/// SMs (FlashAttention's num_splits_heuristic's 0.8), and takes the fewest
/// splits whose last wave is at least this fraction as full as the best
/// count's. FlashAttention takes 0.85; on the H200 (B = 1, 8 packed K/V
/// heads, D = 128) that picked 15 splits (120 CTAs on 132 SMs): 75.3 % of
/// copy bandwidth at 128k keys and 52.5 % at 32k, where 16 splits (128
/// CTAs) read at 82.7 % and 55.4 % in the same run (docs/BENCHMARKS.md).
inline constexpr double kFillsGpu = 0.8;
inline constexpr double kGoodEnoughWaves = 0.95;
/// Auto counts keys in chunks of at least this many (FlashAttention's
/// split kernels' K/V block at D = 128), so that a short context is never
/// split into splits too small to pay for the merge's launch: Nq = Nk =
/// 128 with 64-key tiles took +220 ns of host time a call for two splits
/// (attn-hotpath on the fake driver) and a second launch on the GPU.
inline constexpr int64_t kMinKeysPerSplit = 128;
/// Auto splits only calls of at most this many queries per sequence
/// (decode, and speculative decoding's few tokens): the plain and the split
/// kernel are two kernels, and a length that crossed the choice would
/// compile the other one; this keeps that boundary out of prefill lengths.
inline constexpr int64_t kMaxAutoSplitQueries = 16;

/// The splits of a grid of `ctas` CTAs whose query tiles see `keyTiles` K/V
/// tiles, on `multiprocessors` SMs: 1 when the grid fills the GPU, else the
/// fewest splits (at most min(kMaxSplits, SMs, keyTiles), each with a
/// different tile count) whose wave efficiency (ctas · s / SMs over its
/// ceiling) is within kGoodEnoughWaves of the best.
int64_t chooseNumSplits(int64_t ctas, int64_t keyTiles,
                        int64_t multiprocessors);

/// The count a call runs with: `requested` (> 0: forced, clamped to
/// [1, kMaxSplits] and to what the grid's z allows for `batch`) or, for 0
/// (auto), chooseNumSplits with `multiprocessors` (0: the host, where auto
/// never splits).
int64_t splitsForCall(int64_t requested, int64_t batch, int64_t ctas,
                      int64_t keyTiles, int64_t multiprocessors);

/// The partials of one split call: (batchRows · numSplits, heads, rows,
/// valueDim) f32 outputs, then (batchRows · numSplits, heads, rows) f32
/// log-sum-exps, contiguous, in one workspace of workspaceFloats().
struct SplitCall {
  int64_t numSplits = 1;
  int64_t batchRows = 0, heads = 0, rows = 0, valueDim = 0;
  float *workspace = nullptr;

  size_t workspaceFloats() const;
  /// The values of kSplitArgs, in order.
  std::vector<abi::CaptureValue> values() const;
};

} // namespace attn::rt

#endif // ATTN_RUNTIME_SPLITKV_H
