//===- UserMods.cpp - A user's score_mod / mask_mod as MLIR text ----------===//

#include "attn/Transforms/UserMods.h"

#include "attn/Transforms/Mask.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Parser/Parser.h"


using namespace mlir;
using namespace mlir::attn;

namespace {

/// f32, i32, i64, index; memrefs of f32 or i32 with dynamic sizes and
/// strides (what a kernel argument is).
bool isCaptureType(Type t) {
  if (t.isF32() || t.isInteger(32) || t.isInteger(64) || t.isIndex())
    return true;
  auto m = dyn_cast<MemRefType>(t);
  if (!m || !(m.getElementType().isF32() || m.getElementType().isInteger(32)))
    return false;
  if (m.getRank() < 1 || m.getRank() > 4 || m.hasStaticShape() ||
      llvm::any_of(m.getShape(), [](int64_t d) { return d != ShapedType::kDynamic; }))
    return false;
  auto layout = dyn_cast<StridedLayoutAttr>(m.getLayout());
  return layout && ShapedType::isDynamic(layout.getOffset()) &&
         llvm::all_of(layout.getStrides(), ShapedType::isDynamic);
}

/// Checks a mod's signature: `leading` arguments, then captures, one
/// result; returns its capture types.
FailureOr<SmallVector<Type>> checkSignature(func::FuncOp fn,
                                            ArrayRef<Type> leading,
                                            Type result, StringRef form) {
  FunctionType type = fn.getFunctionType();
  if (type.getNumResults() != 1 || type.getResult(0) != result ||
      type.getNumInputs() < leading.size() ||
      type.getInputs().take_front(leading.size()) != leading)
    return fn.emitError() << "@" << fn.getName() << " must be " << form
                          << ", got " << type;
  SmallVector<Type> captures(type.getInputs().drop_front(leading.size()));
  for (auto [i, t] : llvm::enumerate(captures))
    if (!isCaptureType(t))
      return fn.emitError()
             << "@" << fn.getName() << " capture #" << i << " has type " << t
             << ": captures are f32, i32, i64 or index, or memrefs of f32 "
                "or i32 of rank 1 to 4 with dynamic sizes and strides "
                "(memref<?xf32, strided<[?], offset: ?>>)";
  if (fn.getBody().getBlocks().size() != 1)
    return fn.emitError() << "@" << fn.getName() << " must be one block";
  return captures;
}

} // namespace

FailureOr<UserMods> mlir::attn::parseUserMods(StringRef text,
                                              MLIRContext *ctx) {
  // An empty text would reach the parser with a null buffer (which it takes
  // for a code-completion point): say what is missing instead.
  if (text.trim().empty())
    return emitError(FileLineColLoc::get(ctx, kUserModsBuffer, 1, 1),
                     "user mods define neither @score_mod nor @mask_mod");
  ParserConfig config(ctx);
  UserMods mods;
  mods.module = parseSourceString<ModuleOp>(text, config, kUserModsBuffer);
  if (!mods.module)
    return failure();
  ModuleOp module = *mods.module;
  for (Operation &op : module.getBody()->getOperations()) {
    auto fn = dyn_cast<func::FuncOp>(op);
    if (!fn || (fn.getName() != "score_mod" && fn.getName() != "mask_mod"))
      return op.emitError("user mods hold func.func @score_mod and "
                          "@mask_mod only");
  }
  mods.scoreMod = module.lookupSymbol<func::FuncOp>("score_mod");
  mods.maskMod = module.lookupSymbol<func::FuncOp>("mask_mod");
  if (!mods.scoreMod && !mods.maskMod)
    return emitError(module.getLoc(),
                     "user mods define neither @score_mod nor @mask_mod");
  Builder b(ctx);
  Type index = b.getIndexType();
  std::optional<SmallVector<Type>> captures;
  if (mods.scoreMod) {
    auto c = checkSignature(mods.scoreMod, {b.getF32Type(), index, index,
                                            index, index},
                            b.getF32Type(),
                            "(f32, index, index, index, index, captures...) "
                            "-> f32");
    if (failed(c))
      return failure();
    captures = *c;
  }
  if (mods.maskMod) {
    auto c = checkSignature(mods.maskMod, {index, index, index, index},
                            b.getI1Type(),
                            "(index, index, index, index, captures...) -> i1");
    if (failed(c))
      return failure();
    if (captures && *captures != *c)
      return mods.maskMod.emitError(
          "@mask_mod and @score_mod must take the same captures");
    captures = *c;
  }
  mods.captures = std::move(*captures);
  return mods;
}

std::string mlir::attn::canonicalUserMods(const UserMods &mods) {
  std::string text;
  llvm::raw_string_ostream os(text);
  OpPrintingFlags flags;
  flags.printGenericOpForm().useLocalScope();
  for (func::FuncOp fn : {mods.scoreMod, mods.maskMod})
    if (fn)
      fn->print(os, flags);
  return text;
}

template <typename OpTy>
LogicalResult mlir::attn::attachUserMods(OpBuilder &b, OpTy sdpa,
                                         const UserMods &mods,
                                         ValueRange args) {
  Location loc = sdpa.getLoc();
  // Masks combine (a key is seen when both see it); scores would need an
  // order, so a user's score_mod stands alone.
  if (mods.scoreMod && !sdpa.getScoreMod().empty())
    return sdpa.emitOpError("a user's @score_mod cannot be combined with "
                            "named score variants (alibi, bias, softcap)");
  SmallVector<Type> before(sdpa.getCaptures().getTypes());
  sdpa.getCapturesMutable().append(args);
  // The named variants' regions take the new captures too.
  for (Region *region : {&sdpa.getScoreMod(), &sdpa.getMaskMod()})
    if (!region->empty())
      for (Value arg : args)
        region->front().addArgument(arg.getType(), loc);
  for (auto [fn, region, leading] :
       {std::tuple{mods.scoreMod, &sdpa.getScoreMod(), kScoreModArgs},
        std::tuple{mods.maskMod, &sdpa.getMaskMod(), kMaskModArgs}}) {
    if (!fn)
      continue;
    OpBuilder::InsertionGuard guard(b);
    Block &body = fn.getBody().front();
    auto ret = dyn_cast<func::ReturnOp>(body.getTerminator());
    if (!ret)
      return fn.emitError("must end in func.return");
    // A named mask_mod already there: the user's is cloned before its yield
    // and the two results and-ed.
    YieldOp named;
    Block *block;
    if (!region->empty()) {
      block = &region->front();
      named = cast<YieldOp>(block->getTerminator());
      b.setInsertionPoint(named);
    } else {
      block = b.createBlock(region);
      for (BlockArgument arg : body.getArguments().take_front(leading))
        block->addArgument(arg.getType(), arg.getLoc());
      for (Type t : before)
        block->addArgument(t, loc);
      for (Value arg : args)
        block->addArgument(arg.getType(), loc);
      b.setInsertionPointToEnd(block);
    }
    IRMapping mapping;
    for (auto [i, arg] : llvm::enumerate(body.getArguments()))
      mapping.map(arg, block->getArgument(
                           i < leading ? i : i + before.size()));
    for (Operation &op : body.without_terminator())
      b.clone(op, mapping);
    Value result = mapping.lookup(ret.getOperand(0));
    if (named) {
      result = arith::AndIOp::create(b, ret.getLoc(), named.getValues()[0],
                                     result);
      named.getValuesMutable().assign(result);
    } else {
      YieldOp::create(b, ret.getLoc(), ValueRange{result});
    }
  }
  return success();
}

template LogicalResult mlir::attn::attachUserMods(OpBuilder &, SdpaOp,
                                                  const UserMods &,
                                                  ValueRange);
template LogicalResult mlir::attn::attachUserMods(OpBuilder &, SdpaBackwardOp,
                                                  const UserMods &,
                                                  ValueRange);
