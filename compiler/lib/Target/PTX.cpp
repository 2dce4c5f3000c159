//===- PTX.cpp - the one wrapper of MLIR's serialization to PTX -----------===//

#include "attn/Target/PTX.h"

#include "mlir/Target/LLVM/ModuleToObject.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Support/TargetSelect.h"

#include <mutex>

using namespace mlir;

namespace {

/// ModuleToObject whose "object" is the PTX text. Unlike the NVVM target's
/// serializer it links no libdevice, so no CUDA toolkit is needed at run time.
class PTXEmitter : public LLVM::ModuleToObject {
public:
  PTXEmitter(Operation &module, const attn::PTXTarget &target)
      : ModuleToObject(module, "nvptx64-nvidia-cuda", target.chip,
                       target.features, target.optLevel) {}

protected:
  FailureOr<SmallVector<char, 0>>
  moduleToObject(llvm::Module &llvmModule) override {
    FailureOr<llvm::TargetMachine *> machine = getOrCreateTargetMachine();
    if (failed(machine))
      return getOperation().emitError()
             << "NVPTX target unavailable for chip '" << chip << "'";
    // LLVM only warns about an unknown processor and then aborts in
    // instruction selection: refuse it here with a diagnostic.
    if (!(*machine)->getMCSubtargetInfo()->isCPUStringValid(chip))
      return getOperation().emitError()
             << "unknown NVIDIA chip '" << chip
             << "' (expected an NVPTX processor such as sm_80 or sm_90a)";
    FailureOr<SmallString<0>> ptx = translateModuleToISA(
        llvmModule, **machine,
        [&]() { return getOperation().emitError(); });
    if (failed(ptx))
      return failure();
    return SmallVector<char, 0>(ptx->begin(), ptx->end());
  }
};

} // namespace

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
  initializePTXTarget();
  PTXEmitter emitter(*gpuModule, target);
  std::optional<SmallVector<char, 0>> ptx = emitter.run();
  if (!ptx)
    return failure();
  return std::string(ptx->begin(), ptx->end());
}
