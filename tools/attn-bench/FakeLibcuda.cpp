//===- FakeLibcuda.cpp - A libcuda that does nothing, for host timing -----===//
//
// libattn-fake-cuda.so exports the driver entry points that libattn-jit
// (runtime/lib/CudaDriver.h) and the tools (CudaDriver.h here) load, each
// doing as little as it can: one device of compute capability 9.0, one
// context, "device memory" from the host heap, module loads and launches
// that succeed at once. With ATTN_JIT_LIBCUDA pointing at it, attn-hotpath
// times the runtime's own host work per call on a machine without a GPU:
// what remains is the runtime, not the driver. Nothing ever runs, so no
// result is meaningful; the unit tests' recording fake
// (tests/unit/runtime/FakeCudaDriver.h) is the one that checks launches.
//
//===----------------------------------------------------------------------===//

#include <cuda.h>

#include <cstdlib>
#include <cstring>

#define FAKE_API extern "C" __attribute__((visibility("default"))) CUresult

namespace {

constexpr int kComputeMajor = 9, kComputeMinor = 0;
constexpr int kMaxSharedOptIn = 227 * 1024;
constexpr int kMultiprocessors = 132; // an H100 / H200 SXM (split-KV's count)
constexpr size_t kAlignment = 256; // as cuMemAlloc's
constexpr size_t kFakeMemoryBytes = size_t(80) << 30;
constexpr CUdeviceptr kWorkspaceAddress = 0x7e0000000000;

char primaryContext, moduleStorage;
thread_local CUcontext current = nullptr;

CUcontext thePrimary() { return reinterpret_cast<CUcontext>(&primaryContext); }

} // namespace

FAKE_API cuInit(unsigned) { return CUDA_SUCCESS; }
FAKE_API cuDriverGetVersion(int *version) {
  *version = CUDA_VERSION;
  return CUDA_SUCCESS;
}
FAKE_API cuGetErrorName(CUresult, const char **name) {
  *name = "CUDA_ERROR_FAKE";
  return CUDA_SUCCESS;
}
FAKE_API cuGetErrorString(CUresult, const char **text) {
  *text = "an error of the fake driver";
  return CUDA_SUCCESS;
}
FAKE_API cuDeviceGet(CUdevice *device, int ordinal) {
  if (ordinal != 0)
    return CUDA_ERROR_INVALID_DEVICE;
  *device = 0;
  return CUDA_SUCCESS;
}
FAKE_API cuDeviceGetCount(int *count) {
  *count = 1;
  return CUDA_SUCCESS;
}
FAKE_API cuDeviceGetName(char *name, int length, CUdevice) {
  std::strncpy(name, "attn-jit fake device", size_t(length));
  if (length > 0)
    name[length - 1] = '\0';
  return CUDA_SUCCESS;
}
FAKE_API cuDeviceGetAttribute(int *value, CUdevice_attribute attribute,
                              CUdevice) {
  switch (attribute) {
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
    *value = kComputeMajor;
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
    *value = kComputeMinor;
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
    *value = kMaxSharedOptIn;
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
    *value = kMultiprocessors;
    return CUDA_SUCCESS;
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
}
FAKE_API cuDevicePrimaryCtxRetain(CUcontext *context, CUdevice) {
  *context = thePrimary();
  return CUDA_SUCCESS;
}
FAKE_API cuDevicePrimaryCtxRelease(CUdevice) { return CUDA_SUCCESS; }
FAKE_API cuCtxGetCurrent(CUcontext *context) {
  *context = current;
  return CUDA_SUCCESS;
}
FAKE_API cuCtxSetCurrent(CUcontext context) {
  current = context;
  return CUDA_SUCCESS;
}
FAKE_API cuCtxGetDevice(CUdevice *device) {
  *device = 0;
  return current ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}
FAKE_API cuCtxGetId(CUcontext, unsigned long long *id) {
  *id = 1;
  return CUDA_SUCCESS;
}
FAKE_API cuCtxSynchronize() { return CUDA_SUCCESS; }

FAKE_API cuMemAlloc(CUdeviceptr *pointer, size_t bytes) {
  void *memory =
      std::aligned_alloc(kAlignment, (bytes + kAlignment - 1) / kAlignment *
                                         kAlignment);
  if (!memory)
    return CUDA_ERROR_OUT_OF_MEMORY;
  *pointer = reinterpret_cast<CUdeviceptr>(memory);
  return CUDA_SUCCESS;
}
FAKE_API cuMemFree(CUdeviceptr pointer) {
  std::free(reinterpret_cast<void *>(pointer));
  return CUDA_SUCCESS;
}
// The backward's per-call workspace: nothing runs, so nothing is allocated
// (a malloc here would be timed as the runtime's).
FAKE_API cuMemAllocAsync(CUdeviceptr *pointer, size_t, CUstream) {
  *pointer = kWorkspaceAddress;
  return CUDA_SUCCESS;
}
FAKE_API cuMemFreeAsync(CUdeviceptr, CUstream) { return CUDA_SUCCESS; }
FAKE_API cuMemGetInfo(size_t *free, size_t *total) {
  *free = *total = kFakeMemoryBytes;
  return CUDA_SUCCESS;
}
// Every address is "device memory" here: the runtime's pointer check passes.
FAKE_API cuPointerGetAttribute(void *data, CUpointer_attribute attribute,
                               CUdeviceptr) {
  if (attribute != CU_POINTER_ATTRIBUTE_MEMORY_TYPE)
    return CUDA_ERROR_NOT_SUPPORTED;
  *static_cast<unsigned *>(data) = CU_MEMORYTYPE_DEVICE;
  return CUDA_SUCCESS;
}
// Copies and fills: nothing is ever read back, so they do nothing.
FAKE_API cuMemcpyHtoD(CUdeviceptr, const void *, size_t) {
  return CUDA_SUCCESS;
}
FAKE_API cuMemcpyDtoH(void *, CUdeviceptr, size_t) { return CUDA_SUCCESS; }
FAKE_API cuMemcpyDtoD(CUdeviceptr, CUdeviceptr, size_t) {
  return CUDA_SUCCESS;
}
FAKE_API cuMemsetD16(CUdeviceptr, unsigned short, size_t) {
  return CUDA_SUCCESS;
}
FAKE_API cuMemsetD32(CUdeviceptr, unsigned, size_t) { return CUDA_SUCCESS; }

FAKE_API cuStreamCreate(CUstream *stream, unsigned) {
  *stream = nullptr;
  return CUDA_SUCCESS;
}
FAKE_API cuStreamDestroy(CUstream) { return CUDA_SUCCESS; }
FAKE_API cuStreamSynchronize(CUstream) { return CUDA_SUCCESS; }
FAKE_API cuEventCreate(CUevent *event, unsigned) {
  *event = nullptr;
  return CUDA_SUCCESS;
}
FAKE_API cuEventDestroy(CUevent) { return CUDA_SUCCESS; }
FAKE_API cuEventRecord(CUevent, CUstream) { return CUDA_SUCCESS; }
FAKE_API cuEventSynchronize(CUevent) { return CUDA_SUCCESS; }
FAKE_API cuEventElapsedTime(float *ms, CUevent, CUevent) {
  *ms = 0;
  return CUDA_SUCCESS;
}

FAKE_API cuModuleLoadData(CUmodule *module, const void *) {
  *module = reinterpret_cast<CUmodule>(&moduleStorage);
  return CUDA_SUCCESS;
}
FAKE_API cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned,
                            CUjit_option *, void **) {
  return cuModuleLoadData(module, image);
}
FAKE_API cuModuleUnload(CUmodule) { return CUDA_SUCCESS; }
FAKE_API cuModuleGetFunction(CUfunction *function, CUmodule module,
                             const char *) {
  *function = reinterpret_cast<CUfunction>(module);
  return CUDA_SUCCESS;
}
FAKE_API cuFuncSetAttribute(CUfunction, CUfunction_attribute, int) {
  return CUDA_SUCCESS;
}
FAKE_API cuLaunchKernel(CUfunction, unsigned, unsigned, unsigned, unsigned,
                        unsigned, unsigned, unsigned, CUstream, void **params,
                        void **) {
  return params ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
