//===- Engine.cpp - Compile once, cache, launch ---------------------------===//

#include "Engine.h"
#include "Error.h"
#include "HotCache.h"
#include "KernelBlob.h"
#include "SplitKv.h"
#include "TensorMap.h"
#include "Validate.h"
#include "Variant.h"

#include "attn/Compiler/TilePolicy.h"
#include "attn/Dialect/Attn/IR/Limits.h"

#include "llvm/Support/FileSystem.h"

#include <unistd.h>

#include <condition_variable>
#include <cstdlib>
#include <optional>

namespace attn::rt {

namespace {

using Clock = std::chrono::steady_clock;

double millisecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start)
      .count();
}

/// The process's kernels building in the background (tiered first calls),
/// so that attn_wait_for_compiles and the exit can wait for them.
struct BackgroundBuilds {
  std::mutex mutex;
  std::condition_variable idle;
  int pending = 0;
  std::once_flag atExit;
  /// The process whose threads build: a child forked meanwhile inherits
  /// `pending` (and maybe a locked mutex) but none of the threads.
  std::atomic<pid_t> owner{0};
};

BackgroundBuilds &backgroundBuilds() {
  static BackgroundBuilds builds;
  return builds;
}

/// Whether `stream` may be capturing into a CUDA graph: yes when the
/// driver cannot say (cuStreamIsCapturing absent or failing, as on the
/// legacy stream while another captures globally).
bool mayBeCapturing(const CudaDriver &driver, CUstream stream) {
  if (!driver.cuStreamIsCapturing)
    return true;
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  return driver.cuStreamIsCapturing(stream, &status) != CUDA_SUCCESS ||
         status != CU_STREAM_CAPTURE_STATUS_NONE;
}

} // namespace

EngineOptions EngineOptions::fromEnvironment() {
  EngineOptions options;
  options.log = logLevelFromEnvironment();
  options.disk = diskCacheSettingsFromEnvironment();
  if (const char *library = std::getenv("ATTN_JIT_LIBCUDA");
      library && *library)
    options.libcuda = library;
  if (const char *tc = std::getenv("ATTN_JIT_TENSOR_CORES"); tc && *tc)
    options.tensorCore = tc;
  if (const char *threads = std::getenv("ATTN_JIT_NUM_THREADS");
      threads && *threads) {
    unsigned count = 0;
    options.hostThreads =
        llvm::StringRef(threads).getAsInteger(10, count) || count == 0 ||
                count > unsigned(kMaxThreads)
            ? kBadThreadCount
            : int(count);
  }
  if (const char *tma = std::getenv("ATTN_JIT_TMA"); tma && *tma)
    options.tma = llvm::StringRef(tma) == "1";
  if (const char *ws = std::getenv("ATTN_JIT_WARPSPEC"); ws && *ws)
    options.warpSpecialize = llvm::StringRef(ws) == "1";
  if (const char *persistent = std::getenv("ATTN_JIT_PERSISTENT");
      persistent && *persistent)
    options.persistent = llvm::StringRef(persistent) == "1";
  if (const char *stages = std::getenv("ATTN_JIT_Q_STAGES");
      stages && *stages) {
    int64_t count = 0;
    options.qStages = llvm::StringRef(stages).getAsInteger(10, count) ||
                              count < 0 || count > mlir::attn::kMaxQStages
                          ? EngineOptions::kBadQStages
                          : count;
  }
  if (const char *ctas = std::getenv("ATTN_JIT_PERSISTENT_CTAS"); ctas && *ctas) {
    int64_t count = 0;
    if (!llvm::StringRef(ctas).getAsInteger(10, count) && count > 0)
      options.persistentCtas = count;
  }
  if (const char *atomic = std::getenv("ATTN_JIT_GPU_ATOMIC_BACKWARD");
      atomic && *atomic)
    options.gpuAtomicBackward = llvm::StringRef(atomic) == "1";
  if (const char *splits = std::getenv("ATTN_JIT_NUM_SPLITS");
      splits && *splits && llvm::StringRef(splits) != "auto") {
    int64_t count = 0;
    options.numSplits =
        llvm::StringRef(splits).getAsInteger(10, count) || count < 0
            ? kBadSplitCount
            : count;
  }
  if (const char *level = std::getenv("ATTN_JIT_PTX_OPT_LEVEL");
      level && *level) {
    int value = 0;
    options.jitOptLevel = llvm::StringRef(level).getAsInteger(10, value) ||
                                  value < 0 ||
                                  value > JitSettings::kMaxJitOptLevel
                              ? EngineOptions::kBadJitOptLevel
                              : value;
  }
  if (const char *cubin = std::getenv("ATTN_JIT_CUBIN_CACHE");
      cubin && *cubin)
    options.cubinCache = llvm::StringRef(cubin) == "1";
  if (const char *tiered = std::getenv("ATTN_JIT_TIERED"); tiered && *tiered)
    options.tiered = llvm::StringRef(tiered) == "1";
  if (const char *mode = std::getenv("ATTN_JIT_DETERMINISTIC");
      mode && *mode) {
    llvm::StringRef text(mode);
    options.deterministic = text == "1"   ? 1
                            : text == "0" ? 0
                                          : EngineOptions::kBadDeterministic;
  }
  return options;
}

Engine::Engine(EngineOptions options)
    : options_(std::move(options)),
      compilerVersion_(compiler::compilerVersion()),
      tensorCoreOk_(compiler::isTensorCoreName(options_.tensorCore)),
      numSplits_(options_.numSplits), deterministic_(options_.deterministic),
      epoch_(nextHotCacheEpoch()) {}

Status Engine::setNumSplits(int64_t splits) {
  if (splits < 0)
    return makeError(ATTN_ERROR_INVALID_ARGUMENT,
                     "num_splits = {}: expected 0 (auto), 1 (never split) or "
                     "a count of splits",
                     splits);
  numSplits_.store(splits, std::memory_order_relaxed);
  return Status();
}

Status Engine::setDeterministic(int deterministic) {
  if (deterministic != 0 && deterministic != 1)
    return makeError(ATTN_ERROR_INVALID_ARGUMENT,
                     "deterministic = {}: expected 0 (dQ added with atomics) "
                     "or 1 (bit-identical gradients)",
                     deterministic);
  deterministic_.store(deterministic, std::memory_order_relaxed);
  return Status();
}

void Engine::waitForBackgroundBuilds() {
  BackgroundBuilds &builds = backgroundBuilds();
  if (builds.owner.load() != ::getpid())
    return;
  std::unique_lock<std::mutex> lock(builds.mutex);
  builds.idle.wait(lock, [&] { return builds.pending == 0; });
}

Engine &Engine::global() {
  static Engine *engine = new Engine(EngineOptions::fromEnvironment());
  return *engine;
}

attn_stats Engine::stats() const {
  attn_stats stats{};
  stats.compiles = compiles_.load();
  stats.memory_hits = memoryHits_.load();
  stats.disk_hits = diskHits_.load();
  stats.disk_misses = diskMisses_.load();
  stats.disk_rejected = diskRejected_.load();
  stats.launches = launches_.load();
  stats.compile_ms_total = static_cast<double>(compileNanos_.load()) / 1e6;
  return stats;
}

void Engine::clearMemoryCache() {
  // Threads' memos of this engine's kernels are dead from here on.
  epoch_.store(nextHotCacheEpoch(), std::memory_order_release);
  ptxKernels_.clear();
  cudaKernels_.clear();
  hostKernels_.clear();
}

void Engine::addCompileTime(Clock::duration time) {
  compileNanos_ += static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(time).count());
}

Expected<const compiler::UserModsInfo *>
Engine::userModsOf(const attn_fwd_args &args,
                   std::shared_ptr<const UserModsEntry> &holder,
                   const attn_bwd_args *backward) {
  if (!args.variant.mods)
    return static_cast<const compiler::UserModsInfo *>(nullptr);
  Expected<std::shared_ptr<const UserModsEntry>> mods = userMods(args);
  if (!mods)
    return mods.takeStatus();
  holder = *mods;
  if (Status status = validateUserCaptures(args, holder->info); !status.ok())
    return status;
  if (Status status = validateCapturesApart(args, holder->info, backward);
      !status.ok())
    return status;
  return &holder->info;
}

Status Engine::forward(const attn_fwd_args *args) {
  Status status = validateForward(args);
  if (status.ok())
    status = runForward(*args, nullptr);
  if (!status.ok() && logging(LogLevel::Info))
    logLine("attn_forward failed: {}", status.toString());
  return status;
}

Status Engine::forwardVarlen(const attn_varlen_args *args) {
  VarlenCall call;
  Status status = validateVarlen(args, call);
  if (status.ok())
    status = runForward(call.packed, &call);
  if (!status.ok() && logging(LogLevel::Info))
    logLine("attn_forward_varlen failed: {}", status.toString());
  return status;
}

Status Engine::forwardPaged(const attn_paged_args *args) {
  VarlenCall call;
  Status status = validatePaged(args, call);
  if (status.ok())
    status = runForward(call.packed, &call);
  if (!status.ok() && logging(LogLevel::Info))
    logLine("attn_forward_paged failed: {}", status.toString());
  return status;
}

Status Engine::forwardFp8(const attn_fp8_args *args) {
  Fp8Call call;
  Status status = validateFp8(args, call);
  if (status.ok())
    status = runForward(args->fwd, nullptr, &call);
  if (!status.ok() && logging(LogLevel::Info))
    logLine("attn_forward_fp8 failed: {}", status.toString());
  return status;
}

Status Engine::runForward(const attn_fwd_args &args,
                          const VarlenCall *varlen, const Fp8Call *fp8) {
  if (numSplits_.load(std::memory_order_relaxed) < 0)
    return makeError(ATTN_ERROR_INVALID_ARGUMENT,
                     "ATTN_JIT_NUM_SPLITS is not 'auto' or a count >= 0");
  std::shared_ptr<const UserModsEntry> holder;
  Expected<const compiler::UserModsInfo *> user = userModsOf(args, holder);
  if (!user)
    return user.takeStatus();
  if (isEmptyForward(args))
    return Status();
  return args.device == ATTN_DEVICE_HOST
             ? forwardHost(args, *user, varlen, fp8)
             : forwardCuda(args, *user, varlen, fp8);
}

Status Engine::backward(const attn_bwd_args *args) {
  Status status = validateBackward(args);
  std::shared_ptr<const UserModsEntry> holder;
  const compiler::UserModsInfo *info = nullptr;
  if (status.ok()) {
    Expected<const compiler::UserModsInfo *> user =
        userModsOf(args->fwd, holder, args);
    if (user)
      info = *user;
    else
      status = user.takeStatus();
  }
  if (status.ok() && deterministic_.load(std::memory_order_relaxed) < 0)
    status = makeError(ATTN_ERROR_INVALID_ARGUMENT,
                       "ATTN_JIT_DETERMINISTIC is not 0 or 1");
  if (status.ok() && info && !info->notDifferentiable.empty())
    status = makeError(ATTN_ERROR_INVALID_ARGUMENT,
                       "variant.mods has no backward pass: {}",
                       info->notDifferentiable);
  if (status.ok() && args->fwd.batch > 0 && args->fwd.heads > 0)
    status = args->fwd.device == ATTN_DEVICE_HOST ? backwardHost(*args, info)
                                                  : backwardCuda(*args, info);
  if (!status.ok() && logging(LogLevel::Info))
    logLine("attn_backward failed: {}", status.toString());
  return status;
}

Expected<std::shared_ptr<const Engine::UserModsEntry>>
Engine::userMods(const attn_fwd_args &args) {
  // Parsed and verified once per text (a cached call must not parse);
  // a text that fails is an argument error with the diagnostics, and is
  // inspected again next time (it is not cached).
  std::string text = args.variant.mods;
  return userMods_.get(
      text, [&]() -> Expected<std::shared_ptr<const UserModsEntry>> {
        auto entry = std::make_shared<UserModsEntry>();
        std::string error;
        if (!compiler::inspectUserMods(text, entry->info, error))
          return makeError(ATTN_ERROR_INVALID_ARGUMENT,
                           "variant.mods does not compile:\n{}", error);
        return std::shared_ptr<const UserModsEntry>(std::move(entry));
      });
}

Expected<Engine::CudaState *> Engine::cuda() {
  if (CudaState *ready = cudaReady_.load(std::memory_order_acquire))
    return ready;
  std::lock_guard<std::mutex> lock(cudaMutex_);
  if (!cudaState_) {
    // Loaded once: a missing driver does not appear while we run, and
    // retrying dlopen on every call would be slow.
    Expected<std::shared_ptr<const CudaDriver>> driver =
        options_.driver ? Expected<std::shared_ptr<const CudaDriver>>(
                              options_.driver)
                        : loadCudaDriver(options_.libcuda);
    if (!driver) {
      cudaState_.emplace(driver.takeStatus());
    } else {
      cudaStorage_.driver = *driver;
      cudaStorage_.contexts = std::make_unique<CudaContexts>(*driver);
      cudaState_.emplace(&cudaStorage_);
      cudaReady_.store(&cudaStorage_, std::memory_order_release);
    }
  }
  return *cudaState_;
}

DiskCache *Engine::disk() {
  std::call_once(diskOnce_, [&] {
    if (!options_.disk.enabled) {
      if (logging(LogLevel::Info))
        logLine("disk cache disabled: {}", options_.disk.reason);
      return;
    }
    if (!options_.disk.ignored.empty() && logging(LogLevel::Info))
      logLine("{}", options_.disk.ignored);
    DiskCacheOptions diskOptions;
    diskOptions.maxBytes = options_.disk.maxBytes;
    Expected<DiskCache> cache =
        DiskCache::open(options_.disk.directory, diskOptions);
    if (!cache) {
      // Not an error for the call: it only costs compiles.
      if (logging(LogLevel::Info))
        logLine("disk cache disabled: {}", cache.status().message());
      return;
    }
    disk_.emplace(std::move(*cache));
  });
  return disk_ ? &*disk_ : nullptr;
}

Expected<llvm::ThreadPoolInterface *> Engine::hostPool() {
  if (options_.hostThreads == EngineOptions::kBadThreadCount ||
      options_.hostThreads < 0 ||
      options_.hostThreads > EngineOptions::kMaxThreads)
    return makeError(ATTN_ERROR_INVALID_ARGUMENT,
                     "ATTN_JIT_NUM_THREADS: expected a whole number of "
                     "threads from 1 to {}",
                     EngineOptions::kMaxThreads);
  std::call_once(poolOnce_, [&] {
    unsigned threads =
        options_.hostThreads > 0
            ? unsigned(options_.hostThreads)
            : llvm::hardware_concurrency().compute_thread_count();
    // The caller is one of the threads.
    if (threads > 1)
      hostPool_ = std::make_unique<llvm::DefaultThreadPool>(
          llvm::hardware_concurrency(threads - 1));
    if (logging(LogLevel::Info))
      logLine("host calls run on {} thread{}", threads,
              threads == 1 ? "" : "s");
  });
  return hostPool_.get();
}

/// Whether a call packs the query heads of each K/V head into one query tile
/// of `blockM` rows (decoding with grouped-query attention; on the host too,
/// which runs the same tile program). A variable-length or paged call packs
/// by its longest sequence's query count (`varlen`: its packed view), so
/// that every sequence's group fits one tile.
static bool packsGqa(const CallKey &call, const attn_fwd_args &args,
                     const VarlenCall *varlen, int64_t blockM) {
  return !(call.variants & kVariantsReadingTensors) && !call.userMods &&
         !call.backward &&
         compiler::shouldPackGqa(args.heads, kvHeadsOf(args),
                                 varlen ? varlen->maxSeqlenQ : args.seqlen_q,
                                 blockM);
}

int64_t Engine::splitsOf(const CallKey &call, const attn_fwd_args &args,
                         const VarlenCall *varlen, int64_t blockM,
                         int64_t blockN, bool pack, int64_t slots) const {
  // FP8 kernels have no split form (TilePolicy).
  if (call.backward || blockM <= 0 || blockN <= 0 ||
      call.dtype == compiler::DType::E4M3)
    return 1;
  int64_t batch = varlen ? varlen->sequences : args.batch;
  int64_t queries = varlen ? varlen->maxSeqlenQ : args.seqlen_q;
  // Over a paged cache the key counts are device data: the block table's
  // width bounds them (FlashAttention's max_num_pages_per_seq · page_size).
  int64_t keys = !varlen          ? args.seqlen_k
                 : varlen->pageSize ? varlen->maxPages * varlen->pageSize
                                    : varlen->maxSeqlenK;
  int64_t kvHeads = kvHeadsOf(args);
  int64_t rows = pack ? args.heads / kvHeads * queries : queries;
  int64_t requested = numSplits_.load(std::memory_order_relaxed);
  // Auto splits decode calls only (kMaxAutoSplitQueries): splitting the
  // small grids of short prefills made a new length switch between the
  // split and the plain kernel, a compile (runtime_gpu_test on the H200:
  // N = 1024 -> 3000, and Nq 100..170 over one configuration).
  if (requested == 0 && queries > kMaxAutoSplitQueries)
    return 1;
  int64_t ctas =
      batch * (pack ? kvHeads : args.heads) * ((rows + blockM - 1) / blockM);
  int64_t chunk = std::max(blockN, kMinKeysPerSplit);
  return splitsForCall(requested, batch, ctas, (keys + chunk - 1) / chunk,
                       slots);
}

CacheKey Engine::makeKey(const CallKey &call, const attn_fwd_args &args,
                         const VarlenCall *varlen, const std::string &arch,
                         const compiler::UserModsInfo *user) const {
  CacheKey key;
  key.target = call.target;
  key.compilerVersion = compilerVersion_;
  key.config.headDim = call.headDim;
  key.config.dtype = call.dtype;
  key.config.mask = call.mask;
  key.config.blockM = call.blockM;
  key.config.blockN = call.blockN;
  key.config.pagedDecode = call.pagedDecode;
  key.config.positiveScale = call.positiveScale;
  // Before resolving: a variant's tiles, and the backward's, may differ
  // (TilePolicy.h).
  key.config.variants = call.variants;
  key.config.backward = call.backward;
  key.config.varlen = call.varlen;
  key.config.pageSize = call.pageSize;
  key.config.tma = call.tma;
  key.config.deterministic = call.deterministic;
  key.config.warpSpecialize = call.warpSpecialize;
  // Kept by resolved() only where the kernel can be persistent (and
  // cleared by the second resolution of a packed or split call).
  key.config.persistent = call.persistent;
  key.config.qStages = call.qStages;
  key.config.shortWorkTiles = call.shortWorkTiles;
  if (user)
    key.config.userMods = user->canonical;
  if (call.target == Target::Cuda) {
    key.config.arch = arch;
    key.config.tensorCore = options_.tensorCore;
  }
  // Explicit tile sizes equal to the defaults, or a mapping named that auto
  // would pick anyway, must not compile the same kernel twice.
  key.config = key.config.resolved(call.target == Target::Cuda);
  key.config.packGqa = packsGqa(call, args, varlen, key.config.blockM);
  return key;
}

/// The partials of a forward call (of a variable-length one's packed view:
/// one batch row of total_q queries) run in `splits` splits; the workspace
/// is the caller's to set.
static SplitCall splitCallOf(const attn_fwd_args &args, int64_t splits) {
  SplitCall split;
  split.numSplits = splits;
  split.batchRows = args.batch;
  split.heads = args.heads;
  split.rows = args.seqlen_q;
  split.valueDim = args.head_dim;
  return split;
}

HotCache<Engine::HotKernel> &Engine::hotKernels() {
  static thread_local HotCache<HotKernel> cache;
  return cache;
}

Expected<const LoadedKernel *> Engine::cudaKernel(
    const attn_fwd_args &args, const compiler::UserModsInfo *user,
    const attn_fwd_args *backwardMaps, const CudaDriver *&driverOut,
    const VarlenCall *varlen, int64_t *splits) {
  // Read first: a kernel found after a clear must not be memoized in the
  // epoch before it.
  uint64_t epoch = epoch_.load(std::memory_order_acquire);
  bool backward = backwardMaps != nullptr;
  Expected<CudaState *> state = cuda();
  if (!state)
    return state.takeStatus();
  const CudaDriver &driver = *(*state)->driver;
  driverOut = &driver;
  CudaContexts &contexts = *(*state)->contexts;
  Expected<ContextInfo> context = contexts.currentContext();
  if (!context)
    return context.takeStatus();
  // The copies are the policy's (compiler::chooseCopies, with
  // ATTN_JIT_TMA and ATTN_JIT_WARPSPEC as the caller's settings); then TMA
  // is checked per call: the pointers and strides of K and V must be ones a
  // tensor map describes, and the driver must encode them (a packed batch's
  // in the ragged form; a paged cache's pages never).
  // D = 64 calls take their tiles by their lengths (compiler::lengthTiles:
  // taller ones with a producer when long, one warpgroup's when short and
  // causal or in between), and short D = 128 calls (or short windows
  // there) and causal D = 256 calls persistent CTAs, where the caller left
  // the tiles open.
  compiler::LengthTiles lengthTiles;
  if (!backward && args.block_m == 0 && args.block_n == 0)
    lengthTiles = compiler::lengthTiles(
        args.head_dim, toCompilerDType(args.dtype), toCompilerMask(args.mask),
        args.variant.flags, varlen != nullptr, user != nullptr, args.seqlen_q,
        args.seqlen_k, windowKeys(args));
  compiler::Copies copies = compiler::chooseCopies(
      args.head_dim, args.variant.flags, varlen != nullptr, user != nullptr,
      lengthTiles.producer, options_.tma, options_.warpSpecialize);
  // The deterministic backward's loops by TMA unless ATTN_JIT_TMA=0
  // (1.05-1.20 x cp.async on the H200, BENCHMARKS version 43), where K, V,
  // Q and dO can all be mapped. The compiler keeps it for the kernels that
  // have such loops (KernelConfig::resolved: wgmma, the deterministic form,
  // which a call past D = 128 takes whatever it asks).
  bool deterministic = deterministic_.load(std::memory_order_relaxed) ||
                       !options_.gpuAtomicBackward;
  bool tma = (backward ? options_.tma.value_or(true) : copies.tma) &&
             !(varlen && varlen->pageSize) && driver.cuTensorMapEncodeTiled &&
             (backward ? tensorMapUnsupportedReason(*backwardMaps,
                                                    abi::TensorMapForm::Tiled,
                                                    /*backward=*/true)
                       : tensorMapUnsupportedReason(
                             args, abi::tensorMapForm(varlen != nullptr)))
                 .empty();
  // Those tiles only with the copies they were measured with: TMA, and
  // the producer where they have one.
  attn_fwd_args tiled;
  const attn_fwd_args *keyed = &args;
  if (lengthTiles.blockM > 0 && tma &&
      copies.producer == lengthTiles.producer) {
    tiled = args;
    tiled.block_m = lengthTiles.blockM;
    tiled.block_n = lengthTiles.blockN;
    keyed = &tiled;
  }
  CallKey call = CallKey::make(
      Target::Cuda, context->id, *keyed, user, backward, varlen != nullptr,
      varlen ? varlen->pageSize : 0, tma, deterministic,
      tma && copies.producer && !backward,
      varlen && compiler::pagedDecodes(varlen->pageSize,
                                       args.heads / kvHeadsOf(args) *
                                           varlen->maxSeqlenQ),
      options_.persistent.value_or(lengthTiles.persistent),
      options_.qStages > 0 ? options_.qStages : lengthTiles.qStages,
      lengthTiles.shortWorkTiles);

  // A configuration this thread launched: no key text, no lock, no
  // allocation (HotCache.h). The device was checked when it was loaded.
  if (HotKernel *entry = hotKernels().find(call, epoch)) {
    bool pack = packsGqa(call, args, varlen, entry->blockM);
    int64_t count = splitsOf(call, args, varlen, entry->blockM,
                             entry->blockN, pack, entry->splitSlots);
    if (const LoadedKernel *kernel = entry->kernels[pack][count > 1].get()) {
      if (Status status = checkDevicePointers(driver, args); !status.ok())
        return status;
      ++memoryHits_;
      if (logging(LogLevel::Verbose))
        logLine("memory hit {}", entry->keyText[pack][count > 1]);
      if (splits)
        *splits = count;
      return kernel;
    }
  }
  return cudaKernelMiss(args, user, call, epoch, driver, contexts, varlen,
                        splits);
}

Expected<const LoadedKernel *>
Engine::cudaKernelMiss(const attn_fwd_args &args,
                       const compiler::UserModsInfo *user, const CallKey &call,
                       uint64_t epoch, const CudaDriver &driver,
                       CudaContexts &contexts, const VarlenCall *varlen,
                       int64_t *splits) {
  Expected<ContextInfo> context = contexts.current();
  if (!context)
    return context.takeStatus();
  const DeviceInfo &device = *context->device;
  if (device.arch.empty())
    return makeError(ATTN_ERROR_UNSUPPORTED,
                     "GPU {} has compute capability {}.{}; attn-jit needs 8.0 "
                     "or newer (bf16 mma.sync)",
                     int(device.device), device.major, device.minor);
  if (Status status = checkDevicePointers(driver, args); !status.ok())
    return status;
  if (!tensorCoreOk_)
    return makeError(ATTN_ERROR_INVALID_ARGUMENT,
                     "ATTN_JIT_TENSOR_CORES = '{}': expected auto, mma.sync "
                     "or wgmma",
                     options_.tensorCore);
  if (options_.jitOptLevel == EngineOptions::kBadJitOptLevel)
    return makeError(ATTN_ERROR_INVALID_ARGUMENT,
                     "ATTN_JIT_PTX_OPT_LEVEL: expected a level from 0 to {}",
                     JitSettings::kMaxJitOptLevel);
  if (options_.qStages == EngineOptions::kBadQStages)
    return makeError(ATTN_ERROR_INVALID_ARGUMENT,
                     "ATTN_JIT_Q_STAGES: expected 1 or 2 Q buffers (at most "
                     "{}), or 0 for the runtime's choice",
                     mlir::attn::kMaxQStages);

  CacheKey key = makeKey(call, args, varlen, device.arch, user);
  int64_t slots =
      int64_t(device.multiprocessors) * compiler::splitCtasPerSm(key.config);
  int64_t count = splitsOf(call, args, varlen, key.config.blockM,
                           key.config.blockN, key.config.packGqa, slots);
  // The tiles the split count was taken with, which the hot path takes it
  // with again.
  int64_t planBlockM = key.config.blockM, planBlockN = key.config.blockN;
  key.config.split = count > 1;
  // Split-KV keeps cp.async (KernelConfig::resolved; the count is known
  // only now): keys the call left open take the cp.async kernel's tiles,
  // not TMA's (D = 192's 112 with a producer, a document mask's 128).
  if (key.config.split && key.config.tma && call.blockN == 0)
    key.config.blockN = 0;
  key.config = key.config.resolved(/*nvidia=*/true);
  std::string keyText = key.str();
  // Modules belong to a context: the same key loads once per context.
  std::string memoryKey = fmt::format("{}|{}", context->id, keyText);
  if (options_.tiered && !call.backward &&
      4.0 * args.batch * args.heads * args.seqlen_q * args.seqlen_k *
              args.head_dim <=
          options_.maxTieredFlops) {
    Expected<const LoadedKernel *> quick =
        quickKernel(driver, *context, key, keyText, memoryKey,
                    static_cast<CUstream>(args.stream));
    if (!quick)
      return quick.takeStatus();
    // Not kept in this thread's hot cache: its next call looks for the
    // full kernel again.
    if (*quick) {
      if (splits)
        *splits = 1;
      return *quick;
    }
  }
  SingleFlight<LoadedKernel>::Outcome outcome;
  Expected<std::shared_ptr<const LoadedKernel>> kernel = cudaKernels_.get(
      memoryKey, [&] { return loadCudaKernel(driver, *context, key); },
      &outcome);
  if (!kernel)
    return kernel.takeStatus();
  if (outcome != SingleFlight<LoadedKernel>::Outcome::Built) {
    ++memoryHits_;
    if (logging(LogLevel::Verbose))
      logLine("memory hit {}", keyText);
  }
  HotCache<HotKernel> &hot = hotKernels();
  HotKernel *entry = hot.find(call, epoch);
  if (!entry)
    entry = &hot.insert(call, epoch);
  bool pack = key.config.packGqa, split = key.config.split;
  entry->blockM = planBlockM;
  entry->blockN = planBlockN;
  entry->splitSlots = slots;
  entry->kernels[pack][split] = *kernel;
  entry->keyText[pack][split] = std::move(keyText);
  if (splits)
    *splits = count;
  return entry->kernels[pack][split].get();
}

Status Engine::forwardCuda(const attn_fwd_args &args,
                           const compiler::UserModsInfo *user,
                           const VarlenCall *varlen, const Fp8Call *fp8) {
  const CudaDriver *driver = nullptr;
  int64_t splits = 1;
  Expected<const LoadedKernel *> kernel =
      cudaKernel(args, user, /*backwardMaps=*/nullptr, driver, varlen, &splits);
  if (!kernel)
    return kernel.takeStatus();
  if (varlen)
    if (Status status = checkDeviceOffsets(*driver, varlen->cuSeqlensQ,
                                           varlen->cuSeqlensK);
        !status.ok())
      return status;
  if (varlen && varlen->pageSize)
    if (Status status = checkDevicePages(*driver, varlen->blockTable,
                                         varlen->sequsedK);
        !status.ok())
      return status;
  if (splits <= 1) {
    Status status = launchForward(*driver, **kernel, args,
                                  effectiveScale(args), user, varlen,
                                  /*split=*/nullptr, fp8);
    if (status.ok())
      ++launches_;
    return status;
  }
  // The partials' workspace, stream-ordered as the backward's.
  SplitCall split = splitCallOf(args, splits);
  Expected<StreamWorkspace> workspace = StreamWorkspace::allocate(
      *driver, static_cast<CUstream>(args.stream),
      split.workspaceFloats() * sizeof(float), "split-KV partials");
  if (!workspace)
    return workspace.takeStatus();
  split.workspace = workspace->floats();
  Status status = launchForward(*driver, **kernel, args, effectiveScale(args),
                                user, varlen, &split);
  Status freed = workspace->release();
  if (status.ok())
    status = freed;
  if (status.ok())
    ++launches_;
  return status;
}

Status Engine::backwardCuda(const attn_bwd_args &args,
                            const compiler::UserModsInfo *user) {
  const CudaDriver *driver = nullptr;
  attn_fwd_args maps = backwardMapView(args);
  Expected<const LoadedKernel *> kernel =
      cudaKernel(args.fwd, user, &maps, driver);
  if (!kernel)
    return kernel.takeStatus();
  if (Status status = checkDevicePointers(*driver, args); !status.ok())
    return status;
  // The row terms' workspace.
  const attn_fwd_args &f = args.fwd;
  size_t bytes = static_cast<size_t>(std::max<int64_t>(
                     1, f.batch * f.heads * f.seqlen_q)) *
                 sizeof(float);
  Expected<StreamWorkspace> workspace = StreamWorkspace::allocate(
      *driver, static_cast<CUstream>(f.stream), bytes, "backward's row terms");
  if (!workspace)
    return workspace.takeStatus();
  // The atomic form's dQ accumulator (B, H, Nq, D) f32, zeroed on the
  // stream before the K/V tiles' kernel adds into it.
  std::optional<StreamWorkspace> accum;
  if ((*kernel)->dqAccumulator) {
    size_t count = static_cast<size_t>(std::max<int64_t>(
        1, f.batch * f.heads * f.seqlen_q * f.head_dim));
    Expected<StreamWorkspace> made = StreamWorkspace::allocate(
        *driver, static_cast<CUstream>(f.stream), count * sizeof(float),
        "atomic backward's dQ accumulator");
    if (!made)
      return made.takeStatus();
    accum.emplace(std::move(*made));
    if (Status status = accum->zero(count); !status.ok())
      return status;
  }
  Status status = launchBackward(*driver, **kernel, args, workspace->floats(),
                                 effectiveScale(f), user,
                                 accum ? accum->floats() : nullptr);
  Status freed = workspace->release();
  if (status.ok())
    status = freed;
  if (accum) {
    freed = accum->release();
    if (status.ok())
      status = freed;
  }
  if (status.ok())
    ++launches_;
  return status;
}

Expected<std::shared_ptr<const LoadedKernel>>
Engine::loadCudaKernel(const CudaDriver &driver, const ContextInfo &context,
                       const CacheKey &key) {
  std::string keyText = key.str();
  SingleFlight<PtxEntry>::Outcome outcome;
  Expected<std::shared_ptr<const PtxEntry>> ptx = ptxKernels_.get(
      keyText, [&] { return buildPtx(key); }, &outcome);
  if (!ptx)
    return ptx.takeStatus();
  const PtxEntry &entry = **ptx;
  Expected<LoadedKernel> loaded =
      loadWithCubinCache(driver, context, key, entry);
  if (!loaded)
    return makeError(loaded.status().code(), "{} (key {})",
                     loaded.status().message(), keyText);
  if (key.config.tma)
    loaded->tmaBoxRows = {key.config.blockN, key.config.blockM};
  loaded->tmaForm = abi::tensorMapForm(key.config.varlen);
  loaded->dqAccumulator = key.config.backward && !key.config.deterministic;
  // A persistent kernel runs a CTA per SM at most (the device's count,
  // queried once per context with its other attributes).
  if (key.config.persistent) {
    if (context.device->multiprocessors <= 0)
      return makeError(ATTN_ERROR_CUDA,
                       "device {} reports {} multiprocessors: cannot size the "
                       "persistent grid of {}",
                       int(context.device->device),
                       context.device->multiprocessors, keyText);
    loaded->persistentCtas = context.device->multiprocessors;
    if (options_.persistentCtas > 0)
      loaded->persistentCtas =
          std::min<int64_t>(loaded->persistentCtas, options_.persistentCtas);
  }
  if (logging(LogLevel::Info)) {
    const compiler::PtxKernel &kernel = entry.kernel;
    std::string launch;
    for (const compiler::KernelLaunch &k : kernel.kernels)
      launch += fmt::format("{}{}: {} threads, block_m {}, {} B shared",
                            launch.empty() ? "" : "; ", k.name, k.threads,
                            k.blockM, k.sharedBytes);
    // "driver load" is the whole load; the JIT's own measure follows it.
    std::string load =
        loaded->fromCubin
            ? fmt::format("driver load {:.1f} ms (cached cubin, no JIT)",
                          loaded->loadMs)
        : loaded->jitMs == LoadedKernel::kUnknownJitMs
            ? fmt::format("driver load {:.1f} ms", loaded->loadMs)
            : fmt::format("driver load {:.1f} ms (JIT {:.1f} ms)",
                          loaded->loadMs, loaded->jitMs);
    if (outcome != SingleFlight<PtxEntry>::Outcome::Built)
      logLine("loaded {} into context {}: {}; {}", keyText, context.id, load,
              launch);
    else if (entry.fromDisk)
      logLine("disk hit {} ({}): read {:.1f} ms, {}; {}", keyText, entry.path,
              entry.readMs, load, launch);
    else
      logLine("compiled {} in {:.1f} ms: IR {:.1f} ms, passes {:.1f} ms, PTX "
              "codegen {:.1f} ms, {}; {}",
              keyText, entry.compileMs + loaded->loadMs,
              kernel.times.buildIR, kernel.times.passes, kernel.times.codegen,
              load, launch);
    if (logging(LogLevel::Verbose) && !loaded->jitInfoLog.empty())
      logLine("PTX JIT log for {}: {}", keyText, loaded->jitInfoLog);
  }
  return std::make_shared<const LoadedKernel>(std::move(*loaded));
}

Expected<LoadedKernel>
Engine::loadWithCubinCache(const CudaDriver &driver,
                           const ContextInfo &context, const CacheKey &key,
                           const PtxEntry &entry) {
  JitSettings jit;
  jit.optLevel = options_.jitOptLevel;
  jit.verbose = logging(LogLevel::Verbose);
  DiskCache *cache = options_.cubinCache ? disk() : nullptr;
  jit.keepCubin = cache && driver.canLink();
  if (!jit.keepCubin)
    return loadKernel(driver, entry.kernel, *context.device, jit);
  // The machine code depends on the PTX (the key), the driver's JIT (its
  // version) and the JIT's level, never on the process.
  std::string cubinKey = fmt::format("{};cubin;driver={};jit_opt={}",
                                     key.str(), driver.version,
                                     options_.jitOptLevel);
  DiskCache::Lookup lookup = cache->load(cubinKey);
  if (lookup.kind == DiskCache::LookupKind::Hit) {
    Expected<LoadedKernel> loaded = loadKernel(
        driver, entry.kernel, *context.device, jit, &lookup.payload);
    if (loaded)
      return loaded;
    // A cubin this driver refuses costs a JIT, nothing more.
    if (logging(LogLevel::Info))
      logLine("cached cubin {} not loaded ({}); JIT-compiling the PTX",
              lookup.path, loaded.status().message());
  } else if (lookup.kind == DiskCache::LookupKind::Rejected &&
             logging(LogLevel::Info)) {
    logLine("cached cubin {} rejected ({})", lookup.path, lookup.reason);
  }
  Expected<LoadedKernel> loaded =
      loadKernel(driver, entry.kernel, *context.device, jit);
  if (loaded && !loaded->cubin.empty()) {
    Status stored = cache->store(cubinKey, loaded->cubin);
    if (!stored.ok() && logging(LogLevel::Info))
      logLine("cannot write the cubin's disk cache entry: {}",
              stored.message());
    // Kept in memory only as long as it is needed.
    std::string().swap(loaded->cubin);
  }
  return loaded;
}

Expected<const LoadedKernel *>
Engine::quickKernel(const CudaDriver &driver, const ContextInfo &context,
                    const CacheKey &key, const std::string &keyText,
                    const std::string &memoryKey, CUstream stream) {
  if (cudaKernels_.ready(memoryKey))
    return nullptr;
  {
    // The background thread stores the kernel before it ends `building`
    // under this lock: past it, the kernel is ready (or its build failed).
    std::lock_guard<std::mutex> lock(tieredMutex_);
    if (auto it = tiers_.find(memoryKey); it != tiers_.end()) {
      if (it->second.failed)
        return nullptr;
      if (it->second.building)
        return mayBeCapturing(driver, stream) ? nullptr
                                              : it->second.quick.get();
    }
    if (cudaKernels_.ready(memoryKey))
      return nullptr;
  }
  // A graph would keep the quick kernel: the call waits for its own.
  if (mayBeCapturing(driver, stream))
    return nullptr;
  CacheKey quickKey = key;
  if (!compiler::quickKernelConfig(key.config, quickKey.config))
    return nullptr;
  // On disk: only a JIT away (none at all where the driver's cache has it).
  if (DiskCache *cache = disk();
      cache && llvm::sys::fs::exists(cache->entryPath(keyText)))
    return nullptr;
  std::string quickMemoryKey = fmt::format("{}|{}", context.id, quickKey.str());
  Expected<std::shared_ptr<const LoadedKernel>> quick =
      cudaKernels_.get(quickMemoryKey, [&] {
        return loadCudaKernel(driver, context, quickKey);
      });
  if (!quick) {
    if (logging(LogLevel::Info))
      logLine("no quick kernel for {}: {}", keyText, quick.status().message());
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(tieredMutex_);
  Tier &tier = tiers_[memoryKey];
  if (tier.failed || cudaKernels_.ready(memoryKey))
    return nullptr;
  // The first quick kernel stays (a caller may still launch it after the
  // memory cache is cleared).
  if (!tier.quick)
    tier.quick = *quick;
  if (!tier.building) {
    tier.building = true;
    if (logging(LogLevel::Info))
      logLine("tiered: {} runs while {} builds in the background",
              quickKey.str(), keyText);
    buildInBackground(driver, context, key, memoryKey);
  }
  return tier.quick.get();
}

void Engine::buildInBackground(const CudaDriver &driver,
                               const ContextInfo &context, const CacheKey &key,
                               const std::string &memoryKey) {
  BackgroundBuilds &builds = backgroundBuilds();
  // At exit the driver's and LLVM's own handlers must find no build
  // running: this one, registered after them, runs before them.
  std::call_once(builds.atExit,
                 [] { std::atexit(&Engine::waitForBackgroundBuilds); });
  {
    std::lock_guard<std::mutex> lock(builds.mutex);
    ++builds.pending;
    builds.owner = ::getpid();
  }
  if (!background_)
    background_ =
        std::make_unique<llvm::StdThreadPool>(llvm::hardware_concurrency(1));
  background_->async([this, &driver, context, key, memoryKey] {
    // A module load while another thread captures a CUDA graph in the
    // global mode would fail and invalidate that capture: this thread's
    // calls are relaxed. The module loads into the caller's context.
    if (driver.cuThreadExchangeStreamCaptureMode) {
      CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
      driver.cuThreadExchangeStreamCaptureMode(&mode);
    }
    Status status;
    if (CUresult result = driver.cuCtxSetCurrent(context.context);
        result != CUDA_SUCCESS)
      status = makeError(ATTN_ERROR_CUDA, "cuCtxSetCurrent failed: {}",
                         driver.describe(result));
    if (status.ok()) {
      Expected<std::shared_ptr<const LoadedKernel>> full = cudaKernels_.get(
          memoryKey, [&] { return loadCudaKernel(driver, context, key); });
      if (!full)
        status = full.takeStatus();
    }
    {
      std::lock_guard<std::mutex> lock(tieredMutex_);
      Tier &tier = tiers_[memoryKey];
      tier.building = false;
      tier.failed = !status.ok();
    }
    if (!status.ok() && logging(LogLevel::Info))
      logLine("the background build of {} failed ({}); the next call builds "
              "it",
              key.str(), status.message());
    BackgroundBuilds &builds = backgroundBuilds();
    {
      std::lock_guard<std::mutex> lock(builds.mutex);
      --builds.pending;
    }
    builds.idle.notify_all();
  });
}

Expected<std::shared_ptr<const Engine::PtxEntry>>
Engine::buildPtx(const CacheKey &key) {
  // A configuration the plan refuses (a tile override the chip cannot hold,
  // a mapping it lacks) is the caller's to change, not a compiler failure.
  compiler::KernelPlan plan;
  std::string planError;
  if (!compiler::planKernel(key.config, /*nvidia=*/true, plan, planError))
    return makeError(ATTN_ERROR_UNSUPPORTED, "cannot compile {}: {}",
                     key.config.pipelineOptions(true), planError);
  std::string keyText = key.str();
  auto entry = std::make_shared<PtxEntry>();
  DiskCache *cache = disk();

  // A usable disk entry, or why there is none.
  auto tryDisk = [&](bool afterWait) {
    Clock::time_point start = Clock::now();
    DiskCache::Lookup lookup = cache->load(keyText);
    entry->path = lookup.path;
    std::string reason = lookup.reason;
    if (lookup.kind == DiskCache::LookupKind::Hit &&
        decodeKernelBlob(lookup.payload, entry->kernel, reason)) {
      entry->fromDisk = true;
      entry->readMs = millisecondsSince(start);
      ++diskHits_;
      return true;
    }
    ++diskMisses_;
    bool rejected = lookup.kind != DiskCache::LookupKind::Miss;
    if (rejected)
      ++diskRejected_;
    if (logging(LogLevel::Info)) {
      if (rejected)
        logLine("disk cache entry {} rejected ({}); rebuilding {}",
                lookup.path, reason, keyText);
      else
        logLine("disk miss {}{} ({}{}{})", afterWait ? "after waiting " : "",
                keyText, lookup.path, reason.empty() ? "" : ": ", reason);
    }
    return false;
  };

  std::optional<DiskCache::Build> build;
  if (cache) {
    if (tryDisk(false))
      return std::shared_ptr<const PtxEntry>(std::move(entry));
    // Another process may be compiling this very kernel: wait for it rather
    // than compile it again.
    Clock::time_point waitStart = Clock::now();
    build = cache->beginBuild(keyText, options_.buildWait);
    if (build->waitedForOtherBuilder() && logging(LogLevel::Info))
      logLine("waited {:.1f} ms for another process building {}{}",
              millisecondsSince(waitStart), keyText,
              build->timedOut() ? " (gave up)" : "");
    if (build->waitedForOtherBuilder() && tryDisk(true)) {
      build->abandon();
      return std::shared_ptr<const PtxEntry>(std::move(entry));
    }
  }

  std::string error;
  Clock::time_point start = Clock::now();
  bool compiled = compiler::compilePtx(key.config, entry->kernel, error);
  addCompileTime(Clock::now() - start);
  entry->compileMs = millisecondsSince(start);
  if (!compiled)
    return makeError(ATTN_ERROR_COMPILE,
                     "the compiler failed on {}: {} (a bug in attn-jit: "
                     "please report it)",
                     keyText, error);
  if (std::string bad = checkKernelMetadata(entry->kernel); !bad.empty())
    return makeError(ATTN_ERROR_INTERNAL,
                     "the compiler returned an unusable kernel for {}: {}",
                     keyText, bad);
  ++compiles_;
  if (build) {
    Status stored = build->commit(encodeKernelBlob(entry->kernel));
    if (!stored.ok() && logging(LogLevel::Info))
      logLine("cannot write the disk cache entry for {}: {}", keyText,
              stored.message());
  }
  return std::shared_ptr<const PtxEntry>(std::move(entry));
}

Expected<std::shared_ptr<const Engine::HostEntry>>
Engine::hostKernel(const CacheKey &key) {
  std::string keyText = key.str();
  SingleFlight<HostEntry>::Outcome outcome;
  auto build = [&]() -> Expected<std::shared_ptr<const HostEntry>> {
    std::string error;
    Clock::time_point start = Clock::now();
    auto entry = std::make_shared<HostEntry>();
    entry->kernel = compiler::compileHost(key.config, error);
    addCompileTime(Clock::now() - start);
    if (!entry->kernel)
      return makeError(ATTN_ERROR_COMPILE,
                       "the compiler failed on {}: {} (a bug in attn-jit: "
                       "please report it)",
                       keyText, error);
    ++compiles_;
    if (logging(LogLevel::Info)) {
      const compiler::CompileTimes &times = entry->kernel->times();
      logLine("compiled {} in {:.1f} ms: IR {:.1f} ms, passes {:.1f} ms, "
              "codegen {:.1f} ms",
              keyText, millisecondsSince(start), times.buildIR, times.passes,
              times.codegen);
    }
    return std::shared_ptr<const HostEntry>(std::move(entry));
  };
  Expected<std::shared_ptr<const HostEntry>> entry =
      hostKernels_.get(keyText, build, &outcome);
  if (entry && outcome != SingleFlight<HostEntry>::Outcome::Built) {
    ++memoryHits_;
    if (logging(LogLevel::Verbose))
      logLine("memory hit {}", keyText);
  }
  return entry;
}

/// The forward's host arguments of a call (of a variable-length one's
/// packed view with `varlen`; of a split one with `split`).
static compiler::HostArgs hostArgsOf(const attn_fwd_args &args,
                                     const compiler::UserModsInfo *user,
                                     const VarlenCall *varlen = nullptr,
                                     const SplitCall *split = nullptr) {
  compiler::HostArgs host;
  host.q = const_cast<void *>(args.q);
  host.k = const_cast<void *>(args.k);
  host.v = const_cast<void *>(args.v);
  host.o = args.o;
  host.lse = args.lse;
  host.batch = args.batch;
  host.heads = args.heads;
  host.kvHeads = kvHeadsOf(args);
  host.numQueries = args.seqlen_q;
  host.numKeys = args.seqlen_k;
  for (int i = 0; i < 4; ++i) {
    host.qStrides[i] = args.q_strides[i];
    host.kStrides[i] = args.k_strides[i];
    host.vStrides[i] = args.v_strides[i];
    host.oStrides[i] = args.o_strides[i];
  }
  for (int i = 0; i < 3; ++i)
    host.lseStrides[i] = args.lse ? args.lse_strides[i] : 0;
  host.scale = effectiveScale(args);
  host.captures = captureValues(args, user, varlen, split);
  if (varlen && varlen->pageSize)
    host.kvBatch = varlen->numPages;
  return host;
}

/// V with its keys contiguous (an FP8 call's) as the host kernel reads it:
/// a dense (B, Hkv, Nk, D) copy in `storage`, its strides in `args`.
static void denseValues(attn_fwd_args &args, std::vector<uint8_t> &storage) {
  int64_t B = args.batch, H = kvHeadsOf(args), N = args.seqlen_k,
          D = args.head_dim;
  storage.resize(size_t(B * H * N * D));
  auto *from = static_cast<const uint8_t *>(args.v);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t n = 0; n < N; ++n)
        for (int64_t d = 0; d < D; ++d)
          storage[size_t(((b * H + h) * N + n) * D + d)] =
              from[b * args.v_strides[0] + h * args.v_strides[1] + n +
                   d * args.v_strides[3]];
  const int64_t dense[4] = {H * N * D, N * D, D, 1};
  std::copy(std::begin(dense), std::end(dense), args.v_strides);
  args.v = storage.data();
}

Status Engine::forwardHost(const attn_fwd_args &callArgs,
                           const compiler::UserModsInfo *user,
                           const VarlenCall *varlen, const Fp8Call *fp8) {
  // The host kernel reads V's rows contiguous: an FP8 call's V (keys
  // contiguous) is copied dense first.
  attn_fwd_args args = callArgs;
  std::vector<uint8_t> values;
  if (fp8)
    denseValues(args, values);
  Expected<llvm::ThreadPoolInterface *> pool = hostPool();
  if (!pool)
    return pool.takeStatus();
  CallKey call = CallKey::make(Target::Host, 0, args, user,
                               /*backward=*/false, varlen != nullptr,
                               varlen ? varlen->pageSize : 0);
  CacheKey key = makeKey(call, args, varlen, "", user);
  // Auto never splits on the host (its threads already take the grid's
  // items, and the result would depend on the count); a forced count does.
  int64_t splits = splitsOf(call, args, varlen, key.config.blockM,
                            key.config.blockN, key.config.packGqa,
                            /*slots=*/0);
  key.config.split = splits > 1;
  Expected<std::shared_ptr<const HostEntry>> entry = hostKernel(key);
  if (!entry)
    return entry.takeStatus();
  SplitCall split = splitCallOf(args, splits);
  std::vector<float> workspace;
  if (key.config.split) {
    workspace.resize(split.workspaceFloats());
    split.workspace = workspace.data();
  }
  compiler::HostArgs host =
      hostArgsOf(args, user, varlen, key.config.split ? &split : nullptr);
  if (fp8)
    std::copy(std::begin(fp8->descale), std::end(fp8->descale),
              host.descale);
  host.pool = *pool;
  (*entry)->kernel->run(host);
  ++launches_;
  return Status();
}

Status Engine::backwardHost(const attn_bwd_args &args,
                            const compiler::UserModsInfo *user) {
  Expected<llvm::ThreadPoolInterface *> pool = hostPool();
  if (!pool)
    return pool.takeStatus();
  CacheKey key =
      makeKey(CallKey::make(Target::Host, 0, args.fwd, user, /*backward=*/true,
                            /*varlen=*/false, /*pageSize=*/0, /*tma=*/false,
                            deterministic_.load(std::memory_order_relaxed)),
              args.fwd, nullptr, "", user);
  Expected<std::shared_ptr<const HostEntry>> entry = hostKernel(key);
  if (!entry)
    return entry.takeStatus();
  compiler::HostArgs host = hostArgsOf(args.fwd, user);
  host.pool = *pool;
  host.dO = args.d_o;
  host.dq = args.dq;
  host.dk = args.dk;
  host.dv = args.dv;
  for (int i = 0; i < 4; ++i) {
    host.dOStrides[i] = args.do_strides[i];
    host.dqStrides[i] = args.dq_strides[i];
    host.dkStrides[i] = args.dk_strides[i];
    host.dvStrides[i] = args.dv_strides[i];
  }
  (*entry)->kernel->run(host);
  ++launches_;
  return Status();
}

} // namespace attn::rt
