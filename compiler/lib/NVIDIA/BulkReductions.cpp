//===- BulkReductions.cpp - accumulating stores by the copy engine --------===//
//
// The atomic backward's dQ parts are added to global memory by bulk
// reductions of shared rows (cp.reduce.async.bulk ... .add.f32, one a row
// segment) instead of one red.global.add.v2.f32 a pair of columns. On the
// H200 those reductions were 15 % of the two-warpgroup K/V kernel's stall
// samples, and the proxy fence after the next step's copies waited for them
// (MEMBAR.ALL.CTA: another 7 %; docs/BENCHMARKS.md version 30). Measured
// 0.85-0.96 x that form at D = 128 (version 31), it is not in the pipeline.
//
//===----------------------------------------------------------------------===//

#include "attn/NVIDIA/Passes.h"

#include "attn/Dialect/AttnNV/IR/AttnNV.h"
#include "attn/Dialect/AttnNV/IR/Layouts.h"

namespace mlir::attn::nv {
#define GEN_PASS_DEF_ATTNNVBULKREDUCTIONS
#include "attn/NVIDIA/Passes.h.inc"
} // namespace mlir::attn::nv

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::nv;

namespace {

/// Whether `store` is an accumulating store of an f32 accumulator into
/// plain (not packed) rows, what attn_nv.reduce_bulk adds.
bool addsPlainRows(StoreTileOp store) {
  auto tile = DistributedTile::get(store.getTile().getType());
  return store.getAccumulate() && tile &&
         tile->kind() == DistributedTile::Kind::Acc &&
         tile->elementType().isF32() && !store.getRowsPerHead() &&
         !store.getStart();
}

struct AttnNVBulkReductionsPass
    : mlir::attn::nv::impl::AttnNVBulkReductionsBase<
          AttnNVBulkReductionsPass> {
  void runOnOperation() override {
    getOperation()->walk([&](TileGridOp grid) {
      ConfigAttr config = ConfigAttr::lookup(grid);
      if (!config || config.isHost() || !config.isWgmma())
        return;
      SmallVector<StoreTileOp> stores;
      grid.walk([&](StoreTileOp store) {
        if (addsPlainRows(store))
          stores.push_back(store);
      });
      OpBuilder allocs(&grid.getBodyBlock(), grid.getBodyBlock().begin());
      for (StoreTileOp store : stores) {
        auto type = cast<RankedTensorType>(store.getTile().getType());
        Location loc = store.getLoc();
        Value staging = AllocSharedOp::create(
            allocs, loc,
            SmemType::get(type.getContext(), type.getShape(),
                          type.getElementType(), SharedLayout::Padded),
            IntegerAttr());
        OpBuilder b(store);
        ReduceBulkOp::create(b, loc, store.getTile(), staging,
                             store.getDest(), store.getBatch(),
                             store.getHead(), store.getRow(),
                             store.getBound());
        store.erase();
      }
    });
  }
};

} // namespace
