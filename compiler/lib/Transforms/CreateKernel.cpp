//===- CreateKernel.cpp - the canonical attention function ----------------===//

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNCREATEKERNEL
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

struct AttnCreateKernelPass
    : mlir::attn::impl::AttnCreateKernelBase<AttnCreateKernelPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (headDim == 0 || !module.getOps<func::FuncOp>().empty())
      return;
    MLIRContext *ctx = &getContext();
    Location loc = module.getLoc();
    if (headDim < 0)
      return (void)(emitError(loc) << "head-dim must be positive, got "
                                   << headDim),
             signalPassFailure();
    Type element = llvm::StringSwitch<Type>(dtype)
                       .Case("bf16", BFloat16Type::get(ctx))
                       .Case("f16", Float16Type::get(ctx))
                       .Case("f32", Float32Type::get(ctx))
                       .Default(Type());
    if (!element)
      return (void)(emitError(loc) << "dtype must be bf16, f16 or f32, got '"
                                   << dtype << "'"),
             signalPassFailure();
    std::optional<MaskKind> kind = symbolizeMaskKind(mask);
    if (!kind)
      return (void)(emitError(loc) << "mask must be none, causal or "
                                      "causal_bottom_right, got '"
                                   << mask << "'"),
             signalPassFailure();

    int64_t dyn = ShapedType::kDynamic;
    auto layout4 = StridedLayoutAttr::get(ctx, dyn, {dyn, dyn, dyn, 1});
    auto layout3 = StridedLayoutAttr::get(ctx, dyn, {dyn, dyn, dyn});
    auto tensor4 = MemRefType::get({dyn, dyn, dyn, headDim}, element, layout4);
    auto lse = MemRefType::get({dyn, dyn, dyn}, Float32Type::get(ctx), layout3);
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    auto fn = func::FuncOp::create(
        b, loc, kKernelName,
        b.getFunctionType({tensor4, tensor4, tensor4, tensor4, lse, b.getF32Type()}, {}));
    fn->setAttr("llvm.emit_c_interface", b.getUnitAttr());
    Block *entry = fn.addEntryBlock();
    b.setInsertionPointToStart(entry);
    SdpaOp::create(b, loc, entry->getArgument(0), entry->getArgument(1),
                   entry->getArgument(2), entry->getArgument(3),
                   entry->getArgument(4), entry->getArgument(5),
                   MaskKindAttr::get(ctx, *kind));
    func::ReturnOp::create(b, loc);
  }
};

} // namespace
