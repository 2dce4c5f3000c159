//===- StoreOutputTma.cpp - the output tile stored by the copy engine -----===//
//
// A TMA kernel's output tile goes through shared memory: each warp writes
// its rows into Q's buffer (free once the last QKᵀ retired) and stores them
// with bulk tensor copies through O's tensor map, instead of a 4-byte
// st.global per pair of columns. On the H200 those stores (8 half-filled
// sectors per warp instruction) and the exit's wait for them were 28 % of
// the warps' samples in the short batch (docs/BENCHMARKS.md, version 29).
//
//===----------------------------------------------------------------------===//

#include "attn/NVIDIA/Passes.h"

#include "TensorRows.h"

#include "attn/Compiler/KernelABI.h"
#include "attn/Dialect/AttnNV/IR/AttnNV.h"
#include "attn/Dialect/AttnNV/IR/Layouts.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::attn::nv {
#define GEN_PASS_DEF_ATTNNVSTOREOUTPUTTMA
#include "attn/NVIDIA/Passes.h.inc"
} // namespace mlir::attn::nv

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::nv;

namespace {

namespace abi = ::attn::abi;

/// Indices of O's and Q's maps among kTensorMaps.
constexpr int kOutputMap = 2, kQueryMap = 3;
static_assert(abi::kTensorMaps[kOutputMap].tensor == 3 &&
                  abi::kTensorMaps[kQueryMap].tensor == 0,
              "kTensorMaps' third map is O's, its fourth Q's");

/// The argument of `fn` that is its map `index` of kTensorMaps: the last
/// kTensorMapCount arguments are the maps (attn-nv-pipeline-copies added
/// them), if any.
Value tensorMap(func::FuncOp fn, int index) {
  unsigned args = fn.getNumArguments();
  if (args < unsigned(abi::kTensorMapCount + abi::kForwardTensorCount))
    return {};
  Value map = fn.getArgument(args - abi::kTensorMapCount + index);
  return isa<LLVM::LLVMPointerType>(map.getType()) ? map : Value();
}

/// Q's shared buffer: the destination of the copy that reads Q (argument 0,
/// or its map).
Value queryBuffer(func::FuncOp fn, TileGridOp grid) {
  Value q = fn.getArgument(0), qmap = tensorMap(fn, kQueryMap), buffer;
  grid.walk([&](Operation *op) {
    if (auto copy = dyn_cast<CopyAsyncOp>(op); copy && copy.getSource() == q)
      buffer = copy.getDest();
    if (auto copy = dyn_cast<CopyTmaOp>(op); copy && copy.getMap() == qmap)
      buffer = copy.getDest();
  });
  return buffer;
}

/// Why `store`, a store of O, cannot go through `buffer` and O's map;
/// empty when it can.
std::string refusal(StoreTileOp store, func::FuncOp fn, Value buffer) {
  auto tile = DistributedTile::get(store.getTile().getType());
  if (!tile || tile->kind() != DistributedTile::Kind::Acc ||
      tile->elementType().getIntOrFloatBitWidth() != 16 ||
      tile->mTiles() != 1)
    return "not a 16-bit accumulator with 16 rows a warp";
  if (store.getAccumulate() || store.getRowsPerHead() || store.getStart())
    return "an accumulating or packed store";
  // O's map ends at its rows, Nq: the store's bound must be that, as O's
  // or Q's size (one value by the ABI; CSE keeps either).
  Value rows = rowsOf(store.getBound());
  if (!rows || (rows != store.getDest() && rows != fn.getArgument(0)))
    return "bounded by something other than O's rows";
  if (!buffer)
    return "no Q buffer";
  auto smem = cast<SmemType>(buffer.getType());
  if (smem.getRank() != 2 || smem.getLayout() != SharedLayout::Swizzle128B ||
      smem.getRows() != tile->rows() || smem.getCols() != tile->cols() ||
      smem.getElementType() != tile->elementType())
    return "Q's buffer is not a tile of O's shape and type";
  // Every reader of Q comes before the store. Each is a QKᵀ whose result
  // the output depends on, so it has retired when the output exists.
  for (Operation *user : buffer.getUsers()) {
    Operation *at = store->getBlock()->findAncestorOpInBlock(*user);
    if (!at || !at->isBeforeInBlock(store))
      return "Q's buffer is used after the store";
  }
  return "";
}

struct AttnNVStoreOutputTmaPass
    : mlir::attn::nv::impl::AttnNVStoreOutputTmaBase<
          AttnNVStoreOutputTmaPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<TileGridOp> grids;
    getOperation()->walk([&](TileGridOp grid) { grids.push_back(grid); });
    for (TileGridOp grid : grids) {
      ConfigAttr config = ConfigAttr::lookup(grid);
      auto fn = grid->getParentOfType<func::FuncOp>();
      // The backward's maps are others (kBackwardTensorMaps); it stores
      // dQ, dK and dV from registers.
      if (!config || config.isHost() || !config.isWgmma() || !config.getTma() ||
          !fn || abi::isBackwardKernel(fn.getName()))
        continue;
      Value map = tensorMap(fn, kOutputMap);
      if (!map)
        continue;
      Value buffer = queryBuffer(fn, grid);
      Value output = fn.getArgument(abi::kTensorMaps[kOutputMap].tensor);
      SmallVector<StoreTileOp> stores;
      grid.walk([&](StoreTileOp store) {
        if (store.getDest() != output)
          return;
        std::string why = refusal(store, fn, buffer);
        if (why.empty())
          stores.push_back(store);
        else if (reportFallbacks)
          store.emitRemark("attn-nv-store-output-tma: O is stored from "
                           "registers: ")
              << why;
      });
      for (StoreTileOp store : stores) {
        OpBuilder b(store);
        Location loc = store.getLoc();
        StoreSharedOp::create(b, loc, store.getTile(), buffer);
        StoreTmaOp::create(b, loc, buffer, map, store.getBatch(),
                           store.getHead(), store.getRow());
        store.erase();
      }
    }
  }
};

} // namespace
