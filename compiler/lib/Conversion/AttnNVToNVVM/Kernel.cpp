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

/// The launch position of (tile, head, batch) in a grid of (tiles, heads,
/// ...), x fastest: tile + tiles · (head + heads · batch).
Value launchPosition(OpBuilder &b, Location loc, Value tiles, Value heads,
                     Value tile, Value head, Value batch) {
  Value pair = arith::MulIOp::create(b, loc, heads, batch);
  pair = arith::AddIOp::create(b, loc, head, pair);
  Value linear = arith::MulIOp::create(b, loc, tiles, pair);
  return arith::AddIOp::create(b, loc, tile, linear);
}

/// #attn.config's grid_group_ctas: launch position `linear` of a grid of
/// (tiles, heads, batches) as the (tile, head, batch) of a grid whose groups
/// of `pairs` = max(1, ctas / tiles) (batch, head) pairs run query tile by
/// query tile (the last group may hold fewer).
void groupPairs(OpBuilder &b, Location loc, int64_t ctas, Value linear,
                Value tiles, Value heads, Value batches, Value &tile,
                Value &head, Value &batch) {
  Value one = constIndex(b, loc, 1);
  // all pairs = heads · batches
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
  Value pair = arith::AddIOp::create(b, loc, first, offset);
  head = arith::RemUIOp::create(b, loc, pair, heads);
  batch = arith::DivUIOp::create(b, loc, pair, heads);
}

/// #attn.config's reverse_grid: causal grids start with their last query
/// tiles, which visit the most K/V tiles, so the short ones fill the tail.
Value reversed(OpBuilder &b, Location loc, Value tiles, Value tile) {
  Value last = arith::SubIOp::create(b, loc, tiles, constIndex(b, loc, 1));
  return arith::SubIOp::create(b, loc, last, tile);
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
    if (config && config.getGridGroupCtas() > 0) {
      head = cast(NVVM::BlockIdYOp::create(rewriter, loc, i32));
      batch = cast(NVVM::BlockIdZOp::create(rewriter, loc, i32));
      Value tiles = cast(NVVM::GridDimXOp::create(rewriter, loc, i32));
      Value heads = cast(NVVM::GridDimYOp::create(rewriter, loc, i32));
      Value batches = cast(NVVM::GridDimZOp::create(rewriter, loc, i32));
      Value linear =
          launchPosition(rewriter, loc, tiles, heads, tile, head, batch);
      groupPairs(rewriter, loc, config.getGridGroupCtas(), linear, tiles,
                 heads, batches, tile, head, batch);
    }
    if (config && config.getReverseGrid())
      tile = reversed(rewriter, loc,
                      cast(NVVM::GridDimXOp::create(rewriter, loc, i32)), tile);
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

/// A persistent grid below this many query tiles keeps the query tile
/// fastest rather than its grid group's order. On the H200 (BENCHMARKS
/// version 34) causal D = 128 with every head of a query tile together ran
/// 0.885 / 0.923 x the one-CTA-a-tile grid at 8 / 16 tiles (1k / 2k: the
/// running CTAs read as many heads' K/V, past L2) and 1.045 at 32; with the
/// query tile fastest 1.024 / 1.043 / 1.038, but 0.729 at 64 tiles of 16
/// heads (D = 256, 8k: rounds that drift through the heads' lengths).
constexpr int64_t kGroupedMinTiles = 32;

/// A persistent CTA's work tile: launch position `index` (x fastest) of the
/// grid, renumbered as TileGrid renumbers blockIdx.
struct WorkTile : OpConversionPattern<WorkTileOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(WorkTileOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ConfigAttr config = configOf(op);
    if (!config || !config.getPersistent())
      return op.emitOpError("needs a kernel whose attn.config is persistent "
                            "(its launch covers the grid's work tiles)");
    auto &b = rewriter;
    Location loc = op.getLoc();
    Value tiles = adaptor.getTiles(), heads = adaptor.getHeads();
    Value batches = adaptor.getBatches();
    Value tile = arith::RemUIOp::create(b, loc, adaptor.getIndex(), tiles);
    Value pair = arith::DivUIOp::create(b, loc, adaptor.getIndex(), tiles);
    Value head = arith::RemUIOp::create(b, loc, pair, heads);
    Value batch = arith::DivUIOp::create(b, loc, pair, heads);
    if (config.getGridGroupCtas() > 0) {
      Value gTile, gHead, gBatch;
      groupPairs(b, loc, config.getGridGroupCtas(), adaptor.getIndex(),
                 tiles, heads, batches, gTile, gHead, gBatch);
      // Fewer query tiles than kGroupedMinTiles: the query tile stays
      // fastest (attn_nv.work_tile's description).
      Value few = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::ult, tiles,
          constIndex(b, loc, kGroupedMinTiles));
      tile = arith::SelectOp::create(b, loc, few, tile, gTile);
      head = arith::SelectOp::create(b, loc, few, head, gHead);
      batch = arith::SelectOp::create(b, loc, few, batch, gBatch);
    }
    if (config.getReverseGrid())
      tile = reversed(b, loc, tiles, tile);
    rewriter.replaceOp(op, ValueRange{batch, head, tile});
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
  patterns.add<KernelFunc, KernelReturn, TileGrid, WorkTile, MemRefDim,
               MemRefLoad>(
      converter, patterns.getContext());
}
