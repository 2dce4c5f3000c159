//===- ConvertAttnNVToNVVM.cpp - the pass, types and shared helpers -------===//

#include "Patterns.h"

#include "attn/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"

#include "llvm/Support/FormatVariadic.h"

namespace mlir::attn {
#define GEN_PASS_DEF_CONVERTATTNNVTONVVM
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::nv;

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

TileTypeConverter::TileTypeConverter(MLIRContext *ctx) {
  addConversion([](Type t) { return t; });
  // A register tile: the values one thread holds.
  addConversion([](RankedTensorType t, SmallVectorImpl<Type> &results)
                    -> std::optional<LogicalResult> {
    std::optional<DistributedTile> tile = DistributedTile::get(t);
    if (!tile)
      return std::nullopt;
    Type element = t.getElementType();
    if (tile->kind() == DistributedTile::Kind::OperandA)
      element = element.isF16() ? Type(VectorType::get({2}, element))
                                : Type(IntegerType::get(t.getContext(), 32));
    results.append(tile->valuesPerThread(), element);
    return success();
  });
  // A shared-memory buffer: its byte offset from the aligned base.
  addConversion(
      [](SmemType t) -> Type { return IntegerType::get(t.getContext(), 32); });
  // Barriers too: the first one's byte offset.
  addConversion([](BarriersType t) -> Type {
    return IntegerType::get(t.getContext(), 32);
  });
  // A kernel argument: pointer, sizes, strides (attn/Compiler/KernelABI.h).
  addConversion(
      [](MemRefType t,
         SmallVectorImpl<Type> &results) -> std::optional<LogicalResult> {
        MLIRContext *c = t.getContext();
        results.push_back(LLVM::LLVMPointerType::get(c, 1));
        results.append(2 * t.getRank(), IntegerType::get(c, 64));
        return success();
      });
}

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

ConfigAttr mlir::attn::nv::configOf(Operation *op) {
  return ConfigAttr::lookup(op);
}

GlobalTensor::GlobalTensor(ValueRange params, MemRefType type)
    : ptr(params[0]), strides(params.drop_front(1 + type.getRank())),
      elementBytes(type.getElementType().getIntOrFloatBitWidth() / 8) {}

Value GlobalTensor::rowElements(OpBuilder &b, Location loc, Value batch,
                                Value head, Value row) const {
  auto term = [&](Value i, int dim) {
    Value stride =
        arith::IndexCastOp::create(b, loc, b.getIndexType(), strides[dim]);
    return arith::MulIOp::create(b, loc, i, stride).getResult();
  };
  // One statement per term: the IR's order does not depend on the order in
  // which the C++ compiler evaluates arguments.
  Value elements = term(batch, 0);
  elements = arith::AddIOp::create(b, loc, elements, term(head, 1));
  return arith::AddIOp::create(b, loc, elements, term(row, 2));
}

Value GlobalTensor::address(OpBuilder &b, Location loc, Value elements,
                            Value extraBytes) const {
  Value bytes =
      arith::MulIOp::create(b, loc, elements, constIndex(b, loc, elementBytes));
  if (extraBytes)
    bytes = arith::AddIOp::create(b, loc, bytes, extraBytes);
  bytes = arith::IndexCastOp::create(b, loc, b.getI64Type(), bytes);
  return LLVM::GEPOp::create(b, loc, ptr.getType(), b.getI8Type(), ptr,
                             ValueRange{bytes});
}

Value mlir::attn::nv::threadId(OpBuilder &b, Location loc) {
  return NVVM::ThreadIdXOp::create(b, loc, b.getI32Type());
}

SharedBase SharedBase::get(OpBuilder &b, Location loc, Operation *inKernel) {
  auto ptrType = LLVM::LLVMPointerType::get(b.getContext(), 3);
  SharedBase s;
  s.ptr = LLVM::AddressOfOp::create(b, loc, ptrType, kSharedMemoryName);
  s.address = LLVM::PtrToIntOp::create(b, loc, b.getI32Type(), s.ptr);
  ConfigAttr config = configOf(inKernel);
  if (config && config.isWgmma()) {
    // The swizzle pattern follows address bits, so swizzled tiles need a
    // 1024-byte-aligned base, which dynamic shared memory does not promise
    // (attn-nv-allocate-shared reserves the slack).
    Value alignMask = constI32(b, loc, 1023);
    Value negated =
        arith::SubIOp::create(b, loc, constI32(b, loc, 0), s.address);
    Value pad = arith::AndIOp::create(b, loc, negated, alignMask);
    s.ptr = LLVM::GEPOp::create(b, loc, ptrType, b.getI8Type(), s.ptr,
                                ValueRange{pad});
    s.address = arith::AddIOp::create(b, loc, s.address, pad);
  }
  return s;
}

Value SharedBase::at(OpBuilder &b, Location loc, Value offset) const {
  return LLVM::GEPOp::create(b, loc, ptr.getType(), b.getI8Type(), ptr,
                             ValueRange{offset});
}

SmallVector<Value> mlir::attn::nv::ldmatrix(OpBuilder &b, Location loc,
                                            const SharedBase &smem,
                                            Value offset, int num,
                                            bool transpose, Type element) {
  Type i32 = b.getI32Type();
  SmallVector<Type> fields(num, i32);
  Type resType =
      num == 1 ? i32 : LLVM::LLVMStructType::getLiteral(b.getContext(), fields);
  Value res = NVVM::LdMatrixOp::create(
      b, loc, resType, smem.at(b, loc, offset), num,
      transpose ? NVVM::MMALayout::col : NVVM::MMALayout::row,
      NVVM::LdStMatrixShapeAttr::get(b.getContext(), 8, 8),
      NVVM::LdStMatrixEltType::B16);
  SmallVector<Value> regs;
  for (int i = 0; i < num; ++i) {
    Value r = num == 1 ? res : LLVM::ExtractValueOp::create(b, loc, res, i);
    if (element.isF16())
      r = LLVM::BitcastOp::create(b, loc, VectorType::get({2}, b.getF16Type()),
                                  r);
    regs.push_back(r);
  }
  return regs;
}

Value mlir::attn::nv::shuffleXor(OpBuilder &b, Location loc, Value v,
                                 int mask) {
  Value clamp = constI32(b, loc, 0x1f);
  Value laneMask = constI32(b, loc, mask);
  Value allLanes = constI32(b, loc, -1);
  return NVVM::ShflOp::create(b, loc, v.getType(), allLanes, v, laneMask, clamp,
                              NVVM::ShflKind::bfly, UnitAttr());
}

Value mlir::attn::nv::vectorPair(OpBuilder &b, Location loc, Value lo,
                                 Value hi) {
  auto pair = VectorType::get({2}, lo.getType());
  Value v = LLVM::PoisonOp::create(b, loc, pair);
  v = LLVM::InsertElementOp::create(b, loc, v, lo, constI32(b, loc, 0));
  return LLVM::InsertElementOp::create(b, loc, v, hi, constI32(b, loc, 1));
}

void mlir::attn::nv::fenceForAsyncProxy(OpBuilder &b, Location loc) {
  NVVM::FenceProxyOp::create(
      b, loc, NVVM::ProxyKind::async_shared,
      NVVM::SharedSpaceAttr::get(b.getContext(),
                                 NVVM::SharedSpace::shared_cta));
}

Value mlir::attn::nv::packPair(OpBuilder &b, Location loc, Value lo, Value hi,
                               Type element) {
  Type from = lo.getType();
  Value v = vectorPair(b, loc, lo, hi);
  auto halves = VectorType::get({2}, element);
  if (from != element)
    v = LLVM::FPTruncOp::create(b, loc, halves, v); // cvt.rn.{bf16,f16}x2
  if (element.isF16())
    return v; // mma takes f16 operands as vector<2xf16>
  return LLVM::BitcastOp::create(b, loc, b.getI32Type(), v);
}

LLVM::InlineAsmOp Ptx::emit(OpBuilder &b, Location loc, Type result,
                            ValueRange operands, StringRef text,
                            StringRef constraints) {
  return LLVM::InlineAsmOp::create(
      b, loc, result, operands, text, constraints, /*has_side_effects=*/true,
      /*is_align_stack=*/false, LLVM::tailcallkind::TailCallKind::None,
      LLVM::AsmDialectAttr(), ArrayAttr());
}

SmallVector<Value> Ptx::through(OpBuilder &b, Location loc, StringRef text,
                                ValueRange values) {
  std::string constraints;
  SmallVector<Type> types;
  SmallVector<Value> operands;
  for (Value v : values) {
    if (!v.getType().isF32() && v.getType() != b.getI32Type())
      v = LLVM::BitcastOp::create(b, loc, b.getI32Type(), v);
    operands.push_back(v);
    types.push_back(v.getType());
    constraints += v.getType().isF32() ? "=f," : "=r,";
  }
  for (size_t i = 0; i < operands.size(); ++i)
    constraints += std::to_string(i) + (i + 1 < operands.size() ? "," : "");
  auto resType = LLVM::LLVMStructType::getLiteral(b.getContext(), types);
  auto asmOp = emit(b, loc, resType, operands, text, constraints);
  SmallVector<Value> out;
  for (auto [i, v] : llvm::enumerate(values)) {
    Value r = LLVM::ExtractValueOp::create(b, loc, asmOp.getRes(), i);
    if (r.getType() != v.getType())
      r = LLVM::BitcastOp::create(b, loc, v.getType(), r);
    out.push_back(r);
  }
  return out;
}

SmallVector<Value> mlir::attn::nv::flatten(ArrayRef<ValueRange> values) {
  SmallVector<Value> out;
  for (ValueRange r : values)
    llvm::append_range(out, r);
  return out;
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace {

bool isTile(Type t) {
  if (isa<SmemType, BarriersType>(t))
    return true;
  auto tensor = dyn_cast<RankedTensorType>(t);
  return tensor && tensor.getEncoding();
}

struct ConvertAttnNVToNVVMPass
    : mlir::attn::impl::ConvertAttnNVToNVVMBase<ConvertAttnNVToNVVMPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    // NVIDIA kernels move into one gpu.module with the shared array.
    SmallVector<func::FuncOp> kernels;
    for (auto fn : module.getOps<func::FuncOp>())
      if (auto config =
              fn->getAttrOfType<ConfigAttr>(ConfigAttr::getAttrName());
          config && !config.isHost())
        kernels.push_back(fn);
    if (!kernels.empty()) {
      OpBuilder b(ctx);
      b.setInsertionPointToEnd(module.getBody());
      auto gpuModule =
          gpu::GPUModuleOp::create(b, module.getLoc(), "attn_kernels");
      module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                      b.getUnitAttr());
      b.setInsertionPointToStart(gpuModule.getBody());
      LLVM::GlobalOp::create(
          b, module.getLoc(), LLVM::LLVMArrayType::get(b.getI8Type(), 0),
          /*isConstant=*/false, LLVM::Linkage::External, kSharedMemoryName,
          Attribute(), /*alignment=*/1024, /*addrSpace=*/3);
      for (func::FuncOp fn : kernels)
        fn->moveBefore(gpuModule.getBody(), gpuModule.getBody()->end());
    }

    TileTypeConverter converter(ctx);
    RewritePatternSet patterns(ctx);
    ConversionTarget target(*ctx);
    populateKernelPatterns(converter, patterns);
    populateElementwisePatterns(converter, patterns);
    populateReducePatterns(converter, patterns);
    populateMmaSyncPatterns(converter, patterns);
    populateWgmmaPatterns(converter, patterns);
    populateCopyPatterns(converter, patterns);
    populateTmaPatterns(converter, patterns);
    populateTableCopyPatterns(converter, patterns);
    populateWarpSpecializePatterns(converter, patterns);
    populateGlobalAccessPatterns(converter, patterns);
    populateMathPatterns(converter, patterns);
    scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns,
                                                         target);
    target.addIllegalDialect<AttnDialect, AttnNVDialect>();
    target.addLegalDialect<LLVM::LLVMDialect, NVVM::NVVMDialect,
                           gpu::GPUDialect>();
    target.addDynamicallyLegalDialect<arith::ArithDialect>([](Operation *op) {
      return llvm::none_of(op->getResultTypes(), isTile);
    });
    // Inside kernels only: a host function keeps its math.
    target.addDynamicallyLegalOp<math::Exp2Op, math::Log2Op, math::TanhOp,
                                 arith::MaxNumFOp, memref::LoadOp>(
        [](Operation *op) { return !op->getParentOfType<gpu::GPUModuleOp>(); });
    target.addDynamicallyLegalOp<func::FuncOp>([](func::FuncOp fn) {
      auto config = fn->getAttrOfType<ConfigAttr>(ConfigAttr::getAttrName());
      return !config || config.isHost();
    });
    target.addDynamicallyLegalOp<func::ReturnOp>([](func::ReturnOp op) {
      return !op->getParentOfType<gpu::GPUModuleOp>();
    });
    target.addDynamicallyLegalOp<memref::DimOp>([](memref::DimOp op) {
      return !op->getParentOfType<gpu::GPUModuleOp>();
    });
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
