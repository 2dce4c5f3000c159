//===- Mask.cpp - The one definition of which keys a query sees -----------===//
//
// MaskStructure turns the mask_mod's result into a condition tree whose
// leaves are half-planes f(q, k) = a·q + b·k + c >= 0 (a, b integers, c
// invariant: constants and captures). Over a rectangle of queries and keys
// a half-plane's extremes lie on its corners, which gives both the tiles a
// query tile must visit and the tiles that need no per-element mask.
//
//===----------------------------------------------------------------------===//

#include "attn/Transforms/Mask.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

#include <vector>

using namespace mlir;
using namespace mlir::attn;

Value mlir::attn::buildDiagonalShift(OpBuilder &b, Location loc, MaskKind kind,
                                     Value numQueries, Value numKeys) {
  switch (kind) {
  case MaskKind::None:
    return {};
  case MaskKind::Causal:
    return arith::ConstantIndexOp::create(b, loc, 0);
  case MaskKind::CausalBottomRight:
    return arith::SubIOp::create(b, loc, numKeys, numQueries);
  }
  return {};
}

Value mlir::attn::buildCausalSeen(OpBuilder &b, Location loc, Value query,
                                  Value key, Value shift) {
  Value limit = arith::AddIOp::create(b, loc, query, shift);
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, key, limit);
}

std::pair<Value, Value> mlir::attn::buildQueryRange(OpBuilder &b, Location loc,
                                                    Value row, int64_t blockM,
                                                    Value numQueries,
                                                    bool packed) {
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  if (packed)
    return {arith::ConstantIndexOp::create(b, loc, 0),
            arith::SubIOp::create(b, loc, numQueries, one)};
  Value end = arith::MinSIOp::create(
      b, loc,
      arith::AddIOp::create(b, loc, row,
                            arith::ConstantIndexOp::create(b, loc, blockM)),
      numQueries);
  return {row, arith::SubIOp::create(b, loc, end, one)};
}

Value mlir::attn::buildKeyPastEnd(OpBuilder &b, Location loc, Value key,
                                  Value numKeys) {
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, key,
                               numKeys);
}

void mlir::attn::appendBuiltinMask(OpBuilder &b, Location loc, MaskKind kind,
                                   Value shift, Region &scoreMod,
                                   Region &maskMod,
                                   MutableOperandRange captures) {
  if (kind == MaskKind::None)
    return;
  unsigned numCaptures = captures.size();
  captures.append(shift);
  Type index = b.getIndexType();
  if (!scoreMod.empty())
    scoreMod.front().addArgument(index, loc);
  OpBuilder::InsertionGuard guard(b);
  if (maskMod.empty()) {
    Block *block = b.createBlock(&maskMod);
    SmallVector<Type> types(kMaskModArgs, index);
    for (Value c : captures.getAsOperandRange().take_front(numCaptures))
      types.push_back(c.getType());
    for (Type t : types)
      block->addArgument(t, loc);
    b.setInsertionPointToEnd(block);
    YieldOp::create(b, loc, ValueRange{arith::ConstantIntOp::create(
                                b, loc, b.getI1Type(), 1)});
  }
  Block &block = maskMod.front();
  Value shiftArg = block.addArgument(index, loc);
  auto yield = cast<YieldOp>(block.getTerminator());
  b.setInsertionPoint(yield);
  Value below = buildCausalSeen(b, loc, block.getArgument(2),
                                block.getArgument(3), shiftArg);
  Value seen = arith::AndIOp::create(b, loc, yield.getValues()[0], below);
  yield.getValuesMutable().assign(seen);
}

//===----------------------------------------------------------------------===//
// MaskStructure
//===----------------------------------------------------------------------===//

namespace {

/// a·q + b·k + sum(coef · term): terms are invariant values of the region.
struct Linear {
  int64_t q = 0, k = 0;
  SmallVector<std::pair<int64_t, Value>> terms;

  Linear scaled(int64_t by) const {
    Linear out{q * by, k * by, {}};
    for (auto [c, t] : terms)
      out.terms.push_back({c * by, t});
    return out;
  }
  Linear plus(const Linear &o) const {
    Linear out = *this;
    out.q += o.q;
    out.k += o.k;
    out.terms.append(o.terms.begin(), o.terms.end());
    return out;
  }
  Linear plusConstant(int64_t c, Value one) const {
    Linear out = *this;
    out.terms.push_back({c, one});
    return out;
  }
};

} // namespace

struct MaskStructure::Cond {
  enum Kind { Atom, And, Or, True, Run, Unknown } kind = Unknown;
  Linear f; // Atom: f >= 0
  // Run: queryIds[q] == keyIds[k], both non-decreasing (region values).
  Value queryIds, keyIds;
  std::vector<Cond> kids; // std::vector: Cond is incomplete here
};

namespace {

/// Parts a step of the ids' search narrows its range to (Emitter::search).
constexpr int64_t kSearchWays = 16;

using Cond = MaskStructure::Cond;

/// Reads a mask_mod's values; `one` marks constant terms (a null Value).
class Reader {
public:
  explicit Reader(Block &block) : block(block) {}

  /// Whether `v` depends on none of (b, h, q_idx, kv_idx).
  bool invariant(Value v) {
    if (auto arg = dyn_cast<BlockArgument>(v))
      return arg.getOwner() != &block || arg.getArgNumber() >= kMaskModArgs;
    Operation *def = v.getDefiningOp();
    if (def->getNumRegions() != 0)
      return false;
    return llvm::all_of(def->getOperands(),
                        [&](Value o) { return invariant(o); });
  }

  std::optional<Linear> linear(Value v) {
    if (!v.getType().isIntOrIndex())
      return std::nullopt;
    if (auto arg = dyn_cast<BlockArgument>(v);
        arg && arg.getOwner() == &block) {
      if (arg.getArgNumber() == 2)
        return Linear{1, 0, {}};
      if (arg.getArgNumber() == 3)
        return Linear{0, 1, {}};
    }
    if (invariant(v))
      return Linear{0, 0, {{1, v}}};
    Operation *def = v.getDefiningOp();
    if (!def)
      return std::nullopt;
    // Integer casts: the analysis assumes positions do not overflow.
    if (isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp,
            arith::ExtUIOp, arith::TruncIOp>(def))
      return linear(def->getOperand(0));
    if (isa<arith::AddIOp, arith::SubIOp, arith::MulIOp>(def)) {
      std::optional<Linear> l = linear(def->getOperand(0));
      std::optional<Linear> r = linear(def->getOperand(1));
      if (!l || !r)
        return std::nullopt;
      if (isa<arith::AddIOp>(def))
        return l->plus(*r);
      if (isa<arith::SubIOp>(def))
        return l->plus(r->scaled(-1));
      // A product needs a constant factor.
      APInt c;
      if (matchPattern(def->getOperand(1), m_ConstantInt(&c)))
        return l->scaled(c.getSExtValue());
      if (matchPattern(def->getOperand(0), m_ConstantInt(&c)))
        return r->scaled(c.getSExtValue());
    }
    return std::nullopt;
  }

  static Cond atom(Linear f) {
    Cond c;
    c.kind = Cond::Atom;
    c.f = std::move(f);
    return c;
  }
  static Cond combine(Cond::Kind kind, Cond a, Cond b) {
    Cond c;
    c.kind = kind;
    c.kids.push_back(std::move(a));
    c.kids.push_back(std::move(b));
    return c;
  }

  /// `negate`: the condition of !v.
  Cond cond(Value v, bool negate) {
    Cond result;
    APInt c;
    if (matchPattern(v, m_ConstantInt(&c))) {
      bool value = c.getBoolValue() != negate;
      // False: an atom that never holds.
      if (value) {
        result.kind = Cond::True;
        return result;
      }
      return atom(Linear{}.plusConstant(-1, Value()));
    }
    Operation *def = v.getDefiningOp();
    if (!def)
      return result;
    if (isa<arith::AndIOp, arith::OrIOp>(def)) {
      bool isAnd = isa<arith::AndIOp>(def) != negate;
      return combine(isAnd ? Cond::And : Cond::Or,
                     cond(def->getOperand(0), negate),
                     cond(def->getOperand(1), negate));
    }
    if (auto x = dyn_cast<arith::XOrIOp>(def)) {
      if (matchPattern(x.getRhs(), m_One()))
        return cond(x.getLhs(), !negate);
      if (matchPattern(x.getLhs(), m_One()))
        return cond(x.getRhs(), !negate);
      return result;
    }
    auto cmp = dyn_cast<arith::CmpIOp>(def);
    if (!cmp)
      return result;
    if (!negate && cmp.getPredicate() == arith::CmpIPredicate::eq)
      if (std::optional<Cond> run = sameRun(cmp.getLhs(), cmp.getRhs()))
        return *run;
    std::optional<Linear> l = linear(cmp.getLhs()), r = linear(cmp.getRhs());
    if (!l || !r)
      return result;
    Linear d = l->plus(r->scaled(-1)); // lhs - rhs
    using P = arith::CmpIPredicate;
    P pred = cmp.getPredicate();
    if (negate)
      pred = arith::invertPredicate(pred);
    Linear ge = d, gt = d.plusConstant(-1, Value()), le = d.scaled(-1),
           lt = d.scaled(-1).plusConstant(-1, Value());
    switch (pred) {
    case P::sge:
      return atom(ge);
    case P::sgt:
      return atom(gt);
    case P::sle:
      return atom(le);
    case P::slt:
      return atom(lt);
    case P::eq:
      return combine(Cond::And, atom(ge), atom(le));
    case P::ne:
      return combine(Cond::Or, atom(gt), atom(lt));
    default: // unsigned: not a half-plane of signed positions
      return result;
    }
  }

  /// ids[position] of a non-decreasing 1-D capture, `position` the block
  /// argument `which` (2: q_idx, 3: kv_idx); its memref, or null.
  Value lookup(Value v, unsigned which) {
    auto load = v.getDefiningOp<memref::LoadOp>();
    if (!load || !load->hasAttr(kNonDecreasingAttr) ||
        load.getIndices().size() != 1)
      return {};
    auto arg = dyn_cast<BlockArgument>(load.getIndices()[0]);
    if (!arg || arg.getOwner() != &block || arg.getArgNumber() != which)
      return {};
    auto ids = dyn_cast<BlockArgument>(load.getMemRef());
    if (!ids || ids.getOwner() != &block ||
        ids.getArgNumber() < kMaskModArgs)
      return {};
    return ids;
  }
  std::optional<Cond> sameRun(Value lhs, Value rhs) {
    for (auto [a, b] : {std::pair{lhs, rhs}, std::pair{rhs, lhs}}) {
      Value queryIds = lookup(a, 2), keyIds = lookup(b, 3);
      if (queryIds && keyIds) {
        Cond c;
        c.kind = Cond::Run;
        c.queryIds = queryIds;
        c.keyIds = keyIds;
        return c;
      }
    }
    return std::nullopt;
  }

private:
  Block &block;
};

/// Builds index arithmetic for the bounds, the region's invariant values
/// cloned with their capture arguments replaced by the captures.
struct Emitter {
  OpBuilder &b;
  Location loc;
  IRMapping mapping;

  Value cst(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  /// `v` (a region value) rebuilt where the bounds are, as an index.
  Value materialize(Value v) { return v ? toIndex(clone(v)) : cst(1); }
  Value clone(Value v) {
    if (Value mapped = mapping.lookupOrNull(v))
      return mapped;
    Operation *def = v.getDefiningOp();
    for (Value operand : def->getOperands())
      clone(operand);
    Operation *copy = b.clone(*def, mapping);
    return copy->getResult(cast<OpResult>(v).getResultNumber());
  }
  Value toIndex(Value v) {
    if (v.getType().isIndex())
      return v;
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
  }
  Value load(Value ids, Value position) {
    return memref::LoadOp::create(b, loc, clone(ids), position);
  }
  /// For each (value, upper) of `targets`, the first position of the
  /// non-decreasing `ids` whose value is not below (upper: is above) it: a
  /// search that narrows [lo, hi) to one of kSearchWays parts a step by
  /// kSearchWays - 1 probes, the targets in the same steps. A step's probes
  /// are independent loads, in flight together: 16k ids take 5 steps for
  /// both ends of a run, where two binary searches wait for 28 loads one
  /// after another (a query tile's first K/V copy waits for its bounds).
  SmallVector<Value, 2> search(Value ids,
                               ArrayRef<std::pair<Value, bool>> targets) {
    Value memref = clone(ids);
    Value size = memref::DimOp::create(b, loc, memref, 0);
    Type index = b.getIndexType();
    SmallVector<Value> init;
    for (size_t t = 0; t < targets.size(); ++t)
      init.append({cst(0), size});
    auto lt = [](OpBuilder &wb, Location wl, Value x, Value y) {
      return arith::CmpIOp::create(wb, wl, arith::CmpIPredicate::slt, x, y)
          .getResult();
    };
    auto loop = scf::WhileOp::create(
        b, loc, ValueRange(init).getTypes(), init,
        [&](OpBuilder &wb, Location wl, ValueRange ranges) {
          Value more = lt(wb, wl, ranges[0], ranges[1]);
          for (size_t t = 1; t < targets.size(); ++t)
            more = arith::OrIOp::create(
                wb, wl, more, lt(wb, wl, ranges[2 * t], ranges[2 * t + 1]));
          scf::ConditionOp::create(wb, wl, more, ranges);
        },
        [&](OpBuilder &wb, Location wl, ValueRange ranges) {
          auto c = [&](int64_t v) {
            return arith::ConstantIndexOp::create(wb, wl, v).getResult();
          };
          // Some range is not empty: size >= 1.
          Value last = arith::SubIOp::create(wb, wl, size, c(1));
          SmallVector<Value> next;
          for (auto [t, target] : llvm::enumerate(targets)) {
            auto [value, upper] = target;
            Value lo = ranges[2 * t], hi = ranges[2 * t + 1];
            Value n = arith::SubIOp::create(wb, wl, hi, lo);
            // Probe i at lo + n·i / ways (i = 1 .. ways - 1), inside
            // [lo, hi) when n >= 1 (a finished target's probes are read
            // at the last id and dropped); the probes left of the answer
            // are a prefix (the ids never decrease), `left` of them.
            // One op a statement: the IR's order must not depend on the
            // C++ compiler's order of evaluating arguments (gcc's kept).
            auto probe = [&](Value i) {
              Value ways = c(kSearchWays);
              Value scaled = arith::MulIOp::create(wb, wl, n, i);
              Value part = arith::DivUIOp::create(wb, wl, scaled, ways);
              return arith::AddIOp::create(wb, wl, lo, part).getResult();
            };
            Value left = c(0);
            for (int64_t i = 1; i < kSearchWays; ++i) {
              Value at = memref::LoadOp::create(
                  wb, wl, memref,
                  arith::MinUIOp::create(wb, wl, probe(c(i)), last)
                      .getResult());
              Value isLeft = arith::CmpIOp::create(
                  wb, wl,
                  upper ? arith::CmpIPredicate::sle
                        : arith::CmpIPredicate::slt,
                  at, value);
              left = arith::AddIOp::create(
                  wb, wl, left,
                  arith::IndexCastUIOp::create(wb, wl, index, isLeft));
            }
            // The answer lies after probe `left` and at or before probe
            // `left + 1` (lo and hi where there is none).
            Value anyLeft = arith::CmpIOp::create(
                wb, wl, arith::CmpIPredicate::ugt, left, c(0));
            Value allLeft = arith::CmpIOp::create(
                wb, wl, arith::CmpIPredicate::eq, left, c(kSearchWays - 1));
            Value one = c(1);
            Value afterLeft =
                arith::AddIOp::create(wb, wl, probe(left), one);
            Value newLo =
                arith::SelectOp::create(wb, wl, anyLeft, afterLeft, lo);
            Value newHi = arith::SelectOp::create(
                wb, wl, allLeft, hi,
                probe(arith::AddIOp::create(wb, wl, left, c(1))));
            Value active = lt(wb, wl, lo, hi);
            next.push_back(arith::SelectOp::create(wb, wl, active, newLo, lo));
            next.push_back(arith::SelectOp::create(wb, wl, active, newHi, hi));
          }
          scf::YieldOp::create(wb, wl, next);
        });
    SmallVector<Value, 2> found;
    for (size_t t = 0; t < targets.size(); ++t)
      found.push_back(loop.getResult(2 * t));
    return found;
  }
  Value add(Value x, Value y) {
    return x ? Value(arith::AddIOp::create(b, loc, x, y)) : y;
  }
  Value scaled(int64_t c, Value v) {
    if (c == 1)
      return v;
    return arith::MulIOp::create(b, loc, v, cst(c));
  }
  /// sum(coef · term)
  Value invariantPart(const Linear &f) {
    Value sum;
    for (auto [c, t] : f.terms)
      sum = add(sum, scaled(c, materialize(t)));
    return sum ? sum : cst(0);
  }
  /// f at (q, k).
  Value at(const Linear &f, Value q, Value k) {
    Value sum = invariantPart(f);
    if (f.q)
      sum = add(sum, scaled(f.q, q));
    if (f.k)
      sum = add(sum, scaled(f.k, k));
    return sum;
  }
};

using Bound = Value; // null: unbounded

Value minOrMax(Emitter &e, Value x, Value y, bool max) {
  if (max)
    return arith::MaxSIOp::create(e.b, e.loc, x, y);
  return arith::MinSIOp::create(e.b, e.loc, x, y);
}

/// The keys' [lo, hi] (inclusive, either unbounded) the queries [x0, x1]
/// may see under `c`; with `forQueries` the roles swap: the queries that
/// may see a key of [x0, x1].
std::pair<Bound, Bound> bounds(Emitter &e, const Cond &c, Value x0, Value x1,
                               bool forQueries) {
  switch (c.kind) {
  case Cond::Atom: {
    const Linear &f = c.f;
    int64_t self = forQueries ? f.q : f.k, other = forQueries ? f.k : f.q;
    if (self != 1 && self != -1)
      return {};
    // The other term's extreme over [x0, x1] in the direction that widens:
    // x >= -(a·y + c) is loosest at the largest a·y, x <= a·y + c too.
    Linear rest = f;
    (forQueries ? rest.q : rest.k) = 0;
    Value y = other > 0 ? x1 : x0;
    Value restAt = forQueries ? e.at(rest, Value(), y) : e.at(rest, y, Value());
    if (self == 1)
      return {arith::SubIOp::create(e.b, e.loc, e.cst(0), restAt), Bound()};
    return {Bound(), restAt};
  }
  case Cond::And:
  case Cond::Or: {
    bool isAnd = c.kind == Cond::And;
    std::pair<Bound, Bound> out = bounds(e, c.kids[0], x0, x1, forQueries);
    for (const Cond &kid : ArrayRef(c.kids).drop_front()) {
      auto [lo, hi] = bounds(e, kid, x0, x1, forQueries);
      // And: the tighter of two bounds, either one alone; or: the looser,
      // unbounded when either is.
      auto merge = [&](Bound x, Bound y, bool max) -> Bound {
        if (x && y)
          return minOrMax(e, x, y, max);
        return isAnd ? (x ? x : y) : Bound();
      };
      out.first = merge(out.first, lo, isAnd);
      out.second = merge(out.second, hi, !isAnd);
    }
    return out;
  }
  case Cond::Run: {
    // Sorted ids: the positions of the first one's run to the last one's.
    Value from = forQueries ? c.keyIds : c.queryIds;
    Value to = forQueries ? c.queryIds : c.keyIds;
    SmallVector<Value, 2> found =
        e.search(to, {{e.load(from, x0), /*upper=*/false},
                      {e.load(from, x1), /*upper=*/true}});
    Value lo = found[0], past = found[1];
    return {lo, arith::SubIOp::create(e.b, e.loc, past, e.cst(1))};
  }
  case Cond::True:
  case Cond::Unknown:
    return {};
  }
  return {};
}

/// i1: `c` holds on all of [q0, q1] x [k0, k1].
Value allSeen(Emitter &e, const Cond &c, Value q0, Value q1, Value k0,
              Value k1) {
  switch (c.kind) {
  case Cond::Atom: {
    Value min = e.at(c.f, c.f.q > 0 ? q0 : q1, c.f.k > 0 ? k0 : k1);
    return arith::CmpIOp::create(e.b, e.loc, arith::CmpIPredicate::sge, min,
                                 e.cst(0));
  }
  case Cond::And:
  case Cond::Or: {
    Value out = allSeen(e, c.kids[0], q0, q1, k0, k1);
    for (const Cond &kid : ArrayRef(c.kids).drop_front()) {
      Value v = allSeen(e, kid, q0, q1, k0, k1);
      out = c.kind == Cond::And
                ? Value(arith::AndIOp::create(e.b, e.loc, out, v))
                : Value(arith::OrIOp::create(e.b, e.loc, out, v));
    }
    return out;
  }
  case Cond::Run: {
    // One run holds every query and every key: the ends' ids are equal.
    Value size =
        memref::DimOp::create(e.b, e.loc, e.clone(c.keyIds), 0);
    Value lastKey = arith::MinSIOp::create(
        e.b, e.loc, k1, arith::SubIOp::create(e.b, e.loc, size, e.cst(1)));
    Value first = e.load(c.queryIds, q0);
    auto eq = [&](Value x, Value y) {
      return arith::CmpIOp::create(e.b, e.loc, arith::CmpIPredicate::eq, x, y)
          .getResult();
    };
    Value sameKey = eq(first, e.load(c.keyIds, k0));
    Value sameQuery = eq(first, e.load(c.queryIds, q1));
    Value same = arith::AndIOp::create(e.b, e.loc, sameQuery, sameKey);
    return arith::AndIOp::create(e.b, e.loc, same,
                                 eq(first, e.load(c.keyIds, lastKey)));
  }
  case Cond::True:
    return arith::ConstantIntOp::create(e.b, e.loc, e.b.getI1Type(), 1);
  case Cond::Unknown:
    return arith::ConstantIntOp::create(e.b, e.loc, e.b.getI1Type(), 0);
  }
  return {};
}

} // namespace

MaskStructure::MaskStructure(Region &maskMod, ValueRange captures)
    : cond(std::make_unique<Cond>()), region(&maskMod),
      captures(captures.begin(), captures.end()) {
  cond->kind = Cond::True;
  if (maskMod.empty())
    return;
  Block &block = maskMod.front();
  Reader reader(block);
  *cond = reader.cond(cast<YieldOp>(block.getTerminator()).getValues()[0],
                      /*negate=*/false);
}

MaskStructure::~MaskStructure() = default;

static bool hasRun(const MaskStructure::Cond &c) {
  return c.kind == MaskStructure::Cond::Run ||
         llvm::any_of(c.kids, [](const MaskStructure::Cond &k) {
           return hasRun(k);
         });
}

bool MaskStructure::hasDataRuns() const { return hasRun(*cond); }

static Emitter emitterFor(OpBuilder &b, Location loc, Region *region,
                          ArrayRef<Value> captures) {
  Emitter e{b, loc, {}};
  if (!region->empty())
    for (auto [arg, value] : llvm::zip(
             region->front().getArguments().drop_front(kMaskModArgs),
             captures))
      e.mapping.map(arg, value);
  return e;
}

/// [begin, end) of the positions in [lo, hi] (either null: unbounded),
/// begin rounded down to a multiple of `block`, end <= `count`.
static std::pair<Value, Value> alignedRange(Emitter &e, Bound lo, Bound hi,
                                            Value count, int64_t block) {
  OpBuilder &b = e.b;
  Value begin = e.cst(0), end = count;
  if (lo) {
    // Rounded down to a tile: tiles start at multiples of the block.
    lo = arith::MaxSIOp::create(b, e.loc, lo, e.cst(0));
    Value blockSize = e.cst(block);
    Value tiles = arith::DivUIOp::create(b, e.loc, lo, e.cst(block));
    begin = arith::MulIOp::create(b, e.loc, tiles, blockSize);
  }
  if (hi) {
    Value past = arith::AddIOp::create(b, e.loc, hi, e.cst(1));
    past = arith::MaxSIOp::create(b, e.loc, past, e.cst(0));
    end = arith::MinSIOp::create(b, e.loc, count, past);
  }
  return {begin, end};
}

std::pair<Value, Value>
MaskStructure::keyRange(OpBuilder &b, Location loc, Value firstQuery,
                        Value lastQuery, Value numKeys, int64_t blockN) const {
  Emitter e = emitterFor(b, loc, region, captures);
  auto [lo, hi] = bounds(e, *cond, firstQuery, lastQuery, /*forQueries=*/false);
  return alignedRange(e, lo, hi, numKeys, blockN);
}

std::pair<Value, Value>
MaskStructure::queryRange(OpBuilder &b, Location loc, Value firstKey,
                          Value lastKey, Value numQueries,
                          int64_t blockM) const {
  Emitter e = emitterFor(b, loc, region, captures);
  auto [lo, hi] = bounds(e, *cond, firstKey, lastKey, /*forQueries=*/true);
  return alignedRange(e, lo, hi, numQueries, blockM);
}

Value MaskStructure::tileAllSeen(OpBuilder &b, Location loc, Value firstQuery,
                                 Value lastQuery, Value firstKey,
                                 Value lastKey) const {
  Emitter e = emitterFor(b, loc, region, captures);
  return allSeen(e, *cond, firstQuery, lastQuery, firstKey, lastKey);
}
