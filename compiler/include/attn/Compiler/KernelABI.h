//===- KernelABI.h - The forward kernel's parameters and launch -*- C++ -*-===//
//
// One description of how the runtime calls a compiled kernel, MLIR-free:
// attn-create-kernel builds the kernel function from it, the NVIDIA lowering
// turns each memref argument into the parameters it lists, and the runtime
// packs its launch arguments from it. Change it here and all three follow.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_COMPILER_KERNELABI_H
#define ATTN_COMPILER_KERNELABI_H

#include "attn/Dialect/AttnNV/IR/SharedTileBytes.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attn::abi {

/// Name of the forward kernel (the function the runtime launches or calls).
inline constexpr const char *kForwardKernel = "attn_fwd";

/// A tensor argument: a memref of `rank` dims with dynamic sizes and strides
/// (unit innermost stride for rank 4). On NVIDIA it becomes the kernel
/// parameters (pointer to its first element, sizes[rank], strides[rank] in
/// elements), all 64-bit; an optional tensor may be passed as a null pointer.
struct TensorArg {
  const char *name;
  int rank;
  bool optional;
};

/// The forward kernel's tensors, in order: Q, K, V, O are (B, H or Hkv, N,
/// D); LSE is (B, H, Nq), null to skip it. Then its scalars.
inline constexpr TensorArg kForwardTensors[] = {
    {"q", 4, false}, {"k", 4, false}, {"v", 4, false},
    {"o", 4, false}, {"lse", 3, true}};
inline constexpr int kForwardTensorCount = 5;
/// The backward kernel: the forward's inputs, O and dO (B, H, Nq, Dv), the
/// LSE, then dQ, dK, dV (shaped as Q, K, V) and the row terms' f32
/// workspace (B, H, Nq), then the same scalars and captures as the forward.
inline constexpr const char *kBackwardKernel = "attn_bwd";
/// Whether `name` is one of the backward's kernels (kernelName(
/// kBackwardKernel, i)): the passes that treat them apart ask this.
inline bool isBackwardKernel(std::string_view name) {
  return name.substr(0, std::string_view(kBackwardKernel).size()) ==
         kBackwardKernel;
}
inline constexpr TensorArg kBackwardTensors[] = {
    {"q", 4, false},  {"k", 4, false},  {"v", 4, false}, {"o", 4, false},
    {"do", 4, false}, {"lse", 3, false}, {"dq", 4, false}, {"dk", 4, false},
    {"dv", 4, false}, {"delta", 3, false}};
/// On NVIDIA the backward is two to four kernels, launched in this order
/// with the same arguments: kernelName(kBackwardKernel, 0) over query tiles
/// (dQ and the row terms), then over K/V tiles kernel 1 (dK, dV) or, where
/// TilePolicy.h's splitsBackwardGrads says so, kernel 1 (dK) and 2 (dV);
/// the atomic form (kAtomicBackwardArgs) adds a last one over query tiles
/// that stores dQ from its accumulator.
inline constexpr int kMinBackwardKernels = 2;
inline constexpr int kMaxBackwardKernels = 4;
/// The i-th kernel of a function split into several (one per grid).
inline std::string kernelName(const char *base, int index) {
  return std::string(base) + "_" + std::to_string(index);
}
/// Scalars after the tensors: the f32 softmax scale.
inline constexpr const char *kForwardScalars[] = {"scale"};
inline constexpr int kForwardScalarCount = 1;
/// An FP8 (e4m3) forward kernel (KernelConfig::dtype E4M3) takes after the
/// scale the f32 factors that dequantise Q, K and V (per tensor, > 0); its O
/// is bf16. On NVIDIA (8-bit wgmma reads both operands K-major) it reads V
/// with its keys contiguous (V's seq stride 1, its dim stride a multiple of
/// 16 bytes; FlashAttention-3's V_colmajor), through a transposed tensor
/// map: a (B, Hkv, D, N) view whose box is D rows by kTmaBoxBytes keys.
inline constexpr const char *kFp8Scalars[] = {"q_descale", "k_descale",
                                              "v_descale"};

/// Attention variants a kernel may be compiled with (a bit set, the
/// runtime's attn_variant flags). Each adds the capture arguments of
/// kCaptureArgs that name it, after the scalars; their values are kernel
/// arguments, so a new window size or softcap never recompiles.
enum Variant : unsigned {
  kWindow = 1u << 0,   // d = j - (i + shift) in [-window_left, window_right]
  kPrefixLm = 1u << 1, // keys j < prefix_len seen by every query (causal)
  kDocument = 1u << 2, // q_doc_ids[i] == kv_doc_ids[j]
  kAlibi = 1u << 3,    // score += alibi_slopes[h] * (j - i)
  kBias = 1u << 4,     // score += bias[i, j]
  kSoftcap = 1u << 5,  // score = softcap * tanh(score / softcap), last
};
inline constexpr unsigned kAllVariants = (1u << 6) - 1;
/// Their names, bit i first (pipeline options, cache keys).
inline constexpr const char *kVariantNames[] = {
    "window", "prefix_lm", "document", "alibi", "bias", "softcap"};

/// A capture argument: an i64 or f32 scalar (rank 0) or a tensor of `rank`
/// dynamic sizes and strides (f32 or i32), passed as a TensorArg is.
struct CaptureArg {
  const char *name;
  unsigned variant;
  enum Element { I64, F32, I32 } element;
  int rank;
};
/// In kernel-argument order: a kernel has those whose variant it has.
inline constexpr CaptureArg kCaptureArgs[] = {
    {"window_left", kWindow, CaptureArg::I64, 0},
    {"window_right", kWindow, CaptureArg::I64, 0},
    {"prefix_len", kPrefixLm, CaptureArg::I64, 0},
    {"softcap", kSoftcap, CaptureArg::F32, 0},
    {"alibi_slopes", kAlibi, CaptureArg::F32, 1},
    {"q_doc_ids", kDocument, CaptureArg::I32, 1},
    {"kv_doc_ids", kDocument, CaptureArg::I32, 1},
    {"bias", kBias, CaptureArg::F32, 2}};

/// A variable-length (packed) batch's arguments (KernelConfig::varlen), in
/// order after the scalars and before the variants' captures: the B + 1
/// offsets of the sequences' query and key rows (int32, FlashAttention's
/// cu_seqlens) and the longest sequence's query count (the grid's extent
/// in query tiles; NVIDIA reads it from the launch). Q, K, V, O are then
/// (1, H or Hkv, total rows, D), the LSE (1, H, total_q).
inline constexpr CaptureArg kVarlenArgs[] = {
    {"cu_seqlens_q", 0, CaptureArg::I32, 1},
    {"cu_seqlens_k", 0, CaptureArg::I32, 1},
    {"max_seqlen_q", 0, CaptureArg::I64, 0}};

/// A paged K/V cache's arguments (KernelConfig::pageSize > 0; the queries
/// are packed as for varlen), in place of kVarlenArgs: the B + 1 query
/// offsets and the longest query count, the (B, max_pages) block table of
/// each sequence's pages and the B key counts (FlashAttention's seqused_k).
/// K and V are then (num_pages, Hkv, page_size, D) with the page size
/// compiled in.
inline constexpr CaptureArg kPagedArgs[] = {
    {"cu_seqlens_q", 0, CaptureArg::I32, 1},
    {"max_seqlen_q", 0, CaptureArg::I64, 0},
    {"block_table", 0, CaptureArg::I32, 2},
    {"seqused_k", 0, CaptureArg::I32, 1}};

/// Split-KV's arguments (KernelConfig::split), after kVarlenArgs (or
/// kPagedArgs) and before the variants' captures: the split count (>= 1; a
/// kernel argument, so a new count never recompiles) and the f32 workspaces of the partial
/// results, (B·num_splits, H, Nq, Dv) and (B·num_splits, H, Nq), row
/// b·num_splits + s for split s of batch row b (a packed batch has one
/// batch row of total_q queries). The forward is then two kernels
/// (kernelName(kForwardKernel, 0): the splits, grid kGridOverSplits;
/// kernelName(kForwardKernel, 1): their merge, grid kGridOverRows),
/// launched in this order with the same arguments; on the host, two grids.
inline constexpr CaptureArg kSplitArgs[] = {
    {"num_splits", 0, CaptureArg::I64, 0},
    {"o_partial", 0, CaptureArg::F32, 4},
    {"lse_partial", 0, CaptureArg::F32, 3}};
inline constexpr int kSplitKernelCount = 2;

/// The backward compiled not deterministic (KernelConfig::deterministic)
/// takes after its scale dQ's f32 accumulator (B, H, Nq, D), zeroed by the
/// caller, which its K/V tiles add into with atomics (the host: the
/// kernel's own, as the row terms').
inline constexpr CaptureArg kAtomicBackwardArgs[] = {
    {"dq_accum", 0, CaptureArg::F32, 4}};

/// A kernel compiled with TMA (KernelConfig::tma) takes, after every other
/// argument, the tensor maps of K, V, O and Q: CUtensorMap objects of
/// kTensorMapBytes, passed by value as grid-constant parameters (`.param
/// .align 64 .b8 name[128]`), which the runtime encodes per call
/// (cuTensorMapEncodeTiled). Each describes its kForwardTensors entry as a
/// 4-D (B, H, N, D) tensor with the tensor's strides, a box of kTmaBoxBytes
/// of columns (one 128-byte swizzled block of a wgmma tile: 64 16-bit or 128
/// 8-bit elements) by block_n rows (K, V), kTmaStoreRows rows (O) or
/// block_m rows (Q), and the 128-byte swizzle; rows past N and columns past
/// D read as zero and are not written. An FP8 kernel's V map is transposed
/// (kFp8Scalars). O's and Q's maps are always tiled (B, H, Nq, D) views, O's
/// in O's element type; a kernel that stores O from registers or copies Q
/// by cp.async (attn-nv-store-output-tma, attn-nv-pipeline-copies) leaves
/// that map unread.
struct TensorMapArg {
  const char *name;
  int tensor; // index into kForwardTensors
};
inline constexpr TensorMapArg kTensorMaps[] = {
    {"k_map", 1}, {"v_map", 2}, {"o_map", 3}, {"q_map", 0}};
inline constexpr int kTensorMapCount = 4;
/// The first maps, K's and V's, are those the K/V loop's copies read.
inline constexpr int kKeyValueMapCount = 2;
/// A backward kernel compiled with TMA takes instead the maps of K, V, Q and
/// dO (kBackwardTensors' entries), all tiled with boxes of block_n rows: the
/// dQ grid's loop over K/V tiles reads the first two, the K/V grids' loop
/// over query tiles the last two (each kernel is passed all four).
inline constexpr TensorMapArg kBackwardTensorMaps[] = {
    {"k_map", 1}, {"v_map", 2}, {"q_map", 0}, {"do_map", 4}};
static_assert(std::size(kBackwardTensorMaps) == kTensorMapCount,
              "a backward kernel takes as many maps as a forward one");
inline constexpr int kTensorMapBytes = 128;
inline constexpr int kTensorMapAlign = 64;
inline constexpr int kTmaBoxBytes = 128;
/// Rows of O's box (attn_nv.store_tma's).
inline constexpr int kTmaStoreRows = int(mlir::attn::nv::kTmaStoreRows);
/// On a kernel function: how many of its last parameters are tensor maps.
inline constexpr const char *kTensorMapsAttr = "attn.tensor_maps";

/// How a kernel's maps view K and V. `Tiled`: the (B, H, N, D) view above;
/// a tile of rows [r, r + R) of (b, h) is at coordinates (c, r, h, b).
/// `Ragged`, the maps of a variable-length kernel (KernelConfig::varlen),
/// whose packed (1, H, N, D) K/V tiles end at their sequence's last key
/// rather than at N: a 4-D (D, N, H, N + 1) view with strides (row, head,
/// row) whose base lies N rows before the tensor's. The tile of rows
/// [r, r + R) of a sequence ending at row e is at (c, r + N - e, h, e):
/// the same address, and its rows at or past e fall outside the second
/// dimension and read as zero, so a tile never reads the next sequence.
enum class TensorMapForm { Tiled, Ragged };
inline constexpr TensorMapForm tensorMapForm(bool varlen) {
  return varlen ? TensorMapForm::Ragged : TensorMapForm::Tiled;
}

/// The value of one capture argument at a call: a scalar, or a tensor's
/// data, sizes and strides (elements).
struct CaptureValue {
  int64_t i64 = 0; // i64 and index scalars; an i32 scalar's value too
  float f32 = 0;
  const void *data = nullptr;
  int64_t sizes[4] = {}, strides[4] = {};
};

/// A user's mods (UserMods.h) take captures of their own, after the named
/// variants' ones: scalars (an index is passed as an i64) and tensors of
/// rank 1 to 4, like kCaptureArgs' entries.
struct UserCapture {
  CaptureArg::Element element;
  int rank;
};
inline constexpr int kMaxUserCaptures = 16;
inline constexpr int kMaxUserCaptureRank = 4;

/// The kinds of all arguments of a kernel after its scalars, in argument
/// order: kVarlenArgs for a packed batch (kPagedArgs over a paged cache),
/// kSplitArgs for split-KV, the named variants' captures (of `variants`),
/// then a user's mods' `user`.
inline std::vector<UserCapture>
captureKinds(unsigned variants, const std::vector<UserCapture> &user = {},
             bool varlen = false, bool paged = false, bool split = false) {
  std::vector<UserCapture> kinds;
  if (paged)
    for (const CaptureArg &arg : kPagedArgs)
      kinds.push_back({arg.element, arg.rank});
  else if (varlen)
    for (const CaptureArg &arg : kVarlenArgs)
      kinds.push_back({arg.element, arg.rank});
  if (split)
    for (const CaptureArg &arg : kSplitArgs)
      kinds.push_back({arg.element, arg.rank});
  for (const CaptureArg &arg : kCaptureArgs)
    if (variants & arg.variant)
      kinds.push_back({arg.element, arg.rank});
  kinds.insert(kinds.end(), user.begin(), user.end());
  return kinds;
}

/// Kernel parameters of one tensor argument.
constexpr int paramsOf(const TensorArg &t) { return 1 + 2 * t.rank; }
/// Kernel parameters of one capture argument (a scalar is one).
constexpr int paramsOf(const CaptureArg &c) {
  return c.rank == 0 ? 1 : 1 + 2 * c.rank;
}
constexpr int paramsOf(const UserCapture &c) {
  return c.rank == 0 ? 1 : 1 + 2 * c.rank;
}

/// 64-bit parameters of all tensors together.
constexpr int forwardTensorParams() {
  int n = 0;
  for (const TensorArg &t : kForwardTensors)
    n += paramsOf(t);
  return n;
}

/// 64-bit parameters of all the backward's tensors together.
constexpr int backwardTensorParams() {
  int n = 0;
  for (const TensorArg &t : kBackwardTensors)
    n += paramsOf(t);
  return n;
}

/// Launch: grid (ceil(Nq / block_m), H, B), or with packed heads
/// (ceil(H / Hkv · Nq / block_m), Hkv, B), or for a packed batch
/// (ceil(max_seqlen_q / block_m), H, B) with B the number of sequences; the kernel's threads per CTA and
/// dynamic shared bytes. The lowering records them on each gpu.func under
/// these attribute names; the compiler library reads them back.
inline constexpr const char *kThreadsAttr = "attn.threads";
inline constexpr const char *kBlockMAttr = "attn.block_m";
inline constexpr const char *kSharedBytesAttr = "attn.shared_bytes";
inline constexpr const char *kPackGqaAttr = "attn.pack_gqa";
/// A grid over K/V tiles (value "keys": (ceil(Nk / block_m), Hkv, B)),
/// on the attn.tile_grid, then on its kernel; absent: over query tiles.
inline constexpr const char *kGridAttr = "attn.grid";
inline constexpr const char *kGridOverKeys = "keys";
/// Split-KV's two grids: over query tiles as the forward's, with
/// num_splits programs per batch row (value "splits": z = B·num_splits);
/// and the merge over the output's rows, never packed (value "rows":
/// (ceil(Nq / block_m), H, B), for a packed batch (ceil(total_q /
/// block_m), H, 1)).
inline constexpr const char *kGridOverSplits = "splits";
inline constexpr const char *kGridOverRows = "rows";

/// The host kernel's work items. Its last two arguments are `phase`
/// (index) and `counters` (memref<?xi64>, one per grid, zero before a
/// call): grid g runs in the calls whose phase is g, each taking items
/// (batch, head, tile) from counters[g] until none is left, so any number
/// of threads may run a phase at once (each item writes its own outputs);
/// phase g + 1 must start after every call of phase g returned. The
/// number of grids is the function's attribute kHostGridsAttr.
inline constexpr const char *kHostGridsAttr = "attn.host_grids";

} // namespace attn::abi

#endif // ATTN_COMPILER_KERNELABI_H
