//===- CudaKernel.h - Loading PTX and launching the attention kernel ------===//

#ifndef ATTN_RUNTIME_CUDAKERNEL_H
#define ATTN_RUNTIME_CUDAKERNEL_H

#include "CudaContext.h"
#include "attn/Compiler/Compiler.h"
#include "attn/Compiler/KernelABI.h"

#include <string>

namespace attn::rt {

/// A kernel loaded into one context. Modules are never unloaded: a launch
/// may still be running when the cache forgets the kernel.
struct LoadedKernel {
  CUmodule module = nullptr;
  CUfunction function = nullptr;
  int threads = 0, blockM = 0, sharedBytes = 0;
  bool packGqa = false; ///< grid over K/V heads (KernelABI.h)
  double loadMs = 0;      ///< cuModuleLoadDataEx, function lookup, attributes
  std::string jitInfoLog; ///< the driver's PTX JIT info log
};

/// Dynamic shared memory above this needs an explicit opt-in per function.
inline constexpr int kDefaultMaxDynamicShared = 48 * 1024;

/// Loads `kernel` into the current context (cuModuleLoadDataEx, capturing
/// the JIT info and error logs), finds its function and opts it in to its
/// dynamic shared memory. `verbose` asks the JIT for a verbose info log.
Expected<LoadedKernel> loadKernel(const CudaDriver &driver,
                                  const compiler::PtxKernel &kernel,
                                  const DeviceInfo &device, bool verbose);

/// The kernel parameters of one launch, in the order of KernelABI.h: per
/// tensor of abi::kForwardTensors its pointer, sizes[rank] and strides[rank]
/// (Q, O: (B, H, Nq, D); K, V: (B, Hkv, Nk, D); LSE: (B, H, Nq), a null
/// pointer with zero strides when absent), then the f32 scale. `pointers`
/// (what cuLaunchKernel takes) point into this object, so it does not move.
struct ForwardParams {
  static constexpr int kTensorValues = abi::forwardTensorParams();
  static constexpr int kCaptureValues = [] {
    int n = 0;
    for (const abi::CaptureArg &c : abi::kCaptureArgs)
      n += abi::paramsOf(c);
    return n + abi::kMaxUserCaptures *
                   abi::paramsOf(abi::UserCapture{
                       abi::CaptureArg::F32, abi::kMaxUserCaptureRank});
  }();
  static constexpr int kMaxCount =
      kTensorValues + abi::kForwardScalarCount + kCaptureValues;

  /// `user`: the user's mods of the call, if any (their captures follow).
  ForwardParams(const attn_fwd_args &args, float scale,
                const compiler::UserModsInfo *user = nullptr);
  ForwardParams(const ForwardParams &) = delete;
  ForwardParams &operator=(const ForwardParams &) = delete;

  int64_t values[kTensorValues];
  float scale;
  /// The variant's capture parameters (KernelABI.h): 64-bit words, an f32
  /// scalar in the low half of its word.
  int64_t captures[kCaptureValues];
  float captureF32[kCaptureValues];
  int32_t captureI32[kCaptureValues];
  void *pointers[kMaxCount];
};

/// Launches `kernel` on args.stream: grid (ceil(Nq / blockM), H, B), or
/// (ceil(H / Hkv · Nq / blockM), Hkv, B) when it packs query heads.
Status launchForward(const CudaDriver &driver, const LoadedKernel &kernel,
                     const attn_fwd_args &args, float scale,
                     const compiler::UserModsInfo *user = nullptr);

} // namespace attn::rt

#endif // ATTN_RUNTIME_CUDAKERNEL_H
