//===- CudaKernel.cpp - Loading PTX and launching the attention kernel ----===//

#include "CudaKernel.h"
#include "Variant.h"
#include "Error.h"
#include "Validate.h"

#include <chrono>
#include <climits>
#include <cstring>
#include <iterator>
#include <string_view>

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
  loaded.packGqa = kernel.packGqa;
  loaded.sharedBytes = kernel.sharedBytes;
  loaded.loadMs = std::chrono::duration<double, std::milli>(
                      std::chrono::steady_clock::now() - start)
                      .count();
  return loaded;
}

namespace {

/// One tensor of a launch as the ABI passes it.
struct TensorValues {
  const void *data;
  int64_t sizes[4];
  const int64_t *strides;
};

constexpr bool forwardTensorIs(int index, std::string_view name, int rank) {
  return std::string_view(abi::kForwardTensors[index].name) == name &&
         abi::kForwardTensors[index].rank == rank;
}

// ForwardParams lists the call's tensors in this order; the loop below takes
// ranks and the parameter count from the ABI.
static_assert(std::size(abi::kForwardTensors) == abi::kForwardTensorCount &&
                  abi::kForwardTensorCount == 5,
              "ForwardParams passes five tensors: update it with KernelABI.h");
static_assert(forwardTensorIs(0, "q", 4) && forwardTensorIs(1, "k", 4) &&
                  forwardTensorIs(2, "v", 4) && forwardTensorIs(3, "o", 4) &&
                  forwardTensorIs(4, "lse", 3) &&
                  abi::kForwardTensors[4].optional,
              "ForwardParams passes q, k, v, o (rank 4) and an optional lse "
              "(rank 3): update it with KernelABI.h");
static_assert(abi::kForwardScalarCount == 1 &&
                  std::string_view(abi::kForwardScalars[0]) == "scale",
              "ForwardParams passes one scalar, the f32 scale");

} // namespace

ForwardParams::ForwardParams(const attn_fwd_args &args, float scale,
                             const compiler::UserModsInfo *user)
    : scale(scale) {
  int64_t B = args.batch, H = args.heads, Hkv = kvHeadsOf(args),
          Nq = args.seqlen_q, Nk = args.seqlen_k, D = args.head_dim;
  const TensorValues tensors[abi::kForwardTensorCount] = {
      {args.q, {B, H, Nq, D}, args.q_strides},
      {args.k, {B, Hkv, Nk, D}, args.k_strides},
      {args.v, {B, Hkv, Nk, D}, args.v_strides},
      {args.o, {B, H, Nq, D}, args.o_strides},
      {args.lse, {B, H, Nq}, args.lse_strides}};
  int64_t *out = values;
  for (int t = 0; t < abi::kForwardTensorCount; ++t) {
    const abi::TensorArg &arg = abi::kForwardTensors[t];
    const TensorValues &tensor = tensors[t];
    *out++ = static_cast<int64_t>(reinterpret_cast<uintptr_t>(tensor.data));
    for (int i = 0; i < arg.rank; ++i)
      *out++ = tensor.sizes[i];
    // An absent (optional) tensor passes zero strides.
    for (int i = 0; i < arg.rank; ++i)
      *out++ = tensor.data ? tensor.strides[i] : 0;
  }
  for (int i = 0; i < kTensorValues; ++i)
    pointers[i] = &values[i];
  pointers[kTensorValues] = &this->scale;
  // The variant's captures: a scalar is one parameter (of its own width),
  // a tensor its pointer, sizes and strides, like the tensors above.
  int p = kTensorValues + abi::kForwardScalarCount, c = 0;
  std::vector<abi::CaptureValue> values = captureValues(args, user);
  std::vector<abi::UserCapture> kinds =
      user ? abi::captureKinds(args.variant.flags, user->captures)
           : abi::captureKinds(args.variant.flags);
  for (size_t i = 0; i < kinds.size() && i < values.size(); ++i) {
    const abi::UserCapture &kind = kinds[i];
    const abi::CaptureValue &value = values[i];
    if (kind.rank == 0) {
      if (kind.element == abi::CaptureArg::F32) {
        captureF32[c] = value.f32;
        pointers[p++] = &captureF32[c++];
      } else if (kind.element == abi::CaptureArg::I32) {
        captureI32[c] = static_cast<int32_t>(value.i64);
        pointers[p++] = &captureI32[c++];
      } else {
        captures[c] = value.i64;
        pointers[p++] = &captures[c++];
      }
      continue;
    }
    captures[c] =
        static_cast<int64_t>(reinterpret_cast<uintptr_t>(value.data));
    pointers[p++] = &captures[c++];
    for (int r = 0; r < kind.rank; ++r) {
      captures[c] = value.sizes[r];
      pointers[p++] = &captures[c++];
    }
    for (int r = 0; r < kind.rank; ++r) {
      captures[c] = value.strides[r];
      pointers[p++] = &captures[c++];
    }
  }
}

Status launchForward(const CudaDriver &driver, const LoadedKernel &kernel,
                     const attn_fwd_args &args, float scale,
                     const compiler::UserModsInfo *user) {
  int64_t kvHeads = kvHeadsOf(args);
  int64_t rows = kernel.packGqa ? args.heads / kvHeads * args.seqlen_q
                                : args.seqlen_q;
  int64_t gridHeads = kernel.packGqa ? kvHeads : args.heads;
  int64_t blocks = (rows + kernel.blockM - 1) / kernel.blockM;
  if (blocks > INT_MAX)
    return makeError(ATTN_ERROR_UNSUPPORTED,
                     "seqlen_q = {} needs {} query blocks, more than the grid "
                     "allows ({})",
                     args.seqlen_q, blocks, INT_MAX);
  ForwardParams params(args, scale, user);
  CUresult result = driver.cuLaunchKernel(
      kernel.function, static_cast<unsigned>(blocks),
      static_cast<unsigned>(gridHeads), static_cast<unsigned>(args.batch),
      static_cast<unsigned>(kernel.threads), 1, 1,
      static_cast<unsigned>(kernel.sharedBytes),
      static_cast<CUstream>(args.stream), params.pointers, nullptr);
  if (result != CUDA_SUCCESS)
    return makeError(ATTN_ERROR_CUDA,
                     "cuLaunchKernel (grid {}x{}x{}, {} threads, {} B shared) "
                     "failed: {}",
                     blocks, gridHeads, args.batch, kernel.threads,
                     kernel.sharedBytes, driver.describe(result));
  return Status();
}

} // namespace attn::rt
