//===- PTX.cpp - the one wrapper of MLIR's serialization to PTX -----------===//

#include "attn/Target/PTX.h"
#include "attn/Dialect/Attn/IR/Limits.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Target/LLVM/ModuleToObject.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Triple.h"

#include <algorithm>
#include <memory>
#include <mutex>

using namespace mlir;
using mlir::attn::kMinSmVersion;

namespace {

/// ModuleToObject whose "object" is the PTX text. Unlike the NVVM target's
/// serializer it links no libdevice, so no CUDA toolkit is needed at run time.
class PTXEmitter : public LLVM::ModuleToObject {
public:
  PTXEmitter(Operation &module, const attn::PTXTarget &target)
      : ModuleToObject(module, "nvptx64-nvidia-cuda", target.chip,
                       target.features, target.optLevel) {}

protected:
  /// LLVM's pipeline as ModuleToObject runs it (makeOptimizingTransformer),
  /// without the loop and SLP vectorizers: the kernels' vector accesses are
  /// explicit in the IR, the PTX of every attn-compile-time configuration is
  /// the same without them, and the SLP vectorizer alone was ~5 % of a
  /// compile (callgrind, D = 128).
  LogicalResult optimizeModule(llvm::Module &module, int level) override {
    if (level < 0 || level > attn::kMaxLlvmOptLevel)
      return mlir::emitError(getOperation().getLoc())
             << "invalid LLVM optimisation level " << level
             << " (expected 0 to 3)";
    FailureOr<llvm::TargetMachine *> machine = getOrCreateTargetMachine();
    if (failed(machine))
      return mlir::emitError(getOperation().getLoc())
             << "NVPTX target unavailable for chip '" << chip << "'";
    (*machine)->setOptLevel(static_cast<llvm::CodeGenOptLevel>(level));
    llvm::PipelineTuningOptions tuning;
    tuning.LoopUnrolling = true;
    tuning.LoopInterleaving = true;
    tuning.LoopVectorization = false;
    tuning.SLPVectorization = false;
    llvm::PassBuilder builder(*machine, tuning);
    llvm::LoopAnalysisManager loops;
    llvm::FunctionAnalysisManager functions;
    llvm::CGSCCAnalysisManager sccs;
    llvm::ModuleAnalysisManager modules;
    builder.registerModuleAnalyses(modules);
    builder.registerCGSCCAnalyses(sccs);
    builder.registerFunctionAnalyses(functions);
    builder.registerLoopAnalyses(loops);
    builder.crossRegisterProxies(loops, functions, sccs, modules);
    llvm::OptimizationLevel levels[] = {
        llvm::OptimizationLevel::O0, llvm::OptimizationLevel::O1,
        llvm::OptimizationLevel::O2, llvm::OptimizationLevel::O3};
    llvm::ModulePassManager pipeline =
        level == 0 ? builder.buildO0DefaultPipeline(levels[0])
                   : builder.buildPerModuleDefaultPipeline(levels[level]);
    pipeline.run(module, modules);
    return success();
  }

  FailureOr<SmallVector<char, 0>>
  moduleToObject(llvm::Module &llvmModule) override {
    // resolvePTXFeatures has refused unknown chips (LLVM only warns about
    // them and then aborts in instruction selection) and PTX ISA versions
    // too old for the chip (LLVM ends the process creating the subtarget).
    FailureOr<llvm::TargetMachine *> machine = getOrCreateTargetMachine();
    if (failed(machine))
      return mlir::emitError(getOperation().getLoc())
             << "NVPTX target unavailable for chip '" << chip << "'";
    FailureOr<SmallString<0>> ptx = translateModuleToISA(
        llvmModule, **machine,
        [&]() { return mlir::emitError(getOperation().getLoc()); });
    if (failed(ptx))
      return failure();
    return SmallVector<char, 0>(ptx->begin(), ptx->end());
  }
};

constexpr const char *kNVPTXTriple = "nvptx64-nvidia-cuda";

/// The lowest PTX ISA version (major * 10 + minor) that LLVM 22's NVPTX
/// backend accepts for each chip attn can target (sm_80 and newer): the
/// `PTXVersion` of each processor in llvm/lib/Target/NVPTX/NVPTX.td, as
/// `llc -mcpu=<chip> -mattr=+ptx<NN>` confirms. 0 for a chip not listed:
/// every other chip LLVM 22 knows is older than sm_80.
int minimumPTXVersion(StringRef chip) {
  return llvm::StringSwitch<int>(chip)
      .Case("sm_80", 70)
      .Case("sm_86", 71)
      .Case("sm_87", 74)
      .Case("sm_88", 90)
      .Case("sm_89", 78)
      .Case("sm_90", 78)
      .Case("sm_90a", 80)
      .Cases({"sm_100", "sm_100a", "sm_101", "sm_101a"}, 86)
      .Cases({"sm_100f", "sm_101f", "sm_103", "sm_103a", "sm_103f"}, 88)
      .Cases({"sm_110", "sm_110a", "sm_110f"}, 90)
      .Cases({"sm_120", "sm_120a"}, 87)
      .Cases({"sm_120f", "sm_121", "sm_121a", "sm_121f"}, 88)
      .Default(0);
}

/// The kernels were validated with PTX ISA 8.0, and wgmma needs it on
/// sm_90a: no chip gets an older one.
constexpr int kLowestPTXVersion = 80;

/// The PTX ISA version that `features` names ("+ptx86" -> 86; the last one
/// if several), or 0.
int ptxVersionIn(StringRef features) {
  int version = 0;
  SmallVector<StringRef> parts;
  features.split(parts, ',', -1, /*KeepEmpty=*/false);
  for (StringRef part : parts) {
    part = part.trim();
    int number;
    if (part.consume_front("+ptx") && !part.getAsInteger(10, number))
      version = number;
  }
  return version;
}

std::string versionText(int version) {
  return std::to_string(version / 10) + "." + std::to_string(version % 10);
}

/// Whether LLVM's NVPTX backend knows `chip` (asked of a subtarget for a
/// known chip: one for an unknown chip would print a warning).
bool isNVPTXChip(StringRef chip) {
  std::string error;
  llvm::Triple triple(kNVPTXTriple);
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return false;
  std::unique_ptr<llvm::MCSubtargetInfo> info(
      target->createMCSubtargetInfo(triple, "sm_80", ""));
  return info && info->isCPUStringValid(chip);
}

/// The chips that `op` runs on, where LLVM's NVPTX backend would end the
/// process ("Cannot select") on any other: MLIR's RequiresSM of NVVM ops
/// (wgmma: sm_90a), and fence.proxy.async, which MLIR 22 leaves unmarked
/// (sm_90 and newer, PTX ISA "fence.proxy").
std::optional<NVVM::NVVMCheckSMVersion> requiredChips(Operation *op) {
  if (auto needs = dyn_cast<NVVM::RequiresSMInterface>(op))
    return needs.getRequiredMinSMVersion();
  if (auto fence = dyn_cast<NVVM::FenceProxyOp>(op))
    if (fence.getKind() == NVVM::ProxyKind::async ||
        fence.getKind() == NVVM::ProxyKind::async_global ||
        fence.getKind() == NVVM::ProxyKind::async_shared)
      return NVVM::NVVMCheckSMVersion(/*archAccelerated=*/false, 90);
  return std::nullopt;
}

/// Fails with a diagnostic on the first op of `gpuModule` that `chip` cannot
/// run, e.g. a wgmma kernel (configured for sm_90a) emitted for sm_80.
LogicalResult verifyChipRunsOps(Operation *gpuModule, StringRef chip) {
  NVVM::NVVMCheckSMVersion target =
      NVVM::NVVMCheckSMVersion::getTargetSMVersionFromStr(chip);
  WalkResult result = gpuModule->walk([&](Operation *op) {
    std::optional<NVVM::NVVMCheckSMVersion> needs = requiredChips(op);
    if (!needs || needs->isCompatibleWith(target))
      return WalkResult::advance();
    InFlightDiagnostic diag = op->emitOpError("needs ");
    for (auto [i, version] : llvm::enumerate(needs->smVersionList))
      diag << (i ? " or " : "") << "sm_" << version
           << (needs->archAccelerated ? "a" : " or newer");
    diag << ", not " << chip
         << " (was the kernel configured for another chip?)";
    return WalkResult::interrupt();
  });
  return failure(result.wasInterrupted());
}

} // namespace

FailureOr<std::string>
mlir::attn::resolvePTXFeatures(StringRef chip, StringRef features,
                               function_ref<InFlightDiagnostic()> emitError,
                               int needed) {
  initializePTXTarget();
  int minimum = minimumPTXVersion(chip);
  if (minimum == 0 && !isNVPTXChip(chip))
    return emitError() << "unknown NVIDIA chip '" << chip
                       << "' (expected an NVPTX processor such as sm_80 or "
                          "sm_90a)";
  // Known to LLVM but older than the kernels: whatever the features, LLVM
  // would abort selecting their cp.async or ldmatrix.
  if (minimum == 0)
    return emitError() << "chip '" << chip
                       << "' is not supported: attn kernels need sm_"
                       << kMinSmVersion << " or newer";
  if (features == kAutoPTXFeatures)
    return "+ptx" +
           std::to_string(std::max({minimum, kLowestPTXVersion, needed}));
  int asked = ptxVersionIn(features);
  if (minimum != 0 && asked != 0 && asked < minimum)
    return emitError() << "features '" << features << "' ask for PTX ISA "
                       << versionText(asked) << ", but " << chip
                       << " needs PTX ISA " << versionText(minimum)
                       << " or newer (features=auto chooses it)";
  if (asked != 0 && asked < needed)
    return emitError() << "features '" << features << "' ask for PTX ISA "
                       << versionText(asked)
                       << ", but the kernels need PTX ISA "
                       << versionText(needed)
                       << " or newer (features=auto chooses it)";
  if (asked == 0 && needed > minimum)
    return (features.empty() ? "" : features.str() + ",") + "+ptx" +
           std::to_string(needed);
  return features.str();
}

int mlir::attn::requiredPTXVersion(Operation *gpuModule) {
  auto version = gpuModule->getAttrOfType<IntegerAttr>(kMinPTXVersionAttr);
  return version ? static_cast<int>(version.getInt()) : 0;
}

void mlir::attn::initializePTXTarget() {
  static std::once_flag initialized;
  std::call_once(initialized, [] {
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
}

FailureOr<std::string> mlir::attn::serializeToPTX(Operation *gpuModule,
                                                  const PTXTarget &target) {
  FailureOr<std::string> features = resolvePTXFeatures(
      target.chip, target.features,
      [&] { return emitError(gpuModule->getLoc()); },
      requiredPTXVersion(gpuModule));
  if (failed(features) || failed(verifyChipRunsOps(gpuModule, target.chip)))
    return failure();
  PTXTarget resolved = target;
  resolved.features = std::move(*features);
  PTXEmitter emitter(*gpuModule, resolved);
  std::optional<SmallVector<char, 0>> ptx = emitter.run();
  if (!ptx)
    return failure();
  return std::string(ptx->begin(), ptx->end());
}
