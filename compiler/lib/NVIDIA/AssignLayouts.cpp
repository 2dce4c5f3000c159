//===- AssignLayouts.cpp - tiles onto registers and shared memory ---------===//

#include "attn/NVIDIA/Passes.h"

#include "RegisterBound.h"

#include "attn/Compiler/TilePolicy.h"
#include "attn/Dialect/AttnNV/IR/Layouts.h"

#include "mlir/IR/Matchers.h"

namespace mlir::attn::nv {
#define GEN_PASS_DEF_ATTNNVASSIGNLAYOUTS
#include "attn/NVIDIA/Passes.h.inc"
} // namespace mlir::attn::nv

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::nv;

namespace {

/// Orders this thread's completed cp.async writes (generic proxy) before
/// wgmma's reads of shared memory (async proxy).
void fenceForTensorCores(OpBuilder &b, Location loc) {
  NVVM::FenceProxyOp::create(
      b, loc, NVVM::ProxyKind::async_shared,
      NVVM::SharedSpaceAttr::get(b.getContext(),
                                 NVVM::SharedSpace::shared_cta));
}

struct Assigner {
  Assigner(ConfigAttr config, TileGridOp grid) : config(config), grid(grid) {}

  ConfigAttr config;
  TileGridOp grid;
  /// Loaded tiles that now live in shared memory, and (q_in_registers) the
  /// register fragments read from them.
  DenseMap<Value, Value> shared, registers;
  /// Those of them staged transposed (stagesTransposed).
  DenseSet<Value> transposed;

  MLIRContext *ctx() { return grid.getContext(); }

  /// Row tiles as the rows of the accumulator, 1xC tiles (broadcast along
  /// rows) as its columns, every other tile as the accumulator.
  RankedTensorType withLayout(RankedTensorType t) {
    int64_t warps = config.getWarps();
    Attribute layout =
        t.getRank() == 1 ? Attribute(RowsLayoutAttr::get(ctx(), warps))
        : t.getDimSize(0) == 1 && t.getDimSize(1) % 8 == 0
            ? Attribute(ColsLayoutAttr::get(ctx(), warps))
            : Attribute(AccLayoutAttr::get(ctx(), warps));
    return RankedTensorType::get(t.getShape(), t.getElementType(), layout);
  }

  LogicalResult stageLoads();
  void retype();
  LogicalResult lowerMatmuls();
};

/// Whether `load` is the K×N rhs of a product of 8-bit tiles (FP8 P·V's
/// V): wgmma reads 8-bit operands K-major only, so its buffer holds the
/// tile's transpose (N×K) and the product reads it as transpose_rhs.
bool stagesTransposed(LoadTileOp load) {
  auto type = cast<RankedTensorType>(load.getType());
  if (type.getElementType().getIntOrFloatBitWidth() != 8)
    return false;
  return llvm::any_of(load->getUses(), [](OpOperand &use) {
    auto product = dyn_cast<MatmulOp>(use.getOwner());
    return product && use.get() == product.getRhs() &&
           !product.getTransposeRhs();
  });
}

/// Each tile loaded for products goes through a shared-memory buffer:
/// copied, waited for and fenced at once (attn-nv-pipeline-copies overlaps
/// the copies with the math later). A tile (or row terms) read otherwise is
/// loaded into registers in its layout, by a load of its own.
LogicalResult Assigner::stageLoads() {
  SharedLayout layout =
      config.isWgmma() ? SharedLayout::Swizzle128B : SharedLayout::Padded;
  OpBuilder allocs(&grid.getBodyBlock(), grid.getBodyBlock().begin());
  SmallVector<LoadTileOp> loads;
  grid.walk([&](LoadTileOp op) { loads.push_back(op); });
  DenseSet<Operation *> loopsWithCopies;
  for (LoadTileOp load : loads) {
    bool products = false, elementwise = false;
    for (OpOperand &use : load->getUses())
      (isa<MatmulOp>(use.getOwner()) ? products : elementwise) = true;
    if (elementwise && products) {
      OpBuilder b(load);
      Operation *registers = b.clone(*load);
      load->getResult(0).replaceUsesWithIf(
          registers->getResult(0),
          [](OpOperand &use) { return !isa<MatmulOp>(use.getOwner()); });
    }
    if (!products)
      continue;
    auto type = cast<RankedTensorType>(load.getType());
    bool transpose = stagesTransposed(load);
    if (transpose && !config.isWgmma())
      return load.emitOpError("an 8-bit tile is multiplied on wgmma only "
                              "(sm_90a)");
    SmallVector<int64_t> shape(type.getShape());
    if (transpose)
      std::swap(shape[0], shape[1]);
    auto smemType =
        SmemType::get(ctx(), shape, type.getElementType(), layout);
    Location loc = load.getLoc();
    Value buffer = AllocSharedOp::create(allocs, loc, smemType, IntegerAttr());
    OpBuilder b(load);
    CopyAsyncOp::create(b, loc, load.getSource(), load.getBatch(),
                        load.getHead(), load.getRow(), load.getBound(),
                        load.getRowsPerHead(), buffer, load.getPages(),
                        load.getStart(), transpose);
    if (transpose)
      transposed.insert(load);
    NVVM::CpAsyncCommitGroupOp::create(b, loc);
    NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);
    if (config.isWgmma())
      fenceForTensorCores(b, loc);
    NVVM::Barrier0Op::create(b, loc);
    shared[load] = buffer;
    // Reusing the buffer in the next iteration waits for every warp.
    if (auto loop = dyn_cast<scf::ForOp>(load->getParentOp());
        loop && loopsWithCopies.insert(loop).second) {
      OpBuilder end(loop.getBody()->getTerminator());
      NVVM::Barrier0Op::create(end, loc);
    }
    bool isQuery = llvm::any_of(load->getUses(), [](OpOperand &use) {
      return use.getOperandNumber() == 0;
    });
    if (config.getQInRegisters() && isQuery &&
        !isa<scf::ForOp>(load->getParentOp())) {
      auto regs = RankedTensorType::get(
          type.getShape(), type.getElementType(),
          OperandALayoutAttr::get(ctx(), config.getWarps()));
      registers[load] = LoadOperandOp::create(b, loc, regs, buffer);
    }
  }
  return success();
}

/// Every other tile of the kernel (constants may sit outside the grid):
/// rows of the accumulator layout, or the accumulator layout itself.
void Assigner::retype() {
  auto update = [&](Value v) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (!t || t.getEncoding() || shared.count(v))
      return;
    v.setType(withLayout(t));
  };
  Operation *kernel = grid->getParentOp();
  kernel->walk([&](Operation *op) {
    if (op == kernel)
      return;
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          update(arg);
    for (Value result : op->getResults())
      update(result);
    if (auto cst = dyn_cast<arith::ConstantOp>(op))
      if (auto dense = dyn_cast<DenseElementsAttr>(cst.getValue());
          dense && dense.getType() != cst.getType())
        cst.setValueAttr(dense.reshape(cast<ShapedType>(cst.getType())));
  });
}

/// The f32 tile that `lhs` only rounds to 16 bits (a map of one truncf),
/// or `lhs`: the ops that consume it round pairs themselves.
Value unrounded(Value lhs) {
  auto map = lhs.getDefiningOp<MapOp>();
  if (!map)
    return lhs;
  Block &body = map.getBodyBlock();
  auto trunc = dyn_cast<arith::TruncFOp>(&body.front());
  if (map.getInputs().size() == 1 && trunc &&
      trunc.getIn() == map.getInputArg(0) &&
      map.getYielded() == trunc.getResult() &&
      cast<RankedTensorType>(map.getInputs()[0].getType())
          .getElementType()
          .isF32())
    return map.getInputs()[0];
  return lhs;
}

/// The register lhs of a product as A fragments: a map that only rounds an
/// f32 tile to 16 bits is folded into the conversion, which rounds pairs.
Value toOperandA(OpBuilder &b, Location loc, Value lhs, int64_t warps) {
  auto type = cast<RankedTensorType>(lhs.getType());
  auto result = RankedTensorType::get(
      type.getShape(), type.getElementType(),
      OperandALayoutAttr::get(b.getContext(), warps));
  return ConvertLayoutOp::create(b, loc, result, unrounded(lhs));
}

/// The register lhs of a transpose_lhs product (the backward's dSᵀ, K×M)
/// written once to a shared buffer of its own, which wgmma reads MN-major:
/// a barrier first (every warp's product of the tile before has read the
/// buffer: each waited for it), then the proxy fence and a barrier (wgmma
/// reads what every thread wrote).
Value toSharedLhs(OpBuilder &allocs, OpBuilder &b, Location loc, Value lhs) {
  auto type = cast<RankedTensorType>(lhs.getType());
  auto smemType =
      SmemType::get(b.getContext(), type.getShape(), type.getElementType(),
                    SharedLayout::Swizzle128B);
  Value buffer = AllocSharedOp::create(allocs, loc, smemType, IntegerAttr());
  NVVM::Barrier0Op::create(b, loc);
  StoreSharedOp::create(b, loc, unrounded(lhs), buffer);
  fenceForTensorCores(b, loc);
  NVVM::Barrier0Op::create(b, loc);
  return buffer;
}

/// The accumulator type of a transpose_lhs product ((dSᵀ)ᵀ K, the atomic
/// backward's dQ part) whose 64 rows are fewer than the CTA's warpgroups
/// hold: the warpgroups split its columns instead (`col_groups`, one
/// warpgroup a group), each the product for its own 64-column blocks of K,
/// FlashAttention-3's split of dQ over the head dim -- where the tile
/// policy allows it (splitsDqOverHeadDim). Null otherwise.
RankedTensorType columnGroupsType(MatmulOp op, int64_t warps) {
  auto type = cast<RankedTensorType>(op.getAcc().getType());
  if (!::attn::compiler::splitsDqOverHeadDim(type.getDimSize(0), warps,
                                             type.getDimSize(1)))
    return {};
  return RankedTensorType::get(
      type.getShape(), type.getElementType(),
      AccLayoutAttr::get(op.getContext(), warps, warps / 4));
}

LogicalResult Assigner::lowerMatmuls() {
  SmallVector<MatmulOp> matmuls;
  grid.walk([&](MatmulOp op) { matmuls.push_back(op); });
  OpBuilder allocs(&grid.getBodyBlock(), grid.getBodyBlock().begin());
  // A loop bound by registers advances its products' descriptors in the
  // PTX: as LLVM arithmetic on loop-invariant descriptors, LICM hoisted
  // every k step's out of the loop, 2 registers each (32 for K and V at
  // D = 128 beside dK and dV: 68 bytes spilled, the atomic form 260; at
  // D = 256 the dQ kernel used 255 registers and spilled 20 bytes causal,
  // 218 without them). The forward's hoisted Q descriptors cost no spill,
  // and in the PTX they made a packed-GQA split kernel spill
  // (ptxas-pack-gqa-varlen.test).
  bool advanceInPtx =
      loopBoundByRegisters(grid->getParentOfType<FunctionOpInterface>());
  for (MatmulOp op : matmuls) {
    bool transposeLhs = op.getTransposeLhs();
    if (transposeLhs && !config.isWgmma())
      return op.emitOpError("with transpose_lhs is mapped on wgmma only "
                            "(sm_90a, an MN-major A from shared memory); "
                            "mma.sync has no such operand");
    if (transposeLhs && (shared.count(op.getLhs()) || op.getTransposeRhs()))
      return op.emitOpError("with transpose_lhs takes a register lhs and a "
                            "K×N rhs on the NVIDIA mapping");
    OpBuilder b(op);
    Location loc = op.getLoc();
    Value lhs = op.getLhs(), rhs = op.getRhs();
    if (transposeLhs)
      lhs = toSharedLhs(allocs, b, loc, lhs);
    else if (Value regs = registers.lookup(lhs))
      lhs = regs;
    else if (Value smem = shared.lookup(lhs))
      lhs = smem;
    else
      lhs = toOperandA(b, loc, lhs, config.getWarps());
    Value rhsSmem = shared.lookup(rhs);
    if (!rhsSmem)
      return op.emitOpError("rhs must be a tile loaded from memory (the "
                            "NVIDIA mapping reads it from shared memory)");
    Value result;
    if (config.isWgmma()) {
      bool transposeRhs = op.getTransposeRhs() || transposed.count(rhs);
      Value acc = op.getAcc();
      if (RankedTensorType grouped =
              transposeLhs ? columnGroupsType(op, config.getWarps())
                           : RankedTensorType()) {
        // Only a zero start and accumulating stores take the split tile:
        // no other op lowers column groups.
        if (!isZeroTile(acc) ||
            llvm::any_of(op->getUsers(), [](Operation *user) {
              auto store = dyn_cast<StoreTileOp>(user);
              return !store || !store.getAccumulate();
            }))
          return op.emitOpError(
              "with transpose_lhs and fewer rows than the warps hold is "
              "split over the head dim; it must start from zero and feed "
              "accumulating stores only");
        acc = arith::ConstantOp::create(
            b, loc, grouped,
            DenseElementsAttr::get(grouped, b.getF32FloatAttr(0.0f)));
      }
      Value issued =
          WgmmaOp::create(b, loc, acc.getType(), lhs, rhsSmem, acc,
                          transposeRhs, op.getTransposeLhs(), advanceInPtx);
      result = WgmmaWaitOp::create(b, loc, issued.getType(), issued,
                                   b.getI64IntegerAttr(0))
                   .getResult(0);
    } else {
      result = MmaOp::create(b, loc, op.getAcc().getType(), lhs, rhsSmem,
                             op.getAcc(), op.getTransposeRhsAttr());
    }
    op.replaceAllUsesWith(result);
    Value oldLhs = op.getLhs();
    op.erase();
    if (auto map = oldLhs.getDefiningOp<MapOp>(); map && map->use_empty())
      map.erase();
  }
  // Loads for products are now copies.
  SmallVector<Operation *> dead;
  grid.walk([&](LoadTileOp op) {
    if (shared.count(op))
      dead.push_back(op);
  });
  for (Operation *op : dead)
    op->erase();
  return success();
}

struct AttnNVAssignLayoutsPass
    : mlir::attn::nv::impl::AttnNVAssignLayoutsBase<AttnNVAssignLayoutsPass> {
  void runOnOperation() override {
    WalkResult result = getOperation()->walk([&](TileGridOp grid) {
      ConfigAttr config = ConfigAttr::lookup(grid);
      if (!config) {
        grid.emitOpError("has no attn.config: run attn-configure first");
        return WalkResult::interrupt();
      }
      if (config.isHost())
        return WalkResult::advance();
      Assigner a(config, grid);
      if (failed(a.stageLoads()))
        return WalkResult::interrupt();
      a.retype();
      if (failed(a.lowerMatmuls()))
        return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
