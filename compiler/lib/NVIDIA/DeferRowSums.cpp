//===- DeferRowSums.cpp - row sums stay per thread until needed -----------===//
//
// A row of an accumulator tile is spread over the four threads of a quad,
// so a full row sum costs two shuffles per row. The online softmax's sum l
// is only ever scaled and added to (l' = alpha · l + rowsum P) until the
// epilogue: a sum of per-thread partial sums carries through that linear
// arithmetic unchanged. This pass gives such values the partial rows
// layout and adds them up (attn_nv.convert_layout) only where something
// non-linear reads them.
//
// A value is partial when it is
//  * an `attn.reduce <add>` whose initial value is a splat of 0;
//  * a row map whose result is linear in its partial inputs: built from
//    them by additions and subtractions of partial terms and by
//    multiplications or divisions of a partial term by a quad-uniform one
//    (a + b is fine, a + 1 is not: the 1 would be counted four times);
//  * a loop-carried value whose initial value is a splat of 0 and whose
//    yielded value is partial.
//
//===----------------------------------------------------------------------===//

#include "attn/NVIDIA/Passes.h"

#include "attn/Dialect/AttnNV/IR/Layouts.h"

#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::attn::nv {
#define GEN_PASS_DEF_ATTNNVDEFERROWSUMS
#include "attn/NVIDIA/Passes.h.inc"
} // namespace mlir::attn::nv

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::nv;

namespace {

bool isRows(Value v) {
  std::optional<DistributedTile> t = DistributedTile::get(v.getType());
  return t && t->kind() == DistributedTile::Kind::Rows && !t->partial() &&
         t->elementType().isF32();
}

RankedTensorType partialType(Type t) {
  auto tensor = cast<RankedTensorType>(t);
  auto rows = cast<RowsLayoutAttr>(tensor.getEncoding());
  return RankedTensorType::get(
      tensor.getShape(), tensor.getElementType(),
      RowsLayoutAttr::get(t.getContext(), rows.getWarps(), /*partial=*/true));
}

enum class Kind { Uniform, Partial, Mixed };

/// How a value of a map body depends on the partial inputs.
Kind classify(Value v, const DenseSet<Value> &partialArgs,
              DenseMap<Value, Kind> &memo) {
  if (auto it = memo.find(v); it != memo.end())
    return it->second;
  Kind kind = Kind::Uniform;
  if (partialArgs.contains(v)) {
    kind = Kind::Partial;
  } else if (Operation *op = v.getDefiningOp()) {
    SmallVector<Kind> in;
    for (Value operand : op->getOperands())
      in.push_back(classify(operand, partialArgs, memo));
    auto count = [&](Kind k) { return llvm::count(in, k); };
    if (count(Kind::Mixed))
      kind = Kind::Mixed;
    else if (!count(Kind::Partial))
      kind = Kind::Uniform;
    else if (isa<arith::AddFOp, arith::SubFOp>(op))
      kind = count(Kind::Partial) == 2 ? Kind::Partial : Kind::Mixed;
    else if (isa<arith::MulFOp>(op))
      kind = count(Kind::Partial) == 1 ? Kind::Partial : Kind::Mixed;
    else if (isa<arith::DivFOp>(op))
      kind = in[0] == Kind::Partial && in[1] == Kind::Uniform ? Kind::Partial
                                                              : Kind::Mixed;
    else if (isa<arith::NegFOp>(op))
      kind = Kind::Partial;
    else
      kind = Kind::Mixed;
  }
  memo[v] = kind;
  return kind;
}

/// Whether `map` (a row map) yields a partial value given its inputs in
/// `partial`.
bool isLinearIn(MapOp map, const llvm::SetVector<Value> &partial) {
  if (map.getRank() != 1)
    return false;
  DenseSet<Value> args;
  for (auto [i, input] : llvm::enumerate(map.getInputs()))
    if (partial.contains(input))
      args.insert(map.getInputArg(i));
  if (args.empty())
    return false;
  DenseMap<Value, Kind> memo;
  return classify(map.getYielded(), args, memo) == Kind::Partial;
}

void deferRowSums(Operation *kernel) {
  llvm::SetVector<Value> partial;
  kernel->walk([&](ReduceOp op) {
    if (op.getKind() == ReduceKind::Add && isRows(op.getResult()) &&
        isZeroTile(op.getInit()))
      partial.insert(op.getResult());
  });
  if (partial.empty())
    return;
  // Optimistically, every loop-carried row value that starts from 0 (it is
  // partial if what it yields turns out to be); then grow through linear
  // maps to a fixpoint, and prune what is inconsistent below.
  kernel->walk([&](scf::ForOp loop) {
    for (auto [i, arg] : llvm::enumerate(loop.getRegionIterArgs()))
      if (isRows(arg) && isZeroTile(loop.getInitArgs()[i])) {
        partial.insert(arg);
        partial.insert(loop.getResult(i));
      }
  });
  for (bool changed = true; changed;) {
    changed = false;
    kernel->walk([&](MapOp map) {
      if (!partial.contains(map.getResult()) && isRows(map.getResult()) &&
          isLinearIn(map, partial))
        changed |= partial.insert(map.getResult());
    });
  }
  // A loop-carried value is partial only if what it yields is: drop the
  // others (a yield fed by a non-partial value) until consistent.
  for (bool changed = true; changed;) {
    changed = false;
    kernel->walk([&](scf::ForOp loop) {
      auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
      for (auto [i, value] : llvm::enumerate(yield.getOperands())) {
        Value arg = loop.getRegionIterArgs()[i];
        if (partial.contains(arg) && !partial.contains(value)) {
          partial.remove(arg);
          partial.remove(loop.getResult(i));
          changed = true;
        }
      }
    });
    kernel->walk([&](MapOp map) {
      if (partial.contains(map.getResult()) && !isLinearIn(map, partial)) {
        partial.remove(map.getResult());
        changed = true;
      }
    });
  }
  // Uses that need the sum get it from a conversion; the rest stay
  // partial. Zero splats that start a partial value get a partial type.
  for (Value v : partial) {
    Value sum; // one conversion per value, right after it
    for (OpOperand &use : llvm::make_early_inc_range(v.getUses())) {
      Operation *user = use.getOwner();
      bool keeps = false;
      if (auto map = dyn_cast<MapOp>(user))
        keeps = partial.contains(map.getResult());
      else if (auto yield = dyn_cast<scf::YieldOp>(user))
        keeps = isa<scf::ForOp>(yield->getParentOp()) &&
                partial.contains(
                    yield->getParentOp()->getResult(use.getOperandNumber()));
      if (keeps)
        continue;
      if (!sum) {
        OpBuilder b(v.getContext());
        b.setInsertionPointAfterValue(v);
        sum = ConvertLayoutOp::create(b, v.getLoc(), v.getType(), v);
      }
      use.set(sum);
    }
  }
  auto partialZero = [&](OpOperand &use) {
    OpBuilder b(use.getOwner());
    if (auto loop = dyn_cast<scf::ForOp>(use.getOwner()))
      b.setInsertionPoint(loop);
    auto type = partialType(use.get().getType());
    use.set(arith::ConstantOp::create(
        b, use.getOwner()->getLoc(), type,
        DenseElementsAttr::get(type, b.getF32FloatAttr(0.0f))));
  };
  for (Value v : partial) {
    Type type = partialType(v.getType());
    v.setType(type);
    if (auto reduce = v.getDefiningOp<ReduceOp>())
      partialZero(reduce.getInitMutable());
    if (auto arg = dyn_cast<BlockArgument>(v))
      if (auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp()))
        partialZero(loop.getInitsMutable()[arg.getArgNumber() - 1]);
  }
}

struct AttnNVDeferRowSumsPass
    : mlir::attn::nv::impl::AttnNVDeferRowSumsBase<AttnNVDeferRowSumsPass> {
  void runOnOperation() override {
    getOperation()->walk([&](TileGridOp grid) {
      ConfigAttr config = ConfigAttr::lookup(grid);
      if (config && !config.isHost())
        deferRowSums(grid->getParentOp());
    });
  }
};

} // namespace
