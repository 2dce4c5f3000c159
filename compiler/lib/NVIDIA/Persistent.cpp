//===- Persistent.cpp - CTAs that loop over the grid's work tiles ---------===//
//
// Input: a kernel with a persistent #attn.config, its attn.tile_grid (B, H,
// T) fully scheduled (after attn-nv-warp-specialize, before shared memory
// is placed). Output:
//
//   attn_nv.persistent_grid {
//   ^bb0(%cta: index, %ctas: index):
//     scf.for %w = %cta to B · H · T step %ctas {
//       %b, %h, %t = decodeWorkTile(%w)
//       the grid's body, unchanged (Q's copy, the barriers' init, the
//       K/V loop, the epilogue)
//       nvvm.barrier0                 // every warp is done with the tile
//       attn_nv.inval_barriers ...    // so the next tile may init them
//     }
//   }
//
// The body stays the one a CTA per tile runs, so every schedule (cp.async
// or TMA stages, products in flight, warpgroup turns) is the same code; a
// work tile ends with all its copies waited for and its products retired,
// and the CTA barrier makes the shared buffers and mbarriers free for the
// next one.
//
//===----------------------------------------------------------------------===//

#include "attn/NVIDIA/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace mlir::attn::nv {
#define GEN_PASS_DEF_ATTNNVPERSISTENT
#include "attn/NVIDIA/Passes.h.inc"
} // namespace mlir::attn::nv

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::nv;

namespace {

struct WorkTile {
  Value batch, head, tile;
};

/// Work tile w of a grid of B × H × T tiles, the one definition of the
/// order: tile-major, w = (t' · B + b) · H + h, with t = T − 1 − t' when
/// the grid is reversed (causal: the longest query tiles first). A wave of
/// CTAs thus takes one query tile of many heads -- tiles of equal length --
/// and each CTA's later tiles are never longer than its earlier ones.
/// The divisions are 32-bit (the runtime refuses more than 2^31 - 1 work
/// tiles): NVPTX guards each 64-bit one with a branch on its operands'
/// high bits, a branch on the loop's induction variable.
WorkTile decodeWorkTile(OpBuilder &b, Location loc, Value w, Value batch,
                        Value heads, Value tiles, bool reverse) {
  Type i32 = b.getI32Type(), index = b.getIndexType();
  Value w32 = arith::IndexCastUIOp::create(b, loc, i32, w);
  Value batch32 = arith::IndexCastUIOp::create(b, loc, i32, batch);
  Value heads32 = arith::IndexCastUIOp::create(b, loc, i32, heads);
  Value perTile = arith::MulIOp::create(b, loc, batch32, heads32);
  Value slot32 = arith::DivUIOp::create(b, loc, w32, perTile);
  Value within = arith::RemUIOp::create(b, loc, w32, perTile);
  Value batchOf = arith::DivUIOp::create(b, loc, within, heads32);
  Value headOf = arith::RemUIOp::create(b, loc, within, heads32);
  WorkTile out;
  out.batch = arith::IndexCastUIOp::create(b, loc, index, batchOf);
  out.head = arith::IndexCastUIOp::create(b, loc, index, headOf);
  out.tile = arith::IndexCastUIOp::create(b, loc, index, slot32);
  if (reverse) {
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    Value last = arith::SubIOp::create(b, loc, tiles, one);
    out.tile = arith::SubIOp::create(b, loc, last, out.tile);
  }
  return out;
}

LogicalResult makePersistent(TileGridOp grid, ConfigAttr config) {
  Location loc = grid.getLoc();
  WalkResult split = grid.walk([](WarpSpecializeOp op) {
    op.emitOpError("cannot run in a persistent kernel: a work tile ends "
                   "with a CTA barrier the producer's threads never reach");
    return WalkResult::interrupt();
  });
  if (split.wasInterrupted())
    return failure();
  OpBuilder b(grid);
  Value perTile = arith::MulIOp::create(b, loc, grid.getBatch(),
                                        grid.getHeads());
  Value work = arith::MulIOp::create(b, loc, perTile, grid.getQueryTiles());
  auto persistent = PersistentGridOp::create(b, loc);
  Block *ctaBody = new Block();
  persistent.getBody().push_back(ctaBody);
  Type index = b.getIndexType();
  Value cta = ctaBody->addArgument(index, loc);
  Value ctas = ctaBody->addArgument(index, loc);
  b.setInsertionPointToStart(ctaBody);
  auto loop = scf::ForOp::create(b, loc, cta, work, ctas);
  b.setInsertionPointToStart(loop.getBody());
  WorkTile tile =
      decodeWorkTile(b, loc, loop.getInductionVar(), grid.getBatch(),
                     grid.getHeads(), grid.getQueryTiles(),
                     config.getReverseGrid());
  Block &gridBody = grid.getBodyBlock();
  gridBody.getArgument(0).replaceAllUsesWith(tile.batch);
  gridBody.getArgument(1).replaceAllUsesWith(tile.head);
  gridBody.getArgument(2).replaceAllUsesWith(tile.tile);
  Block *loopBody = loop.getBody();
  loopBody->getOperations().splice(loopBody->getTerminator()->getIterator(),
                                   gridBody.getOperations());
  // The next work tile overwrites the shared buffers and initializes the
  // mbarriers again: every warp must be past its last read and wait.
  b.setInsertionPoint(loopBody->getTerminator());
  NVVM::Barrier0Op::create(b, loc);
  SmallVector<AllocBarriersOp> barriers;
  loopBody->walk([&](AllocBarriersOp op) { barriers.push_back(op); });
  for (AllocBarriersOp op : barriers)
    InvalBarriersOp::create(b, loc, op.getBarriers());
  grid.erase();
  return success();
}

struct AttnNVPersistentPass
    : nv::impl::AttnNVPersistentBase<AttnNVPersistentPass> {
  void runOnOperation() override {
    SmallVector<TileGridOp> grids;
    getOperation()->walk([&](TileGridOp grid) {
      ConfigAttr config = ConfigAttr::lookup(grid);
      if (config && !config.isHost() && config.getPersistent())
        grids.push_back(grid);
    });
    for (TileGridOp grid : grids)
      if (failed(makePersistent(grid, ConfigAttr::lookup(grid))))
        return signalPassFailure();
  }
};

} // namespace
