//===- Compiler.h - attn's compiler as a library ----------------*- C++ -*-===//
//
// The interface the runtime uses: no MLIR or LLVM type appears here, so that
// the runtime (and its tests) compile without MLIR headers.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_COMPILER_COMPILER_H
#define ATTN_COMPILER_COMPILER_H

#include "attn/Compiler/KernelABI.h"
#include "attn/Dialect/Attn/IR/Limits.h"

#include <cstdint>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

namespace llvm {
class ThreadPoolInterface;
} // namespace llvm

namespace attn::compiler {

/// E4M3: FP8 Q, K, V (float8_e4m3fn) with descale factors and a bf16 O.
enum class DType { BF16, F16, F32, E4M3 };
enum class MaskKind { None, Causal, CausalBottomRight };

inline const char *toString(DType dtype) {
  switch (dtype) {
  case DType::BF16:
    return "bf16";
  case DType::F16:
    return "f16";
  case DType::F32:
    return "f32";
  case DType::E4M3:
    return "e4m3";
  }
  return "?";
}

inline const char *toString(MaskKind mask) {
  switch (mask) {
  case MaskKind::None:
    return "none";
  case MaskKind::Causal:
    return "causal";
  case MaskKind::CausalBottomRight:
    return "causal_bottom_right";
  }
  return "?";
}

/// What changes the generated code. Batch, heads and sequence lengths are
/// kernel arguments and never part of it.
struct KernelConfig {
  int64_t headDim = 128;
  DType dtype = DType::BF16;
  MaskKind mask = MaskKind::None;
  std::string arch = "sm_90a"; // NVIDIA only
  int64_t blockM = 0;          // 0: default per head dim
  int64_t blockN = 0;          // 0: default per head dim
  int64_t warps = 0;           // NVIDIA only; 0: chosen by the mapping
  int64_t stages = 0;          // NVIDIA only; 0: as many as fit (2 or 3)
  /// NVIDIA only: "auto" (wgmma on sm_90a where the tiles allow it),
  /// "mma.sync" or "wgmma".
  std::string tensorCore = "auto";
  /// The scale the kernel is called with is > 0, which lets the softmax take
  /// the row max before scaling (one FFMA per score). A kernel compiled
  /// without it computes any finite scale, negative too.
  bool positiveScale = true;
  /// A query tile packs the query heads of one K/V head (the grid runs over
  /// K/V heads), so K and V are read once per group: what decoding with
  /// grouped-query attention wants.
  bool packGqa = false;
  /// Named variants (abi::Variant bits); their parameters are kernel
  /// arguments (abi::kCaptureArgs).
  unsigned variants = 0;
  /// A user's own mods (UserMods.h), as canonicalUserMods prints them; ""
  /// for none. Their captures are kernel arguments after the variants'.
  std::string userMods;
  /// The backward pass of this attention (dQ, dK, dV; KernelABI.h's
  /// kBackwardTensors) instead of the forward.
  bool backward = false;
  /// A variable-length (packed) batch (the forward only): the kernel takes
  /// KernelABI.h's kVarlenArgs; lengths are its arguments, never the key's.
  bool varlen = false;
  /// A paged K/V cache (with varlen queries): its page size, compiled in
  /// (a multiple of 16 in [16, 256]); the kernel takes kPagedArgs instead
  /// of kVarlenArgs. 0: contiguous K and V.
  int64_t pageSize = 0;
  /// Split-KV (the forward only): the keys of each query tile divided over
  /// num_splits programs and merged after (KernelABI.h's kSplitArgs; the
  /// count is an argument, never the key's).
  bool split = false;
  /// NVIDIA only: K and V tiles loaded by the bulk tensor copy engine (TMA)
  /// with mbarriers instead of cp.async (sm_90a wgmma forward kernels over
  /// contiguous or packed K/V, not split, only; resolved() clears it
  /// elsewhere). The kernel takes KernelABI.h's kTensorMaps after every
  /// other argument, in the ragged form with varlen.
  bool tma = false;
  /// The backward only: dQ without atomics, bit-identical from run to run
  /// (FlashAttention-2's deterministic backward: S and dP formed by both
  /// grids, 7 products per tile pair); false: the K/V tiles add dQ into an
  /// f32 accumulator with atomics (KernelABI.h's kAtomicBackwardArgs), 5
  /// products per tile pair. resolved() sets it for the forward and for
  /// mma.sync, which has no MN-major A to read dSᵀ transposed (wgmma does).
  bool deterministic = true;
  /// NVIDIA only, with tma: a producer warpgroup (128 threads after the
  /// `warps` that compute) issues the K/V copies, setmaxnreg moving its
  /// registers to the consumers (attn-nv-warp-specialize; resolved()
  /// clears it without tma).
  bool warpSpecialize = false;
  /// NVIDIA only, with warpSpecialize: each CTA runs several work tiles of
  /// the grid, in rounds of the launch's min(tiles, SMs) CTAs
  /// (attn-nv-persist). resolved() keeps it for the forward over
  /// contiguous K/V only (not varlen, paged, split, packGqa nor FP8) and
  /// clears it elsewhere.
  bool persistent = false;
  /// With persistent: Q's shared buffers, 1 or 2 (0: the tile policy's
  /// choice, two where two K/V stages fit beside them). resolved() clears
  /// it without persistent.
  int64_t qStages = 0;
  /// With persistent: each work tile visits a few K/V tiles (LengthTiles'
  /// D = 128 bands: short sequences, short windows), so the mirrored rounds
  /// balance them with the query tile the grid's fastest index (a short
  /// sequence's round spans several (batch, head) pairs, a window's tiles
  /// are of one length), a pair's K/V shared in L2 by its tiles running
  /// together. Without it a
  /// persistent causal grid sorts its work tiles longest first across heads
  /// (TilePolicy.h's gridGroupCtas). resolved() clears it without
  /// persistent.
  bool shortWorkTiles = false;
  /// NVIDIA only, a paged call that decodes (TilePolicy.h's pagedDecodes):
  /// resolved() gives tiles the call leaves open pagedDecodeTiles' instead of
  /// the defaults, then clears it (the tiles are then explicit, and keyed).
  bool pagedDecode = false;
  /// NVIDIA only: LLVM's optimisation level for the PTX, the highest but for
  /// a tiered first call's quick kernel (TilePolicy.h's kQuickLlvmOptLevel).
  int llvmOptLevel = mlir::attn::kMaxLlvmOptLevel;

  /// The attn-to-ptx / attn-to-host pipeline options for this config.
  std::string pipelineOptions(bool nvidia) const;
  /// The same configuration with every automatic choice made explicit: tile
  /// sizes, warps and (NVIDIA) the tensor-core mapping, as the pipelines
  /// would choose them (the rest of the plan, TilePolicy.h, follows from
  /// these). Compiling either gives the same code, so callers key caches on
  /// this one. A tensor-core choice the tiles do not allow is kept (the
  /// compiler reports it).
  KernelConfig resolved(bool nvidia) const;
};

/// Milliseconds spent in each stage of one compilation.
struct CompileTimes {
  double buildIR = 0, passes = 0, codegen = 0;
};

/// What the runtime needs to know of a user's mods.
struct UserModsInfo {
  std::string canonical;                  // the cache key's text
  std::vector<abi::UserCapture> captures; // in kernel-argument order
  /// Why the backward pass cannot take these mods (a score_mod with an op
  /// the compiler cannot differentiate); "" when it can.
  std::string notDifferentiable;
};

/// Parses and verifies a user's mods (UserMods.h): on failure returns false
/// and sets `error` to the diagnostics (located in the text).
bool inspectUserMods(const std::string &text, UserModsInfo &info,
                     std::string &error);

/// One kernel of a compiled configuration and how to launch it: grid
/// (ceil(Nq / blockM), H, B); with packGqa (ceil(H / Hkv · Nq / blockM),
/// Hkv, B); over K/V tiles (overKeys: the backward's dK/dV) (ceil(Nk /
/// blockM), Hkv, B). `threads` threads a CTA and `sharedBytes` of dynamic
/// shared memory. Kernel parameters: attn/Compiler/KernelABI.h.
struct KernelLaunch {
  std::string name;
  int threads = 0;
  int blockM = 0; // rows of a CTA's tile along its grid's sequence
  int sharedBytes = 0;
  bool packGqa = false;
  bool overKeys = false;
  /// Split-KV's first kernel: the grid's z is B · num_splits.
  bool overSplits = false;
};

/// A compiled NVIDIA configuration: one module of PTX holding its kernels,
/// launched one after the other with the same parameters (the forward: one;
/// the backward: the query tiles', then the K/V tiles'). Pointers and row
/// strides must allow 16-byte copies: 16-byte aligned bases, strides
/// multiples of 8 elements.
struct PtxKernel {
  std::string ptx;
  std::vector<KernelLaunch> kernels;
  CompileTimes times;
};

/// Compiles `config` to PTX. On failure returns false and sets `error` to the
/// diagnostics.
bool compilePtx(const KernelConfig &config, PtxKernel &out,
                std::string &error);

/// Arguments of one host call: host pointers and strides in elements. Q and
/// O are (batch, heads, numQueries, D), K and V (batch, kvHeads, numKeys, D):
/// query head h reads K/V head h / (heads / kvHeads).
struct HostArgs {
  void *q = nullptr, *k = nullptr, *v = nullptr, *o = nullptr;
  float *lse = nullptr; // may be null
  int64_t batch = 0, heads = 0, numQueries = 0, numKeys = 0;
  int64_t kvHeads = 0; // divides heads; 0: heads
  /// K's and V's first size when it is not `batch`: a paged cache's pages
  /// (numKeys is then the page size). 0: batch.
  int64_t kvBatch = 0;
  int64_t qStrides[4] = {}, kStrides[4] = {}, vStrides[4] = {},
          oStrides[4] = {}, lseStrides[3] = {};
  float scale = 0; // 0: 1/sqrt(D)
  /// An e4m3 kernel's (DType::E4M3) factors that dequantise Q, K and V
  /// (abi::kFp8Scalars, > 0); Q, K, V then hold float8_e4m3fn bytes and O
  /// bf16.
  float descale[std::size(abi::kFp8Scalars)] = {1.0f, 1.0f, 1.0f};
  /// The capture arguments of the kernel's variants, in kCaptureArgs order.
  std::vector<abi::CaptureValue> captures;

  /// The backward kernel's (config.backward): O and the LSE above are the
  /// forward's (inputs, the LSE required); dO is shaped as O, dQ, dK, dV as
  /// Q, K, V. The row terms' workspace is the kernel's own.
  const void *dO = nullptr;
  void *dq = nullptr, *dk = nullptr, *dv = nullptr;
  int64_t dOStrides[4] = {}, dqStrides[4] = {}, dkStrides[4] = {},
          dvStrides[4] = {};

  /// Threads that share the work items (abi::kHostGridsAttr) with the
  /// calling thread, which always takes part; null: the caller alone.
  /// Bitwise the same result with any count (not the atomic form's dQ).
  llvm::ThreadPoolInterface *pool = nullptr;
};

/// "window,softcap"-style names of variant bits (pipeline options, keys).
inline std::string variantNames(unsigned variants) {
  std::string names;
  for (unsigned i = 0; i < std::size(abi::kVariantNames); ++i)
    if (variants & (1u << i))
      names += (names.empty() ? "" : ",") + std::string(abi::kVariantNames[i]);
  return names;
}

/// A kernel compiled for the CPU through MLIR's ExecutionEngine: the same
/// tiling and online softmax as the NVIDIA kernel.
class HostKernel {
public:
  virtual ~HostKernel();
  virtual void run(const HostArgs &args) = 0;
  const CompileTimes &times() const { return times_; }

protected:
  CompileTimes times_;
};

/// Compiles `config` for the host. On failure returns null and sets `error`.
std::unique_ptr<HostKernel> compileHost(const KernelConfig &config,
                                        std::string &error);

/// A hash of the compiler itself (version and build), part of every cache
/// key so that a new compiler never loads an old kernel.
const char *compilerVersion();

} // namespace attn::compiler

#endif // ATTN_COMPILER_COMPILER_H
