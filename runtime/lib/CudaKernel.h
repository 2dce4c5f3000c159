//===- CudaKernel.h - Loading PTX and launching the attention kernel ------===//

#ifndef ATTN_RUNTIME_CUDAKERNEL_H
#define ATTN_RUNTIME_CUDAKERNEL_H

#include "CudaContext.h"
#include "SplitKv.h"
#include "TensorMap.h"
#include "Validate.h"
#include "attn/Compiler/Compiler.h"
#include "attn/Compiler/KernelABI.h"

#include <algorithm>
#include <string>
#include <vector>

namespace attn::rt {

/// One kernel function of a loaded module and its launch.
struct LoadedFunction {
  CUfunction function = nullptr;
  compiler::KernelLaunch launch;
};

/// A compiled configuration loaded into one context: its module and its
/// kernels, in launch order. Modules are never unloaded: a launch may still
/// be running when the cache forgets the kernel.
struct LoadedKernel {
  CUmodule module = nullptr;
  std::vector<LoadedFunction> functions;
  double loadMs = 0;      ///< cuModuleLoadDataEx, function lookups, attributes
  /// The driver's own measure of its PTX JIT (CU_JIT_WALL_TIME), or
  /// kUnknownJitMs (a cubin load, or a driver that did not report it).
  double jitMs = kUnknownJitMs;
  static constexpr double kUnknownJitMs = -1;
  std::string jitInfoLog; ///< the driver's PTX JIT info log
  /// The machine code the JIT made, when JitSettings::keepCubin asked for it
  /// (and the driver has the linker): the caller stores it.
  std::string cubin;
  /// Loaded from a cubin (loadKernel's `cubin`), without the PTX JIT.
  bool fromCubin = false;
  /// A TMA kernel (KernelConfig::tma): the rows of its K/V tensor maps'
  /// box (block_n) and of Q's (block_m), whose maps every launch appends;
  /// both 0 without TMA (launchForward tests `kv`).
  MapBoxRows tmaBoxRows;
  /// Its maps' form (KernelABI.h): ragged for a variable-length kernel.
  abi::TensorMapForm tmaForm = abi::TensorMapForm::Tiled;
  /// The backward's atomic form (KernelConfig::deterministic false): its
  /// kernels take dQ's zeroed f32 accumulator (abi::kAtomicBackwardArgs).
  bool dqAccumulator = false;
  /// A persistent forward kernel (KernelConfig::persistent): the device's
  /// SMs, so that its grid is (min(tiles, persistentCtas), 1, 1) instead
  /// of (query tiles, heads, batch); its CTAs find their work tiles from
  /// their arguments. 0: the usual grid.
  int64_t persistentCtas = 0;
};

/// Dynamic shared memory above this needs an explicit opt-in per function.
inline constexpr int kDefaultMaxDynamicShared = 48 * 1024;

/// The first driver with CU_JIT_SPLIT_COMPILE (CUDA 12.9): the JIT of a
/// module of several kernels (the backward's, split-KV's) runs them on as
/// many threads; an older driver would refuse the option.
inline constexpr int kSplitCompileDriverVersion = 12090;

/// How the driver turns the PTX into machine code.
struct JitSettings {
  /// CU_JIT_OPTIMIZATION_LEVEL, 0 to kMaxJitOptLevel; kDriverDefault
  /// passes none (the driver's default is the highest, 4).
  int optLevel = kDriverDefault;
  static constexpr int kDriverDefault = -1;
  static constexpr int kMaxJitOptLevel = 4;
  /// A verbose JIT info log.
  bool verbose = false;
  /// JIT through the linker (cuLinkCreate .. cuLinkComplete) and return the
  /// cubin in LoadedKernel::cubin; ignored by a driver without the linker.
  bool keepCubin = false;
};

/// Loads `kernel` into the current context, capturing the JIT info and
/// error logs and its wall time: its PTX (cuModuleLoadDataEx, or the linker
/// with `jit.keepCubin`), or else `cubin`, machine code a JIT made before
/// for the same PTX and device (no JIT). Then finds its functions and opts
/// each in to its dynamic shared memory.
Expected<LoadedKernel> loadKernel(const CudaDriver &driver,
                                  const compiler::PtxKernel &kernel,
                                  const DeviceInfo &device,
                                  const JitSettings &jit,
                                  const std::string *cubin = nullptr);

/// The kernel parameters of one launch, in the order of KernelABI.h: per
/// tensor of abi::kForwardTensors (or, for the backward, kBackwardTensors)
/// its pointer, sizes[rank] and strides[rank] (a null pointer with zero
/// strides when absent), then the f32 scale, then the variant's captures.
/// `pointers` (what cuLaunchKernel takes) point into this object, so it
/// does not move.
struct KernelParams {
  static constexpr int kTensorValues =
      std::max(abi::forwardTensorParams(),
               abi::backwardTensorParams() +
                   abi::paramsOf(abi::kAtomicBackwardArgs[0]));
  static constexpr int kCaptureValues = [] {
    int n = 0;
    int varlen = 0, paged = 0;
    for (const abi::CaptureArg &c : abi::kVarlenArgs)
      varlen += abi::paramsOf(c);
    for (const abi::CaptureArg &c : abi::kPagedArgs)
      paged += abi::paramsOf(c);
    n += std::max(varlen, paged);
    for (const abi::CaptureArg &c : abi::kSplitArgs)
      n += abi::paramsOf(c);
    for (const abi::CaptureArg &c : abi::kCaptureArgs)
      n += abi::paramsOf(c);
    return n + abi::kMaxUserCaptures *
                   abi::paramsOf(abi::UserCapture{
                       abi::CaptureArg::F32, abi::kMaxUserCaptureRank});
  }();
  static constexpr int kMaxCount =
      kTensorValues + abi::kForwardScalarCount +
      int(std::size(abi::kFp8Scalars)) + kCaptureValues +
      abi::kTensorMapCount;

  /// The forward's parameters; `user`: the user's mods of the call, if any
  /// (their captures follow); `varlen`: a variable-length call's offsets
  /// (`args` is then its packed view); `split`: a split call's count and
  /// workspace; `fp8`: an FP8 call's descale factors (after the scale).
  KernelParams(const attn_fwd_args &args, float scale,
               const compiler::UserModsInfo *user = nullptr,
               const VarlenCall *varlen = nullptr,
               const SplitCall *split = nullptr,
               const Fp8Call *fp8 = nullptr);
  /// The backward's, with the row terms' workspace `delta` (B·H·Nq f32)
  /// and, for the atomic form, dQ's accumulator `dqAccum` (B·H·Nq·D f32,
  /// after the scale; null: the deterministic form).
  KernelParams(const attn_bwd_args &args, float *delta, float scale,
               const compiler::UserModsInfo *user = nullptr,
               float *dqAccum = nullptr);
  KernelParams(const KernelParams &) = delete;
  KernelParams &operator=(const KernelParams &) = delete;

  int64_t values[kTensorValues];
  float scale;
  Fp8Call fp8;
  /// The variant's capture parameters (KernelABI.h): 64-bit words, an f32
  /// scalar in the low half of its word.
  int64_t captures[kCaptureValues];
  float captureF32[kCaptureValues];
  int32_t captureI32[kCaptureValues];
  void *pointers[kMaxCount];
  /// Where the tensor maps of a TMA kernel go (after every other argument).
  int mapsAt = 0;
  /// Appends `maps` (kept alive by the caller until the launch).
  void appendTensorMaps(TensorMaps &maps);

private:
  struct Tensor {
    const void *data;
    int64_t sizes[4];
    const int64_t *strides;
  };
  void fill(const abi::TensorArg *args, const Tensor *tensors, int count,
            const attn_fwd_args &call, const compiler::UserModsInfo *user,
            const VarlenCall *varlen = nullptr,
            const SplitCall *split = nullptr,
            const Tensor *afterScale = nullptr, bool withFp8 = false);
};

/// Device memory of one call, allocated and freed on the call's stream
/// (stream-ordered, CUDA 11.2), so that concurrent calls on other streams
/// never share it: the backward's row terms, split-KV's partials.
class StreamWorkspace {
public:
  /// `bytes` (at least one) on `stream`; `what` names it in errors.
  static Expected<StreamWorkspace> allocate(const CudaDriver &driver,
                                            CUstream stream, size_t bytes,
                                            const char *what);
  StreamWorkspace(StreamWorkspace &&other) noexcept;
  StreamWorkspace &operator=(StreamWorkspace &&) = delete;
  /// Frees it if release() was not called (an error path).
  ~StreamWorkspace();
  float *floats() const {
    return reinterpret_cast<float *>(static_cast<uintptr_t>(pointer_));
  }
  /// Queues setting its first `count` floats to zero (cuMemsetD32Async).
  Status zero(size_t count);
  /// Frees it after the work queued on the stream so far.
  Status release();

private:
  StreamWorkspace(const CudaDriver &driver, CUstream stream,
                  CUdeviceptr pointer)
      : driver_(&driver), stream_(stream), pointer_(pointer) {}
  const CudaDriver *driver_;
  CUstream stream_;
  CUdeviceptr pointer_;
};

/// Launches the forward's kernels (one; a split call's two, the merge
/// after the splits) on args.stream (grids: KernelLaunch).
Status launchForward(const CudaDriver &driver, const LoadedKernel &kernel,
                     const attn_fwd_args &args, float scale,
                     const compiler::UserModsInfo *user = nullptr,
                     const VarlenCall *varlen = nullptr,
                     const SplitCall *split = nullptr,
                     const Fp8Call *fp8 = nullptr);

/// Launches the backward's kernels, in order, on args.fwd.stream, with the
/// row terms' workspace `delta` (device memory, B·H·Nq f32) and, for
/// kernel.dqAccumulator, dQ's accumulator `dqAccum` (B·H·Nq·D f32, zeroed
/// on the stream before).
Status launchBackward(const CudaDriver &driver, const LoadedKernel &kernel,
                      const attn_bwd_args &args, float *delta, float scale,
                      const compiler::UserModsInfo *user = nullptr,
                      float *dqAccum = nullptr);

} // namespace attn::rt

#endif // ATTN_RUNTIME_CUDAKERNEL_H
