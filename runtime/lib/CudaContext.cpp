//===- CudaContext.cpp - The CUDA context and device of a call ------------===//

#include "CudaContext.h"
#include "CacheKey.h"
#include "Error.h"

namespace attn::rt {

Expected<CUcontext> CudaContexts::primaryContext() {
  // Called with mutex_ held.
  if (primary_)
    return primary_;
  const CudaDriver &driver = *driver_;
  CUdevice device;
  CUresult result = driver.cuDeviceGet(&device, 0);
  if (result != CUDA_SUCCESS)
    return makeError(ATTN_ERROR_NO_DEVICE, "cuDeviceGet(0) failed: {}",
                     driver.describe(result));
  CUcontext context = nullptr;
  result = driver.cuDevicePrimaryCtxRetain(&context, device);
  if (result != CUDA_SUCCESS)
    return makeError(ATTN_ERROR_CUDA,
                     "cuDevicePrimaryCtxRetain of device 0 failed: {}",
                     driver.describe(result));
  primary_ = context;
  return primary_;
}

Expected<std::shared_ptr<const DeviceInfo>> CudaContexts::queryDevice() {
  const CudaDriver &driver = *driver_;
  auto info = std::make_shared<DeviceInfo>();
  CUresult result = driver.cuCtxGetDevice(&info->device);
  if (result != CUDA_SUCCESS)
    return makeError(ATTN_ERROR_CUDA, "cuCtxGetDevice failed: {}",
                     driver.describe(result));
  struct {
    CUdevice_attribute attribute;
    int *value;
  } queries[] = {
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &info->major},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &info->minor},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
       &info->maxSharedBytes},
      {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &info->multiprocessors}};
  for (auto &query : queries) {
    result = driver.cuDeviceGetAttribute(query.value, query.attribute,
                                         info->device);
    if (result != CUDA_SUCCESS)
      return makeError(ATTN_ERROR_CUDA,
                       "cuDeviceGetAttribute({}) of device {} failed: {}",
                       int(query.attribute), int(info->device),
                       driver.describe(result));
  }
  info->arch = archForComputeCapability(info->major, info->minor);
  return std::shared_ptr<const DeviceInfo>(std::move(info));
}

Expected<ContextInfo> CudaContexts::currentContext() {
  const CudaDriver &driver = *driver_;
  ContextInfo info;
  CUresult result = driver.cuCtxGetCurrent(&info.context);
  if (result != CUDA_SUCCESS)
    return makeError(ATTN_ERROR_CUDA, "cuCtxGetCurrent failed: {}",
                     driver.describe(result));
  if (!info.context) {
    std::lock_guard<std::mutex> lock(mutex_);
    Expected<CUcontext> primary = primaryContext();
    if (!primary)
      return primary.takeStatus();
    info.context = *primary;
    result = driver.cuCtxSetCurrent(info.context);
    if (result != CUDA_SUCCESS)
      return makeError(ATTN_ERROR_CUDA, "cuCtxSetCurrent failed: {}",
                       driver.describe(result));
  }
  unsigned long long id = 0;
  if (driver.cuCtxGetId && driver.cuCtxGetId(info.context, &id) == CUDA_SUCCESS)
    info.id = id;
  else
    info.id = reinterpret_cast<uintptr_t>(info.context);
  return info;
}

Expected<ContextInfo> CudaContexts::current() {
  Expected<ContextInfo> info = currentContext();
  if (!info)
    return info;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = devices_.find(info->id);
  if (it == devices_.end()) {
    Expected<std::shared_ptr<const DeviceInfo>> device = queryDevice();
    if (!device)
      return device.takeStatus();
    it = devices_.emplace(info->id, *device).first;
  }
  info->device = it->second;
  return info;
}

namespace {

struct NamedPointer {
  const char *name;
  const void *pointer;
};

Status checkPointers(const CudaDriver &driver,
                     std::initializer_list<NamedPointer> tensors) {
  for (auto [name, pointer] : tensors) {
    if (!pointer)
      continue; // allowed where validation allowed it
    unsigned int type = 0;
    CUresult result = driver.cuPointerGetAttribute(
        &type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
        static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(pointer)));
    if (result == CUDA_ERROR_INVALID_VALUE)
      return makeError(ATTN_ERROR_INVALID_ARGUMENT,
                       "{} = {} is not CUDA memory (a host pointer?); pass "
                       "device memory or use ATTN_DEVICE_HOST",
                       name, pointer);
    if (result != CUDA_SUCCESS)
      return makeError(ATTN_ERROR_CUDA,
                       "cuPointerGetAttribute({}) failed: {}", name,
                       driver.describe(result));
    if (type == CU_MEMORYTYPE_HOST)
      return makeError(ATTN_ERROR_INVALID_ARGUMENT,
                       "{} = {} is page-locked host memory; pass device "
                       "memory",
                       name, pointer);
  }
  return Status();
}

} // namespace

Status checkDevicePointers(const CudaDriver &driver,
                           const attn_fwd_args &args) {
  return checkPointers(driver, {{"q", args.q},
                                {"k", args.k},
                                {"v", args.v},
                                {"o", args.o},
                                {"lse", args.lse}});
}

Status checkDevicePointers(const CudaDriver &driver,
                           const attn_bwd_args &args) {
  return checkPointers(driver, {{"d_o", args.d_o},
                                {"dq", args.dq},
                                {"dk", args.dk},
                                {"dv", args.dv}});
}

Status checkDeviceOffsets(const CudaDriver &driver, const int32_t *cuSeqlensQ,
                          const int32_t *cuSeqlensK) {
  return checkPointers(driver, {{"cu_seqlens_q", cuSeqlensQ},
                                {"cu_seqlens_k", cuSeqlensK}});
}

Status checkDevicePages(const CudaDriver &driver, const int32_t *blockTable,
                        const int32_t *sequsedK) {
  return checkPointers(driver,
                       {{"block_table", blockTable}, {"seqused_k", sequsedK}});
}

} // namespace attn::rt
