//===- CudaDriver.cpp - The CUDA driver API, loaded with dlopen -----------===//

#include "CudaDriver.h"
#include "Error.h"

#include <atomic>
#include <dlfcn.h>

namespace attn::rt {

uint64_t CudaDriver::nextId() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

std::string CudaDriver::describe(CUresult result) const {
  const char *name = nullptr, *text = nullptr;
  if (cuGetErrorName)
    cuGetErrorName(result, &name);
  if (cuGetErrorString)
    cuGetErrorString(result, &text);
  return fmt::format("{} ({})", name ? name : "unknown CUresult",
                     text ? text : fmt::format("code {}", int(result)));
}

Status initializeCudaDriver(CudaDriver &driver) {
  CUresult result = driver.cuInit(0);
  if (result == CUDA_ERROR_NO_DEVICE)
    return makeError(ATTN_ERROR_NO_DEVICE, "the CUDA driver sees no GPU: {}",
                     driver.describe(result));
  // A stub libcuda (the toolkit's, for linking) or a driver that does not
  // match the kernel module is as good as no driver.
  bool noDriver = result == CUDA_ERROR_STUB_LIBRARY ||
                  result == CUDA_ERROR_SYSTEM_DRIVER_MISMATCH ||
                  result == CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE ||
                  result == CUDA_ERROR_SYSTEM_NOT_READY;
  if (result != CUDA_SUCCESS)
    return makeError(noDriver ? ATTN_ERROR_NO_DRIVER : ATTN_ERROR_CUDA,
                     "cuInit failed: {}", driver.describe(result));
  int count = 0;
  result = driver.cuDeviceGetCount(&count);
  if (result != CUDA_SUCCESS)
    return makeError(ATTN_ERROR_CUDA, "cuDeviceGetCount failed: {}",
                     driver.describe(result));
  if (count == 0)
    return makeError(ATTN_ERROR_NO_DEVICE, "the CUDA driver sees no GPU");
  if (driver.cuDriverGetVersion(&driver.version) != CUDA_SUCCESS)
    driver.version = 0;
  return Status();
}

Expected<std::shared_ptr<const CudaDriver>>
loadCudaDriver(const std::string &library) {
  // The handle is never closed: kernels and contexts outlive any caller.
  void *handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *why = ::dlerror();
    return makeError(ATTN_ERROR_NO_DRIVER,
                     "cannot load the CUDA driver library {}: {} (is the "
                     "NVIDIA driver installed? ATTN_JIT_LIBCUDA names another "
                     "library)",
                     library, why ? why : "unknown dlopen error");
  }
  auto driver = std::make_shared<CudaDriver>();
  driver->library = library;
#define ATTN_CUDA_RESOLVE(name)                                                \
  driver->name = reinterpret_cast<decltype(&::name)>(                          \
      ::dlsym(handle, ATTN_CUDA_SYMBOL(name)));                                \
  if (!driver->name)                                                           \
    return makeError(ATTN_ERROR_NO_DRIVER,                                     \
                     "the CUDA driver {} lacks {}: it is older than this "     \
                     "library supports",                                       \
                     library, ATTN_CUDA_SYMBOL(name));
  ATTN_CUDA_REQUIRED_FUNCTIONS(ATTN_CUDA_RESOLVE)
#undef ATTN_CUDA_RESOLVE
#define ATTN_CUDA_RESOLVE_OPTIONAL(name)                                       \
  driver->name = reinterpret_cast<decltype(&::name)>(                          \
      ::dlsym(handle, ATTN_CUDA_SYMBOL(name)));
  ATTN_CUDA_OPTIONAL_FUNCTIONS(ATTN_CUDA_RESOLVE_OPTIONAL)
#undef ATTN_CUDA_RESOLVE_OPTIONAL
  Status status = initializeCudaDriver(*driver);
  if (!status.ok())
    return status;
  return std::shared_ptr<const CudaDriver>(std::move(driver));
}

} // namespace attn::rt
