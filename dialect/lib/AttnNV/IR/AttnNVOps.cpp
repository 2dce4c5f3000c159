//===- AttnNVOps.cpp - attn_nv operations ----------------------------------===//
//
// Verifiers check what the lowering relies on: layouts of the right kind,
// matching shapes and warps, shared layouts the instruction can read.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/Limits.h"
#include "attn/Dialect/AttnNV/IR/AttnNV.h"
#include "attn/Dialect/AttnNV/IR/Barriers.h"
#include "attn/Dialect/AttnNV/IR/Layouts.h"
#include "attn/Dialect/AttnNV/IR/WarpSpecialize.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::attn::nv;

namespace {

/// The register layout of `value`'s type, if of `kind`.
std::optional<DistributedTile> layoutOf(Value value,
                                        DistributedTile::Kind kind) {
  std::optional<DistributedTile> t = DistributedTile::get(value.getType());
  if (!t || t->kind() != kind)
    return std::nullopt;
  return t;
}

StringRef kindName(DistributedTile::Kind kind) {
  switch (kind) {
  case DistributedTile::Kind::Acc:
    return "#attn_nv.acc";
  case DistributedTile::Kind::Rows:
    return "#attn_nv.rows";
  case DistributedTile::Kind::Cols:
    return "#attn_nv.cols";
  case DistributedTile::Kind::OperandA:
    return "#attn_nv.operand_a";
  }
  return "?";
}

/// Emits "'<name>' must be a tile with layout <kind>, got <type>" unless it
/// is one.
FailureOr<DistributedTile> expectLayout(Operation *op, StringRef name,
                                        Value value,
                                        DistributedTile::Kind kind) {
  if (std::optional<DistributedTile> t = layoutOf(value, kind))
    return *t;
  return op->emitOpError() << "'" << name << "' must be a tile with layout "
                           << kindName(kind) << ", got " << value.getType();
}

LogicalResult expectSmem(Operation *op, StringRef name, Type type,
                         SharedLayout layout, bool orRegisters = false) {
  auto smem = dyn_cast<SmemType>(type);
  if (smem && smem.getRank() == 2 && smem.getLayout() == layout)
    return success();
  return op->emitOpError() << "'" << name << "' must be one "
                           << stringifySharedLayout(layout)
                           << " shared-memory tile"
                           << (orRegisters ? " or an #attn_nv.operand_a tile"
                                           : "")
                           << ", got " << type;
}

Type elementTypeOf(Type type) {
  if (auto smem = dyn_cast<SmemType>(type))
    return smem.getElementType();
  return getElementTypeOrSelf(type);
}

/// (rows, cols) of a register tile or a shared tile.
std::pair<int64_t, int64_t> tileShape(Type type) {
  if (auto smem = dyn_cast<SmemType>(type))
    return {smem.getRows(), smem.getCols()};
  auto t = cast<RankedTensorType>(type);
  return {t.getDimSize(0), t.getDimSize(1)};
}

/// Shapes and warps of lhs · op(rhs) + acc.
LogicalResult verifyProduct(Operation *op, Value lhs, Value rhs, Value acc,
                            bool transposeRhs, bool transposeLhs = false) {
  FailureOr<DistributedTile> out =
      expectLayout(op, "acc", acc, DistributedTile::Kind::Acc);
  if (failed(out))
    return failure();
  if (!out->elementType().isF32())
    return op->emitOpError() << "accumulates in f32, got " << acc.getType();
  auto [l0, l1] = tileShape(lhs.getType());
  int64_t m = transposeLhs ? l1 : l0, k = transposeLhs ? l0 : l1;
  auto [r0, r1] = tileShape(rhs.getType());
  int64_t rk = transposeRhs ? r1 : r0, n = transposeRhs ? r0 : r1;
  // cols() counts one column group's columns.
  int64_t accCols = out->cols() * out->colGroups();
  if (k != rk || m != out->rows() || n != accCols)
    return op->emitOpError()
           << "shapes do not multiply: lhs " << l0 << "x" << l1
           << (transposeLhs ? " (transposed)" : "") << ", rhs "
           << r0 << "x" << r1 << (transposeRhs ? " (transposed)" : "")
           << ", acc " << out->rows() << "x" << accCols;
  if (out->colGroups() != 1 && !isa<WgmmaOp>(op))
    return op->emitOpError() << "splits columns over warpgroups on wgmma "
                                "only, got "
                             << acc.getType();
  if (auto a = layoutOf(lhs, DistributedTile::Kind::OperandA);
      a && a->warps() != out->warps())
    return op->emitOpError() << "lhs is spread over " << a->warps()
                             << " warps but acc over " << out->warps();
  if (elementTypeOf(lhs.getType()) != elementTypeOf(rhs.getType()))
    return op->emitOpError() << "lhs and rhs must have one element type";
  Type element = elementTypeOf(rhs.getType());
  bool e4m3 = isa<Float8E4M3FNType>(element);
  if (element.getIntOrFloatBitWidth() != 16 && !(e4m3 && isa<WgmmaOp>(op)))
    return op->emitOpError() << "multiplies 16-bit tiles (or, on wgmma, "
                                "f8E4M3FN ones), got "
                             << rhs.getType();
  // 8-bit wgmma reads both operands K-major.
  if (e4m3 && (!transposeRhs || transposeLhs))
    return op->emitOpError() << "with 8-bit tiles takes a K-major lhs and "
                                "a K-major (N×K, transpose_rhs) rhs";
  return success();
}

} // namespace

LogicalResult AllocSharedOp::verify() {
  if (std::optional<int64_t> offset = getOffset(); offset && *offset < 0)
    return emitOpError() << "offset must not be negative, got " << *offset;
  return success();
}

LogicalResult SlotOp::verify() {
  auto buffer = cast<SmemType>(getBuffer().getType());
  if (buffer.getRank() != 3)
    return emitOpError() << "needs a staged (S×R×C) buffer, got " << buffer;
  if (getTile().getType() != buffer.getTileType())
    return emitOpError() << "result must be " << buffer.getTileType()
                         << ", got " << getTile().getType();
  return success();
}

LogicalResult CopyAsyncOp::verify() {
  auto src = cast<MemRefType>(getSource().getType());
  auto dest = cast<SmemType>(getDest().getType());
  if (src.getRank() != 4)
    return emitOpError() << "copies tiles of a (B, H, N, D) memref, got rank "
                         << src.getRank();
  if (dest.getRank() != 2)
    return emitOpError() << "copies into one tile, got " << dest;
  if (getStart() && !getRowsPerHead())
    return emitOpError("has a 'start' without 'rows_per_head' (start "
                       "offsets the rows of packed heads)");
  if (src.getElementType() != dest.getElementType())
    return emitOpError() << "source and destination element types differ ("
                         << src.getElementType() << " vs "
                         << dest.getElementType() << ")";
  if (getTransposed() && (getRowsPerHead() || getPages()))
    return emitOpError("transposed copies whole tiles of one head: no "
                       "'rows_per_head' or 'pages'");
  if (getStrided() && (getRowsPerHead() || getPages() || getTransposed()))
    return emitOpError("strided copies whole rows of one head: no "
                       "'rows_per_head', 'pages' or 'transposed'");
  // A transposed tile holds the head dim as its rows.
  int64_t headDim = getTransposed() ? dest.getRows() : dest.getCols();
  if (src.isDynamicDim(3) || src.getDimSize(3) != headDim)
    return emitOpError() << "destination tile has " << headDim
                         << (getTransposed() ? " rows" : " columns")
                         << " but the source rows have "
                         << (src.isDynamicDim(3) ? std::string("?")
                                                 : std::to_string(
                                                       src.getDimSize(3)))
                         << " elements";
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(src.getStridesAndOffset(strides, offset)) || strides.back() != 1)
    return emitOpError() << "source rows must be contiguous (unit innermost "
                            "stride)";
  return success();
}

LogicalResult CopyTableAsyncOp::verify() {
  auto dest = cast<SmemType>(getDest().getType());
  if (dest.getRank() != 2 || !dest.getElementType().isF32())
    return emitOpError() << "copies into one f32 tile, got " << dest;
  return success();
}

LogicalResult LoadSharedOp::verify() {
  auto source = cast<SmemType>(getSource().getType());
  FailureOr<DistributedTile> tile =
      expectLayout(*this, "result", getResult(), DistributedTile::Kind::Acc);
  if (failed(tile))
    return failure();
  if (source.getRank() != 2 || source.getRows() != tile->rows() ||
      source.getCols() != tile->cols() || !source.getElementType().isF32() ||
      !tile->elementType().isF32())
    return emitOpError() << "reads an f32 tile of its shape from one 2-D f32 "
                            "shared tile, got "
                         << source << " -> " << getResult().getType();
  return success();
}

LogicalResult AllocBarriersOp::verify() {
  if (std::optional<int64_t> offset = getOffset();
      offset && (*offset < 0 || *offset % 8 != 0))
    return emitOpError() << "offset must be a non-negative multiple of 8 "
                            "(an mbarrier is 8 bytes), got "
                         << *offset;
  return success();
}

LogicalResult CopyTmaOp::verify() {
  auto dest = cast<SmemType>(getDest().getType());
  if (dest.getRank() != 2 || dest.getLayout() != SharedLayout::Swizzle128B)
    return emitOpError() << "copies into one swizzle_128b tile (the layout "
                            "of the tensor map's 128-byte swizzle), got "
                         << dest;
  // A box side is at most 256 elements (cuTensorMapEncodeTiled).
  if (dest.getRows() > kMaxTmaBoxRows)
    return emitOpError() << "a tile of at most " << kMaxTmaBoxRows
                         << " rows (one box per 128-byte block), got "
                         << dest.getRows();
  // Use u of the full barriers waits for use u - count of the empty ones:
  // one barrier of each per stage.
  if (Value empty = getEmpty();
      empty && cast<BarriersType>(empty.getType()).getCount() !=
                   getBarriers().getType().getCount())
    return emitOpError() << "empty barriers " << empty.getType()
                         << " must have one barrier per stage of "
                         << getBarriers().getType();
  // Thread 0 issues a copy unless it is single_thread; only the producer
  // region of a warp_specialize is run by one (other) thread.
  auto split = (*this)->getParentOfType<WarpSpecializeOp>();
  bool inProducer =
      split && split.getProducer().isAncestor((*this)->getParentRegion());
  if (getSingleThread() != inProducer)
    return emitOpError() << (inProducer
                                 ? "in a warp_specialize producer must be "
                                   "single_thread (thread 0 is a consumer)"
                                 : "single_thread belongs in the producer "
                                   "region of attn_nv.warp_specialize");
  return success();
}

LogicalResult StoreTmaOp::verify() {
  auto source = cast<SmemType>(getSource().getType());
  if (source.getRank() != 2 || source.getLayout() != SharedLayout::Swizzle128B ||
      source.getElementType().getIntOrFloatBitWidth() != 16)
    return emitOpError() << "stores one 16-bit swizzle_128b tile (the layout "
                            "of the tensor map's 128-byte swizzle), got "
                         << source;
  if (source.getRows() % kTmaStoreRows != 0)
    return emitOpError() << "stores whole " << kTmaStoreRows
                         << "-row boxes (one a warp), got " << source.getRows()
                         << " rows";
  // Each warp stores its own rows: the threads of the producer region
  // (one elected thread) hold none.
  auto split = (*this)->getParentOfType<WarpSpecializeOp>();
  if (split && split.getProducer().isAncestor((*this)->getParentRegion()))
    return emitOpError() << "stores the consumers' rows; it cannot be in the "
                            "producer region of attn_nv.warp_specialize";
  return success();
}

LogicalResult WaitStoresReadOp::verify() {
  // The stores it waits for are the consumers' (attn_nv.store_tma).
  auto split = (*this)->getParentOfType<WarpSpecializeOp>();
  if (split && split.getProducer().isAncestor((*this)->getParentRegion()))
    return emitOpError() << "waits for the consumers' stores; it cannot be in "
                            "the producer region of attn_nv.warp_specialize";
  return success();
}

LogicalResult WorkTileOp::verify() {
  // What is known here: constant extents, and a constant index inside
  // their product (the launch's CTAs never take an index past it).
  int64_t product = 1;
  bool known = true;
  for (auto [name, extent] :
       {std::pair<StringRef, Value>{"batches", getBatches()},
        {"heads", getHeads()},
        {"tiles", getTiles()}}) {
    APInt value;
    if (!matchPattern(extent, m_ConstantInt(&value))) {
      known = false;
      continue;
    }
    if (value.getSExtValue() <= 0)
      return emitOpError() << name << " must be positive, got "
                           << value.getSExtValue();
    product *= value.getSExtValue();
  }
  APInt index;
  if (known && matchPattern(getIndex(), m_ConstantInt(&index)) &&
      (index.getSExtValue() < 0 || index.getSExtValue() >= product))
    return emitOpError() << "index " << index.getSExtValue()
                         << " is outside the grid's " << product
                         << " work tiles";
  return success();
}

LogicalResult WarpSpecializeOp::verify() {
  int64_t consumers = getConsumerThreads();
  if (consumers <= 0 || consumers % kWarpgroupThreads != 0)
    return emitOpError() << "consumer_threads must be a positive multiple of "
                         << kWarpgroupThreads << " (whole warpgroups), got "
                         << consumers;
  for (auto [name, regs] : {std::pair<StringRef, int64_t>{
                                "consumer", getConsumerRegisters()},
                            {"producer", getProducerRegisters()}})
    if (regs < kMinSetMaxRegisters || regs > kMaxSetMaxRegisters ||
        regs % kSetMaxRegistersStep != 0)
      return emitOpError() << name << " registers must be a multiple of "
                           << kSetMaxRegistersStep << " in ["
                           << kMinSetMaxRegisters << ", "
                           << kMaxSetMaxRegisters << "] (setmaxnreg), got "
                           << regs;
  int64_t total = consumers * getConsumerRegisters() +
                  kWarpgroupThreads * getProducerRegisters();
  if (total > kRegistersPerSm)
    return emitOpError() << "the split takes " << total
                         << " registers; an SM has " << kRegistersPerSm;
  WalkResult barrier = walk([](NVVM::Barrier0Op op) {
    op.emitOpError("inside attn_nv.warp_specialize would wait for threads "
                   "that never reach it (the other side of the split)");
    return WalkResult::interrupt();
  });
  return failure(barrier.wasInterrupted());
}

LogicalResult InitBarriersOp::verify() {
  // mbarrier.init takes a count in [1, 2^20 - 1].
  int64_t arrivals = getArrivals();
  if (arrivals < 1 || arrivals > kMaxMbarrierArrivals)
    return emitOpError() << "arrivals must be in [1, " << kMaxMbarrierArrivals
                         << "], got " << arrivals;
  return success();
}

int64_t CopyTmaOp::getTileBytes() {
  auto dest = cast<SmemType>(getDest().getType());
  int64_t elementBytes = dest.getElementType().getIntOrFloatBitWidth() / 8;
  return storedSharedCols(/*swizzled=*/true, dest.getCols(), elementBytes) *
         dest.getRows() * elementBytes;
}

LogicalResult LoadOperandOp::verify() {
  if (failed(expectSmem(*this, "source", getSource().getType(),
                        SharedLayout::Padded)) ||
      failed(expectLayout(*this, "result", getResult(),
                          DistributedTile::Kind::OperandA)))
    return failure();
  auto smem = cast<SmemType>(getSource().getType());
  auto result = cast<RankedTensorType>(getResult().getType());
  if (result.getShape() != smem.getShape() ||
      result.getElementType() != smem.getElementType())
    return emitOpError() << "result " << result
                         << " must have the shape and element type of "
                         << smem;
  return success();
}

LogicalResult StoreSharedOp::verify() {
  FailureOr<DistributedTile> tile =
      expectLayout(*this, "tile", getTile(), DistributedTile::Kind::Acc);
  if (failed(tile))
    return failure();
  auto dest = cast<SmemType>(getDest().getType());
  if (dest.getRank() != 2 || dest.getRows() != tile->rows() ||
      dest.getCols() != tile->cols() || tile->colGroups() != 1 ||
      dest.getElementType().getIntOrFloatBitWidth() != 16)
    return emitOpError() << "writes a tile into a 2-D 16-bit shared tile of "
                            "its shape, got "
                         << getTile().getType() << " into " << dest;
  return success();
}

LogicalResult ReduceBulkOp::verify() {
  FailureOr<DistributedTile> tile =
      expectLayout(*this, "tile", getTile(), DistributedTile::Kind::Acc);
  if (failed(tile))
    return failure();
  int64_t cols = tile->cols() * tile->colGroups();
  auto staging = cast<SmemType>(getStaging().getType());
  if (!tile->elementType().isF32() || staging.getRank() != 2 ||
      staging.getRows() != tile->rows() || staging.getCols() != cols ||
      !staging.getElementType().isF32() ||
      staging.getLayout() != SharedLayout::Padded)
    return emitOpError() << "stages an f32 accumulator tile in a padded f32 "
                            "shared tile of its shape, got "
                         << getTile().getType() << " in " << staging;
  // Each lane's bulk reduction is one row segment of a column group: whole
  // 8-column blocks (#attn_nv.acc), so a multiple of the 16 bytes it needs.
  auto dest = cast<MemRefType>(getDest().getType());
  if (dest.getRank() != 4 || !dest.getElementType().isF32() ||
      dest.getDimSize(3) != cols)
    return emitOpError() << "adds into a (B, H, N, " << cols
                         << ") f32 memref, got " << dest;
  return success();
}

LogicalResult ConvertLayoutOp::verify() {
  // Partial row sums -> rows: the sum over each quad.
  if (auto rows = layoutOf(getSource(), DistributedTile::Kind::Rows)) {
    auto to = layoutOf(getResult(), DistributedTile::Kind::Rows);
    if (!rows->partial() || !to || to->partial() ||
        rows->warps() != to->warps() || rows->rows() != to->rows() ||
        !rows->elementType().isF32() || !to->elementType().isF32())
      return emitOpError() << "converts f32 partial row sums to f32 rows of "
                              "the same warps, got "
                           << getSource().getType() << " -> " << getType();
    return success();
  }
  FailureOr<DistributedTile> from = expectLayout(
      *this, "source", getSource(), DistributedTile::Kind::Acc);
  FailureOr<DistributedTile> to = expectLayout(
      *this, "result", getResult(), DistributedTile::Kind::OperandA);
  if (failed(from) || failed(to))
    return failure();
  if (from->rows() != to->rows() || from->cols() != to->cols() ||
      from->warps() != to->warps() || from->colGroups() != 1)
    return emitOpError() << "source and result must have one shape and warp "
                            "count (and the source no column groups)";
  Type src = from->elementType(), dst = to->elementType();
  if (src != dst && !src.isF32())
    return emitOpError() << "rounds only f32 to 16 bits, got " << src
                         << " -> " << dst;
  return success();
}

LogicalResult MmaOp::verify() {
  if (!layoutOf(getLhs(), DistributedTile::Kind::OperandA) &&
      failed(expectSmem(*this, "lhs", getLhs().getType(),
                        SharedLayout::Padded, /*orRegisters=*/true)))
    return failure();
  if (failed(expectSmem(*this, "rhs", getRhs().getType(),
                        SharedLayout::Padded)))
    return failure();
  if (failed(verifyProduct(*this, getLhs(), getRhs(), getAcc(),
                           getTransposeRhs())))
    return failure();
  // QKᵀ's reduction (the head dim) may be 8 mod 16: ldmatrix reads the
  // zero-filled padding of the rows. P·V's (the keys, rows of V) is read 16
  // rows at a time.
  auto rhs = cast<SmemType>(getRhs().getType());
  if (!getTransposeRhs() && isa<SmemType>(getLhs().getType()))
    return emitOpError() << "a K×N rhs (P·V) takes its lhs from registers "
                            "(#attn_nv.operand_a)";
  if (!getTransposeRhs() && rhs.getRows() % 16 != 0)
    return emitOpError() << "a K×N rhs is read in 16-row blocks: needs K a "
                            "multiple of 16, got "
                         << rhs.getRows();
  return success();
}

int64_t WgmmaOp::getKStep() {
  // 32 bytes of K per instruction: k16 of 16-bit, k32 of 8-bit elements.
  return mlir::attn::kWgmmaK * 16 /
         elementTypeOf(getRhs().getType()).getIntOrFloatBitWidth();
}

LogicalResult WgmmaOp::verify() {
  if (!layoutOf(getLhs(), DistributedTile::Kind::OperandA) &&
      failed(expectSmem(*this, "lhs", getLhs().getType(),
                        SharedLayout::Swizzle128B, /*orRegisters=*/true)))
    return failure();
  if (failed(expectSmem(*this, "rhs", getRhs().getType(),
                        SharedLayout::Swizzle128B)))
    return failure();
  if (failed(verifyProduct(*this, getLhs(), getRhs(), getAcc(),
                           getTransposeRhs(), getTransposeLhs())))
    return failure();
  // An MN-major A is read from shared memory only, with an MN-major B (the
  // one form the backward needs: (dSᵀ)ᵀ K).
  if (getTransposeLhs() &&
      (!isa<SmemType>(getLhs().getType()) || getTransposeRhs()))
    return emitOpError() << "with transpose_lhs takes a K×M shared-memory "
                            "lhs and a K×N rhs (no transpose_rhs)";
  auto acc = *DistributedTile::get(getAcc().getType());
  // One warpgroup (4 warps) per 64 rows, each warp one 16-row m tile.
  if (acc.mTiles() != 1 || acc.warps() % 4 != 0)
    return emitOpError() << "wgmma gives each warp of a warpgroup 16 rows: "
                            "needs rows = 16 x warps with warps a multiple "
                            "of 4, got "
                         << acc.rows() << " rows over " << acc.warps()
                         << " warps";
  // Each instruction reduces over 16 columns of a K-major lhs (QKᵀ's head
  // dim) or 16 rows of an MN-major rhs (P·V's keys); nothing zero-fills a
  // swizzled tile's columns past its own.
  auto [l0, l1] = tileShape(getLhs().getType());
  int64_t k = getTransposeLhs() ? l0 : l1;
  int64_t step = getKStep();
  if (k % step != 0)
    return emitOpError() << "wgmma reduces in steps of " << step
                         << " elements (32 bytes): needs K a multiple of "
                         << step << ", got " << k;
  // Column groups: each warpgroup (one a group) issues the product for its
  // own columns of an MN-major B, whole 64-column swizzle blocks of it (the
  // lowering's one form: (dSᵀ)ᵀ K with dQ split over the head dim).
  if (acc.colGroups() > 1 &&
      (!getTransposeLhs() || acc.cols() % 64 != 0 || acc.rowWarps() != 4))
    return emitOpError() << "splits columns over warpgroups with "
                            "transpose_lhs, one warpgroup and whole 64-column "
                            "blocks a group only, got "
                         << acc.cols() << " columns over "
                         << acc.rowWarps() << " warps a group";
  // The accumulator layout keeps columns in pairs of 8-column blocks.
  if (acc.cols() > 256 || acc.cols() % 16 != 0)
    return emitOpError() << "wgmma.m64nNk16 needs N a multiple of 16 up to "
                            "256, got "
                         << acc.cols();
  return success();
}

LogicalResult WgmmaWaitOp::verify() {
  int64_t pending = getPendingAttr().getInt();
  if (pending < 0 || pending > 7)
    return emitOpError() << "pending must be in [0, 7], got " << pending;
  return success();
}

LogicalResult WarpgroupTurnOp::verify() {
  int64_t warpgroups = getWarpgroupsAttr().getInt();
  if (warpgroups < 1 || warpgroups > 4)
    return emitOpError() << "orders 1 to 4 warpgroups, got " << warpgroups;
  if (bool(getTurn()) != getRotation().has_value())
    return emitOpError() << "a numbered turn needs both turn and rotation";
  // Each set of the rotation takes warpgroups - 1 named barriers after
  // barrier 0 (bar.sync 0 is the CTA barrier); a CTA has 16.
  if (std::optional<uint64_t> rotation = getRotation();
      rotation && (*rotation < 1 ||
                   *rotation * (warpgroups - 1) > kMaxOrderBarriers))
    return emitOpError() << "rotation " << *rotation << " of " << warpgroups
                         << " warpgroups needs more than the "
                         << kMaxOrderBarriers << " named barriers after 0";
  auto yield = cast<YieldOp>(getBody().front().getTerminator());
  if (yield.getValues().getTypes() != getResultTypes()) {
    auto list = [](TypeRange types) {
      std::string s;
      llvm::raw_string_ostream os(s);
      if (types.empty())
        os << "nothing";
      llvm::interleaveComma(types, os);
      return s;
    };
    return emitOpError() << "body yields " << list(yield.getValues().getTypes())
                         << " but the op returns " << list(getResultTypes());
  }
  return success();
}

LogicalResult WarpAnyOp::verify() {
  FailureOr<DistributedTile> t =
      expectLayout(*this, "tile", getTile(), DistributedTile::Kind::Rows);
  if (failed(t))
    return failure();
  if (!t->elementType().isInteger(1))
    return emitOpError() << "takes an i1 row tile, got " << getTile().getType();
  return success();
}

#define GET_OP_CLASSES
#include "attn/Dialect/AttnNV/IR/AttnNVOps.cpp.inc"
