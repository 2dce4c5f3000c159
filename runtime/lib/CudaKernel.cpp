//===- CudaKernel.cpp - Loading PTX and launching the attention kernel ----===//

#include "CudaKernel.h"
#include "Variant.h"
#include "Error.h"
#include "Validate.h"

#include "llvm/ADT/ScopeExit.h"

#include <chrono>
#include <climits>
#include <cstring>
#include <iterator>
#include <optional>
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

/// The JIT options of one load, and what the driver writes back: the info
/// and error logs and the wall time. Does not move: the driver writes into
/// it until the load or link is done.
class JitOptions {
public:
  /// `compiles`: the load runs the JIT (PTX), so ask for its wall time and
  /// optimisation level, and with `splitCompile` for one thread a function
  /// (up to the CPUs); a cubin load takes the logs only.
  JitOptions(const JitSettings &jit, bool compiles, bool splitCompile)
      : infoLog_(kJitLogBytes, '\0'), errorLog_(kJitLogBytes, '\0') {
    add(CU_JIT_INFO_LOG_BUFFER, infoLog_.data());
    add(CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, optionValue(kJitLogBytes - 1));
    add(CU_JIT_ERROR_LOG_BUFFER, errorLog_.data());
    add(CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, optionValue(kJitLogBytes - 1));
    add(CU_JIT_LOG_VERBOSE, optionValue(jit.verbose ? 1 : 0));
    if (!compiles)
      return;
    wallTimeAt_ = count_;
    add(CU_JIT_WALL_TIME, &wallTime_);
    if (jit.optLevel != JitSettings::kDriverDefault)
      add(CU_JIT_OPTIMIZATION_LEVEL, optionValue(jit.optLevel));
    if (splitCompile)
      add(CU_JIT_SPLIT_COMPILE, optionValue(0)); // 0: the CPUs' count
  }
  JitOptions(const JitOptions &) = delete;
  JitOptions &operator=(const JitOptions &) = delete;

  unsigned count() const { return count_; }
  CUjit_option *options() { return options_; }
  void **values() { return values_; }
  std::string infoLog() const { return logText(infoLog_.data()); }
  std::string errorLog() const { return logText(errorLog_.data()); }

  /// CU_JIT_WALL_TIME in milliseconds, or LoadedKernel::kUnknownJitMs. The
  /// driver documents that it overwrites the option's value with a float;
  /// NVIDIA's ptxjit sample passes a float's address instead. The value is
  /// such an address, so that either reading is safe.
  double wallTimeMs() const {
    if (wallTimeAt_ < 0)
      return LoadedKernel::kUnknownJitMs;
    void *slot = values_[wallTimeAt_];
    float ms = wallTime_;
    if (slot != &wallTime_)
      std::memcpy(&ms, &slot, sizeof ms); // the float in the value's low half
    return ms >= 0 ? ms : LoadedKernel::kUnknownJitMs;
  }

private:
  static constexpr int kMaxOptions = 9;
  void add(CUjit_option option, void *value) {
    options_[count_] = option;
    values_[count_] = value;
    ++count_;
  }
  std::string infoLog_, errorLog_;
  CUjit_option options_[kMaxOptions];
  void *values_[kMaxOptions];
  unsigned count_ = 0;
  int wallTimeAt_ = -1;
  float wallTime_ = -1;
};

/// " (JIT error log: ...)" when the log says anything.
std::string errorLogSuffix(const JitOptions &jit) {
  std::string log = jit.errorLog();
  return log.empty() ? "" : "; JIT error log: " + log;
}

/// The PTX JIT through the driver's linker: the cubin (machine code) of
/// `ptx`, which cuModuleLoadDataEx then loads without a JIT.
Expected<std::string> linkCubin(const CudaDriver &driver,
                                const std::string &ptx, JitOptions &jit,
                                const std::string &first,
                                const std::string &arch) {
  CUlinkState link = nullptr;
  CUresult result =
      driver.cuLinkCreate(jit.count(), jit.options(), jit.values(), &link);
  if (result != CUDA_SUCCESS)
    return makeError(ATTN_ERROR_CUDA, "cuLinkCreate failed for kernel {} ({}): {}",
                     first, arch, driver.describe(result));
  // The cubin belongs to the link: copied out before it is destroyed.
  llvm::scope_exit destroy([&] { driver.cuLinkDestroy(link); });
  result = driver.cuLinkAddData(link, CU_JIT_INPUT_PTX,
                                const_cast<char *>(ptx.c_str()), ptx.size() + 1,
                                "attn.ptx", 0, nullptr, nullptr);
  if (result != CUDA_SUCCESS)
    return makeError(ATTN_ERROR_CUDA,
                     "cuLinkAddData (PTX JIT) failed for kernel {} ({}): {}{}",
                     first, arch, driver.describe(result), errorLogSuffix(jit));
  void *image = nullptr;
  size_t size = 0;
  result = driver.cuLinkComplete(link, &image, &size);
  if (result != CUDA_SUCCESS || !image || size == 0)
    return makeError(ATTN_ERROR_CUDA,
                     "cuLinkComplete failed for kernel {} ({}): {}{}", first,
                     arch,
                     result != CUDA_SUCCESS ? driver.describe(result)
                                            : std::string("an empty cubin"),
                     errorLogSuffix(jit));
  return std::string(static_cast<const char *>(image), size);
}

} // namespace

Expected<LoadedKernel> loadKernel(const CudaDriver &driver,
                                  const compiler::PtxKernel &kernel,
                                  const DeviceInfo &device,
                                  const JitSettings &jit,
                                  const std::string *cubin) {
  if (kernel.kernels.empty())
    return makeError(ATTN_ERROR_INTERNAL, "a compiled module without kernels");
  const std::string &first = kernel.kernels.front().name;
  for (const compiler::KernelLaunch &launch : kernel.kernels)
    if (launch.sharedBytes > device.maxSharedBytes)
      return makeError(ATTN_ERROR_UNSUPPORTED,
                       "kernel {} needs {} bytes of shared memory per block; "
                       "this GPU ({}) allows {}",
                       launch.name, launch.sharedBytes, device.arch,
                       device.maxSharedBytes);
  auto start = std::chrono::steady_clock::now();
  LoadedKernel loaded;
  bool link = !cubin && jit.keepCubin && driver.canLink();
  // Not through the linker: its documented options do not name it.
  bool splitCompile = !link && !cubin && kernel.kernels.size() > 1 &&
                      driver.version >= kSplitCompileDriverVersion;
  std::optional<JitOptions> options;
  options.emplace(jit, /*compiles=*/!cubin, splitCompile);
  if (link) {
    Expected<std::string> linked =
        linkCubin(driver, kernel.ptx, *options, first, device.arch);
    if (!linked)
      return linked.takeStatus();
    loaded.cubin = std::move(*linked);
    cubin = &loaded.cubin;
  }
  const char *image = cubin ? cubin->data() : kernel.ptx.c_str();
  // The linker's JIT is done: the cubin loads with no options.
  CUresult result =
      link ? driver.cuModuleLoadDataEx(&loaded.module, image, 0, nullptr,
                                       nullptr)
           : driver.cuModuleLoadDataEx(&loaded.module, image, options->count(),
                                       options->options(), options->values());
  // A driver that refuses the split (a build without it) JITs as before.
  if (result == CUDA_ERROR_INVALID_VALUE && splitCompile) {
    options.emplace(jit, /*compiles=*/true, /*splitCompile=*/false);
    result = driver.cuModuleLoadDataEx(&loaded.module, image, options->count(),
                                       options->options(), options->values());
  }
  if (result != CUDA_SUCCESS)
    return makeError(ATTN_ERROR_CUDA,
                     "cuModuleLoadDataEx ({}) failed for kernel {} ({}): {}{}",
                     link    ? "the linked cubin"
                     : cubin ? "a cached cubin"
                             : "PTX",
                     first, device.arch, driver.describe(result),
                     link ? "" : errorLogSuffix(*options));
  loaded.fromCubin = cubin && !link;
  loaded.jitMs = options->wallTimeMs();
  loaded.jitInfoLog = options->infoLog();
  for (const compiler::KernelLaunch &launch : kernel.kernels) {
    LoadedFunction fn;
    fn.launch = launch;
    result = driver.cuModuleGetFunction(&fn.function, loaded.module,
                                        launch.name.c_str());
    if (result != CUDA_SUCCESS)
      return makeError(ATTN_ERROR_CUDA, "cuModuleGetFunction({}) failed: {}",
                       launch.name, driver.describe(result));
    if (launch.sharedBytes > kDefaultMaxDynamicShared) {
      result = driver.cuFuncSetAttribute(
          fn.function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
          launch.sharedBytes);
      if (result != CUDA_SUCCESS)
        return makeError(ATTN_ERROR_CUDA,
                         "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES, "
                         "{}) for {} failed: {}",
                         launch.sharedBytes, launch.name,
                         driver.describe(result));
    }
    loaded.functions.push_back(fn);
  }
  loaded.loadMs = std::chrono::duration<double, std::milli>(
                      std::chrono::steady_clock::now() - start)
                      .count();
  return loaded;
}

namespace {

constexpr bool tensorIs(const abi::TensorArg *args, int index,
                        std::string_view name, int rank) {
  return std::string_view(args[index].name) == name &&
         args[index].rank == rank;
}

// KernelParams lists the call's tensors in these orders; the loop below
// takes ranks and the parameter count from the ABI.
static_assert(std::size(abi::kForwardTensors) == abi::kForwardTensorCount &&
                  abi::kForwardTensorCount == 5,
              "KernelParams passes five tensors: update it with KernelABI.h");
static_assert(tensorIs(abi::kForwardTensors, 0, "q", 4) &&
                  tensorIs(abi::kForwardTensors, 1, "k", 4) &&
                  tensorIs(abi::kForwardTensors, 2, "v", 4) &&
                  tensorIs(abi::kForwardTensors, 3, "o", 4) &&
                  tensorIs(abi::kForwardTensors, 4, "lse", 3) &&
                  abi::kForwardTensors[4].optional,
              "KernelParams passes q, k, v, o (rank 4) and an optional lse "
              "(rank 3): update it with KernelABI.h");
static_assert(std::size(abi::kBackwardTensors) == 10 &&
                  tensorIs(abi::kBackwardTensors, 0, "q", 4) &&
                  tensorIs(abi::kBackwardTensors, 3, "o", 4) &&
                  tensorIs(abi::kBackwardTensors, 4, "do", 4) &&
                  tensorIs(abi::kBackwardTensors, 5, "lse", 3) &&
                  tensorIs(abi::kBackwardTensors, 6, "dq", 4) &&
                  tensorIs(abi::kBackwardTensors, 8, "dv", 4) &&
                  tensorIs(abi::kBackwardTensors, 9, "delta", 3),
              "KernelParams passes q, k, v, o, do, lse, dq, dk, dv, delta: "
              "update it with KernelABI.h");
static_assert(abi::kForwardScalarCount == 1 &&
                  std::string_view(abi::kForwardScalars[0]) == "scale",
              "KernelParams passes one scalar, the f32 scale");

} // namespace

KernelParams::KernelParams(const attn_fwd_args &args, float scale,
                           const compiler::UserModsInfo *user,
                           const VarlenCall *varlen, const SplitCall *split,
                           const Fp8Call *fp8Call)
    : scale(scale) {
  if (fp8Call)
    fp8 = *fp8Call;
  int64_t B = args.batch, H = args.heads, Hkv = kvHeadsOf(args),
          Nq = args.seqlen_q, Nk = args.seqlen_k, D = args.head_dim;
  // A paged cache's K and V hold pages (the packed view's seqlen_k is the
  // page size).
  int64_t Bkv = varlen && varlen->pageSize ? varlen->numPages : B;
  const Tensor tensors[] = {{args.q, {B, H, Nq, D}, args.q_strides},
                            {args.k, {Bkv, Hkv, Nk, D}, args.k_strides},
                            {args.v, {Bkv, Hkv, Nk, D}, args.v_strides},
                            {args.o, {B, H, Nq, D}, args.o_strides},
                            {args.lse, {B, H, Nq}, args.lse_strides}};
  fill(abi::kForwardTensors, tensors, abi::kForwardTensorCount, args, user,
       varlen, split, /*afterScale=*/nullptr, fp8Call != nullptr);
}

KernelParams::KernelParams(const attn_bwd_args &bwd, float *delta,
                           float scale, const compiler::UserModsInfo *user,
                           float *dqAccum)
    : scale(scale) {
  const attn_fwd_args &args = bwd.fwd;
  int64_t B = args.batch, H = args.heads, Hkv = kvHeadsOf(args),
          Nq = args.seqlen_q, Nk = args.seqlen_k, D = args.head_dim;
  const int64_t deltaStrides[3] = {H * Nq, Nq, 1};
  const Tensor tensors[] = {{args.q, {B, H, Nq, D}, args.q_strides},
                            {args.k, {B, Hkv, Nk, D}, args.k_strides},
                            {args.v, {B, Hkv, Nk, D}, args.v_strides},
                            {args.o, {B, H, Nq, D}, args.o_strides},
                            {bwd.d_o, {B, H, Nq, D}, bwd.do_strides},
                            {args.lse, {B, H, Nq}, args.lse_strides},
                            {bwd.dq, {B, H, Nq, D}, bwd.dq_strides},
                            {bwd.dk, {B, Hkv, Nk, D}, bwd.dk_strides},
                            {bwd.dv, {B, Hkv, Nk, D}, bwd.dv_strides},
                            {delta, {B, H, Nq}, deltaStrides}};
  // dQ's accumulator, dense (B, H, Nq, D).
  const int64_t accumStrides[4] = {H * Nq * D, Nq * D, D, 1};
  const Tensor accum = {dqAccum, {B, H, Nq, D}, accumStrides};
  fill(abi::kBackwardTensors, tensors, std::size(tensors), args, user,
       nullptr, nullptr, dqAccum ? &accum : nullptr);
}

void KernelParams::fill(const abi::TensorArg *args, const Tensor *tensors,
                        int count, const attn_fwd_args &call,
                        const compiler::UserModsInfo *user,
                        const VarlenCall *varlen, const SplitCall *split,
                        const Tensor *afterScale, bool withFp8) {
  int64_t *out = values;
  auto put = [&](const Tensor &tensor, int rank) {
    *out++ = static_cast<int64_t>(reinterpret_cast<uintptr_t>(tensor.data));
    for (int i = 0; i < rank; ++i)
      *out++ = tensor.sizes[i];
    // An absent (optional) tensor passes zero strides.
    for (int i = 0; i < rank; ++i)
      *out++ = tensor.data ? tensor.strides[i] : 0;
  };
  for (int t = 0; t < count; ++t)
    put(tensors[t], args[t].rank);
  int used = static_cast<int>(out - values);
  for (int i = 0; i < used; ++i)
    pointers[i] = &values[i];
  pointers[used] = &this->scale;
  int p = used + abi::kForwardScalarCount, c = 0;
  // An FP8 kernel's descale factors (abi::kFp8Scalars).
  if (withFp8)
    for (float &factor : fp8.descale)
      pointers[p++] = &factor;
  // The atomic backward's accumulator (abi::kAtomicBackwardArgs).
  if (afterScale) {
    int64_t *first = out;
    put(*afterScale, abi::kAtomicBackwardArgs[0].rank);
    for (int64_t *v = first; v != out; ++v)
      pointers[p++] = v;
  }
  // The variant's captures: a scalar is one parameter (of its own width),
  // a tensor its pointer, sizes and strides, like the tensors above.
  std::vector<abi::CaptureValue> values =
      captureValues(call, user, varlen, split);
  std::vector<abi::UserCapture> kinds = abi::captureKinds(
      call.variant.flags,
      user ? user->captures : std::vector<abi::UserCapture>(), varlen,
      varlen && varlen->pageSize, split != nullptr);
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
  mapsAt = p;
}

void KernelParams::appendTensorMaps(TensorMaps &maps) {
  for (int m = 0; m < abi::kTensorMapCount; ++m)
    pointers[mapsAt + m] = &maps.maps[m];
}

namespace {

/// Launches one kernel of a call: its grid runs over query tiles (of H
/// heads, or packed over Hkv; of each sequence of a variable-length call,
/// up to its longest; `splits` times per batch row for split-KV's first
/// kernel) or over K/V tiles. With `persistentCtas` > 0 (a persistent
/// forward kernel), that grid's tiles run on min(tiles, persistentCtas)
/// CTAs along x, each looping over tiles x, x + gridDim.x, ...
Status launch(const CudaDriver &driver, const LoadedFunction &fn,
              const attn_fwd_args &args, KernelParams &params,
              const VarlenCall *varlen = nullptr, int64_t splits = 1,
              int64_t persistentCtas = 0) {
  const compiler::KernelLaunch &k = fn.launch;
  int64_t kvHeads = kvHeadsOf(args);
  int64_t queries = varlen ? varlen->maxSeqlenQ : args.seqlen_q;
  int64_t rows = k.overKeys  ? args.seqlen_k
                 : k.packGqa ? args.heads / kvHeads * queries
                             : queries;
  int64_t gridHeads = k.overKeys || k.packGqa ? kvHeads : args.heads;
  int64_t batch = (varlen ? varlen->sequences : args.batch) *
                  (k.overSplits ? splits : 1);
  int64_t blocks = (rows + k.blockM - 1) / k.blockM;
  if (blocks > INT_MAX)
    return makeError(ATTN_ERROR_UNSUPPORTED,
                     "{} rows need {} tiles, more than the grid allows ({})",
                     rows, blocks, INT_MAX);
  if (blocks == 0)
    return Status();
  if (persistentCtas > 0 && !k.overKeys && !k.overSplits) {
    // min(blocks · heads · batch, ctas), capped at each step (no overflow).
    int64_t ctas = std::min(blocks, persistentCtas);
    ctas = std::min(ctas * gridHeads, persistentCtas);
    ctas = std::min(ctas * batch, persistentCtas);
    blocks = ctas;
    gridHeads = batch = 1;
  }
  CUresult result = driver.cuLaunchKernel(
      fn.function, static_cast<unsigned>(blocks),
      static_cast<unsigned>(gridHeads), static_cast<unsigned>(batch),
      static_cast<unsigned>(k.threads), 1, 1,
      static_cast<unsigned>(k.sharedBytes),
      static_cast<CUstream>(args.stream), params.pointers, nullptr);
  if (result != CUDA_SUCCESS)
    return makeError(ATTN_ERROR_CUDA,
                     "cuLaunchKernel of {} (grid {}x{}x{}, {} threads, {} B "
                     "shared) failed: {}",
                     k.name, blocks, gridHeads, batch, k.threads,
                     k.sharedBytes, driver.describe(result));
  return Status();
}

} // namespace

Expected<StreamWorkspace> StreamWorkspace::allocate(const CudaDriver &driver,
                                                    CUstream stream,
                                                    size_t bytes,
                                                    const char *what) {
  if (!driver.cuMemAllocAsync || !driver.cuMemFreeAsync)
    return makeError(ATTN_ERROR_UNSUPPORTED,
                     "the CUDA driver lacks cuMemAllocAsync (CUDA 11.2): "
                     "cannot allocate the {} workspace",
                     what);
  CUdeviceptr pointer = 0;
  CUresult result =
      driver.cuMemAllocAsync(&pointer, std::max<size_t>(bytes, 1), stream);
  if (result != CUDA_SUCCESS)
    return makeError(ATTN_ERROR_CUDA,
                     "cuMemAllocAsync of the {} workspace ({} bytes) failed: "
                     "{}",
                     what, bytes, driver.describe(result));
  return StreamWorkspace(driver, stream, pointer);
}

StreamWorkspace::StreamWorkspace(StreamWorkspace &&other) noexcept
    : driver_(other.driver_), stream_(other.stream_),
      pointer_(other.pointer_) {
  other.pointer_ = 0;
}

StreamWorkspace::~StreamWorkspace() { (void)release(); }

Status StreamWorkspace::zero(size_t count) {
  if (!driver_->cuMemsetD32Async)
    return makeError(ATTN_ERROR_UNSUPPORTED,
                     "the CUDA driver lacks cuMemsetD32Async: cannot zero "
                     "the atomic backward's dQ accumulator");
  CUresult result =
      driver_->cuMemsetD32Async(pointer_, 0, count, stream_);
  if (result != CUDA_SUCCESS)
    return makeError(ATTN_ERROR_CUDA,
                     "cuMemsetD32Async of {} floats failed: {}", count,
                     driver_->describe(result));
  return Status();
}

Status StreamWorkspace::release() {
  if (!pointer_)
    return Status();
  CUresult result = driver_->cuMemFreeAsync(pointer_, stream_);
  pointer_ = 0;
  if (result != CUDA_SUCCESS)
    return makeError(ATTN_ERROR_CUDA, "cuMemFreeAsync failed: {}",
                     driver_->describe(result));
  return Status();
}

Status launchForward(const CudaDriver &driver, const LoadedKernel &kernel,
                     const attn_fwd_args &args, float scale,
                     const compiler::UserModsInfo *user,
                     const VarlenCall *varlen, const SplitCall *split,
                     const Fp8Call *fp8) {
  KernelParams params(args, scale, user, varlen, split, fp8);
  TensorMaps maps;
  if (kernel.tmaBoxRows.kv) {
    if (Status status = encodeTensorMaps(driver, args, kernel.tmaBoxRows,
                                         maps, kernel.tmaForm);
        !status.ok())
      return status;
    params.appendTensorMaps(maps);
  }
  // One stream: the merge reads the partials the splits wrote.
  for (const LoadedFunction &fn : kernel.functions)
    if (Status status = launch(driver, fn, args, params, varlen,
                               split ? split->numSplits : 1,
                               kernel.persistentCtas);
        !status.ok())
      return status;
  return Status();
}

Status launchBackward(const CudaDriver &driver, const LoadedKernel &kernel,
                      const attn_bwd_args &args, float *delta, float scale,
                      const compiler::UserModsInfo *user, float *dqAccum) {
  KernelParams params(args, delta, scale, user,
                      kernel.dqAccumulator ? dqAccum : nullptr);
  // TMA (kBackwardTensorMaps): every kernel takes the maps of K, V, Q and
  // dO, boxes of block_n rows (each loop steps over block_n rows of the
  // other side). `params` points at them until the launches.
  TensorMaps maps;
  if (kernel.tmaBoxRows.kv) {
    if (Status status =
            encodeTensorMaps(driver, backwardMapView(args),
                             {kernel.tmaBoxRows.kv, kernel.tmaBoxRows.kv}, maps,
                             abi::TensorMapForm::Tiled, /*backward=*/true);
        !status.ok())
      return status;
    params.appendTensorMaps(maps);
  }
  // One stream: the second kernel reads the row terms the first wrote (and
  // the atomic form's last one the accumulator the K/V tiles added into).
  for (const LoadedFunction &fn : kernel.functions)
    if (Status status = launch(driver, fn, args.fwd, params); !status.ok())
      return status;
  return Status();
}

} // namespace attn::rt
