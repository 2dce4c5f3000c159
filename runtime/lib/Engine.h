//===- Engine.h - Compile once, cache, launch -----------------------------===//
//
// What attn_forward does: validate, find the kernel for the call's
// configuration (memory, then disk, then the compiler; one build per key,
// see SingleFlight.h and DiskCache.h) and launch it. The C API uses one
// process-wide Engine; tests build their own with chosen options, a fake
// compiler and, for the CUDA path, a table of fake driver functions.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_ENGINE_H
#define ATTN_RUNTIME_ENGINE_H

#include "CacheKey.h"
#include "CallKey.h"
#include "CudaContext.h"
#include "CudaKernel.h"
#include "DiskCache.h"
#include "Log.h"
#include "SingleFlight.h"
#include "Validate.h"

#include "llvm/Support/ThreadPool.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>

namespace attn::rt {

template <typename Value> class HotCache;

struct EngineOptions {
  LogLevel log = LogLevel::Off;
  DiskCacheSettings disk;
  /// The driver library dlopen loads (ATTN_JIT_LIBCUDA).
  std::string libcuda = "libcuda.so.1";
  /// When set, used instead of loading `libcuda` (tests: fakes).
  std::shared_ptr<const CudaDriver> driver;
  /// Tensor-core instructions for CUDA kernels (ATTN_JIT_TENSOR_CORES):
  /// auto, mma.sync or wgmma; part of every cache key.
  std::string tensorCore = "auto";
  /// Threads of a host (CPU) call, the caller's included
  /// (ATTN_JIT_NUM_THREADS): 0 the hardware's (the CPUs this process may
  /// run on); kBadThreadCount when the variable is not a count.
  int hostThreads = 0;
  static constexpr int kBadThreadCount = -1;
  static constexpr int kMaxThreads = 1024;
  /// Split-KV's count for forward calls (ATTN_JIT_NUM_SPLITS; SplitKv.h):
  /// 0 chosen per call (never on the host), 1 never split, k > 1 always k
  /// splits; kBadSplitCount when the variable is not a count.
  int64_t numSplits = 0;
  static constexpr int64_t kBadSplitCount = -1;
  /// K/V tiles by TMA in the kernels that allow it (sm_90a wgmma forward
  /// over contiguous K/V whose layout a tensor map describes, else
  /// cp.async): unset, as compiler::chooseCopies decides (the policy's
  /// ranges live there); ATTN_JIT_TMA=1 wherever allowed, =0 never.
  std::optional<bool> tma;
  /// The backward's form (ATTN_JIT_DETERMINISTIC; KernelConfig::
  /// deterministic): 1 deterministic, 0 dQ added with atomics;
  /// kBadDeterministic when the variable is neither.
  int deterministic = 1;
  static constexpr int kBadDeterministic = -1;
  /// The atomic form on CUDA (wgmma) as well as on the host
  /// (ATTN_JIT_GPU_ATOMIC_BACKWARD=1): off by default, since on the H200
  /// it ran at 0.42-0.52x the deterministic form and gave a wrong dQ at
  /// D = 64 (docs/BENCHMARKS.md, version 20); CUDA calls stay
  /// deterministic without it.
  bool gpuAtomicBackward = false;
  /// With TMA, a producer warpgroup issues the K/V copies
  /// (KernelConfig::warpSpecialize): ATTN_JIT_WARPSPEC=1 wherever a call
  /// takes TMA, =0 never; unset, as compiler::chooseCopies decides (a
  /// producer it gives brings TMA).
  std::optional<bool> warpSpecialize;
  /// With a producer warpgroup, persistent forward CTAs, each running
  /// several work tiles of the grid (KernelConfig::persistent; the launch
  /// has min(tiles, SMs) CTAs): ATTN_JIT_PERSISTENT=1 wherever the resolved
  /// config allows it, =0 never, unset where compiler::lengthTiles gives
  /// it (short plain calls and short windows at D = 128, causal ones up to
  /// 8k at D = 256).
  std::optional<bool> persistent;
  /// ATTN_JIT_Q_STAGES=1 or 2: a persistent kernel's Q buffers
  /// (KernelConfig::qStages; 0: unset, the tile policy's choice where
  /// lengthTiles made the call persistent, one elsewhere); kBadQStages when
  /// the variable is neither (a CUDA call then fails with its name).
  int64_t qStages = 0;
  static constexpr int64_t kBadQStages = -1;
  /// ATTN_JIT_PERSISTENT_CTAS=n (n >= 1): a persistent kernel's launch has at
  /// most n CTAs (default: the device's SMs), so that small test shapes run
  /// several work tiles a CTA; 0: unset.
  int64_t persistentCtas = 0;
  /// The driver's PTX JIT optimisation level (ATTN_JIT_PTX_OPT_LEVEL, 0 to
  /// JitSettings::kMaxJitOptLevel; JitSettings::kDriverDefault: unset);
  /// kBadJitOptLevel when the variable is not one.
  int jitOptLevel = JitSettings::kDriverDefault;
  static constexpr int kBadJitOptLevel = -2;
  /// Keep the driver's machine code (cubin) in the disk cache beside the
  /// PTX, so that another process loads it without a compile or a JIT
  /// (ATTN_JIT_CUBIN_CACHE=1). Off by default: on the H200 the kernels the
  /// linker (cuLinkAddData) made ran at 0.62-0.83x those of
  /// cuModuleLoadDataEx from the same PTX (docs/BENCHMARKS.md version 21).
  bool cubinCache = false;
  /// Tiered first calls (on unless ATTN_JIT_TIERED=0): a forward call
  /// whose kernel is neither in memory nor on disk runs the quick kernel of
  /// its configuration (compiler::quickKernelConfig: mma.sync, small tiles,
  /// compiled and JIT-compiled in well under half the time) while its own
  /// kernel compiles on a background thread; later calls take that one
  /// once it is loaded. On the H200 a first call took 104-194 ms so,
  /// 363-899 without (BENCHMARKS version 43). Not while the stream is
  /// captured into a CUDA graph (the graph would keep the quick kernel),
  /// nor for a call of more than maxTieredFlops.
  bool tiered = true;
  /// The largest call a tiered first call takes, in 4 B H Nq Nk D (a
  /// mask's savings aside): the quick kernel runs at ~120-170 TFLOP/s on
  /// the H200 (version 43), ~1/4 of the default kernel, so a call much
  /// longer than the default kernel's ~0.5-0.9 s build finishes sooner on
  /// that one; 5e13 is at most ~0.4 s of the quick kernel.
  double maxTieredFlops = kMaxTieredFlops;
  static constexpr double kMaxTieredFlops = 5e13;
  /// How long to wait for another process that builds the same kernel.
  std::chrono::milliseconds buildWait = std::chrono::minutes(2);

  /// ATTN_JIT_LOG, ATTN_JIT_DISK_CACHE, ATTN_JIT_CACHE_DIR, XDG_CACHE_HOME,
  /// ATTN_JIT_CACHE_MAX_MB, ATTN_JIT_LIBCUDA, ATTN_JIT_TENSOR_CORES,
  /// ATTN_JIT_NUM_THREADS, ATTN_JIT_NUM_SPLITS, ATTN_JIT_TMA,
  /// ATTN_JIT_DETERMINISTIC, ATTN_JIT_GPU_ATOMIC_BACKWARD, ATTN_JIT_WARPSPEC,
  /// ATTN_JIT_PERSISTENT, ATTN_JIT_PERSISTENT_CTAS, ATTN_JIT_PTX_OPT_LEVEL,
  /// ATTN_JIT_CUBIN_CACHE, ATTN_JIT_TIERED.
  static EngineOptions fromEnvironment();
};

class Engine {
public:
  explicit Engine(EngineOptions options);
  Engine(const Engine &) = delete;
  Engine &operator=(const Engine &) = delete;

  /// attn_forward. Logs failures when logging is on.
  Status forward(const attn_fwd_args *args);
  /// attn_forward_varlen.
  Status forwardVarlen(const attn_varlen_args *args);
  /// attn_forward_paged.
  Status forwardPaged(const attn_paged_args *args);
  /// attn_forward_fp8.
  Status forwardFp8(const attn_fp8_args *args);
  /// attn_backward.
  Status backward(const attn_bwd_args *args);
  attn_stats stats() const;
  /// attn_set_num_splits: EngineOptions::numSplits from now on (>= 0).
  Status setNumSplits(int64_t splits);
  /// attn_set_deterministic: EngineOptions::deterministic from now on (0
  /// or 1).
  Status setDeterministic(int deterministic);
  /// Forgets kernels held in memory; the disk cache stays.
  void clearMemoryCache();
  const EngineOptions &options() const { return options_; }

  /// The engine of the C API: options from the environment at first use;
  /// never destroyed (kernels may still run at exit).
  static Engine &global();

  /// Waits until no engine of the process builds a kernel in the
  /// background (EngineOptions::tiered): attn_wait_for_compiles, and at
  /// exit, before the driver and LLVM go away.
  static void waitForBackgroundBuilds();

private:
  /// PTX from the disk cache or the compiler, for one key.
  struct PtxEntry {
    compiler::PtxKernel kernel;
    bool fromDisk = false;
    std::string path;    // the disk entry, if any
    double readMs = 0;   // disk read and checks
    double compileMs = 0;
  };
  struct HostEntry {
    std::unique_ptr<compiler::HostKernel> kernel;
  };
  struct CudaState {
    std::shared_ptr<const CudaDriver> driver;
    std::unique_ptr<CudaContexts> contexts;
  };

  /// A user's mods as the compiler inspected them (once per text).
  struct UserModsEntry {
    compiler::UserModsInfo info;
  };
  /// What a thread keeps of a configuration it launched (HotCache.h): the
  /// resolved tile rows, which decide per call whether GQA heads pack, and
  /// the kernel of each choice once loaded.
  struct HotKernel {
    int64_t blockM = 0, blockN = 0;
    /// CTAs of its split kernel the context's device runs at once
    /// (splitsForCall).
    int64_t splitSlots = 0;
    std::shared_ptr<const LoadedKernel> kernels[2][2]; // by packGqa, split
    std::string keyText[2][2];                         // for ATTN_JIT_LOG=2
  };

  /// A forward call; `varlen`: a variable-length call (`args` its packed
  /// view).
  /// `fp8`: an FP8 call's descale factors.
  Status forwardCuda(const attn_fwd_args &args,
                     const compiler::UserModsInfo *user,
                     const VarlenCall *varlen = nullptr,
                     const Fp8Call *fp8 = nullptr);
  Status forwardHost(const attn_fwd_args &args,
                     const compiler::UserModsInfo *user,
                     const VarlenCall *varlen = nullptr,
                     const Fp8Call *fp8 = nullptr);
  /// validate + user mods + run, shared by forward and forwardVarlen.
  Status runForward(const attn_fwd_args &args, const VarlenCall *varlen,
                    const Fp8Call *fp8 = nullptr);
  Status backwardHost(const attn_bwd_args &args,
                      const compiler::UserModsInfo *user);
  /// The host kernel of `key`, compiled on first use.
  Expected<std::shared_ptr<const HostEntry>> hostKernel(const CacheKey &key);
  /// The user's mods of a call (null without), inspected once per text,
  /// their captures checked against the call (`backward`'s outputs for a
  /// backward call).
  Expected<const compiler::UserModsInfo *>
  userModsOf(const attn_fwd_args &args,
             std::shared_ptr<const UserModsEntry> &holder,
             const attn_bwd_args *backward = nullptr);
  Expected<std::shared_ptr<const UserModsEntry>>
  userMods(const attn_fwd_args &args);
  Expected<CudaState *> cuda();
  DiskCache *disk();
  /// The threads that share a host call with its caller (null: none), made
  /// at first use; an error for a bad ATTN_JIT_NUM_THREADS.
  Expected<llvm::ThreadPoolInterface *> hostPool();
  /// The kernel of a call: `call` resolved with the engine's settings
  /// (KernelConfig::resolved) and the call's sizes (GQA packing; of a
  /// variable-length or paged call, `varlen`'s longest query count).
  CacheKey makeKey(const CallKey &call, const attn_fwd_args &args,
                   const VarlenCall *varlen, const std::string &arch,
                   const compiler::UserModsInfo *user) const;
  /// The CUDA kernel of a call in the current context (checks the device
  /// and the forward's pointers first); `driver` is set to the driver. The
  /// kernel stays alive until this thread's next call.
  /// `splits`: the forward's split count (SplitKv.h), which the kernel
  /// takes when it is > 1. A backward call passes `backwardMaps`, its
  /// tensors as its maps would describe them (backwardMapView): the kernel
  /// takes TMA only where they can be mapped.
  Expected<const LoadedKernel *>
  cudaKernel(const attn_fwd_args &args, const compiler::UserModsInfo *user,
             const attn_fwd_args *backwardMaps, const CudaDriver *&driver,
             const VarlenCall *varlen = nullptr, int64_t *splits = nullptr);
  /// A forward call's split count on tiles of blockM x blockN rows (`pack`:
  /// GQA heads packed) on a device that runs `slots` CTAs at once (0: the
  /// host).
  int64_t splitsOf(const CallKey &call, const attn_fwd_args &args,
                   const VarlenCall *varlen, int64_t blockM, int64_t blockN,
                   bool pack, int64_t slots) const;
  /// cudaKernel when this thread has not launched the configuration (in
  /// this epoch) or not with this GQA packing: the shared caches, then
  /// `hot` filled.
  /// This thread's memo of the kernels it launched (every engine's).
  static HotCache<HotKernel> &hotKernels();
  Expected<const LoadedKernel *>
  cudaKernelMiss(const attn_fwd_args &args, const compiler::UserModsInfo *user,
                 const CallKey &call, uint64_t epoch, const CudaDriver &driver,
                 CudaContexts &contexts, const VarlenCall *varlen,
                 int64_t *splits);
  Status backwardCuda(const attn_bwd_args &args,
                      const compiler::UserModsInfo *user);
  Expected<std::shared_ptr<const PtxEntry>> buildPtx(const CacheKey &key);
  Expected<std::shared_ptr<const LoadedKernel>>
  loadCudaKernel(const CudaDriver &driver, const ContextInfo &context,
                 const CacheKey &key);
  /// Loads `entry` into the current context: its cubin from the disk cache
  /// when there is one, else its PTX through the driver's JIT, then stores
  /// the JIT's cubin.
  Expected<LoadedKernel> loadWithCubinCache(const CudaDriver &driver,
                                            const ContextInfo &context,
                                            const CacheKey &key,
                                            const PtxEntry &entry);
  /// A tiered first call (EngineOptions::tiered): while the kernel of
  /// `key` (`memoryKey` in cudaKernels_) is neither loaded nor on disk, the
  /// quick kernel of its configuration, the first such call starting the
  /// build of its own in the background; null where the call takes the
  /// usual path (no quick form, the stream captured, a background build
  /// that failed: its error is then the call's).
  Expected<const LoadedKernel *>
  quickKernel(const CudaDriver &driver, const ContextInfo &context,
              const CacheKey &key, const std::string &keyText,
              const std::string &memoryKey, CUstream stream);
  /// Loads `key`'s kernel into `context` on the background thread.
  void buildInBackground(const CudaDriver &driver, const ContextInfo &context,
                         const CacheKey &key, const std::string &memoryKey);
  bool logging(LogLevel level) const { return options_.log >= level; }
  void addCompileTime(std::chrono::steady_clock::duration time);

  EngineOptions options_;
  std::string compilerVersion_;
  /// options_.tensorCore names a mapping (checked once).
  bool tensorCoreOk_;
  /// options_.numSplits, changed by setNumSplits.
  std::atomic<int64_t> numSplits_;
  /// options_.deterministic, changed by setDeterministic.
  std::atomic<int> deterministic_;

  std::mutex cudaMutex_;
  std::optional<Expected<CudaState *>> cudaState_;
  CudaState cudaStorage_;
  /// &cudaStorage_ once the driver is loaded: read without the mutex.
  std::atomic<CudaState *> cudaReady_{nullptr};

  /// The epoch of this engine's kernels in threads' HotCaches; a new one
  /// when the memory cache is cleared.
  std::atomic<uint64_t> epoch_;

  std::once_flag poolOnce_;
  std::unique_ptr<llvm::ThreadPoolInterface> hostPool_;

  std::once_flag diskOnce_;
  std::optional<DiskCache> disk_;

  SingleFlight<PtxEntry> ptxKernels_;       // by key
  SingleFlight<LoadedKernel> cudaKernels_;  // by context and key
  SingleFlight<HostEntry> hostKernels_;     // by key
  SingleFlight<UserModsEntry> userMods_;    // by the mods' text

  std::atomic<uint64_t> compiles_{0}, memoryHits_{0}, diskHits_{0},
      diskMisses_{0}, diskRejected_{0}, launches_{0}, compileNanos_{0};

  /// A tiered first call's state, by the full kernel's memory key: its
  /// quick kernel (kept for the engine's life: callers hold plain pointers
  /// to it), whether the full kernel builds in the background, and whether
  /// that build failed (calls then build it in their own path).
  struct Tier {
    std::shared_ptr<const LoadedKernel> quick;
    bool building = false, failed = false;
  };
  std::mutex tieredMutex_;
  std::unordered_map<std::string, Tier> tiers_;
  /// Last, so that it is destroyed first: its destructor finishes the
  /// builds, which use the members above.
  std::unique_ptr<llvm::StdThreadPool> background_;
};

} // namespace attn::rt

#endif // ATTN_RUNTIME_ENGINE_H
