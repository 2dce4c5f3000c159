//===- PTX.h - the one wrapper of MLIR's serialization to PTX ---*- C++ -*-===//
//
// MLIR's serialization API (ModuleToObject, serializeToObject) changes between
// LLVM versions. attn calls it from this one function only.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TARGET_PTX_H
#define ATTN_TARGET_PTX_H

#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace mlir::attn {

struct PTXTarget {
  std::string chip = "sm_90a";
  std::string features = "+ptx80";
  int optLevel = 3;
};

/// Registers the NVPTX target with LLVM (once; serializeToPTX calls it too).
void initializePTXTarget();

/// Translates `gpuModule` (a gpu.module already in the NVVM and LLVM dialects)
/// to LLVM IR, optimises it and runs the NVPTX backend. Needs no CUDA toolkit:
/// attn kernels call no libdevice function. Errors are emitted on the module.
FailureOr<std::string> serializeToPTX(Operation *gpuModule,
                                      const PTXTarget &target);

} // namespace mlir::attn

#endif // ATTN_TARGET_PTX_H
