//===- GridConstants.cpp - tensor maps as grid-constant parameters --------===//

#include "attn/NVIDIA/Passes.h"

#include "attn/Compiler/KernelABI.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::attn::nv {
#define GEN_PASS_DEF_ATTNNVGRIDCONSTANTS
#include "attn/NVIDIA/Passes.h.inc"
} // namespace mlir::attn::nv

using namespace mlir;

namespace {

struct AttnNVGridConstantsPass
    : mlir::attn::nv::impl::AttnNVGridConstantsBase<AttnNVGridConstantsPass> {
  void runOnOperation() override {
    namespace abi = ::attn::abi;
    for (auto fn : getOperation().getOps<LLVM::LLVMFuncOp>()) {
      auto maps = fn->getAttrOfType<IntegerAttr>(abi::kTensorMapsAttr);
      if (!maps)
        continue;
      unsigned args = fn.getNumArguments();
      if (maps.getInt() < 0 || maps.getInt() > args) {
        fn.emitOpError("has ") << maps.getInt() << " tensor maps but "
                               << args << " parameters";
        return signalPassFailure();
      }
      Builder b(fn.getContext());
      auto bytes = LLVM::LLVMArrayType::get(b.getI8Type(), abi::kTensorMapBytes);
      for (unsigned i = args - maps.getInt(); i < args; ++i) {
        if (!isa<LLVM::LLVMPointerType>(fn.getArgument(i).getType())) {
          fn.emitOpError("tensor map parameter #") << i << " is not a pointer";
          return signalPassFailure();
        }
        fn.setArgAttr(i, LLVM::LLVMDialect::getByValAttrName(),
                      TypeAttr::get(bytes));
        fn.setArgAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                      b.getI64IntegerAttr(abi::kTensorMapAlign));
        fn.setArgAttr(i, NVVM::NVVMDialect::getGridConstantAttrName(),
                      b.getUnitAttr());
      }
    }
  }
};

} // namespace
