//===- Compiler.cpp - attn's compiler as a library ------------------------===//
//
// Builds the canonical kernel for a configuration in memory, runs the named
// pipelines, and returns PTX (NVIDIA) or a JIT-compiled host function.
//
//===----------------------------------------------------------------------===//

#include "attn/Compiler/Compiler.h"
#include "attn/Compiler/KernelABI.h"
#include "attn/Compiler/RecoverFatalErrors.h"

#include "attn/InitAll.h"
#include "attn/Pipelines/Pipelines.h"
#include "attn/Target/PTX.h"
#include "attn/Transforms/Passes.h"
#include "attn/Transforms/UserMods.h"
#include "AttnVersion.inc"
#include "attn/Compiler/HostLibcalls.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ThreadPool.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <mutex>
#include <vector>

using namespace mlir;

namespace attn::compiler {

const char *compilerVersion() { return ATTN_COMPILER_VERSION; }

std::string KernelConfig::pipelineOptions(bool nvidia) const {
  std::string opts =
      fmt::format("head-dim={} dtype={} mask={} block-m={} block-n={} "
                  "positive-scale={} pack-gqa={}",
                  headDim, toString(dtype), toString(mask), blockM, blockN,
                  positiveScale ? 1 : 0, packGqa ? 1 : 0);
  if (variants)
    opts += " variants=" + variantNames(variants);
  if (backward)
    opts += " backward=1";
  if (!deterministic)
    opts += " deterministic=0";
  if (varlen)
    opts += " varlen=1";
  if (pageSize)
    opts += fmt::format(" page-size={}", pageSize);
  if (split)
    opts += " split=1";
  if (nvidia && pagedDecode)
    opts += " paged-decode=1";
  if (nvidia)
    opts += fmt::format(" arch={} warps={} stages={} tensor-core={}{}{}{}",
                        arch, warps, stages, tensorCore, tma ? " tma=1" : "",
                        warpSpecialize ? " warp-specialize=1" : "",
                        persistent ? " persistent=1" : "");
  if (nvidia && qStages)
    opts += fmt::format(" q-stages={}", qStages);
  if (nvidia && shortWorkTiles)
    opts += " short-work-tiles=1";
  if (nvidia && llvmOptLevel != mlir::attn::kMaxLlvmOptLevel)
    opts += fmt::format(" llvm-opt-level={}", llvmOptLevel);
  return opts;
}

HostKernel::~HostKernel() = default;

namespace {

using Clock = std::chrono::steady_clock;
double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start)
      .count();
}

/// A context with attn's dialects, collecting diagnostics into a string.
struct Session {
  DialectRegistry registry;
  std::unique_ptr<MLIRContext> context;
  std::string diagnostics;
  std::unique_ptr<ScopedDiagnosticHandler> handler;
  OwningOpRef<ModuleOp> module;

  Session() {
    mlir::attn::registerAllDialects(registry);
    context = std::make_unique<MLIRContext>(registry,
                                            MLIRContext::Threading::DISABLED);
    context->loadAllAvailableDialects();
    handler = std::make_unique<ScopedDiagnosticHandler>(
        context.get(), [this](Diagnostic &diag) {
          llvm::raw_string_ostream os(diagnostics);
          // "file:line:col: error: ..." where the location is in a text
          // (a user's mods), as compilers print it.
          if (auto file = dyn_cast<FileLineColLoc>(diag.getLocation()))
            os << file.getFilename().getValue() << ":" << file.getLine()
               << ":" << file.getColumn() << ": "
               << (diag.getSeverity() == DiagnosticSeverity::Error ? "error"
                                                                   : "note")
               << ": " << diag << "\n";
          else
            os << diag.getLocation() << ": " << diag << "\n";
          for (Diagnostic &note : diag.getNotes())
            os << "  note: " << note << "\n";
          return success();
        });
    module = ModuleOp::create(UnknownLoc::get(context.get()));
  }

  /// Hands a user's mods to attn-create-kernel (UserMods.h).
  void setUserMods(const std::string &text) {
    if (!text.empty())
      (*module)->setAttr(mlir::attn::kUserModsAttr,
                         StringAttr::get(context.get(), text));
  }
};

/// Runs a compile's pipeline over the session's module and verifies the IR
/// once, at the end, instead of after each of its passes (a PassManager's
/// default): every pass is tested with verification after each in attn-opt
/// and lit; a compile needs to know only that what reaches LLVM is valid.
LogicalResult runPipeline(PassManager &pm, Session &s) {
  pm.enableVerifier(false);
  if (failed(pm.run(*s.module)))
    return failure();
  return verify(*s.module);
}

template <typename Options>
void setKernelOptions(Options &options, const KernelConfig &config) {
  options.headDim = config.headDim;
  options.dtype = toString(config.dtype);
  options.mask = toString(config.mask);
  options.blockM = config.blockM;
  options.blockN = config.blockN;
  options.positiveScale = config.positiveScale;
  options.packGqa = config.packGqa;
  options.variants = variantNames(config.variants);
  options.backward = config.backward;
  options.varlen = config.varlen;
  options.pageSize = config.pageSize;
  options.split = config.split;
  options.deterministic = config.deterministic;
}


/// inspectUserMods, where an LLVM fatal error would end the process.
bool inspectUserModsUnguarded(const std::string &text, UserModsInfo &info,
                              std::string &error) {
  Session s;
  FailureOr<mlir::attn::UserMods> mods =
      mlir::attn::parseUserMods(text, s.context.get());
  if (failed(mods)) {
    error = s.diagnostics;
    return false;
  }
  // Building the kernel function (any head dim) runs the region verifier
  // on the mods as they will be compiled.
  s.setUserMods(text);
  PassManager pm(s.context.get());
  pm.addPass(mlir::attn::createAttnCreateKernel(
      mlir::attn::AttnCreateKernelOptions{64, "f32", "none", "", true}));
  if (failed(pm.run(*s.module))) {
    error = s.diagnostics;
    return false;
  }
  // The backward kernel verifies that the score_mod is differentiable; its
  // failure only rules out attn_backward.
  Session grad;
  grad.setUserMods(text);
  PassManager gradPm(grad.context.get());
  gradPm.addPass(mlir::attn::createAttnCreateKernel(
      mlir::attn::AttnCreateKernelOptions{64, "f32", "none", "", true,
                                          /*backward=*/true}));
  info.notDifferentiable.clear();
  if (failed(gradPm.run(*grad.module)))
    info.notDifferentiable = grad.diagnostics;
  info.canonical = mlir::attn::canonicalUserMods(*mods);
  info.captures.clear();
  for (Type t : mods->captures) {
    auto memref = dyn_cast<MemRefType>(t);
    Type element = memref ? memref.getElementType() : t;
    abi::CaptureArg::Element kind =
        element.isF32()          ? abi::CaptureArg::F32
        : element.isInteger(32)  ? abi::CaptureArg::I32
                                 : abi::CaptureArg::I64; // i64, index
    info.captures.push_back(
        {kind, memref ? static_cast<int>(memref.getRank()) : 0});
  }
  return true;
}

/// compilePtx, where an LLVM fatal error would end the process.
bool compilePtxUnguarded(const KernelConfig &config, PtxKernel &out,
                         std::string &error) {
  auto start = Clock::now();
  Session s;
  s.setUserMods(config.userMods);
  out.times.buildIR = msSince(start);

  start = Clock::now();
  PassManager pm(s.context.get());
  mlir::attn::AttnToPTXOptions options;
  setKernelOptions(options, config);
  options.chip = config.arch;
  options.warps = config.warps;
  options.stages = config.stages;
  options.tensorCore = config.tensorCore;
  options.tma = config.tma;
  options.warpSpecialize = config.warpSpecialize;
  options.persistent = config.persistent;
  options.qStages = config.qStages;
  options.shortWorkTiles = config.shortWorkTiles;
  options.llvmOptLevel = config.llvmOptLevel;
  options.pagedDecode = config.pagedDecode;
  mlir::attn::buildAttnToNVVMPipeline(pm, options);
  if (failed(runPipeline(pm, s))) {
    error = "attn-to-ptx failed for " + config.pipelineOptions(true) + ":\n" +
            s.diagnostics;
    return false;
  }
  out.times.passes = msSince(start);

  start = Clock::now();
  auto gpuModules = s.module->getOps<gpu::GPUModuleOp>();
  if (gpuModules.empty()) {
    error = "attn-to-ptx produced no gpu.module:\n" + s.diagnostics;
    return false;
  }
  gpu::GPUModuleOp gpuModule = *gpuModules.begin();
  // The launches, as the lowering recorded them on the kernels themselves
  // (llvm.funcs by now; read before serialization replaces the module).
  // The backward's kernels are attn_bwd_0, _1 (and _2 where dK and dV
  // have kernels of their own, then the atomic form's dQ kernel), as many
  // as the module holds.
  std::vector<std::string> names;
  if (config.backward)
    for (int i = 0; i < abi::kMaxBackwardKernels; ++i) {
      std::string name = abi::kernelName(abi::kBackwardKernel, i);
      if (i >= abi::kMinBackwardKernels &&
          !SymbolTable::lookupSymbolIn(gpuModule, name))
        break;
      names.push_back(std::move(name));
    }
  else if (config.split)
    for (int i = 0; i < abi::kSplitKernelCount; ++i)
      names.push_back(abi::kernelName(abi::kForwardKernel, i));
  else
    names.push_back(abi::kForwardKernel);
  out.kernels.clear();
  for (const std::string &name : names) {
    Operation *kernel = SymbolTable::lookupSymbolIn(gpuModule, name);
    if (!kernel) {
      error = "attn-to-ptx produced no kernel " + name;
      return false;
    }
    auto intAttr = [&](StringRef attr) {
      auto value = kernel->getAttrOfType<IntegerAttr>(attr);
      return value ? static_cast<int>(value.getInt()) : 0;
    };
    KernelLaunch launch;
    launch.name = name;
    launch.threads = intAttr(abi::kThreadsAttr);
    launch.blockM = intAttr(abi::kBlockMAttr);
    launch.sharedBytes = intAttr(abi::kSharedBytesAttr);
    launch.packGqa = intAttr(abi::kPackGqaAttr) != 0;
    auto over = kernel->getAttrOfType<StringAttr>(abi::kGridAttr);
    launch.overKeys = over && over.getValue() == abi::kGridOverKeys;
    launch.overSplits = over && over.getValue() == abi::kGridOverSplits;
    out.kernels.push_back(std::move(launch));
  }
  mlir::attn::PTXTarget target;
  target.chip = config.arch;
  target.optLevel = config.llvmOptLevel;
  FailureOr<std::string> ptx = mlir::attn::serializeToPTX(gpuModule, target);
  if (failed(ptx)) {
    error = "PTX generation failed:\n" + s.diagnostics;
    return false;
  }
  out.times.codegen = msSince(start);
  out.ptx = std::move(*ptx);
  return true;
}


/// The memref descriptor of MLIR's C interface, for any element type.
template <int Rank> struct Descriptor {
  void *allocated;
  void *aligned;
  int64_t offset;
  int64_t sizes[Rank];
  int64_t strides[Rank];
};

/// The packed interface of the C wrapper: one pointer per argument (a
/// memref's is a pointer to its descriptor's pointer, a scalar's to it).
using HostFn = void (*)(void **);

/// A capture's memref descriptor, any rank up to 2: {allocated, aligned,
/// offset, sizes[rank], strides[rank]}.
struct RawDescriptor {
  int64_t words[3 + 2 * abi::kMaxUserCaptureRank];
};

class JitHostKernel : public HostKernel {
public:
  JitHostKernel(std::unique_ptr<Session> session,
                std::unique_ptr<ExecutionEngine> engine, HostFn fn,
                int64_t headDim, bool backward, bool dqAccumulator,
                bool fp8, int64_t grids, std::vector<abi::UserCapture> kinds,
                const CompileTimes &times)
      : session(std::move(session)), engine(std::move(engine)), fn(fn),
        headDim(headDim), backward(backward), dqAccumulator(dqAccumulator),
        fp8(fp8), grids(grids), kinds(std::move(kinds)) {
    times_ = times;
  }

  void run(const HostArgs &a) override {
    auto tensor = [&](const void *p, int64_t heads, int64_t n,
                      const int64_t *strides, int64_t batch = 0) {
      Descriptor<4> d{const_cast<void *>(p), const_cast<void *>(p), 0,
                      {batch ? batch : a.batch, heads, n, headDim},
                      {strides[0], strides[1], strides[2], strides[3]}};
      return d;
    };
    // The kernel reads the K/V head count (the GQA group) from K's sizes.
    int64_t kvHeads = a.kvHeads ? a.kvHeads : a.heads;
    Descriptor<4> q = tensor(a.q, a.heads, a.numQueries, a.qStrides);
    Descriptor<4> k = tensor(a.k, kvHeads, a.numKeys, a.kStrides, a.kvBatch);
    Descriptor<4> v = tensor(a.v, kvHeads, a.numKeys, a.vStrides, a.kvBatch);
    Descriptor<4> o = tensor(a.o, a.heads, a.numQueries, a.oStrides);
    // The host kernel always writes the LSE; give it scratch when the caller
    // did not ask for it.
    std::vector<float> scratch;
    float *lsePtr = a.lse;
    int64_t lseStrides[3] = {a.lseStrides[0], a.lseStrides[1],
                             a.lseStrides[2]};
    if (!lsePtr) {
      scratch.resize(static_cast<size_t>(a.batch * a.heads * a.numQueries));
      lsePtr = scratch.data();
      lseStrides[0] = a.heads * a.numQueries;
      lseStrides[1] = a.numQueries;
      lseStrides[2] = 1;
    }
    Descriptor<3> lse{lsePtr, lsePtr, 0,
                      {a.batch, a.heads, a.numQueries},
                      {lseStrides[0], lseStrides[1], lseStrides[2]}};
    float scale = a.scale != 0
                      ? a.scale
                      : 1.0f / std::sqrt(static_cast<float>(headDim));
    std::vector<void *> packed;
    // Pointers to the descriptors, which the packed interface points to.
    std::vector<void *> slots;
    slots.reserve(16);
    auto pass = [&](void *descriptor) {
      slots.push_back(descriptor);
      packed.push_back(&slots.back());
    };
    Descriptor<4> dO, dq, dk, dv;
    Descriptor<3> delta;
    std::vector<float> deltaScratch;
    if (!backward) {
      for (void *t : {(void *)&q, (void *)&k, (void *)&v, (void *)&o})
        pass(t);
      pass(&lse);
    } else {
      dO = tensor(a.dO, a.heads, a.numQueries, a.dOStrides);
      dq = tensor(a.dq, a.heads, a.numQueries, a.dqStrides);
      dk = tensor(a.dk, kvHeads, a.numKeys, a.dkStrides);
      dv = tensor(a.dv, kvHeads, a.numKeys, a.dvStrides);
      // The row terms rowsum(dO ∘ O): the kernel's workspace.
      deltaScratch.resize(static_cast<size_t>(a.batch * a.heads * a.numQueries));
      delta = Descriptor<3>{deltaScratch.data(), deltaScratch.data(), 0,
                            {a.batch, a.heads, a.numQueries},
                            {a.heads * a.numQueries, a.numQueries, 1}};
      for (void *t : {(void *)&q, (void *)&k, (void *)&v, (void *)&o,
                      (void *)&dO, (void *)&lse, (void *)&dq, (void *)&dk,
                      (void *)&dv, (void *)&delta})
        pass(t);
    }
    packed.push_back(&scale);
    // An FP8 kernel's descale factors (kFp8Scalars).
    float descale[std::size(abi::kFp8Scalars)];
    if (fp8)
      for (size_t i = 0; i < std::size(descale); ++i) {
        descale[i] = a.descale[i];
        packed.push_back(&descale[i]);
      }
    // The atomic backward's dQ accumulator (kAtomicBackwardArgs), zeroed:
    // the kernel's own, as the row terms are.
    std::vector<float> dqScratch;
    Descriptor<4> dqAccum;
    if (dqAccumulator) {
      dqScratch.assign(
          static_cast<size_t>(a.batch * a.heads * a.numQueries * headDim),
          0.0f);
      dqAccum = Descriptor<4>{dqScratch.data(), dqScratch.data(), 0,
                              {a.batch, a.heads, a.numQueries, headDim},
                              {a.heads * a.numQueries * headDim,
                               a.numQueries * headDim, headDim, 1}};
      pass(&dqAccum);
    }
    // Captures: scalars by value, tensors as descriptors (pointers to them
    // kept alive in `descriptors`).
    if (kinds.size() != a.captures.size())
      return; // the runtime passes exactly these (Variant.cpp)
    std::vector<RawDescriptor> descriptors(kinds.size());
    std::vector<void *> descriptorPtrs(kinds.size());
    std::vector<int32_t> i32s(kinds.size());
    for (size_t i = 0; i < kinds.size(); ++i) {
      const abi::UserCapture &kind = kinds[i];
      const abi::CaptureValue &value = a.captures[i];
      if (kind.rank == 0) {
        i32s[i] = static_cast<int32_t>(value.i64);
        const void *p = kind.element == abi::CaptureArg::F32 ? &value.f32
                        : kind.element == abi::CaptureArg::I32
                            ? static_cast<const void *>(&i32s[i])
                            : static_cast<const void *>(&value.i64);
        packed.push_back(const_cast<void *>(p));
        continue;
      }
      RawDescriptor &d = descriptors[i];
      d.words[0] = d.words[1] =
          static_cast<int64_t>(reinterpret_cast<uintptr_t>(value.data));
      d.words[2] = 0;
      for (int r = 0; r < kind.rank; ++r) {
        d.words[3 + r] = value.sizes[r];
        d.words[3 + kind.rank + r] = value.strides[r];
      }
      descriptorPtrs[i] = &d;
      packed.push_back(&descriptorPtrs[i]);
    }
    // The work items (abi::kHostGridsAttr): one phase per grid, each run by
    // the caller and the pool's threads at once.
    int64_t phase = 0;
    std::vector<int64_t> counters(static_cast<size_t>(grids), 0);
    Descriptor<1> counterDescriptor{counters.data(), counters.data(), 0,
                                    {grids}, {1}};
    void *counterPtr = &counterDescriptor;
    packed.push_back(&phase);
    packed.push_back(&counterPtr);
    unsigned helpers =
        a.pool ? a.pool->getMaxConcurrency() : 0; // besides the caller
    for (; phase < grids; ++phase) {
      if (helpers == 0) {
        fn(packed.data());
        continue;
      }
      // Each thread gets its own copy of the pointers (the kernel only reads
      // them); the values they point to are shared and constant.
      llvm::ThreadPoolTaskGroup group(*a.pool);
      for (unsigned t = 0; t < helpers; ++t)
        group.async([this, packed] {
          std::vector<void *> own = packed;
          fn(own.data());
        });
      fn(packed.data());
      group.wait();
    }
  }

private:
  std::unique_ptr<Session> session;
  std::unique_ptr<ExecutionEngine> engine;
  HostFn fn;
  int64_t headDim;
  bool backward;
  /// The backward's atomic form: it takes dQ's accumulator after the scale.
  bool dqAccumulator;
  /// e4m3 inputs: the kernel takes the descale factors after the scale.
  bool fp8;
  /// Tile grids, run one after another (abi::kHostGridsAttr).
  int64_t grids;
  /// The kernel's capture arguments (abi::captureKinds).
  std::vector<abi::UserCapture> kinds;
};

/// compileHost, where an LLVM fatal error would end the process.
std::unique_ptr<HostKernel> compileHostUnguarded(const KernelConfig &config,
                                                 std::string &error) {
  CompileTimes times;
  auto start = Clock::now();
  auto s = std::make_unique<Session>();
  s->setUserMods(config.userMods);
  std::vector<abi::UserCapture> userCaptures;
  if (!config.userMods.empty()) {
    UserModsInfo info;
    if (!inspectUserModsUnguarded(config.userMods, info, error))
      return nullptr;
    userCaptures = info.captures;
  }
  times.buildIR = msSince(start);

  start = Clock::now();
  PassManager pm(s->context.get());
  mlir::attn::AttnToHostOptions options;
  setKernelOptions(options, config);
  mlir::attn::buildAttnToHostPipeline(pm, options);
  if (failed(runPipeline(pm, *s))) {
    error = "attn-to-host failed for " + config.pipelineOptions(false) +
            ":\n" + s->diagnostics;
    return nullptr;
  }
  times.passes = msSince(start);

  const char *kernelName =
      config.backward ? abi::kBackwardKernel : abi::kForwardKernel;
  int64_t grids = 0;
  if (Operation *kernel = SymbolTable::lookupSymbolIn(*s->module, kernelName))
    if (auto count = kernel->getAttrOfType<IntegerAttr>(abi::kHostGridsAttr))
      grids = count.getInt();
  if (grids <= 0) {
    error = "attn-to-host produced no kernel with work items (" +
            std::string(abi::kHostGridsAttr) + ")";
    return nullptr;
  }

  start = Clock::now();
  ExecutionEngineOptions engineOptions;
  // Without a target machine the LLVM optimizer leaves loops scalar, which
  // keeps compiles short: the vectors are explicit (attn-host-vectorize),
  // and code generation targets the host CPU (ExecutionEngine detects it).
  auto transformer = makeOptimizingTransformer(3, 0, nullptr);
  engineOptions.transformer = transformer;
  auto engine = ExecutionEngine::create(*s->module, engineOptions);
  if (!engine) {
    error = "host JIT failed: " + llvm::toString(engine.takeError()) + "\n" +
            s->diagnostics;
    return nullptr;
  }
  (*engine)->registerSymbols(hostLibcalls);
  auto sym =
      (*engine)->lookupPacked(std::string("_mlir_ciface_") + kernelName);
  if (!sym) {
    error = "host JIT has no kernel: " + llvm::toString(sym.takeError());
    return nullptr;
  }
  times.codegen = msSince(start);
  return std::make_unique<JitHostKernel>(std::move(s), std::move(*engine),
                                         *sym, config.headDim,
                                         config.backward,
                                         config.backward &&
                                             !config.deterministic,
                                         config.dtype == DType::E4M3,
                                         grids,
                                         abi::captureKinds(config.variants,
                                                           userCaptures,
                                                           config.varlen,
                                                           config.pageSize > 0,
                                                           config.split),
                                         times);
}

} // namespace

// LLVM reports some errors (an unsupported target feature, a broken
// invariant) with report_fatal_error, which ends the process: inside an
// application that is never acceptable, so both compiles run recovering them
// (RecoverFatalErrors.h). Targets are initialised before, outside the
// recovery: a fatal error must never leave a std::call_once half done.

bool inspectUserMods(const std::string &text, UserModsInfo &info,
                     std::string &error) {
  bool ok = false;
  std::string fatal;
  if (!runRecoveringFatalErrors(
          [&] { ok = inspectUserModsUnguarded(text, info, error); }, fatal)) {
    error = "user mods: " + fatal;
    return false;
  }
  return ok;
}

bool compilePtx(const KernelConfig &config, PtxKernel &out,
                std::string &error) {
  mlir::attn::initializePTXTarget();
  bool compiled = false;
  std::string fatal;
  if (!runRecoveringFatalErrors(
          [&] { compiled = compilePtxUnguarded(config, out, error); }, fatal)) {
    error = "attn-to-ptx for " + config.pipelineOptions(true) + ": " + fatal;
    return false;
  }
  return compiled;
}

std::unique_ptr<HostKernel> compileHost(const KernelConfig &config,
                                        std::string &error) {
  static std::once_flag nativeTarget;
  std::call_once(nativeTarget, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  std::unique_ptr<HostKernel> kernel;
  std::string fatal;
  if (!runRecoveringFatalErrors(
          [&] { kernel = compileHostUnguarded(config, error); }, fatal)) {
    error = "attn-to-host for " + config.pipelineOptions(false) + ": " + fatal;
    return nullptr;
  }
  return kernel;
}

} // namespace attn::compiler
