//===- CudaDriver.h - the CUDA driver API through dlopen ------------------===//
//
// The tools are built on a machine without a GPU and run on one with it, so
// they link neither libcuda nor the CUDA runtime: the driver functions they
// use are resolved from libcuda.so.1 at run time. Names come from cuda.h's
// macros (cuMemAlloc -> cuMemAlloc_v2), so the versioned symbol is loaded.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_JIT_TOOLS_CUDA_DRIVER_H
#define ATTN_JIT_TOOLS_CUDA_DRIVER_H

#include <cuda.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace attn_tools {

#define ATTN_DRV_STR2(x) #x
#define ATTN_DRV_STR(x) ATTN_DRV_STR2(x) // stringize after macro expansion
#define ATTN_DRV_FUNCS(X)                                                      \
  X(cuInit) X(cuDeviceGet) X(cuDeviceGetName) X(cuDeviceGetAttribute)          \
  X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease) X(cuCtxSetCurrent)  \
  X(cuCtxSynchronize) X(cuGetErrorString) X(cuMemAlloc) X(cuMemFree)          \
  X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuMemcpyDtoD) X(cuMemsetD16) X(cuMemsetD32) \
  X(cuMemGetInfo) X(cuStreamCreate) X(cuStreamDestroy) X(cuStreamSynchronize)  \
  X(cuEventCreate) X(cuEventDestroy) X(cuEventRecord) X(cuEventSynchronize)    \
  X(cuEventElapsedTime) X(cuModuleLoadData) X(cuModuleUnload)                  \
  X(cuModuleGetFunction) X(cuLaunchKernel) X(cuPointerGetAttribute)          \
  X(cuMemAllocAsync) X(cuMemFreeAsync)

struct Driver {
#define ATTN_DRV_MEMBER(name) decltype(&name) p_##name = nullptr;
  ATTN_DRV_FUNCS(ATTN_DRV_MEMBER)
#undef ATTN_DRV_MEMBER
  std::string error; // why load() failed

  // `library`: libcuda.so.1, or another driver (attn-hotpath: the one
  // ATTN_JIT_LIBCUDA gives the runtime, so that both share its context).
  bool load(const std::string &library = "libcuda.so.1") {
    void *h = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) { error = "dlopen " + library + ": " + dlerror(); return false; }
#define ATTN_DRV_LOAD(name)                                                    \
  p_##name = reinterpret_cast<decltype(&name)>(dlsym(h, ATTN_DRV_STR(name)));  \
  if (!p_##name) { error = library + " lacks " ATTN_DRV_STR(name); return false; }
    ATTN_DRV_FUNCS(ATTN_DRV_LOAD)
#undef ATTN_DRV_LOAD
    return true;
  }
};

inline Driver &drv() { static Driver d; return d; }

// Aborts the tool with the failing call and the driver's message: a tool that
// measured after a failed call would print numbers that mean nothing.
inline void check_cu(CUresult r, const char *what, const char *file, int line) {
  if (r == CUDA_SUCCESS) return;
  const char *msg = "?";
  if (drv().p_cuGetErrorString) drv().p_cuGetErrorString(r, &msg);
  std::fprintf(stderr, "%s:%d: %s failed: %d (%s)\n", file, line, what, int(r), msg);
  std::exit(2);
}
#define CU(call) ::attn_tools::check_cu((call), #call, __FILE__, __LINE__)
#define DRV(name) (::attn_tools::drv().p_##name)

// Loads the driver, makes device 0's primary context current (the one the
// attn-jit runtime and cuBLAS use too). Returns false with a message when
// there is no driver or device.
inline bool init_cuda(CUdevice *dev, CUcontext *ctx, std::string *why,
                      const std::string &library = "libcuda.so.1") {
  if (!drv().load(library)) { *why = drv().error; return false; }
  CUresult r = DRV(cuInit)(0);
  if (r != CUDA_SUCCESS) { *why = "cuInit failed: " + std::to_string(int(r)); return false; }
  r = DRV(cuDeviceGet)(dev, 0);
  if (r != CUDA_SUCCESS) { *why = "no CUDA device: " + std::to_string(int(r)); return false; }
  CU(DRV(cuDevicePrimaryCtxRetain)(ctx, *dev));
  CU(DRV(cuCtxSetCurrent)(*ctx));
  return true;
}

// Device buffer that frees itself.
struct DeviceBuffer {
  CUdeviceptr ptr = 0;
  size_t bytes = 0;
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t n) : bytes(n) { if (n) CU(DRV(cuMemAlloc)(&ptr, n)); }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  DeviceBuffer(DeviceBuffer &&o) noexcept : ptr(o.ptr), bytes(o.bytes) { o.ptr = 0; o.bytes = 0; }
  DeviceBuffer &operator=(DeviceBuffer &&o) noexcept {
    if (this != &o) { reset(); ptr = o.ptr; bytes = o.bytes; o.ptr = 0; o.bytes = 0; }
    return *this;
  }
  ~DeviceBuffer() { reset(); }
  void reset() { if (ptr) DRV(cuMemFree)(ptr); ptr = 0; bytes = 0; }
  void *get() const { return reinterpret_cast<void *>(ptr); }
};

} // namespace attn_tools

#endif // ATTN_JIT_TOOLS_CUDA_DRIVER_H
