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
/// slots (FlashAttention's num_splits_heuristic's 0.8).
inline constexpr double kFillsGpu = 0.8;
/// What a split costs beyond its K/V tiles, in tiles: its prologue (Q, the
/// first tiles' latency) and its partials' store. Without it the makespan
/// rule below took 49 splits in 3 waves of 21 tiles over 16 in one wave of
/// 64 (B = 1, 128k keys, 132 slots); 1 to 3 choose alike on every count
/// SplitKvTest checks.
inline constexpr int64_t kSplitOverheadTiles = 2;
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
/// tiles, on a GPU that runs `slots` CTAs at once (its SMs times the split
/// kernel's CTAs per SM, TilePolicy's splitCtasPerSm): 1 when the grid fills
/// the GPU (kFillsGpu), else the fewest splits (at most min(kMaxSplits,
/// slots, keyTiles)) of the least makespan: the split grid's waves,
/// ceil(ctas · s / slots), times the K/V tiles of its longest split,
/// ceil(keyTiles / s), plus kSplitOverheadTiles. FlashAttention's wave-fill rule (the fewest splits
/// whose last wave is 85 % as full as the best's) ignores the second
/// factor: on the H200 (B = 1, 8 packed K/V heads, D = 128, 128k keys) it
/// picked 15 splits of 132 slots (120 CTAs, 69 tiles each: 0.75 x copy)
/// where 16 (64 each) read 0.83, and of 264 slots 31 (34 each, 0.78-0.79)
/// where 32 (32 each) read 0.81-0.82 (docs/BENCHMARKS.md versions 18, 22).
int64_t chooseNumSplits(int64_t ctas, int64_t keyTiles, int64_t slots);

/// The count a call runs with: `requested` (> 0: forced, clamped to
/// [1, kMaxSplits] and to what the grid's z allows for `batch`) or, for 0
/// (auto), chooseNumSplits with `slots` (0: the host, where auto never
/// splits).
int64_t splitsForCall(int64_t requested, int64_t batch, int64_t ctas,
                      int64_t keyTiles, int64_t slots);

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
