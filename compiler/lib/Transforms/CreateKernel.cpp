//===- CreateKernel.cpp - the canonical attention function ----------------===//

#include "attn/Compiler/KernelABI.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/IR/Limits.h"
#include "attn/Transforms/Passes.h"
#include "attn/Transforms/UserMods.h"
#include "attn/Transforms/Variants.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
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

/// The type of a capture-like kernel argument: an i64 / f32 / i32 scalar or
/// a memref of dynamic sizes and strides.
Type abiType(OpBuilder &b, const ::attn::abi::CaptureArg &arg) {
  Type element = arg.element == ::attn::abi::CaptureArg::F32
                     ? Type(b.getF32Type())
                 : arg.element == ::attn::abi::CaptureArg::I32
                     ? Type(b.getI32Type())
                     : Type(b.getI64Type());
  if (arg.rank == 0)
    return element;
  int64_t dyn = ShapedType::kDynamic;
  SmallVector<int64_t> shape(arg.rank, dyn), strides(arg.rank, dyn);
  return MemRefType::get(shape, element,
                         StridedLayoutAttr::get(b.getContext(), dyn, strides));
}

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
                                   << static_cast<int64_t>(headDim)),
             signalPassFailure();
    Type element = llvm::StringSwitch<Type>(dtype)
                       .Case("bf16", BFloat16Type::get(ctx))
                       .Case("f16", Float16Type::get(ctx))
                       .Case("f32", Float32Type::get(ctx))
                       .Case("e4m3", Float8E4M3FNType::get(ctx))
                       .Default(Type());
    if (!element)
      return (void)(emitError(loc) << "dtype must be bf16, f16, f32 or e4m3, "
                                      "got '"
                                   << dtype << "'"),
             signalPassFailure();
    // FP8: e4m3 Q, K, V with descale factors, a bf16 O; the forward only.
    bool fp8 = isa<Float8E4M3FNType>(element);
    if (fp8 && backward)
      return (void)(emitError(loc) << "dtype e4m3 has no backward pass"),
             signalPassFailure();
    std::optional<MaskKind> kind = symbolizeMaskKind(mask);
    if (!kind)
      return (void)(emitError(loc) << "mask must be none, causal or "
                                      "causal_bottom_right, got '"
                                   << mask << "'"),
             signalPassFailure();

    // The arguments of the kernel ABI: tensors with dynamic sizes and
    // strides (unit innermost stride for the rank-4 ones), then the scale.
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    int64_t dyn = ShapedType::kDynamic;
    SmallVector<Type> argTypes;
    ArrayRef<::attn::abi::TensorArg> tensors =
        backward ? ArrayRef(::attn::abi::kBackwardTensors)
                 : ArrayRef(::attn::abi::kForwardTensors);
    if (pageSize != 0 && (backward || !isValidPageSize(pageSize)))
      return (void)(emitError(loc)
                    << "page-size must be 0 or a multiple of "
                    << kPageSizeStep << " in [" << kMinPageSize << ", "
                    << kMaxPageSize << "] (forward only), got "
                    << static_cast<int64_t>(pageSize)),
             signalPassFailure();
    // A paged cache's K and V: (num_pages, Hkv, page_size, D), the page
    // size compiled in; the queries are packed (varlen).
    bool paged = pageSize != 0;
    StringRef keyName = ::attn::abi::kForwardTensors[1].name;
    StringRef valueName = ::attn::abi::kForwardTensors[2].name;
    StringRef outputName = ::attn::abi::kForwardTensors[3].name;
    for (const ::attn::abi::TensorArg &arg : tensors) {
      SmallVector<int64_t> shape(arg.rank, dyn), strides(arg.rank, dyn);
      Type type = Float32Type::get(ctx);
      if (arg.rank == 4) {
        shape.back() = headDim;
        strides.back() = 1;
        // By name, not by pointer: the same literal may have two addresses.
        type = fp8 && arg.name == outputName ? Type(BFloat16Type::get(ctx))
                                             : element;
      }
      if (paged && (arg.name == keyName || arg.name == valueName))
        shape[2] = pageSize;
      argTypes.push_back(MemRefType::get(
          shape, type, StridedLayoutAttr::get(ctx, dyn, strides)));
    }
    static_assert(::attn::abi::kForwardScalarCount == 1,
                  "the scale is the only scalar");
    argTypes.push_back(b.getF32Type());
    unsigned firstDescale = argTypes.size();
    if (fp8)
      argTypes.append(std::size(::attn::abi::kFp8Scalars), b.getF32Type());
    // The atomic backward's dQ accumulator, shaped as Q in f32.
    unsigned dqAccumArg = argTypes.size();
    if (backward && !deterministic) {
      static_assert(std::size(::attn::abi::kAtomicBackwardArgs) == 1 &&
                        ::attn::abi::kAtomicBackwardArgs[0].rank == 4,
                    "dq_accum is the only argument of the atomic backward");
      SmallVector<int64_t> shape(4, dyn), strides(4, dyn);
      shape.back() = headDim;
      strides.back() = 1;
      argTypes.push_back(MemRefType::get(
          shape, b.getF32Type(), StridedLayoutAttr::get(ctx, dyn, strides)));
    }
    if ((varlen || paged) && backward)
      return (void)(emitError(loc) << "the backward pass of a variable-length "
                                      "batch is not supported"),
             signalPassFailure();
    // A packed batch's offsets and query-length bound, then the variants'
    // capture arguments.
    unsigned firstVarlen = argTypes.size();
    if (paged)
      for (const ::attn::abi::CaptureArg &arg : ::attn::abi::kPagedArgs)
        argTypes.push_back(abiType(b, arg));
    else if (varlen)
      for (const ::attn::abi::CaptureArg &arg : ::attn::abi::kVarlenArgs)
        argTypes.push_back(abiType(b, arg));
    if (split && backward)
      return (void)(emitError(loc) << "split-KV is a forward-pass "
                                      "decomposition; the backward pass "
                                      "has none"),
             signalPassFailure();
    // Split-KV's count and its partials' workspaces (the partial outputs
    // with the value head dim, like O).
    unsigned firstSplit = argTypes.size();
    if (split)
      for (const ::attn::abi::CaptureArg &arg : ::attn::abi::kSplitArgs) {
        Type type = abiType(b, arg);
        if (arg.rank == 4) {
          SmallVector<int64_t> shape(4, dyn), strides(4, dyn);
          shape.back() = headDim;
          strides.back() = 1;
          type = MemRefType::get(shape, b.getF32Type(),
                                 StridedLayoutAttr::get(ctx, dyn, strides));
        }
        argTypes.push_back(type);
      }
    std::optional<unsigned> variantBits = parseVariants(variants);
    if (!variantBits)
      return (void)(emitError(loc) << "variants must be a comma-separated "
                                      "list of window, prefix_lm, document, "
                                      "alibi, bias, softcap, got '"
                                   << variants << "'"),
             signalPassFailure();
    if ((*variantBits & ::attn::abi::kPrefixLm) && *kind == MaskKind::None)
      return (void)(emitError(loc) << "the prefix_lm variant needs a causal "
                                      "mask"),
             signalPassFailure();
    unsigned firstCapture = argTypes.size();
    for (const ::attn::abi::CaptureArg &arg : ::attn::abi::kCaptureArgs) {
      if (*variantBits & arg.variant)
        argTypes.push_back(abiType(b, arg));
    }
    // A user's own mods (UserMods.h): their captures follow the named ones.
    std::optional<UserMods> user;
    unsigned firstUserCapture = argTypes.size();
    if (auto text = module->getAttrOfType<StringAttr>(kUserModsAttr)) {
      FailureOr<UserMods> parsed = parseUserMods(text.getValue(), ctx);
      if (failed(parsed))
        return signalPassFailure();
      user = std::move(*parsed);
      argTypes.append(user->captures.begin(), user->captures.end());
    }
    const char *name = backward ? ::attn::abi::kBackwardKernel
                                : ::attn::abi::kForwardKernel;
    auto fn = func::FuncOp::create(b, loc, name,
                                   b.getFunctionType(argTypes, {}));
    fn->setAttr("llvm.emit_c_interface", b.getUnitAttr());
    Block *entry = fn.addEntryBlock();
    b.setInsertionPointToStart(entry);
    auto args = entry->getArguments();
    Value scale = args[tensors.size()];
    auto captures = args.drop_front(firstCapture)
                        .take_front(firstUserCapture - firstCapture);
    auto userCaptures = args.drop_front(firstUserCapture);
    auto attach = [&](auto op) -> LogicalResult {
      op.setPositiveScale(positiveScale);
      buildVariantMods(b, loc, op, *variantBits, captures);
      if (user && failed(attachUserMods(b, op, *user, userCaptures)))
        return failure();
      return success();
    };
    LogicalResult built = success();
    if (backward)
      built = attach(SdpaBackwardOp::create(
          b, loc, args[0], args[1], args[2], args[3], args[4], args[5],
          args[6], args[7], args[8], args[9],
          deterministic ? Value() : Value(args[dqAccumArg]), scale,
          ValueRange(), MaskKindAttr::get(ctx, *kind)));
    else {
      Value cuQ, cuK, maxQ, blockTable, sequsedK;
      auto index = [&](Value v) {
        return arith::IndexCastOp::create(b, loc, b.getIndexType(), v)
            .getResult();
      };
      static_assert(std::size(::attn::abi::kPagedArgs) == 4,
                    "cu_seqlens_q, max_seqlen_q, block_table, seqused_k");
      if (paged) {
        cuQ = args[firstVarlen];
        maxQ = index(args[firstVarlen + 1]);
        blockTable = args[firstVarlen + 2];
        sequsedK = args[firstVarlen + 3];
      } else if (varlen) {
        cuQ = args[firstVarlen];
        cuK = args[firstVarlen + 1];
        maxQ = index(args[firstVarlen + 2]);
      }
      Value numSplits, oPartial, lsePartial;
      if (split) {
        numSplits = arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                               args[firstSplit]);
        oPartial = args[firstSplit + 1];
        lsePartial = args[firstSplit + 2];
      }
      Value descaleQ, descaleK, descaleV;
      static_assert(std::size(::attn::abi::kFp8Scalars) == 3,
                    "q_descale, k_descale, v_descale");
      if (fp8) {
        descaleQ = args[firstDescale];
        descaleK = args[firstDescale + 1];
        descaleV = args[firstDescale + 2];
      }
      built = attach(SdpaOp::create(b, loc, args[0], args[1], args[2], args[3],
                                    args[4], scale, descaleQ, descaleK,
                                    descaleV, cuQ, cuK, maxQ,
                                    ValueRange(), blockTable, sequsedK,
                                    numSplits, oPartial, lsePartial,
                                    MaskKindAttr::get(ctx, *kind)));
    }
    if (failed(built))
      return signalPassFailure();
    func::ReturnOp::create(b, loc);
  }
};

} // namespace
