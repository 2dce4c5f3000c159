//===- Kernel.cpp - kernel functions, the grid, memref sizes --------------===//
//
// A function with an NVIDIA #attn.config becomes a gpu.func whose parameters
// are its arguments after type conversion: per memref (pointer, sizes,
// strides), then the scalars -- the kernel ABI of KernelABI.h. The launch
// (threads, query rows per CTA, dynamic shared memory) is recorded on the
// gpu.func itself. attn.tile_grid is the CTA grid: x = query tile,
// y = head, z = batch. A mod's memref.load reads a kernel argument.
//
//===----------------------------------------------------------------------===//

#include "Patterns.h"

#include "attn/Compiler/KernelABI.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::nv;

namespace {

struct KernelFunc : OpConversionPattern<func::FuncOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(func::FuncOp fn, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto config = fn->getAttrOfType<ConfigAttr>(ConfigAttr::getAttrName());
    if (!config || config.isHost())
      return failure();
    if (!fn.getResultTypes().empty())
      return fn.emitOpError("is an attn kernel (it has an NVIDIA attn.config) "
                            "and must return nothing");
    TypeConverter::SignatureConversion signature(fn.getNumArguments());
    for (auto [i, type] : llvm::enumerate(fn.getArgumentTypes())) {
      if (!isa<MemRefType, FloatType, IndexType, IntegerType,
               LLVM::LLVMPointerType>(type))
        return fn.emitOpError("argument #")
               << i << " of type " << type
               << " cannot be a kernel parameter (memrefs, scalars and "
                  "tensor maps only)";
      SmallVector<Type> converted;
      if (failed(getTypeConverter()->convertType(type, converted)))
        return failure();
      signature.addInputs(i, converted);
    }
    auto kernel = gpu::GPUFuncOp::create(
        rewriter, fn.getLoc(), fn.getName(),
        rewriter.getFunctionType(signature.getConvertedTypes(), {}));
    rewriter.eraseBlock(&kernel.getBody().front());
    rewriter.inlineRegionBefore(fn.getBody(), kernel.getBody(),
                                kernel.getBody().end());
    if (!rewriter.applySignatureConversion(&kernel.getBody().front(),
                                           signature, getTypeConverter()))
      return failure();
    kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(),
                    rewriter.getUnitAttr());
    // Tensor maps (pointer arguments, the last ones: KernelABI.h's
    // kTensorMaps) keep their 64-byte alignment; attn-nv-grid-constants
    // makes them grid-constant by-value parameters once they are LLVM's.
    int64_t maps = 0;
    for (auto [i, type] : llvm::enumerate(fn.getArgumentTypes())) {
      if (!isa<LLVM::LLVMPointerType>(type))
        continue;
      if (i + ::attn::abi::kTensorMapCount < fn.getNumArguments())
        return fn.emitOpError("tensor maps (pointer arguments) must be the "
                              "last ")
               << ::attn::abi::kTensorMapCount << " arguments";
      ++maps;
      kernel.setArgAttr(signature.getInputMapping(i)->inputNo,
                        LLVM::LLVMDialect::getAlignAttrName(),
                        rewriter.getI64IntegerAttr(
                            ::attn::abi::kTensorMapAlign));
    }
    if (maps)
      kernel->setAttr(::attn::abi::kTensorMapsAttr,
                      rewriter.getI32IntegerAttr(maps));
    kernel->setAttr(ConfigAttr::getAttrName(), config);
    int32_t threads = static_cast<int32_t>(config.getThreads());
    kernel.setKnownBlockSizeAttr(rewriter.getDenseI32ArrayAttr({threads, 1, 1}));
    // Without a CTAs-per-SM hint ptxas aims at high occupancy and spills
    // the accumulators; the plan says how many CTAs an SM must hold.
    kernel->setAttr("nvvm.minctasm", rewriter.getI32IntegerAttr(
                                         config.getMinCtasPerSm()));
    kernel->setAttr(::attn::abi::kThreadsAttr,
                    rewriter.getI32IntegerAttr(threads));
    // Every grid's CTA owns block_m rows: queries, or keys in a grid over
    // K/V tiles (the backward's dK/dV); split-KV's merge grid (over rows)
    // never packs heads.
    auto over = fn->getAttrOfType<StringAttr>(::attn::abi::kGridAttr);
    bool overRows = over && over.getValue() == ::attn::abi::kGridOverRows;
    if (over)
      kernel->setAttr(::attn::abi::kGridAttr, over);
    kernel->setAttr(::attn::abi::kBlockMAttr,
                    rewriter.getI32IntegerAttr(config.getBlockM()));
    kernel->setAttr(::attn::abi::kPackGqaAttr,
                    rewriter.getI32IntegerAttr(
                        config.getPackGqa() && !overRows ? 1 : 0));
    auto shared = fn->getAttrOfType<IntegerAttr>(::attn::abi::kSharedBytesAttr);
    kernel->setAttr(::attn::abi::kSharedBytesAttr,
                    shared ? shared : rewriter.getI32IntegerAttr(0));
    rewriter.eraseOp(fn);
    return success();
  }
};

struct KernelReturn : OpConversionPattern<func::ReturnOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(func::ReturnOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<gpu::ReturnOp>(op);
    return success();
  }
};

/// #attn.config's grid_group_ctas: the CTA's place in launch order
/// (x fastest) renumbered so that groups of `pairs` = max(1, ctas / tiles)
/// (batch, head) pairs run query tile by query tile (the last group may
/// hold fewer): (tile, head, batch) from blockIdx.x (`tile`), .y and .z.
void groupPairs(OpBuilder &b, Location loc, int64_t ctas, Value &tile,
                Value &head, Value &batch) {
  Type i32 = b.getI32Type(), index = b.getIndexType();
  auto cast = [&](Value v) {
    return arith::IndexCastUIOp::create(b, loc, index, v).getResult();
  };
  head = cast(NVVM::BlockIdYOp::create(b, loc, i32));
  batch = cast(NVVM::BlockIdZOp::create(b, loc, i32));
  Value tiles = cast(NVVM::GridDimXOp::create(b, loc, i32));
  Value heads = cast(NVVM::GridDimYOp::create(b, loc, i32));
  Value batches = cast(NVVM::GridDimZOp::create(b, loc, i32));
  Value one = constIndex(b, loc, 1);
  // linear = x + tiles · (y + heads · z); all pairs = heads · batches
  Value pair = arith::MulIOp::create(b, loc, heads, batch);
  pair = arith::AddIOp::create(b, loc, head, pair);
  Value linear = arith::MulIOp::create(b, loc, tiles, pair);
  linear = arith::AddIOp::create(b, loc, tile, linear);
  Value allPairs = arith::MulIOp::create(b, loc, heads, batches);
  Value perGroup = arith::DivUIOp::create(b, loc, constIndex(b, loc, ctas),
                                          tiles);
  perGroup = arith::MaxUIOp::create(b, loc, perGroup, one);
  Value groupCtas = arith::MulIOp::create(b, loc, perGroup, tiles);
  Value group = arith::DivUIOp::create(b, loc, linear, groupCtas);
  Value first = arith::MulIOp::create(b, loc, group, perGroup);
  Value left = arith::SubIOp::create(b, loc, allPairs, first);
  Value inGroup = arith::MinUIOp::create(b, loc, perGroup, left);
  Value start = arith::MulIOp::create(b, loc, group, groupCtas);
  Value rank = arith::SubIOp::create(b, loc, linear, start);
  tile = arith::DivUIOp::create(b, loc, rank, inGroup);
  Value offset = arith::RemUIOp::create(b, loc, rank, inGroup);
  pair = arith::AddIOp::create(b, loc, first, offset);
  head = arith::RemUIOp::create(b, loc, pair, heads);
  batch = arith::DivUIOp::create(b, loc, pair, heads);
}

/// The grid: each CTA runs the body once for its (batch, head, tile).
struct TileGrid : OpConversionPattern<TileGridOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(TileGridOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type i32 = rewriter.getI32Type(), index = rewriter.getIndexType();
    auto cast = [&](Value v) {
      return arith::IndexCastUIOp::create(rewriter, loc, index, v).getResult();
    };
    Value tile = cast(NVVM::BlockIdXOp::create(rewriter, loc, i32));
    Value head, batch;
    ConfigAttr config = configOf(op);
    if (config && config.getGridGroupCtas() > 0)
      groupPairs(rewriter, loc, config.getGridGroupCtas(), tile, head, batch);
    if (config && config.getReverseGrid()) {
      // Causal: the last query tiles visit the most K/V tiles; starting
      // them first lets the short ones fill the tail of the grid.
      Value tiles = cast(NVVM::GridDimXOp::create(rewriter, loc, i32));
      Value last = arith::SubIOp::create(rewriter, loc, tiles,
                                         constIndex(rewriter, loc, 1));
      tile = arith::SubIOp::create(rewriter, loc, last, tile);
    }
    if (!head) {
      head = cast(NVVM::BlockIdYOp::create(rewriter, loc, i32));
      batch = cast(NVVM::BlockIdZOp::create(rewriter, loc, i32));
    }
    rewriter.inlineBlockBefore(&op.getBodyBlock(), op,
                               ValueRange{batch, head, tile});
    rewriter.eraseOp(op);
    return success();
  }
};

/// A size of a kernel argument: its size parameter.
struct MemRefDim : OpConversionPattern<memref::DimOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(memref::DimOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    std::optional<int64_t> index = op.getConstantIndex();
    ValueRange params = adaptor.getSource();
    auto type = dyn_cast<MemRefType>(op.getSource().getType());
    if (!index || !type || params.size() != size_t(1 + 2 * type.getRank()))
      return op.emitOpError("unsupported in an attn kernel: the dim must "
                            "be a constant of a kernel argument");
    rewriter.replaceOpWithNewOp<arith::IndexCastOp>(
        op, rewriter.getIndexType(), params[1 + *index]);
    return success();
  }
};

/// An element of a kernel argument (a captured memref read by a mod):
/// pointer + sum(index · stride), read through the read-only cache (the
/// kernel never writes captures).
struct MemRefLoad : OpConversionPattern<memref::LoadOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(memref::LoadOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    MemRefType type = op.getMemRefType();
    ValueRange params = adaptor.getMemref();
    if (params.size() != size_t(1 + 2 * type.getRank()))
      return op.emitOpError("unsupported in an attn kernel: the memref must "
                            "be a kernel argument");
    Location loc = op.getLoc();
    Type i64 = rewriter.getI64Type();
    Value offset = LLVM::ConstantOp::create(rewriter, loc, i64,
                                            rewriter.getI64IntegerAttr(0));
    for (auto [i, index] : llvm::enumerate(adaptor.getIndices())) {
      Value idx = arith::IndexCastOp::create(rewriter, loc, i64, index.front());
      Value stride = params[1 + type.getRank() + i];
      offset = LLVM::AddOp::create(
          rewriter, loc, offset, LLVM::MulOp::create(rewriter, loc, idx, stride));
    }
    Type element = type.getElementType();
    if (element.isIndex())
      return op.emitOpError("index memrefs cannot be kernel arguments");
    Value ptr = LLVM::GEPOp::create(rewriter, loc, params[0].getType(),
                                    element, params[0], ValueRange{offset});
    auto load = LLVM::LoadOp::create(
        rewriter, loc, element, ptr,
        element.getIntOrFloatBitWidth() / 8, /*isVolatile=*/false,
        /*isNonTemporal=*/false, /*isInvariant=*/true);
    rewriter.replaceOp(op, load.getResult());
    return success();
  }
};

} // namespace

void mlir::attn::nv::populateKernelPatterns(TileTypeConverter &converter,
                                            RewritePatternSet &patterns) {
  patterns.add<KernelFunc, KernelReturn, TileGrid, MemRefDim, MemRefLoad>(
      converter, patterns.getContext());
}
