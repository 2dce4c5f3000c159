//===- CudaContext.h - The CUDA context and device of a call --------------===//

#ifndef ATTN_RUNTIME_CUDACONTEXT_H
#define ATTN_RUNTIME_CUDACONTEXT_H

#include "CudaDriver.h"

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace attn::rt {

struct DeviceInfo {
  CUdevice device = 0;
  int major = 0, minor = 0;
  std::string arch; ///< "" when the GPU is too old
  int maxSharedBytes = 0; ///< opt-in dynamic shared memory per block
  int multiprocessors = 0; ///< SMs (split-KV's count, SplitKv.h)
};

struct ContextInfo {
  CUcontext context = nullptr;
  /// cuCtxGetId when the driver has it (never reused), else the handle.
  uint64_t id = 0;
  std::shared_ptr<const DeviceInfo> device;
};

/// Finds the context a call runs in, and caches what the runtime needs to
/// know about its device.
class CudaContexts {
public:
  explicit CudaContexts(std::shared_ptr<const CudaDriver> driver)
      : driver_(std::move(driver)) {}

  /// The calling thread's current context; when there is none, the primary
  /// context of device 0 (retained once, never released), made current as
  /// the CUDA runtime does. Modules and functions belong to a context, so
  /// callers key loaded kernels by `id`. `device` is left null: what a
  /// cached call needs, without a lock once a context is current.
  Expected<ContextInfo> currentContext();
  /// currentContext() with its device.
  Expected<ContextInfo> current();

private:
  Expected<CUcontext> primaryContext();
  Expected<std::shared_ptr<const DeviceInfo>> queryDevice();

  std::shared_ptr<const CudaDriver> driver_;
  std::mutex mutex_;
  CUcontext primary_ = nullptr;
  std::unordered_map<uint64_t, std::shared_ptr<const DeviceInfo>> devices_;
};

/// Checks, through cuPointerGetAttribute, that Q, K, V, O (and LSE) are
/// device-accessible memory; plain or page-locked host memory is rejected.
Status checkDevicePointers(const CudaDriver &driver, const attn_fwd_args &args);
/// The same for the backward's dO, dQ, dK and dV.
Status checkDevicePointers(const CudaDriver &driver, const attn_bwd_args &args);
/// The same for a variable-length call's offsets.
Status checkDeviceOffsets(const CudaDriver &driver, const int32_t *cuSeqlensQ,
                          const int32_t *cuSeqlensK);
/// The same for a paged call's block table and key counts.
Status checkDevicePages(const CudaDriver &driver, const int32_t *blockTable,
                        const int32_t *sequsedK);

} // namespace attn::rt

#endif // ATTN_RUNTIME_CUDACONTEXT_H
