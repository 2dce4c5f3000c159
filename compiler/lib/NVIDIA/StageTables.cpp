//===- StageTables.cpp - a captured table's score tile via shared memory --===//
//
// Input (attn-nv-assign-layouts, a score_mod's table loads gathered into a
// map of their own by attn-decompose):
//
//   %b = attn.map at [%row, %kv] -> tensor<RxCxf32, #acc> {
//   ^bb0(%i: index, %j: index):
//     %qi = arith.minsi %i, %lastRow {attn.bounds_clamp} : index
//     %kj = arith.minsi %j, %lastCol {attn.bounds_clamp} : index
//     %x = memref.load %table[%qi, %kj] : memref<?x?xf32, ...>
//     attn.yield %x : f32
//   }
//
// Output: the tile table[%row : %row + R, %kv : %kv + C] copied into a
// shared buffer with the synchronous form of attn-nv-assign-layouts' copies
// (attn-nv-pipeline-copies stages them with K and V), read by the maps'
// first user:
//
//   attn_nv.copy_table_async %table[%row, %kv] bounds %lastRow + 1,
//       %lastCol + 1 into %buf
//   commit; wait 0; barrier
//   ...
//   %b = attn_nv.load_shared %buf
//
//===----------------------------------------------------------------------===//

#include "attn/NVIDIA/Passes.h"

#include "attn/Compiler/TilePolicy.h"
#include "attn/NVIDIA/SharedPlacement.h"
#include "attn/Transforms/Mask.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::attn::nv {
#define GEN_PASS_DEF_ATTNNVSTAGETABLES
#include "attn/NVIDIA/Passes.h.inc"
} // namespace mlir::attn::nv

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::nv;

namespace {

/// A map that is a table's tile: the table and the last row and column the
/// map's clamps keep its reads at.
struct TableTile {
  MapOp map;
  Value table, lastRow, lastCol;
};

/// The bound of `index` when it is `coord` clamped for memory safety only
/// (kBoundsClampAttr) by a value from outside `map`; null otherwise.
Value clampBound(MapOp map, Value index, BlockArgument coord) {
  auto min = index.getDefiningOp<arith::MinSIOp>();
  if (!min || !min->hasAttr(kBoundsClampAttr) || min.getLhs() != coord ||
      map.getBody().isAncestor(min.getRhs().getParentRegion()))
    return {};
  return min.getRhs();
}

/// `map` as a table's tile, or why it is not one.
FailureOr<TableTile> matchTableTile(MapOp map, std::string &why) {
  auto type = cast<RankedTensorType>(map.getType());
  if (map.getRank() != 2 || !map.getInputs().empty() ||
      !type.getElementType().isF32()) {
    why = "the load is part of a map over other tiles (not a gathered f32 "
          "tile of its own)";
    return failure();
  }
  auto load = map.getYielded().getDefiningOp<memref::LoadOp>();
  if (!load || load->getParentRegion() != &map.getBody()) {
    why = "the map yields no load";
    return failure();
  }
  MemRefType table = load.getMemRefType();
  if (table.getRank() != 2 || !table.getElementType().isF32() ||
      map.getBody().isAncestor(load.getMemRef().getParentRegion())) {
    why = "the load is not of a captured 2-D f32 table";
    return failure();
  }
  Block &body = map.getBodyBlock();
  Value lastRow = clampBound(map, load.getIndices()[0], body.getArgument(0));
  Value lastCol = clampBound(map, load.getIndices()[1], body.getArgument(1));
  if (!lastRow || !lastCol) {
    why = "the table is not read at the score's own (query, key) position";
    return failure();
  }
  // Nothing else is computed per element: the map is the tile.
  if (std::distance(body.begin(), body.end()) != 4) {
    why = "the map computes more than the table's element";
    return failure();
  }
  return TableTile{map, load.getMemRef(), lastRow, lastCol};
}

struct Stager {
  ConfigAttr config;
  TileGridOp grid;
  bool reportFallbacks;

  void run();

private:
  void keepGather(MapOp map, StringRef why) {
    if (reportFallbacks)
      map.emitRemark("attn-nv-stage-tables: the table is gathered per "
                     "element: ")
          << why;
  }
  /// The shared memory the kernel asks for once the K/V loop's copies are
  /// staged, with `tables` more staged tables of `tableType` first.
  int64_t sharedBytes(scf::ForOp loop, SmemType tableType, int64_t tables);
  void stage(const TableTile &tile, SmemType type);
};

int64_t Stager::sharedBytes(scf::ForOp loop, SmemType tableType,
                            int64_t tables) {
  int64_t stages = config.getStages();
  DenseSet<Value> staged;
  for (auto copy : loop.getBody()->getOps<CopyAsyncOp>())
    staged.insert(copy.getDest());
  SharedPlacement placement;
  bool swizzledTable = tableType.getLayout() == SharedLayout::Swizzle128B;
  for (int64_t t = 0; t < tables; ++t)
    placement.placeTiles(stages * tableType.getBytes(), swizzledTable);
  grid->getParentOp()->walk([&](Operation *op) {
    if (auto alloc = dyn_cast<AllocSharedOp>(op)) {
      auto type = cast<SmemType>(alloc.getType());
      placement.placeTiles(type.getBytes() *
                               (staged.contains(alloc) ? stages : 1),
                           type.getLayout() == SharedLayout::Swizzle128B);
    } else if (auto bars = dyn_cast<AllocBarriersOp>(op)) {
      placement.placeBarriers(bars.getType().getCount());
    }
  });
  return placement.total();
}

void Stager::stage(const TableTile &tile, SmemType type) {
  MapOp map = tile.map;
  Location loc = map.getLoc();
  OpBuilder allocs(&grid.getBodyBlock(), grid.getBodyBlock().begin());
  Value buffer = AllocSharedOp::create(allocs, loc, type, IntegerAttr());
  OpBuilder b(map);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value rows = arith::AddIOp::create(b, loc, tile.lastRow, one);
  Value cols = arith::AddIOp::create(b, loc, tile.lastCol, one);
  ValueRange at = map.getOffsets();
  Value row = at.empty() ? arith::ConstantIndexOp::create(b, loc, 0) : at[0];
  Value col = at.empty() ? row : at[1];
  CopyTableAsyncOp::create(b, loc, tile.table, row, col, rows,
                           cols, buffer);
  // The synchronous form of every copy (attn-nv-assign-layouts), which
  // attn-nv-pipeline-copies replaces by its schedule.
  NVVM::CpAsyncCommitGroupOp::create(b, loc);
  NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);
  NVVM::Barrier0Op::create(b, loc);
  // Read where first used (after QKᵀ): the registers are not held across
  // the product.
  Block *block = map->getBlock();
  Operation *first = nullptr;
  for (Operation *user : map->getUsers()) {
    Operation *inBlock = block->findAncestorOpInBlock(*user);
    if (inBlock && (!first || inBlock->isBeforeInBlock(first)))
      first = inBlock;
  }
  OpBuilder rb(first ? first : map.getOperation());
  Value read = LoadSharedOp::create(rb, loc, map.getType(), buffer);
  map.replaceAllUsesWith(read);
  map.erase();
}

void Stager::run() {
  scf::ForOp loop;
  for (auto f : grid.getBodyBlock().getOps<scf::ForOp>())
    if (!f.getBody()->getOps<CopyAsyncOp>().empty())
      loop = f;
  SmallVector<MapOp> reads;
  grid.walk([&](MapOp map) {
    if (map.walk([](memref::LoadOp) { return WalkResult::interrupt(); })
            .wasInterrupted())
      reads.push_back(map);
  });
  SmallVector<std::pair<TableTile, SmemType>> tiles;
  for (MapOp map : reads) {
    std::string why;
    FailureOr<TableTile> tile = matchTableTile(map, why);
    if (failed(tile)) {
      keepGather(map, why);
      continue;
    }
    if (!loop || map->getParentOp() != loop) {
      keepGather(map, "the tile is not read in the K/V loop");
      continue;
    }
    if (!::attn::compiler::stagesTables(config.getTma(),
                                        config.getBarrierPerTile())) {
      keepGather(map, "TMA kernels without barrier_per_tile release their "
                      "stages by per-warp mbarriers, which the table's "
                      "copies do not join");
      continue;
    }
    // The wgmma accumulator's pairs read conflict-free from swizzle_pairs
    // (its description); mma.sync's from padded rows.
    auto type = cast<RankedTensorType>(map.getType());
    SmemType smem = SmemType::get(
        grid.getContext(), type.getShape(), type.getElementType(),
        config.isWgmma() ? SharedLayout::SwizzlePairs : SharedLayout::Padded);
    int64_t needed = sharedBytes(loop, smem, tiles.size() + 1);
    int64_t limit = ::attn::compiler::maxSharedBytesPerBlock(config.getChip());
    if (needed > limit) {
      keepGather(map, ("its stages would need " + Twine(needed) +
                       " bytes of shared memory, more than the " +
                       Twine(limit) + " of " + config.getChip())
                          .str());
      continue;
    }
    tiles.push_back({*tile, smem});
  }
  for (auto &[tile, smem] : tiles)
    stage(tile, smem);
}

struct AttnNVStageTablesPass
    : mlir::attn::nv::impl::AttnNVStageTablesBase<AttnNVStageTablesPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<TileGridOp> grids;
    getOperation()->walk([&](TileGridOp grid) { grids.push_back(grid); });
    for (TileGridOp grid : grids) {
      ConfigAttr config = ConfigAttr::lookup(grid);
      if (!config || config.isHost())
        continue;
      Stager{config, grid, reportFallbacks}.run();
    }
  }
};

} // namespace
