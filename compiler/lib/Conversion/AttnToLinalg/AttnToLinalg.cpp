//===- AttnToLinalg.cpp - tile-level attn to scf/linalg for the host ------===//
//
// The host mapping of the tile program. The grid becomes a loop over work
// items that threads share (abi::kHostGridsAttr); the
// generic tile ops (matmul, map, reduce) become linalg.generic on tensors,
// loads tensor.generate and stores loops; upstream bufferization and the
// LLVM lowering do the rest, after attn-host-vectorize has put the products
// and maps in vector registers.
//
//===----------------------------------------------------------------------===//

#include "attn/Compiler/KernelABI.h"
#include "attn/Conversion/Passes.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include <cmath>
#include <limits>

namespace mlir::attn {
#define GEN_PASS_DEF_CONVERTATTNTOLINALG
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Converts an f32 to `type` (f32, f16 or bf16) or back.
Value convert(OpBuilder &b, Location loc, Value v, Type type) {
  if (v.getType() == type)
    return v;
  if (type.getIntOrFloatBitWidth() < v.getType().getIntOrFloatBitWidth())
    return arith::TruncFOp::create(b, loc, type, v);
  return arith::ExtFOp::create(b, loc, type, v);
}

Value emptyLike(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                Type elementType) {
  return tensor::EmptyOp::create(b, loc, shape, elementType);
}

/// linalg.generic over `rank` loops with the given maps and iterator kinds;
/// `body` receives the block arguments and returns the yielded values.
Value generic(OpBuilder &b, Location loc, ValueRange inputs, Value init,
              ArrayRef<AffineMap> maps,
              ArrayRef<utils::IteratorType> iterators,
              function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  auto op = linalg::GenericOp::create(
      b, loc, init.getType(), inputs, init, maps, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        linalg::YieldOp::create(nb, nl, body(nb, nl, args));
      });
  return op.getResult(0);
}

struct Maps {
  MLIRContext *ctx;
  AffineExpr d0, d1, d2;
  explicit Maps(MLIRContext *ctx) : ctx(ctx) {
    bindDims(ctx, d0, d1, d2);
  }
  AffineMap get(unsigned dims, ArrayRef<AffineExpr> results) const {
    return AffineMap::get(dims, 0, results, ctx);
  }
};

using utils::IteratorType;
constexpr IteratorType kPar = IteratorType::parallel;
constexpr IteratorType kRed = IteratorType::reduction;

/// The (page, head, row in page) of key row `row` of a paged source, read
/// through row `op.getBatch()` of the block table `table`.
SmallVector<Value, 4> pagedIndices(OpBuilder &b, Location loc, LoadTileOp op,
                                   Value table, Value head, Value row) {
  Value source = op.getSource();
  int64_t pageSize = cast<MemRefType>(source.getType()).getDimSize(2);
  auto [column, inPage] = getPagedRowPosition(
      b, loc, row, pageSize, memref::DimOp::create(b, loc, table, 1));
  Value page = arith::IndexCastOp::create(
      b, loc, b.getIndexType(),
      memref::LoadOp::create(b, loc, table, ValueRange{op.getBatch(), column}));
  page = clampPage(b, loc, page, memref::DimOp::create(b, loc, source, 0));
  return {page, head, inPage};
}

Value lowerLoad(OpBuilder &b, LoadTileOp op) {
  Location loc = op.getLoc();
  auto type = cast<RankedTensorType>(op.getResult().getType());
  Value numRows = op.getBound();
  // A rank-3 source (row terms) gives a row tile (R) or a 1xR tile: the
  // row is the tile's last index; a rank-4 source an R x D tile.
  bool rowTerms = cast<MemRefType>(op.getSource().getType()).getRank() == 3;
  int64_t rank = type.getRank();
  auto gen = tensor::GenerateOp::create(b, loc, type, ValueRange{});
  SmallVector<Type> indexTypes(rank, b.getIndexType());
  SmallVector<Location> locs(rank, loc);
  Block *block = b.createBlock(&gen.getBody(), {}, indexTypes, locs);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(block);
  Value tileRow = block->getArgument(rowTerms ? rank - 1 : 0);
  Value row = arith::AddIOp::create(b, loc, op.getRow(), tileRow);
  Value inBounds = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                         row, numRows);
  Type elementType = type.getElementType();
  auto ifOp = scf::IfOp::create(
      b, loc, inBounds,
      [&](OpBuilder &tb, Location tl) {
        auto [head, seq] = getPackedRowPosition(tb, tl, op.getHead(), row,
                                                op.getRowsPerHead(),
                                                op.getStart());
        SmallVector<Value, 4> indices{op.getBatch(), head, seq};
        if (Value table = op.getPages())
          indices = pagedIndices(tb, tl, op, table, head, seq);
        if (!rowTerms)
          indices.push_back(block->getArgument(1));
        Value v = memref::LoadOp::create(tb, tl, op.getSource(), indices);
        scf::YieldOp::create(tb, tl, v);
      },
      [&](OpBuilder &eb, Location el) {
        Value zero = arith::ConstantOp::create(eb, el, eb.getZeroAttr(elementType));
        scf::YieldOp::create(eb, el, zero);
      });
  tensor::YieldOp::create(b, loc, ifOp.getResult(0));
  return gen.getResult();
}

void lowerStore(OpBuilder &b, StoreTileOp op) {
  Location loc = op.getLoc();
  auto type = cast<RankedTensorType>(op.getTile().getType());
  Value numRows = op.getBound();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value rows = arith::ConstantIndexOp::create(b, loc, type.getDimSize(0));
  Value left = arith::SubIOp::create(b, loc, numRows, op.getRow());
  Value count = arith::MinSIOp::create(b, loc, rows, left);
  scf::ForOp::create(
      b, loc, zero, count, one, ValueRange{},
      [&](OpBuilder &rb, Location rl, Value i, ValueRange) {
        Value row = arith::AddIOp::create(rb, rl, op.getRow(), i);
        auto [head, seq] = getPackedRowPosition(rb, rl, op.getHead(), row,
                                                op.getRowsPerHead(),
                                                op.getStart());
        if (type.getRank() == 1) {
          Value v = tensor::ExtractOp::create(rb, rl, op.getTile(), i);
          memref::StoreOp::create(rb, rl, v, op.getDest(),
                                  ValueRange{op.getBatch(), head, seq});
          scf::YieldOp::create(rb, rl);
          return;
        }
        Value cols = arith::ConstantIndexOp::create(rb, rl, type.getDimSize(1));
        scf::ForOp::create(
            rb, rl, zero, cols, one, ValueRange{},
            [&](OpBuilder &cb, Location cl, Value j, ValueRange) {
              Value v = tensor::ExtractOp::create(cb, cl, op.getTile(),
                                                  ValueRange{i, j});
              SmallVector<Value, 4> at{op.getBatch(), head, seq, j};
              // Threads take a grid's items at once: an accumulating store
              // adds atomically (rows other items add into too).
              if (op.getAccumulate())
                memref::AtomicRMWOp::create(cb, cl, arith::AtomicRMWKind::addf,
                                            v, op.getDest(), at);
              else
                memref::StoreOp::create(cb, cl, v, op.getDest(), at);
              scf::YieldOp::create(cb, cl);
            });
        scf::YieldOp::create(rb, rl);
      });
}

Value lowerMatmul(OpBuilder &b, MatmulOp op, const Maps &m) {
  Location loc = op.getLoc();
  Type f32 = b.getF32Type();
  // (i, j, k): acc[i, j] += lhs[i, k] · rhs[k, j], each read transposed as
  // the op says.
  AffineMap lhs = op.getTransposeLhs() ? m.get(3, {m.d2, m.d0})
                                       : m.get(3, {m.d0, m.d2});
  AffineMap rhs = op.getTransposeRhs() ? m.get(3, {m.d1, m.d2})
                                       : m.get(3, {m.d2, m.d1});
  return generic(
      b, loc, {op.getLhs(), op.getRhs()}, op.getAcc(),
      {lhs, rhs, m.get(3, {m.d0, m.d1})}, {kPar, kPar, kRed},
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value x = convert(nb, nl, a[0], f32), y = convert(nb, nl, a[1], f32);
        return Value(arith::AddFOp::create(
            nb, nl, a[2], arith::MulFOp::create(nb, nl, x, y)));
      });
}

/// attn.map -> linalg.generic whose body is the map's, with the
/// coordinates from linalg.index plus the map's offsets.
Value lowerMap(OpBuilder &b, MapOp op, const Maps &m) {
  Location loc = op.getLoc();
  auto type = cast<RankedTensorType>(op.getResult().getType());
  int64_t rank = type.getRank();
  AffineMap id = rank == 2 ? m.get(2, {m.d0, m.d1}) : m.get(1, {m.d0});
  SmallVector<AffineMap> maps;
  // Row tiles broadcast along the columns, 1xC tiles along the rows.
  AffineExpr zero = getAffineConstantExpr(0, m.ctx);
  for (Value input : op.getInputs()) {
    auto inputType = cast<RankedTensorType>(input.getType());
    maps.push_back(inputType.getShape() == type.getShape() ? id
                   : inputType.getRank() == 1         ? m.get(2, {m.d0})
                                                      : m.get(2, {zero, m.d1}));
  }
  maps.push_back(id);
  SmallVector<utils::IteratorType> iterators(rank, kPar);
  Value init = emptyLike(b, loc, type.getShape(), type.getElementType());
  return generic(
      b, loc, op.getInputs(), init, maps, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        IRMapping mapping;
        Block &body = op.getBodyBlock();
        for (int64_t d = 0; d < rank; ++d) {
          Value coord = linalg::IndexOp::create(nb, nl, d);
          if (!op.getOffsets().empty())
            coord = arith::AddIOp::create(nb, nl, op.getOffsets()[d], coord);
          mapping.map(body.getArgument(d), coord);
        }
        for (auto [i, input] : llvm::enumerate(op.getInputs()))
          mapping.map(op.getInputArg(i), a[i]);
        for (Operation &inner : body.without_terminator())
          nb.clone(inner, mapping);
        return mapping.lookup(op.getYielded());
      });
}

Value lowerReduce(OpBuilder &b, ReduceOp op, const Maps &m) {
  Location loc = op.getLoc();
  bool max = op.getKind() == ReduceKind::Max;
  return generic(b, loc, {op.getTile()}, op.getInit(),
                 {m.get(2, {m.d0, m.d1}), m.get(2, {m.d0})}, {kPar, kRed},
                 [&](OpBuilder &nb, Location nl, ValueRange a) {
                   if (max)
                     return Value(
                         arith::MaxNumFOp::create(nb, nl, a[1], a[0]));
                   return Value(arith::AddFOp::create(nb, nl, a[1], a[0]));
                 });
}

/// attn.tile_grid number `index` of its function -> a loop that takes work
/// items from `counters[index]` while the call's `phase` is `index`
/// (abi::kHostGridsAttr): threads share a grid by calling the kernel at
/// once. Consecutive items are the tiles of one (batch, head), which share
/// K and V.
void lowerGrid(OpBuilder &b, TileGridOp op, int64_t index, Value phase,
               Value counters) {
  Location loc = op.getLoc();
  Value gridIndex = arith::ConstantIndexOp::create(b, loc, index);
  Value tiles = op.getQueryTiles(), heads = op.getHeads();
  Value items = arith::MulIOp::create(
      b, loc, arith::MulIOp::create(b, loc, op.getBatch(), heads), tiles);
  Value mine = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, phase,
                                     gridIndex);
  auto ifOp = scf::IfOp::create(b, loc, mine, /*withElseRegion=*/false);
  b.setInsertionPointToStart(ifOp.thenBlock());
  auto loop = scf::WhileOp::create(b, loc, TypeRange{b.getIndexType()},
                                   ValueRange{});
  {
    Block *before = b.createBlock(&loop.getBefore());
    Value one = arith::ConstantIntOp::create(b, loc, 1, 64);
    Value taken = memref::AtomicRMWOp::create(
        b, loc, arith::AtomicRMWKind::addi, one, counters,
        ValueRange{gridIndex});
    Value item = arith::IndexCastOp::create(b, loc, b.getIndexType(), taken);
    Value more = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                       item, items);
    scf::ConditionOp::create(b, loc, more, ValueRange{item});
    (void)before;
  }
  Block *after = b.createBlock(&loop.getAfter(), {}, {b.getIndexType()},
                               {loc});
  Value item = after->getArgument(0);
  Value tile = arith::RemUIOp::create(b, loc, item, tiles);
  Value batchHead = arith::DivUIOp::create(b, loc, item, tiles);
  Value head = arith::RemUIOp::create(b, loc, batchHead, heads);
  Value batch = arith::DivUIOp::create(b, loc, batchHead, heads);
  auto yield = scf::YieldOp::create(b, loc);
  Block &old = op.getBodyBlock();
  SmallVector<Value, 3> ivs{batch, head, tile};
  for (auto [arg, iv] : llvm::zip(old.getArguments(), ivs))
    arg.replaceAllUsesWith(iv);
  after->getOperations().splice(Block::iterator(yield), old.getOperations());
}

/// Numbers the tile grids of each function in order and appends the
/// `phase` and `counters` arguments to the functions that have any.
LogicalResult prepareGrids(Operation *root,
                           DenseMap<Operation *, int64_t> &gridIndex,
                           DenseMap<Operation *, std::pair<Value, Value>>
                               &gridArgs) {
  WalkResult result = root->walk([&](FunctionOpInterface fn) {
    int64_t count = 0;
    fn->walk<WalkOrder::PreOrder>([&](TileGridOp grid) {
      gridIndex[grid] = count++;
    });
    if (!count)
      return WalkResult::advance();
    if (fn.isExternal())
      return WalkResult::advance();
    MLIRContext *ctx = fn->getContext();
    Location loc = fn->getLoc();
    unsigned n = fn.getNumArguments();
    Type counters = MemRefType::get({ShapedType::kDynamic},
                                    IntegerType::get(ctx, 64));
    if (failed(fn.insertArguments({n, n}, {IndexType::get(ctx), counters},
                                  {DictionaryAttr::get(ctx),
                                   DictionaryAttr::get(ctx)},
                                  {loc, loc})))
      return WalkResult::interrupt();
    Block &entry = fn.getFunctionBody().front();
    std::pair<Value, Value> args{entry.getArgument(n),
                                 entry.getArgument(n + 1)};
    fn->setAttr(::attn::abi::kHostGridsAttr,
                IntegerAttr::get(IntegerType::get(ctx, 64), count));
    fn->walk([&](TileGridOp grid) { gridArgs[grid] = args; });
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

struct ConvertAttnToLinalgPass
    : mlir::attn::impl::ConvertAttnToLinalgBase<ConvertAttnToLinalgPass> {
  void runOnOperation() override {
    Maps maps(&getContext());
    DenseMap<Operation *, int64_t> gridIndex;
    DenseMap<Operation *, std::pair<Value, Value>> gridArgs;
    if (failed(prepareGrids(getOperation(), gridIndex, gridArgs))) {
      getOperation()->emitError("cannot add the work-item arguments");
      return signalPassFailure();
    }
    SmallVector<Operation *> ops;
    // A map's body is cloned by its own lowering.
    getOperation()->walk([&](Operation *op) {
      if (isa_and_nonnull<AttnDialect>(op->getDialect()) &&
          !isa<YieldOp>(op) &&
          !op->getParentOfType<MapOp>())
        ops.push_back(op);
    });
    // Post-order walk: a loop's body is converted before the loop itself.
    for (Operation *op : ops) {
      OpBuilder b(op);
      if (auto load = dyn_cast<LoadTileOp>(op))
        load.getResult().replaceAllUsesWith(lowerLoad(b, load));
      else if (auto store = dyn_cast<StoreTileOp>(op))
        lowerStore(b, store);
      else if (auto mm = dyn_cast<MatmulOp>(op))
        mm.getResult().replaceAllUsesWith(lowerMatmul(b, mm, maps));
      else if (auto map = dyn_cast<MapOp>(op))
        map.getResult().replaceAllUsesWith(lowerMap(b, map, maps));
      else if (auto red = dyn_cast<ReduceOp>(op))
        red.getResult().replaceAllUsesWith(lowerReduce(b, red, maps));
      else if (auto grid = dyn_cast<TileGridOp>(op)) {
        auto args = gridArgs.find(grid);
        if (args == gridArgs.end()) {
          grid->emitOpError("must be in a function with a body");
          return signalPassFailure();
        }
        lowerGrid(b, grid, gridIndex.lookup(grid), args->second.first,
                  args->second.second);
      }
      else {
        op->emitOpError("must be tiled and decomposed (attn-tile, "
                        "attn-decompose) before convert-attn-to-linalg");
        return signalPassFailure();
      }
      op->erase();
    }
  }
};

} // namespace
