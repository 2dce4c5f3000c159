//===- PTX.h - the one wrapper of MLIR's serialization to PTX ---*- C++ -*-===//
//
// MLIR's serialization API (ModuleToObject, serializeToObject) changes between
// LLVM versions. attn calls it from this one function only.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TARGET_PTX_H
#define ATTN_TARGET_PTX_H

#include "attn/Dialect/Attn/IR/Limits.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace mlir::attn {

/// Features that make the PTX ISA version follow the chip.
inline constexpr const char *kAutoPTXFeatures = "auto";

struct PTXTarget {
  std::string chip = "sm_90a";
  /// LLVM NVPTX features ("+ptx86"), or "auto": see resolvePTXFeatures.
  std::string features = kAutoPTXFeatures;
  int optLevel = kMaxLlvmOptLevel;
};

/// The gpu.module attribute (i32: PTX ISA major * 10 + minor) by which a
/// lowering records that its inline PTX needs a newer PTX ISA than the
/// chip's lowest (the atomic backward's red.global.add.v2.f32: 8.1).
inline constexpr const char *kMinPTXVersionAttr = "attn.min_ptx_version";

/// The PTX ISA version that `gpuModule`'s kMinPTXVersionAttr asks for, or 0.
int requiredPTXVersion(Operation *gpuModule);

/// The features to compile for `chip` with: for "auto", "+ptxNN" with the
/// lowest PTX ISA version that LLVM's NVPTX backend accepts for the chip,
/// but never below 8.0 (what the kernels were validated with, and what wgmma
/// needs on sm_90a) nor below `needed` (requiredPTXVersion; 0: none):
/// sm_80/86/87/89/90/90a get 8.0, sm_100a 8.6, sm_120a 8.7. Other features
/// are returned as they are (with "+ptxNN" for `needed` added when they name
/// no version and the chip's lowest is older), after checking that the PTX
/// ISA version they name (if any) supports the chip and is at least
/// `needed`. Fails with a diagnostic from `emitError` for an unknown chip, a
/// chip older than sm_80 (whatever the features) or a version too old for
/// the chip or the kernels: LLVM would end the process on the chip's, ptxas
/// reject the kernels' PTX on theirs.
FailureOr<std::string>
resolvePTXFeatures(StringRef chip, StringRef features,
                   function_ref<InFlightDiagnostic()> emitError,
                   int needed = 0);

/// Registers the NVPTX target with LLVM (once; serializeToPTX calls it too).
void initializePTXTarget();

/// Translates `gpuModule` (a gpu.module already in the NVVM and LLVM dialects)
/// to LLVM IR, optimises it and runs the NVPTX backend, with the features
/// resolvePTXFeatures gives (for the module's requiredPTXVersion). Needs no CUDA toolkit:
/// attn kernels call no libdevice function. Errors are emitted on the module,
/// or on the first op the chip cannot run (wgmma emitted for sm_80: LLVM
/// would end the process).
FailureOr<std::string> serializeToPTX(Operation *gpuModule,
                                      const PTXTarget &target);

} // namespace mlir::attn

#endif // ATTN_TARGET_PTX_H
