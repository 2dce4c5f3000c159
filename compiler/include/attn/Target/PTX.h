//===- PTX.h - the one wrapper of MLIR's serialization to PTX ---*- C++ -*-===//
//
// MLIR's serialization API (ModuleToObject, serializeToObject) changes between
// LLVM versions. attn calls it from this one function only.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TARGET_PTX_H
#define ATTN_TARGET_PTX_H

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
  int optLevel = 3;
};

/// The features to compile for `chip` with: for "auto", "+ptxNN" with the
/// lowest PTX ISA version that LLVM's NVPTX backend accepts for the chip,
/// but never below 8.0 (what the kernels were validated with, and what wgmma
/// needs on sm_90a): sm_80/86/87/89/90/90a get 8.0, sm_100a 8.6, sm_120a
/// 8.7. Other features are returned as they are, after checking that the
/// PTX ISA version they name (if any) supports the chip. Fails with a
/// diagnostic from `emitError` for an unknown chip, a chip older than sm_80
/// (whatever the features) or a version too old for the chip: LLVM would
/// end the process on the last two.
FailureOr<std::string>
resolvePTXFeatures(StringRef chip, StringRef features,
                   function_ref<InFlightDiagnostic()> emitError);

/// Registers the NVPTX target with LLVM (once; serializeToPTX calls it too).
void initializePTXTarget();

/// Translates `gpuModule` (a gpu.module already in the NVVM and LLVM dialects)
/// to LLVM IR, optimises it and runs the NVPTX backend, with the features
/// resolvePTXFeatures gives. Needs no CUDA toolkit:
/// attn kernels call no libdevice function. Errors are emitted on the module,
/// or on the first op the chip cannot run (wgmma emitted for sm_80: LLVM
/// would end the process).
FailureOr<std::string> serializeToPTX(Operation *gpuModule,
                                      const PTXTarget &target);

} // namespace mlir::attn

#endif // ATTN_TARGET_PTX_H
