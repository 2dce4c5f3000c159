//===- AttnOps.cpp - attn dialect operations ------------------------------===//
//
// Verifiers name the offending operand and print its shape, so that a
// malformed tile program says which value is wrong, not only that one is.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"

#include <string>

using namespace mlir;
using namespace mlir::attn;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// "2x?x128xbf16"-style rendering of a shaped type's shape and element type.
static std::string shapeOf(Type type) {
  auto shaped = cast<ShapedType>(type);
  std::string out;
  llvm::raw_string_ostream os(out);
  for (int64_t d : shaped.getShape()) {
    if (ShapedType::isDynamic(d))
      os << "?x";
    else
      os << d << "x";
  }
  os << shaped.getElementType();
  return out;
}

static bool dimsConflict(int64_t a, int64_t b) {
  return !ShapedType::isDynamic(a) && !ShapedType::isDynamic(b) && a != b;
}

/// Emits "'<a>' (shape) has <what> X but '<b>' (shape) has Y" when the two
/// dims are both static and differ.
static LogicalResult checkSameDim(Operation *op, StringRef aName, Type aType,
                                  unsigned aDim, StringRef bName, Type bType,
                                  unsigned bDim, StringRef what) {
  int64_t a = cast<ShapedType>(aType).getDimSize(aDim);
  int64_t b = cast<ShapedType>(bType).getDimSize(bDim);
  if (!dimsConflict(a, b))
    return success();
  return op->emitOpError() << "'" << aName << "' (" << shapeOf(aType)
                           << ") has " << what << " " << a << " but '" << bName
                           << "' (" << shapeOf(bType) << ") has " << b;
}

static LogicalResult checkUnitInnerStride(Operation *op, StringRef name,
                                          Type type) {
  auto memref = cast<MemRefType>(type);
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(memref.getStridesAndOffset(strides, offset)) ||
      strides.back() != 1)
    return op->emitOpError()
           << "'" << name << "' (" << shapeOf(type) << ", layout "
           << memref.getLayout()
           << ") must have a unit innermost stride";
  return success();
}

static LogicalResult checkStaticDim(Operation *op, StringRef name, Type type,
                                    unsigned dim, StringRef what) {
  if (!cast<ShapedType>(type).isDynamicDim(dim))
    return success();
  return op->emitOpError() << "'" << name << "' (" << shapeOf(type)
                           << ") must have a static " << what;
}

static LogicalResult checkStaticShape(Operation *op, StringRef name,
                                      Type type) {
  if (cast<ShapedType>(type).hasStaticShape())
    return success();
  return op->emitOpError() << "tile '" << name << "' (" << shapeOf(type)
                           << ") must have a static shape";
}

static LogicalResult checkElementTypes(Operation *op, StringRef aName, Type a,
                                       StringRef bName, Type b) {
  if (getElementTypeOrSelf(a) == getElementTypeOrSelf(b))
    return success();
  return op->emitOpError() << "'" << bName << "' (" << shapeOf(b)
                           << ") must have the element type of '" << aName
                           << "' (" << shapeOf(a) << ")";
}

//===----------------------------------------------------------------------===//
// SdpaOp
//===----------------------------------------------------------------------===//

LogicalResult SdpaOp::verify() {
  Operation *op = getOperation();
  Type q = getQuery().getType(), k = getKey().getType(),
       v = getValue().getType(), o = getOutput().getType();
  if (failed(checkElementTypes(op, "query", q, "key", k)) ||
      failed(checkElementTypes(op, "query", q, "value", v)) ||
      failed(checkElementTypes(op, "query", q, "output", o)))
    return failure();
  if (failed(checkStaticDim(op, "query", q, 3, "head dim")) ||
      failed(checkStaticDim(op, "value", v, 3, "head dim")))
    return failure();
  if (failed(checkSameDim(op, "query", q, 3, "key", k, 3, "head dim")) ||
      failed(checkSameDim(op, "value", v, 3, "output", o, 3, "head dim")) ||
      failed(checkSameDim(op, "key", k, 2, "value", v, 2, "sequence length")) ||
      failed(checkSameDim(op, "query", q, 2, "output", o, 2,
                          "sequence length")))
    return failure();
  const std::pair<StringRef, Type> others[] = {
      {"key", k}, {"value", v}, {"output", o}};
  for (auto [name, type] : others)
    if (failed(checkSameDim(op, "query", q, 0, name, type, 0, "batch")) ||
        failed(checkSameDim(op, "query", q, 1, name, type, 1, "head count")))
      return failure();
  if (Value lse = getLse()) {
    Type l = lse.getType();
    if (failed(checkSameDim(op, "query", q, 0, "lse", l, 0, "batch")) ||
        failed(checkSameDim(op, "query", q, 1, "lse", l, 1, "head count")) ||
        failed(checkSameDim(op, "query", q, 2, "lse", l, 2, "sequence length")))
      return failure();
  }
  const std::pair<StringRef, Type> all[] = {
      {"query", q}, {"key", k}, {"value", v}, {"output", o}};
  for (auto [name, type] : all)
    if (failed(checkUnitInnerStride(op, name, type)))
      return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// TileGridOp
//===----------------------------------------------------------------------===//

void TileGridOp::build(OpBuilder &builder, OperationState &state, Value batch,
                       Value heads, Value queryTiles) {
  state.addOperands({batch, heads, queryTiles});
  Region *body = state.addRegion();
  Block *block = new Block();
  Type index = builder.getIndexType();
  block->addArguments({index, index, index},
                      {state.location, state.location, state.location});
  body->push_back(block);
}

ParseResult TileGridOp::parse(OpAsmParser &parser, OperationState &result) {
  SmallVector<OpAsmParser::Argument, 3> ivs;
  SmallVector<OpAsmParser::UnresolvedOperand, 3> bounds;
  Type index = parser.getBuilder().getIndexType();
  if (parser.parseArgumentList(ivs, OpAsmParser::Delimiter::Paren) ||
      parser.parseKeyword("in") ||
      parser.parseOperandList(bounds, OpAsmParser::Delimiter::Paren))
    return failure();
  if (ivs.size() != 3 || bounds.size() != 3)
    return parser.emitError(parser.getNameLoc(),
                            "expected three coordinates (batch, head, tile)");
  for (auto &iv : ivs)
    iv.type = index;
  if (parser.resolveOperands(bounds, index, result.operands) ||
      parser.parseOptionalAttrDictWithKeyword(result.attributes))
    return failure();
  Region *body = result.addRegion();
  return parser.parseRegion(*body, ivs);
}

void TileGridOp::print(OpAsmPrinter &p) {
  Block &block = getBodyBlock();
  p << " (" << block.getArgument(0) << ", " << block.getArgument(1) << ", "
    << block.getArgument(2) << ") in (" << getBatch() << ", " << getHeads()
    << ", " << getQueryTiles() << ")";
  p.printOptionalAttrDictWithKeyword((*this)->getAttrs());
  p << " ";
  p.printRegion(getBody(), /*printEntryBlockArgs=*/false);
}

LogicalResult TileGridOp::verifyRegions() {
  Block &block = getBodyBlock();
  if (block.getNumArguments() != 3 ||
      !llvm::all_of(block.getArgumentTypes(),
                    [](Type t) { return t.isIndex(); }))
    return emitOpError("body must take three index arguments (batch, head, "
                       "query tile), got ")
           << block.getNumArguments();
  return success();
}

//===----------------------------------------------------------------------===//
// KvLoopOp
//===----------------------------------------------------------------------===//

void KvLoopOp::build(OpBuilder &builder, OperationState &state, Value lower,
                     Value upper, Value step, Value initMax, Value initSum,
                     Value initAcc) {
  state.addOperands({lower, upper, step, initMax, initSum, initAcc});
  state.addTypes({initMax.getType(), initSum.getType(), initAcc.getType()});
  Region *body = state.addRegion();
  Block *block = new Block();
  Location loc = state.location;
  block->addArguments({builder.getIndexType(), initMax.getType(),
                       initSum.getType(), initAcc.getType()},
                      {loc, loc, loc, loc});
  body->push_back(block);
}

ParseResult KvLoopOp::parse(OpAsmParser &parser, OperationState &result) {
  Builder &b = parser.getBuilder();
  Type index = b.getIndexType();
  OpAsmParser::Argument iv;
  OpAsmParser::UnresolvedOperand lower, upper, step;
  iv.type = index;
  if (parser.parseArgument(iv) || parser.parseEqual() ||
      parser.parseOperand(lower) || parser.parseKeyword("to") ||
      parser.parseOperand(upper) || parser.parseKeyword("step") ||
      parser.parseOperand(step) || parser.parseKeyword("iter_args"))
    return failure();
  SmallVector<OpAsmParser::Argument, 3> args;
  SmallVector<OpAsmParser::UnresolvedOperand, 3> inits;
  if (parser.parseAssignmentList(args, inits))
    return failure();
  if (args.size() != 3)
    return parser.emitError(parser.getNameLoc(),
                            "expected three iter_args (max, sum, acc)");
  Type rowType, accType;
  if (parser.parseColon() || parser.parseType(rowType) || parser.parseComma() ||
      parser.parseType(accType))
    return failure();
  Type stateTypes[] = {rowType, rowType, accType};
  for (auto [arg, type] : llvm::zip(args, stateTypes))
    arg.type = type;
  if (parser.resolveOperand(lower, index, result.operands) ||
      parser.resolveOperand(upper, index, result.operands) ||
      parser.resolveOperand(step, index, result.operands) ||
      parser.resolveOperands(inits, stateTypes, parser.getNameLoc(),
                             result.operands) ||
      parser.parseOptionalAttrDictWithKeyword(result.attributes))
    return failure();
  result.addTypes(stateTypes);
  SmallVector<OpAsmParser::Argument, 4> regionArgs = {iv};
  regionArgs.append(args.begin(), args.end());
  return parser.parseRegion(*result.addRegion(), regionArgs);
}

void KvLoopOp::print(OpAsmPrinter &p) {
  Block &block = getBodyBlock();
  p << " " << getInductionVar() << " = " << getLower() << " to " << getUpper()
    << " step " << getStep() << " iter_args(" << block.getArgument(1) << " = "
    << getInitMax() << ", " << block.getArgument(2) << " = " << getInitSum()
    << ", " << block.getArgument(3) << " = " << getInitAcc()
    << ") : " << getInitMax().getType() << ", " << getInitAcc().getType();
  p.printOptionalAttrDictWithKeyword((*this)->getAttrs());
  p << " ";
  p.printRegion(getBody(), /*printEntryBlockArgs=*/false,
                /*printBlockTerminators=*/true);
}

LogicalResult KvLoopOp::verify() {
  Type row = getInitMax().getType(), acc = getInitAcc().getType();
  if (failed(checkStaticShape(*this, "max", row)) ||
      failed(checkStaticShape(*this, "acc", acc)))
    return failure();
  return checkSameDim(*this, "max", row, 0, "acc", acc, 0, "row count");
}

LogicalResult KvLoopOp::verifyRegions() {
  Block &block = getBodyBlock();
  SmallVector<Type> expected = {IndexType::get(getContext())};
  llvm::append_range(expected, getResultTypes());
  if (block.getArgumentTypes() != ArrayRef<Type>(expected))
    return emitOpError("body must take (index, max, sum, acc) arguments "
                       "matching the iter_args");
  return success();
}

//===----------------------------------------------------------------------===//
// YieldOp
//===----------------------------------------------------------------------===//

LogicalResult YieldOp::verify() {
  auto loop = cast<KvLoopOp>((*this)->getParentOp());
  if (getValues().getTypes() != loop.getResultTypes())
    return emitOpError("must yield (max, sum, acc) of types ")
           << loop.getResultTypes() << ", got " << getValues().getTypes();
  return success();
}

//===----------------------------------------------------------------------===//
// Tile data movement
//===----------------------------------------------------------------------===//

LogicalResult LoadTileOp::verify() {
  Type src = getSource().getType(), tile = getResult().getType();
  if (failed(checkStaticShape(*this, "result", tile)) ||
      failed(checkElementTypes(*this, "source", src, "result", tile)) ||
      failed(checkStaticDim(*this, "source", src, 3, "head dim")) ||
      failed(checkSameDim(*this, "source", src, 3, "result", tile, 1,
                          "head dim")) ||
      failed(checkUnitInnerStride(*this, "source", src)))
    return failure();
  return success();
}

LogicalResult StoreTileOp::verify() {
  Type tile = getTile().getType(), dest = getDest().getType();
  auto tileRank = cast<ShapedType>(tile).getRank();
  auto destRank = cast<ShapedType>(dest).getRank();
  if (failed(checkStaticShape(*this, "tile", tile)))
    return failure();
  if (destRank != tileRank + 2)
    return emitOpError() << "'dest' (" << shapeOf(dest) << ") must have rank "
                         << tileRank + 2 << " for a tile of rank " << tileRank
                         << " (" << shapeOf(tile) << ")";
  if (failed(checkElementTypes(*this, "dest", dest, "tile", tile)))
    return failure();
  if (tileRank == 2 && failed(checkSameDim(*this, "dest", dest, 3, "tile",
                                           tile, 1, "head dim")))
    return failure();
  // Rows of the output are copied as vectors; the LSE may have any strides.
  if (tileRank == 1)
    return success();
  return checkUnitInnerStride(*this, "dest", dest);
}

//===----------------------------------------------------------------------===//
// Tile compute
//===----------------------------------------------------------------------===//

/// Checks Q (BM×D), K (BN×D), V (BN×Dv), row state (BM), acc (BM×Dv) for the
/// operands that are present (null types are skipped).
static LogicalResult verifyTileShapes(Operation *op, Type q, Type k, Type v,
                                      Type row, Type acc,
                                      StringRef rowName = "max") {
  const std::pair<StringRef, Type> tiles[] = {
      {"query", q}, {"key", k}, {"value", v}, {rowName, row}, {"acc", acc}};
  for (auto [name, type] : tiles)
    if (type && failed(checkStaticShape(op, name, type)))
      return failure();
  if (q && k &&
      (failed(checkElementTypes(op, "query", q, "key", k)) ||
       failed(checkSameDim(op, "query", q, 1, "key", k, 1, "head dim"))))
    return failure();
  if (k && v &&
      (failed(checkElementTypes(op, "key", k, "value", v)) ||
       failed(checkSameDim(op, "key", k, 0, "value", v, 0, "row count"))))
    return failure();
  if (q && row && failed(checkSameDim(op, "query", q, 0, rowName, row, 0,
                                      "row count")))
    return failure();
  if (row && acc &&
      failed(checkSameDim(op, rowName, row, 0, "acc", acc, 0, "row count")))
    return failure();
  if (v && acc &&
      failed(checkSameDim(op, "value", v, 1, "acc", acc, 1, "head dim")))
    return failure();
  return success();
}

LogicalResult OnlineAttentionOp::verify() {
  return verifyTileShapes(*this, getQuery().getType(), getKey().getType(),
                          getValue().getType(), getMax().getType(),
                          getAcc().getType());
}

LogicalResult QKOp::verify() {
  Type q = getQuery().getType(), k = getKey().getType(),
       s = getScores().getType();
  if (failed(verifyTileShapes(*this, q, k, {}, {}, {})) ||
      failed(checkStaticShape(*this, "scores", s)) ||
      failed(checkSameDim(*this, "query", q, 0, "scores", s, 0, "row count")) ||
      failed(checkSameDim(*this, "key", k, 0, "scores", s, 1, "column count")))
    return failure();
  return success();
}

LogicalResult OnlineSoftmaxOp::verify() {
  Type s = getScores().getType(), m = getMax().getType(),
       p = getProbs().getType();
  if (failed(checkStaticShape(*this, "scores", s)) ||
      failed(checkStaticShape(*this, "max", m)) ||
      failed(checkSameDim(*this, "scores", s, 0, "max", m, 0, "row count")))
    return failure();
  if (cast<ShapedType>(s).getShape() != cast<ShapedType>(p).getShape())
    return emitOpError() << "'probs' (" << shapeOf(p)
                         << ") must have the shape of 'scores' (" << shapeOf(s)
                         << ")";
  return success();
}

LogicalResult PVOp::verify() {
  Type p = getProbs().getType(), v = getValue().getType(),
       acc = getAcc().getType(), alpha = getAlpha().getType();
  if (failed(verifyTileShapes(*this, {}, {}, v, alpha, acc, "alpha")) ||
      failed(checkStaticShape(*this, "probs", p)) ||
      failed(checkElementTypes(*this, "value", v, "probs", p)) ||
      failed(checkSameDim(*this, "probs", p, 0, "acc", acc, 0, "row count")) ||
      failed(checkSameDim(*this, "probs", p, 1, "value", v, 0, "key count")))
    return failure();
  return success();
}

LogicalResult FinalizeOp::verify() {
  Type acc = getAcc().getType(), m = getMax().getType(),
       o = getOutput().getType();
  if (failed(verifyTileShapes(*this, {}, {}, {}, m, acc)))
    return failure();
  if (cast<ShapedType>(acc).getShape() != cast<ShapedType>(o).getShape())
    return emitOpError() << "'output' (" << shapeOf(o)
                         << ") must have the shape of 'acc' (" << shapeOf(acc)
                         << ")";
  return success();
}

#define GET_OP_CLASSES
#include "attn/Dialect/Attn/IR/AttnOps.cpp.inc"
