//===- CudaDriver.h - The CUDA driver API, loaded with dlopen -------------===//
//
// libattn-jit never links libcuda: it loads libcuda.so.1 (or the library
// named by ATTN_JIT_LIBCUDA) on first use, so that it loads, and reports
// ATTN_ERROR_NO_DRIVER, on machines without a driver. The table holds the
// entry points under the names cuda.h declares, looked up under the versioned
// symbol names cuda.h maps them to (cuCtxPushCurrent -> cuCtxPushCurrent_v2).
// Tests fill a table with fakes to drive the CUDA path without a GPU.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_CUDADRIVER_H
#define ATTN_RUNTIME_CUDADRIVER_H

#include "attn-jit/Runtime.h"

#include <cuda.h>

#include <cstdint>
#include <memory>
#include <string>

namespace attn::rt {

// The entry points the runtime needs; loading fails without any of them.
#define ATTN_CUDA_REQUIRED_FUNCTIONS(X)                                        \
  X(cuInit)                                                                    \
  X(cuDriverGetVersion)                                                        \
  X(cuGetErrorName)                                                            \
  X(cuGetErrorString)                                                          \
  X(cuDeviceGet)                                                               \
  X(cuDeviceGetCount)                                                          \
  X(cuDeviceGetAttribute)                                                      \
  X(cuDevicePrimaryCtxRetain)                                                  \
  X(cuCtxGetCurrent)                                                           \
  X(cuCtxSetCurrent)                                                           \
  X(cuCtxGetDevice)                                                            \
  X(cuModuleLoadDataEx)                                                        \
  X(cuModuleGetFunction)                                                       \
  X(cuFuncSetAttribute)                                                        \
  X(cuLaunchKernel)                                                            \
  X(cuPointerGetAttribute)

// Entry points used when present (cuCtxGetId: CUDA 12.0; the stream-ordered
// allocator, CUDA 11.2: the backward's workspace; cuMemsetD32Async: zeroing
// the atomic backward's dQ accumulator; cuTensorMapEncodeTiled, CUDA 12.0:
// the TMA kernels' tensor maps, without it no TMA; the linker: the PTX JIT
// that returns the cubin, which the disk cache keeps, without it the PTX is
// loaded and JIT-compiled in every process; cuStreamIsCapturing, CUDA 10:
// tiered first calls, without it none; cuThreadExchangeStreamCaptureMode,
// CUDA 10.1: their background thread's module loads relaxed, so that they
// never break another thread's graph capture).
#define ATTN_CUDA_OPTIONAL_FUNCTIONS(X)                                        \
  X(cuCtxGetId)                                                                \
  X(cuMemAllocAsync)                                                           \
  X(cuMemFreeAsync)                                                            \
  X(cuMemsetD32Async)                                                          \
  X(cuTensorMapEncodeTiled)                                                    \
  X(cuLinkCreate)                                                              \
  X(cuLinkAddData)                                                             \
  X(cuLinkComplete)                                                            \
  X(cuLinkDestroy)                                                             \
  X(cuStreamIsCapturing)                                                       \
  X(cuThreadExchangeStreamCaptureMode)

struct CudaDriver {
#define ATTN_CUDA_DECLARE(name) decltype(&::name) name = nullptr;
  ATTN_CUDA_REQUIRED_FUNCTIONS(ATTN_CUDA_DECLARE)
  ATTN_CUDA_OPTIONAL_FUNCTIONS(ATTN_CUDA_DECLARE)
#undef ATTN_CUDA_DECLARE

  /// What dlopen loaded (empty for a table of fakes).
  std::string library;
  /// cuDriverGetVersion, e.g. 13000.
  int version = 0;
  /// Distinct for each table made in this process (an address may be
  /// reused): keys what is remembered of its results (TensorMap.cpp).
  uint64_t id = nextId();
  static uint64_t nextId();

  /// Whether the linker entry points are all there.
  bool canLink() const {
    return cuLinkCreate && cuLinkAddData && cuLinkComplete && cuLinkDestroy;
  }

  /// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)".
  std::string describe(CUresult result) const;
};

/// The symbol an entry point is looked up under, e.g. "cuCtxPushCurrent_v2"
/// (exposed for tests).
#define ATTN_CUDA_SYMBOL(name) ATTN_CUDA_SYMBOL_TEXT(name)
#define ATTN_CUDA_SYMBOL_TEXT(name) #name

/// Loads `library` (dlopen), resolves the table and runs cuInit(0).
/// ATTN_ERROR_NO_DRIVER when the library or an entry point is missing or
/// the driver is unusable; ATTN_ERROR_NO_DEVICE when it reports no GPU.
Expected<std::shared_ptr<const CudaDriver>>
loadCudaDriver(const std::string &library);

/// Runs cuInit(0) and checks that a device exists; loadCudaDriver does this
/// for a loaded driver, tests call it on tables of fakes.
Status initializeCudaDriver(CudaDriver &driver);

} // namespace attn::rt

#endif // ATTN_RUNTIME_CUDADRIVER_H
