//===- CudaKernel.cpp - Loading PTX and launching the attention kernel ----===//

#include "CudaKernel.h"
#include "Error.h"
#include "Validate.h"

#include <chrono>
#include <climits>
#include <cstring>

namespace attn::rt {

namespace {

constexpr size_t kJitLogBytes = 16 * 1024;

/// A JIT log buffer as a string, without the trailing NULs.
std::string logText(const char *buffer) {
  std::string text(buffer, strnlen(buffer, kJitLogBytes));
  while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
    text.pop_back();
  return text;
}

void *optionValue(uintptr_t value) { return reinterpret_cast<void *>(value); }

} // namespace

Expected<LoadedKernel> loadKernel(const CudaDriver &driver,
                                  const compiler::PtxKernel &kernel,
                                  const DeviceInfo &device, bool verbose) {
  if (kernel.sharedBytes > device.maxSharedBytes)
    return makeError(ATTN_ERROR_UNSUPPORTED,
                     "kernel {} needs {} bytes of shared memory per block; "
                     "this GPU ({}) allows {}",
                     kernel.name, kernel.sharedBytes, device.arch,
                     device.maxSharedBytes);
  auto start = std::chrono::steady_clock::now();
  std::string infoLog(kJitLogBytes, '\0'), errorLog(kJitLogBytes, '\0');
  CUjit_option options[] = {
      CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
      CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
      CU_JIT_LOG_VERBOSE};
  void *values[] = {infoLog.data(), optionValue(kJitLogBytes - 1),
                    errorLog.data(), optionValue(kJitLogBytes - 1),
                    optionValue(verbose ? 1 : 0)};
  LoadedKernel loaded;
  CUresult result = driver.cuModuleLoadDataEx(
      &loaded.module, kernel.ptx.c_str(), sizeof options / sizeof options[0],
      options, values);
  if (result != CUDA_SUCCESS) {
    std::string log = logText(errorLog.data());
    return makeError(ATTN_ERROR_CUDA,
                     "cuModuleLoadDataEx failed for kernel {} ({}): {}{}{}",
                     kernel.name, device.arch, driver.describe(result),
                     log.empty() ? "" : "; JIT error log: ", log);
  }
  loaded.jitInfoLog = logText(infoLog.data());
  result = driver.cuModuleGetFunction(&loaded.function, loaded.module,
                                      kernel.name.c_str());
  if (result != CUDA_SUCCESS)
    return makeError(ATTN_ERROR_CUDA,
                     "cuModuleGetFunction({}) failed: {}", kernel.name,
                     driver.describe(result));
  if (kernel.sharedBytes > kDefaultMaxDynamicShared) {
    result = driver.cuFuncSetAttribute(
        loaded.function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
        kernel.sharedBytes);
    if (result != CUDA_SUCCESS)
      return makeError(ATTN_ERROR_CUDA,
                       "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES, {}) "
                       "for {} failed: {}",
                       kernel.sharedBytes, kernel.name,
                       driver.describe(result));
  }
  loaded.threads = kernel.threads;
  loaded.blockM = kernel.blockM;
  loaded.sharedBytes = kernel.sharedBytes;
  loaded.loadMs = std::chrono::duration<double, std::milli>(
                      std::chrono::steady_clock::now() - start)
                      .count();
  return loaded;
}

ForwardParams::ForwardParams(const attn_fwd_args &args, float scale)
    : scale(scale) {
  int64_t kvHeads = kvHeadsOf(args);
  int64_t *out = values;
  auto tensor = [&](const void *data, std::initializer_list<int64_t> sizes,
                    const int64_t *strides) {
    *out++ = static_cast<int64_t>(reinterpret_cast<uintptr_t>(data));
    for (int64_t size : sizes)
      *out++ = size;
    for (size_t i = 0; i < sizes.size(); ++i)
      *out++ = data ? strides[i] : 0;
  };
  int64_t B = args.batch, H = args.heads, Nq = args.seqlen_q,
          Nk = args.seqlen_k, D = args.head_dim;
  tensor(args.q, {B, H, Nq, D}, args.q_strides);
  tensor(args.k, {B, kvHeads, Nk, D}, args.k_strides);
  tensor(args.v, {B, kvHeads, Nk, D}, args.v_strides);
  tensor(args.o, {B, H, Nq, D}, args.o_strides);
  tensor(args.lse, {B, H, Nq}, args.lse_strides);
  for (int i = 0; i < kTensorValues; ++i)
    pointers[i] = &values[i];
  pointers[kTensorValues] = &this->scale;
}

Status launchForward(const CudaDriver &driver, const LoadedKernel &kernel,
                     const attn_fwd_args &args, float scale) {
  int64_t blocks = (args.seqlen_q + kernel.blockM - 1) / kernel.blockM;
  if (blocks > INT_MAX)
    return makeError(ATTN_ERROR_UNSUPPORTED,
                     "seqlen_q = {} needs {} query blocks, more than the grid "
                     "allows ({})",
                     args.seqlen_q, blocks, INT_MAX);
  ForwardParams params(args, scale);
  CUresult result = driver.cuLaunchKernel(
      kernel.function, static_cast<unsigned>(blocks),
      static_cast<unsigned>(args.heads), static_cast<unsigned>(args.batch),
      static_cast<unsigned>(kernel.threads), 1, 1,
      static_cast<unsigned>(kernel.sharedBytes),
      static_cast<CUstream>(args.stream), params.pointers, nullptr);
  if (result != CUDA_SUCCESS)
    return makeError(ATTN_ERROR_CUDA,
                     "cuLaunchKernel (grid {}x{}x{}, {} threads, {} B shared) "
                     "failed: {}",
                     blocks, args.heads, args.batch, kernel.threads,
                     kernel.sharedBytes, driver.describe(result));
  return Status();
}

} // namespace attn::rt
