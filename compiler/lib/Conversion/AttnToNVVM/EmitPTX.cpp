//===- EmitPTX.cpp - gpu.module to PTX in a gpu.binary --------------------===//

#include "attn/Conversion/Passes.h"
#include "attn/Target/PTX.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/ToolOutputFile.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNEMITPTX
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

struct AttnEmitPTXPass : mlir::attn::impl::AttnEmitPTXBase<AttnEmitPTXPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::string all;
    SmallVector<gpu::GPUModuleOp> gpuModules(module.getOps<gpu::GPUModuleOp>());
    for (gpu::GPUModuleOp gpuModule : gpuModules) {
      // The target attribute records the features actually used ("auto"
      // resolved to the chip's PTX ISA version).
      // Diagnostics at the location only: attached to the operation, they
      // would print the whole gpu.module after them.
      FailureOr<std::string> resolved = resolvePTXFeatures(
          chip, features, [&] { return emitError(gpuModule.getLoc()); },
          requiredPTXVersion(gpuModule));
      if (failed(resolved))
        return signalPassFailure();
      PTXTarget target{chip, *resolved, static_cast<int>(optLevel)};
      FailureOr<std::string> ptx = serializeToPTX(gpuModule, target);
      if (failed(ptx))
        return signalPassFailure();
      all += *ptx;
      MLIRContext *ctx = &getContext();
      auto targetAttr = NVVM::NVVMTargetAttr::get(ctx, target.optLevel,
                                                  "nvptx64-nvidia-cuda",
                                                  target.chip, target.features);
      auto object = gpu::ObjectAttr::get(ctx, targetAttr,
                                         gpu::CompilationTarget::Assembly,
                                         StringAttr::get(ctx, *ptx), nullptr,
                                         nullptr);
      OpBuilder b(gpuModule);
      gpu::BinaryOp::create(b, gpuModule.getLoc(), gpuModule.getName(),
                            Attribute(), ArrayRef<Attribute>{object});
      gpuModule.erase();
    }
    if (output.empty())
      return;
    std::string error;
    std::unique_ptr<llvm::ToolOutputFile> file = openOutputFile(output, &error);
    if (!file) {
      emitError(module.getLoc())
          << "cannot write PTX to '" << output << "': " << error;
      return signalPassFailure();
    }
    file->os() << all;
    file->keep();
  }
};

} // namespace
