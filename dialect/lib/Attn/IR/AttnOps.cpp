//===- AttnOps.cpp - attn dialect operations ------------------------------===//
//
// Verifiers name the offending operand and print its shape, so that a
// malformed tile program says which value is wrong, not only that one is.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/IR/ScoreModGrad.h"
#include "attn/Dialect/Attn/IR/Limits.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
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
  auto shaped = cast<ShapedType>(type);
  if (!shaped.hasStaticShape())
    return op->emitOpError() << "tile '" << name << "' (" << shapeOf(type)
                             << ") must have a static shape";
  // The tile passes unroll and allocate by these sizes.
  if (llvm::any_of(shaped.getShape(),
                   [](int64_t side) { return side > kMaxTileSide; }))
    return op->emitOpError() << "tile '" << name << "' (" << shapeOf(type)
                             << ") has a side larger than " << kMaxTileSide;
  return success();
}

static LogicalResult checkElementTypes(Operation *op, StringRef aName, Type a,
                                       StringRef bName, Type b) {
  if (getElementTypeOrSelf(a) == getElementTypeOrSelf(b))
    return success();
  return op->emitOpError() << "'" << bName << "' (" << shapeOf(b)
                           << ") must have the element type of '" << aName
                           << "' (" << shapeOf(a) << ")";
}

std::pair<Value, Value>
mlir::attn::getPackedRowPosition(OpBuilder &b, Location loc, Value head,
                                 Value row, Value rowsPerHead, Value start) {
  if (!rowsPerHead)
    return {head, row};
  Value inHead = arith::RemUIOp::create(b, loc, row, rowsPerHead);
  Value heads = arith::DivUIOp::create(b, loc, row, rowsPerHead);
  Value h = arith::AddIOp::create(b, loc, head, heads);
  if (start)
    inHead = arith::AddIOp::create(b, loc, start, inHead);
  return {h, inHead};
}

/// `start` moves packed rows (`rows_per_head`) only.
static LogicalResult checkPackedStart(Operation *op, Value rowsPerHead,
                                      Value start) {
  if (start && !rowsPerHead)
    return op->emitOpError("has a 'start' without 'rows_per_head' (start "
                           "offsets the rows of packed heads)");
  return success();
}

std::pair<Value, Value> mlir::attn::getPagedRowPosition(OpBuilder &b,
                                                        Location loc,
                                                        Value row,
                                                        int64_t pageSize,
                                                        Value maxPages) {
  Value size = arith::ConstantIndexOp::create(b, loc, pageSize);
  Value column = arith::DivUIOp::create(b, loc, row, size);
  Value lastColumn = arith::SubIOp::create(
      b, loc, maxPages, arith::ConstantIndexOp::create(b, loc, 1));
  column = arith::MinSIOp::create(b, loc, column, lastColumn);
  return {column, arith::RemUIOp::create(b, loc, row, size)};
}

Value mlir::attn::clampPage(OpBuilder &b, Location loc, Value page,
                            Value numPages) {
  Value lastPage = arith::SubIOp::create(
      b, loc, numPages, arith::ConstantIndexOp::create(b, loc, 1));
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  return arith::MaxSIOp::create(
      b, loc, arith::MinSIOp::create(b, loc, page, lastPage), zero);
}

bool mlir::attn::isZeroTile(Value tile) {
  Attribute attr;
  if (!matchPattern(tile, m_Constant(&attr)))
    return false;
  auto splat = dyn_cast<SplatElementsAttr>(attr);
  auto f = splat ? dyn_cast<FloatAttr>(splat.getSplatValue<Attribute>())
                 : FloatAttr();
  return f && f.getValue().isPosZero();
}

//===----------------------------------------------------------------------===//
// ConfigAttr
//===----------------------------------------------------------------------===//

LogicalResult
ConfigAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                   StringRef mapping, StringRef chip, int64_t blockM,
                   int64_t blockN, int64_t warps, int64_t minCtasPerSm,
                   int64_t stages,
                   bool qInRegisters, StringRef schedule, bool orderedIssue,
                   bool reverseGrid, bool packGqa, bool conditionalRescale,
                   bool tma, bool warpSpecialize, bool barrierPerTile,
                   int64_t gridGroupCtas, bool narrowCompares,
                   bool persistent, int64_t qStages) {
  if (mapping != "host" && mapping != "mma.sync" && mapping != "wgmma")
    return emitError() << "mapping must be host, mma.sync or wgmma, got '"
                       << mapping << "'";
  if (schedule != "plain" && schedule != "pv_in_flight" &&
      schedule != "softmax_overlaps_pv")
    return emitError() << "schedule must be plain, pv_in_flight or "
                          "softmax_overlaps_pv, got '"
                       << schedule << "'";
  if (blockM <= 0 || blockN <= 0 || blockM > kMaxTileSide ||
      blockN > kMaxTileSide)
    return emitError() << "tile sizes must be in [1, " << kMaxTileSide
                       << "], got block_m = " << blockM
                       << ", block_n = " << blockN;
  if (warps > kMaxThreadsPerCta / 32)
    return emitError() << "warps must be at most " << kMaxThreadsPerCta / 32
                       << ", got " << warps;
  bool host = mapping == "host";
  if (host != (warps == 0) || warps < 0)
    return emitError() << "warps must be 0 on the host and positive on a GPU, "
                       << "got " << warps << " for mapping " << mapping;
  if (host != (minCtasPerSm == 0) || minCtasPerSm < 0)
    return emitError() << "min_ctas_per_sm must be 0 on the host and "
                          "positive on a GPU, got "
                       << minCtasPerSm;
  if (host ? (stages != 0 || !chip.empty())
           : (stages != 2 && stages != 3))
    return emitError() << "stages must be 0 and chip empty on the host, "
                          "stages 2 or 3 on a GPU; got stages = "
                       << stages << ", chip = '" << chip << "' for mapping "
                       << mapping;
  if (mapping == "wgmma" && chip != "sm_90a")
    return emitError() << "mapping wgmma needs chip sm_90a, got '" << chip
                       << "'";
  if (schedule != "plain" && (mapping != "wgmma" || stages != 3))
    return emitError() << "schedule " << schedule << " needs mapping wgmma "
                          "with 3 stages (a product in flight reads a stage "
                          "while the next tile is copied)";
  if (qInRegisters && mapping != "mma.sync")
    return emitError() << "q_in_registers needs mapping mma.sync (wgmma "
                          "reads Q from shared memory)";
  if (tma && mapping != "wgmma")
    return emitError() << "tma needs mapping wgmma (the tiles TMA writes "
                          "are the 128-byte-swizzled ones of wgmma)";
  if (warpSpecialize && !tma)
    return emitError() << "warp_specialize needs tma (the producer issues "
                          "the TMA copies)";
  if (narrowCompares && mapping != "wgmma")
    return emitError() << "narrow_compares needs mapping wgmma (the mma.sync "
                          "kernels have no registers for the differences)";
  if (barrierPerTile && !tma)
    return emitError() << "barrier_per_tile needs tma (cp.async stages "
                          "always take a CTA barrier per tile)";
  if (barrierPerTile && warpSpecialize)
    return emitError() << "warp_specialize needs the empty barriers, not "
                          "barrier_per_tile (the producer never reaches the "
                          "consumers' CTA barrier)";
  if (gridGroupCtas < 0 || (gridGroupCtas > 0 && mapping == "host"))
    return emitError() << "grid_group_ctas must be 0 on the host and "
                          "non-negative on a GPU, got "
                       << gridGroupCtas;
  if (persistent && !warpSpecialize)
    return emitError() << "persistent needs warp_specialize (the producer "
                          "loads the next work tile while the consumers "
                          "finish this one)";
  if (qStages < 1 || qStages > kMaxQStages)
    return emitError() << "q_stages must be 1 or 2, got " << qStages;
  if (qStages > 1 && !persistent)
    return emitError() << "q_stages = 2 needs persistent (a CTA of one work "
                          "tile loads one Q)";
  if (warpSpecialize && 32 * warps + kProducerThreads > kMaxThreadsPerCta)
    return emitError() << "warp_specialize: " << warps << " warps and the "
                       << kProducerThreads << " producer threads exceed "
                       << kMaxThreadsPerCta << " threads";
  return success();
}

int64_t ConfigAttr::getThreads() const {
  return 32 * getWarps() + (getWarpSpecialize() ? kProducerThreads : 0);
}

ConfigAttr ConfigAttr::lookup(Operation *op) {
  for (; op; op = op->getParentOp())
    if (auto config = op->getAttrOfType<ConfigAttr>(getAttrName()))
      return config;
  return {};
}

//===----------------------------------------------------------------------===//
// SdpaOp
//===----------------------------------------------------------------------===//

/// The operand rules the forward and the backward share: Q, K, V, O and
/// `tensors` (the backward's gradients) have Q's element type and a unit
/// inner stride; Q, K, V and O agree on their dims, K/V's head count divides
/// Q's (grouped-query attention); each of `rowTerms` (the LSE, the
/// backward's delta) is Q's (B, H, Nq).
static LogicalResult
verifyAttentionOperands(Operation *op, Type q, Type k, Type v, Type o,
                        ArrayRef<std::pair<StringRef, Type>> tensors,
                        ArrayRef<std::pair<StringRef, Type>> rowTerms,
                        bool pagedKeys = false) {
  SmallVector<std::pair<StringRef, Type>> all = {
      {"query", q}, {"key", k}, {"value", v}, {"output", o}};
  llvm::append_range(all, tensors);
  for (auto [name, type] : ArrayRef(all).drop_front()) {
    // FP8: e4m3 inputs, a bf16 output.
    if (name == "output" && isa<Float8E4M3FNType>(getElementTypeOrSelf(q))) {
      if (!getElementTypeOrSelf(type).isBF16())
        return op->emitOpError()
               << "'output' must have bf16 elements with e4m3 inputs, got "
               << type;
      continue;
    }
    if (failed(checkElementTypes(op, "query", q, name, type)))
      return failure();
  }
  if (failed(checkStaticDim(op, "query", q, 3, "head dim")) ||
      failed(checkStaticDim(op, "value", v, 3, "head dim")))
    return failure();
  if (failed(checkSameDim(op, "query", q, 3, "key", k, 3, "head dim")) ||
      failed(checkSameDim(op, "value", v, 3, "output", o, 3, "head dim")) ||
      failed(checkSameDim(op, "key", k, 2, "value", v, 2, "sequence length")) ||
      failed(checkSameDim(op, "query", q, 2, "output", o, 2,
                          "sequence length")) ||
      failed(checkSameDim(op, "query", q, 1, "output", o, 1, "head count")) ||
      failed(checkSameDim(op, "key", k, 1, "value", v, 1, "head count")))
    return failure();
  // A paged cache's first dim counts pages, not sequences.
  for (auto [name, type] : ArrayRef(all).slice(1, 3))
    if ((!pagedKeys || name == "output") &&
        failed(checkSameDim(op, "query", q, 0, name, type, 0, "batch")))
      return failure();
  // Grouped-query attention: every K/V head serves H / Hkv query heads.
  int64_t heads = cast<ShapedType>(q).getDimSize(1);
  int64_t kvHeads = cast<ShapedType>(k).getDimSize(1);
  if (!ShapedType::isDynamic(heads) && !ShapedType::isDynamic(kvHeads) &&
      (kvHeads == 0 || heads % kvHeads != 0))
    return op->emitOpError()
           << "'key' (" << shapeOf(k) << ") has " << kvHeads
           << " heads, which must divide the " << heads << " heads of 'query' ("
           << shapeOf(q) << ")";
  for (auto [name, l] : rowTerms)
    if (failed(checkSameDim(op, "query", q, 0, name, l, 0, "batch")) ||
        failed(checkSameDim(op, "query", q, 1, name, l, 1, "head count")) ||
        failed(checkSameDim(op, "query", q, 2, name, l, 2, "sequence length")))
      return failure();
  for (auto [name, type] : all)
    if (failed(checkUnitInnerStride(op, name, type)))
      return failure();
  return success();
}

/// A packed batch: the offsets of both sides and the query-length bound
/// together, one batch row of sequences, B + 1 offsets on each side.
LogicalResult SdpaOp::verifyVarlen() {
  Value cuQ = getCuSeqlensQ(), cuK = getCuSeqlensK(), maxQ = getMaxSeqlenQ();
  if (!cuQ && !cuK && !maxQ)
    return success();
  // Over a paged cache only the queries are packed (verifyPaged).
  if (isPaged()) {
    if (cuK)
      return emitOpError("takes no cu_seqlens_k with a paged K/V cache: "
                         "seqused_k gives the key counts");
    if (!cuQ || !maxQ)
      return emitOpError("needs cu_seqlens_q and max_seqlen_q together");
  } else if (!cuQ || !cuK || !maxQ) {
    return emitOpError("needs cu_seqlens_q, cu_seqlens_k and max_seqlen_q "
                       "together (a variable-length batch) or none of them");
  }
  const std::pair<StringRef, Type> packed[] = {{"query", getQuery().getType()},
                                               {"key", getKey().getType()},
                                               {"value", getValue().getType()},
                                               {"output", getOutput().getType()}};
  for (auto [name, type] : packed) {
    if (isPaged() && (name == "key" || name == "value"))
      continue;
    int64_t batch = cast<ShapedType>(type).getDimSize(0);
    if (!ShapedType::isDynamic(batch) && batch != 1)
      return emitOpError() << "'" << name << "' (" << shapeOf(type)
                           << ") must have batch 1 with cu_seqlens: the "
                              "sequences of a variable-length batch are "
                              "packed along its rows";
  }
  int64_t nq = cast<MemRefType>(cuQ.getType()).getDimSize(0);
  if (!cuK)
    return nq == 0 ? emitOpError("'cu_seqlens_q' holds no offset: B + 1 "
                                 "offsets are needed")
                   : success();
  int64_t nk = cast<MemRefType>(cuK.getType()).getDimSize(0);
  for (auto [name, n] : {std::pair<StringRef, int64_t>{"cu_seqlens_q", nq},
                         {"cu_seqlens_k", nk}})
    if (n == 0)
      return emitOpError() << "'" << name << "' holds no offset: B + 1 "
                              "offsets are needed";
  if (dimsConflict(nq, nk))
    return emitOpError() << "'cu_seqlens_q' has " << nq
                         << " offsets and 'cu_seqlens_k' " << nk
                         << ": both must hold B + 1";
  return success();
}

/// A paged K/V cache: the block table and the key counts together; K and
/// V pages of one static size (a multiple of 16 in [16, 256]); one table
/// row and one key count per sequence.
LogicalResult SdpaOp::verifyPaged() {
  Value table = getBlockTable(), used = getSequsedK();
  if (!table && !used)
    return success();
  if (!table || !used)
    return emitOpError("needs block_table and seqused_k together (a paged "
                       "K/V cache) or neither");
  Type key = getKey().getType();
  int64_t pageSize = cast<ShapedType>(key).getDimSize(2);
  if (ShapedType::isDynamic(pageSize) || !isValidPageSize(pageSize))
    return emitOpError() << "'key' (" << shapeOf(key)
                         << ") must have a static page size (dim 2) that is "
                            "a multiple of "
                         << kPageSizeStep << " in [" << kMinPageSize << ", "
                         << kMaxPageSize << "] with a paged K/V cache";
  int64_t rows = cast<ShapedType>(table.getType()).getDimSize(0);
  int64_t counts = cast<ShapedType>(used.getType()).getDimSize(0);
  if (dimsConflict(rows, counts))
    return emitOpError() << "'block_table' has " << rows
                         << " rows and 'seqused_k' " << counts
                         << " key counts: both must be one per sequence";
  Value cuQ = getCuSeqlensQ();
  int64_t sequences =
      cuQ ? cast<ShapedType>(cuQ.getType()).getDimSize(0)
          : cast<ShapedType>(getQuery().getType()).getDimSize(0);
  if (cuQ && !ShapedType::isDynamic(sequences))
    --sequences; // B + 1 offsets
  if (dimsConflict(rows, sequences))
    return emitOpError() << "'block_table' has " << rows
                         << " rows for " << sequences
                         << " sequences of queries: one row per sequence";
  return success();
}

/// Split-KV: the count and both workspaces together, each workspace row
/// shaped as the output's (heads, queries, value dim) and the LSE's.
LogicalResult SdpaOp::verifySplit() {
  Value n = getNumSplits(), oPart = getOutputPartial(),
        lsePart = getLsePartial();
  if (!n && !oPart && !lsePart)
    return success();
  if (!n || !oPart || !lsePart)
    return emitOpError("needs the split count and both partial workspaces "
                       "together (split-KV) or none of them");
  Operation *op = getOperation();
  Type o = getOutput().getType(), po = oPart.getType(),
       pl = lsePart.getType();
  if (failed(checkSameDim(op, "output", o, 1, "output_partial", po, 1,
                          "head count")) ||
      failed(checkSameDim(op, "output", o, 2, "output_partial", po, 2,
                          "sequence length")) ||
      failed(checkSameDim(op, "output", o, 3, "output_partial", po, 3,
                          "head dim")) ||
      failed(checkSameDim(op, "output", o, 1, "lse_partial", pl, 1,
                          "head count")) ||
      failed(checkSameDim(op, "output", o, 2, "lse_partial", pl, 2,
                          "sequence length")) ||
      failed(checkSameDim(op, "output_partial", po, 0, "lse_partial", pl, 0,
                          "split rows")) ||
      failed(checkUnitInnerStride(op, "output_partial", po)))
    return failure();
  return success();
}

LogicalResult SdpaOp::verify() {
  SmallVector<std::pair<StringRef, Type>, 1> rowTerms;
  if (Value lse = getLse())
    rowTerms.push_back({"lse", lse.getType()});
  if (failed(verifyAttentionOperands(
          getOperation(), getQuery().getType(), getKey().getType(),
          getValue().getType(), getOutput().getType(), {}, rowTerms,
          isPaged())))
    return failure();
  bool e4m3 = isa<Float8E4M3FNType>(getQuery().getType().getElementType());
  if (e4m3 != isFp8())
    return emitOpError() << (e4m3 ? "needs descale(%dq, %dk, %dv) with e4m3 "
                                    "inputs"
                                  : "takes descale factors only with e4m3 "
                                    "inputs");
  if (failed(verifyPaged()))
    return failure();
  if (failed(verifyVarlen()))
    return failure();
  return verifySplit();
}

/// `varlen(%cu_q, %cu_k, %max_q : type, type)`, or over a paged cache
/// `varlen(%cu_q, %max_q : type)`; nothing without cu_seqlens.
static ParseResult
parseVarlen(OpAsmParser &parser,
            std::optional<OpAsmParser::UnresolvedOperand> &cuQ,
            std::optional<OpAsmParser::UnresolvedOperand> &cuK,
            std::optional<OpAsmParser::UnresolvedOperand> &maxQ,
            Type &cuQType, Type &cuKType) {
  if (failed(parser.parseOptionalKeyword("varlen")))
    return success();
  OpAsmParser::UnresolvedOperand first, second;
  if (parser.parseLParen() || parser.parseOperand(first) ||
      parser.parseComma() || parser.parseOperand(second))
    return failure();
  cuQ = first;
  if (succeeded(parser.parseOptionalComma())) {
    OpAsmParser::UnresolvedOperand third;
    if (parser.parseOperand(third))
      return failure();
    cuK = second;
    maxQ = third;
  } else {
    maxQ = second;
  }
  if (parser.parseColon() || parser.parseType(cuQType))
    return failure();
  if (cuK && (parser.parseComma() || parser.parseType(cuKType)))
    return failure();
  return parser.parseRParen();
}

static void printVarlen(OpAsmPrinter &p, SdpaOp, Value cuQ, Value cuK,
                        Value maxQ, Type cuQType, Type cuKType) {
  if (!cuQ)
    return;
  p << "varlen(" << cuQ << ", ";
  if (cuK)
    p << cuK << ", ";
  p << maxQ << " : " << cuQType;
  if (cuK)
    p << ", " << cuKType;
  p << ")";
}

LogicalResult SdpaBackwardOp::verify() {
  Operation *op = getOperation();
  Type q = getQuery().getType(), k = getKey().getType(),
       v = getValue().getType(), o = getOutput().getType();
  Type dq = getGradQuery().getType(), dk = getGradKey().getType(),
       dv = getGradValue().getType();
  if (isa<Float8E4M3FNType>(getElementTypeOrSelf(q)))
    return emitOpError("has no FP8 (e4m3) form: the backward pass takes "
                       "bf16, f16 or f32");
  // dO has O's type (AllTypesMatch).
  if (failed(verifyAttentionOperands(
          op, q, k, v, o,
          {{"grad_query", dq}, {"grad_key", dk}, {"grad_value", dv}},
          {{"lse", getLse().getType()}, {"delta", getDelta().getType()}})))
    return failure();
  // Each gradient has its tensor's shape.
  const std::tuple<StringRef, Type, StringRef, Type> shapes[] = {
      {"query", q, "grad_query", dq},
      {"key", k, "grad_key", dk},
      {"value", v, "grad_value", dv}};
  for (auto [an, a, bn, bt] : shapes)
    for (unsigned d = 0; d < 4; ++d)
      if (failed(checkSameDim(op, an, a, d, bn, bt, d,
                              d == 3 ? "head dim" : "size")))
        return failure();
  // dQ's accumulator: f32, shaped as Q.
  if (Value acc = getGradQueryAccum()) {
    if (!getElementTypeOrSelf(acc.getType()).isF32())
      return emitOpError() << "'dq_accum' must have f32 elements, got "
                           << acc.getType();
    for (unsigned d = 0; d < 4; ++d)
      if (failed(checkSameDim(op, "query", q, d, "dq_accum", acc.getType(),
                              d, d == 3 ? "head dim" : "size")))
        return failure();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// score_mod / mask_mod regions
//===----------------------------------------------------------------------===//

/// A mod region: one block whose arguments are `leading` then one per
/// capture (of its type), pure ops only, no value from outside, ending in
/// an attn.yield of one `result`.
static LogicalResult verifyMod(Operation *op, Region &region, StringRef name,
                               ArrayRef<Type> leading, StringRef leadingText,
                               TypeRange captures, Type result) {
  if (region.empty())
    return success();
  Block &block = region.front();
  size_t expected = leading.size() + captures.size();
  if (block.getNumArguments() != expected)
    return op->emitOpError() << "'" << name << "' must take " << expected
                             << " arguments (" << leadingText << ", then one "
                             << "per capture), got "
                             << block.getNumArguments();
  for (auto [i, arg] : llvm::enumerate(block.getArguments())) {
    Type want = i < leading.size() ? leading[i] : captures[i - leading.size()];
    if (arg.getType() != want)
      return op->emitOpError()
             << "'" << name << "' argument #" << i << " must be " << want
             << ", got " << arg.getType();
  }
  auto yield = dyn_cast<YieldOp>(block.getTerminator());
  if (!yield)
    return op->emitOpError() << "'" << name << "' must end in attn.yield";
  if (yield.getValues().size() != 1 ||
      yield.getValues().front().getType() != result)
    return yield.emitOpError()
           << "in '" << name << "' must yield one " << result;
  WalkResult walk = region.walk([&](Operation *inner) {
    // Reads of a captured memref are the one effect allowed: a mod is
    // cloned per element and may run any number of times.
    bool captureLoad = false;
    if (auto load = dyn_cast<memref::LoadOp>(inner)) {
      auto arg = dyn_cast<BlockArgument>(load.getMemRef());
      captureLoad = arg && arg.getOwner() == &block &&
                    arg.getArgNumber() >= leading.size();
      if (!captureLoad) {
        inner->emitOpError() << "in '" << name << "' must load from a "
                             << "captured memref (a block argument)";
        return WalkResult::interrupt();
      }
    }
    if ((!captureLoad && !isPure(inner)) || inner->getNumRegions() != 0) {
      inner->emitOpError() << "is not allowed in '" << name
                           << "': only pure ops without regions and loads "
                           << "of captures";
      return WalkResult::interrupt();
    }
    for (Value operand : inner->getOperands())
      if (!region.isAncestor(operand.getParentRegion())) {
        inner->emitOpError() << "in '" << name << "' uses a value defined "
                             << "outside it: pass it as a capture";
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

/// Both regions of an op with `captures`.
static LogicalResult verifyMods(Operation *op, Region &scoreMod,
                                Region &maskMod, TypeRange captures) {
  Builder b(op->getContext());
  Type index = b.getIndexType(), f32 = b.getF32Type();
  if (failed(verifyMod(op, scoreMod, "score_mod",
                       {f32, index, index, index, index},
                       "score: f32, b, h, q_idx, kv_idx: index", captures,
                       f32)) ||
      failed(verifyMod(op, maskMod, "mask_mod", {index, index, index, index},
                       "b, h, q_idx, kv_idx: index", captures, b.getI1Type())))
    return failure();
  if (!captures.empty() && scoreMod.empty() && maskMod.empty())
    return op->emitOpError("has captures but no score_mod or mask_mod to "
                           "read them");
  return success();
}

LogicalResult SdpaOp::verifyRegions() {
  return verifyMods(*this, getScoreMod(), getMaskMod(),
                    getCaptures().getTypes());
}

LogicalResult SdpaBackwardOp::verifyRegions() {
  if (failed(verifyMods(*this, getScoreMod(), getMaskMod(),
                        getCaptures().getTypes())))
    return failure();
  return verifyScoreModDifferentiable(*this, getScoreMod());
}

/// The mods of a tile step, which says which (batch, head) its tile is
/// exactly when it has one.
template <typename StepOp> static LogicalResult verifyStepMods(StepOp op) {
  if (failed(verifyMods(op, op.getScoreMod(), op.getMaskMod(),
                        op.getCaptures().getTypes())))
    return failure();
  bool mods = !op.getScoreMod().empty() || !op.getMaskMod().empty();
  if (mods != (op.getBatch() && op.getHead()))
    return op.emitOpError("needs 'batch' and 'head' exactly when it has a "
                          "score_mod or mask_mod");
  return success();
}

LogicalResult ScoreGradOp::verifyRegions() {
  if (failed(verifyStepMods(*this)))
    return failure();
  return verifyScoreModDifferentiable(*this, getScoreMod());
}

LogicalResult OnlineAttentionOp::verifyRegions() {
  return verifyStepMods(*this);
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
                       "query tile), got (")
           << block.getArgumentTypes() << ")";
  return success();
}

//===----------------------------------------------------------------------===//
// Tile data movement
//===----------------------------------------------------------------------===//

LogicalResult LoadTileOp::verify() {
  Type src = getSource().getType(), tile = getResult().getType();
  if (failed(checkPackedStart(*this, getRowsPerHead(), getStart())) ||
      failed(checkStaticShape(*this, "result", tile)) ||
      failed(checkElementTypes(*this, "source", src, "result", tile)))
    return failure();
  // Row terms: a row tile (R) or a 1×R tile.
  auto tileType = cast<ShapedType>(tile);
  if (getPages() && cast<ShapedType>(src).getRank() != 4)
    return emitOpError() << "gathers rows of a paged (num_pages, H, "
                            "page_size, D) source with pages, got "
                         << shapeOf(src);
  if (cast<ShapedType>(src).getRank() == 3) {
    if (tileType.getRank() == 1 ||
        (tileType.getRank() == 2 && tileType.getDimSize(0) == 1))
      return success();
    return emitOpError() << "'result' (" << shapeOf(tile)
                         << ") must be a row tile (R) or a 1xR tile for a "
                            "rank-3 source ("
                         << shapeOf(src) << ")";
  }
  if (tileType.getRank() != 2)
    return emitOpError() << "'result' (" << shapeOf(tile)
                         << ") must have rank 2 for a rank-4 source ("
                         << shapeOf(src) << ")";
  if (failed(checkStaticDim(*this, "source", src, 3, "head dim")) ||
      failed(checkSameDim(*this, "source", src, 3, "result", tile, 1,
                          "head dim")) ||
      failed(checkUnitInnerStride(*this, "source", src)))
    return failure();
  if (getPages()) {
    int64_t pageSize = cast<ShapedType>(src).getDimSize(2);
    if (ShapedType::isDynamic(pageSize) || !isValidPageSize(pageSize))
      return emitOpError() << "'source' (" << shapeOf(src)
                           << ") must have a static page size (dim 2) that "
                              "is a multiple of "
                           << kPageSizeStep << " in [" << kMinPageSize << ", "
                           << kMaxPageSize << "] with pages";
    if (getRowsPerHead())
      return emitOpError("cannot pack heads (rows_per_head) of a paged "
                         "source");
  }
  return success();
}

LogicalResult StoreTileOp::verify() {
  Type tile = getTile().getType(), dest = getDest().getType();
  auto tileRank = cast<ShapedType>(tile).getRank();
  auto destRank = cast<ShapedType>(dest).getRank();
  if (failed(checkPackedStart(*this, getRowsPerHead(), getStart())) ||
      failed(checkStaticShape(*this, "tile", tile)))
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
  if (getAccumulate()) {
    // An atomic add per element: f32 sums of an R×D tile into plain rows.
    if (tileRank != 2 || !getElementTypeOrSelf(tile).isF32())
      return emitOpError() << "with 'accumulate' needs an f32 tile of rank 2, "
                           << "got " << tile;
    if (getRowsPerHead() || getStart())
      return emitOpError()
             << "with 'accumulate' takes no 'rows_per_head' or 'start'";
  }
  // Rows of the output are copied as vectors; the LSE may have any strides.
  if (tileRank == 1)
    return success();
  return checkUnitInnerStride(*this, "dest", dest);
}

void StoreTileOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  if (getAccumulate())
    effects.emplace_back(MemoryEffects::Read::get(), &getDestMutable());
  effects.emplace_back(MemoryEffects::Write::get(), &getDestMutable());
}

//===----------------------------------------------------------------------===//
// Attention steps
//===----------------------------------------------------------------------===//

/// Checks Q (BM×D), K (BN×D), V (BN×Dv), row state (BM), acc (BM×Dv) for the
/// operands that are present (null types are skipped).
static LogicalResult verifyTileShapes(Operation *op, Type q, Type k, Type v,
                                      Type row, Type acc) {
  const std::pair<StringRef, Type> tiles[] = {
      {"query", q}, {"key", k}, {"value", v}, {"max", row}, {"acc", acc}};
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
  if (q && row &&
      failed(checkSameDim(op, "query", q, 0, "max", row, 0, "row count")))
    return failure();
  if (row && acc &&
      failed(checkSameDim(op, "max", row, 0, "acc", acc, 0, "row count")))
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

LogicalResult ScoreGradOp::verify() {
  Operation *op = getOperation();
  Type q = getQuery().getType(), k = getKey().getType(),
       v = getValue().getType(), dO = getGradOutput().getType(),
       lse = getLse().getType(), p = getProbs().getType();
  if (failed(verifyTileShapes(op, q, k, v, {}, {})) ||
      failed(checkStaticShape(op, "grad_output", dO)) ||
      failed(checkStaticShape(op, "lse", lse)) ||
      failed(checkElementTypes(op, "query", q, "grad_output", dO)) ||
      failed(checkElementTypes(op, "query", q, "probs", p)) ||
      failed(checkSameDim(op, "query", q, 0, "grad_output", dO, 0,
                          "row count")) ||
      failed(checkSameDim(op, "value", v, 1, "grad_output", dO, 1,
                          "head dim")))
    return failure();
  int64_t blockM = cast<ShapedType>(q).getDimSize(0);
  int64_t blockN = cast<ShapedType>(k).getDimSize(0);
  bool keysMajor = getKeysMajor();
  SmallVector<int64_t> want =
      keysMajor ? SmallVector<int64_t>{blockN, blockM} : SmallVector<int64_t>{blockM, blockN};
  if (cast<ShapedType>(p).getShape() != ArrayRef<int64_t>(want))
    return emitOpError() << "'probs' (" << shapeOf(p) << ") must be "
                         << want[0] << "x" << want[1] << " ("
                         << (keysMajor ? "keys x queries" : "queries x keys")
                         << ")";
  SmallVector<int64_t> rows = keysMajor ? SmallVector<int64_t>{1, blockM}
                                        : SmallVector<int64_t>{blockM};
  if (cast<ShapedType>(lse).getShape() != ArrayRef<int64_t>(rows) ||
      !getElementTypeOrSelf(lse).isF32())
    return emitOpError() << "'lse' (" << shapeOf(lse) << ") must be "
                         << (keysMajor ? "a 1x" : "a row tile of ") << blockM
                         << (keysMajor ? " f32 tile" : " f32 elements");
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

//===----------------------------------------------------------------------===//
// Generic tile ops
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::verify() {
  Type lhs = getLhs().getType(), rhs = getRhs().getType(),
       acc = getAcc().getType();
  for (auto [name, type] : {std::pair<StringRef, Type>{"lhs", lhs},
                            {"rhs", rhs}, {"acc", acc}})
    if (failed(checkStaticShape(*this, name, type)))
      return failure();
  if (failed(checkElementTypes(*this, "lhs", lhs, "rhs", rhs)))
    return failure();
  // lhs M×K (K×M transposed), rhs K×N (N×K transposed).
  unsigned lhsRows = getTransposeLhs() ? 1 : 0, rhsCols = getTransposeRhs() ? 0 : 1;
  if (failed(checkSameDim(*this, "lhs", lhs, 1 - lhsRows, "rhs", rhs,
                          1 - rhsCols, "reduction size")) ||
      failed(checkSameDim(*this, "lhs", lhs, lhsRows, "acc", acc, 0,
                          "row count")) ||
      failed(checkSameDim(*this, "rhs", rhs, rhsCols, "acc", acc, 1,
                          "column count")))
    return failure();
  return success();
}

void MapOp::build(
    OpBuilder &builder, OperationState &state, Type resultType,
    ValueRange inputs, ValueRange offsets,
    function_ref<Value(OpBuilder &, Location, ValueRange, ValueRange)> body) {
  state.addOperands(inputs);
  state.addOperands(offsets);
  state.addAttribute(getOperandSegmentSizesAttrName(state.name),
                     builder.getDenseI32ArrayAttr(
                         {int32_t(inputs.size()), int32_t(offsets.size())}));
  state.addTypes(resultType);
  Region *region = state.addRegion();
  Block *block = new Block();
  region->push_back(block);
  int64_t rank = cast<RankedTensorType>(resultType).getRank();
  Location loc = state.location;
  for (int64_t i = 0; i < rank; ++i)
    block->addArgument(builder.getIndexType(), loc);
  for (Value input : inputs)
    block->addArgument(getElementTypeOrSelf(input.getType()), loc);
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(block);
  Value yielded = body(builder, loc, block->getArguments().take_front(rank),
                       block->getArguments().drop_front(rank));
  YieldOp::create(builder, loc, yielded);
}

Value MapOp::getYielded() {
  return cast<YieldOp>(getBodyBlock().getTerminator()).getValues().front();
}

LogicalResult MapOp::verify() {
  auto result = getResult().getType();
  if (failed(checkStaticShape(*this, "result", result)))
    return failure();
  int64_t rank = result.getRank();
  if (!getOffsets().empty() && int64_t(getOffsets().size()) != rank)
    return emitOpError() << "takes " << rank << " offsets for a rank-" << rank
                         << " result (" << shapeOf(result) << "), got "
                         << getOffsets().size();
  for (auto [i, input] : llvm::enumerate(getInputs())) {
    auto type = cast<RankedTensorType>(input.getType());
    std::string name = "input #" + std::to_string(i);
    if (failed(checkStaticShape(*this, name, type)))
      return failure();
    bool same = type.getShape() == result.getShape();
    bool rowBroadcast = rank == 2 && type.getRank() == 1 &&
                        type.getDimSize(0) == result.getDimSize(0);
    bool colBroadcast = rank == 2 && type.getRank() == 2 &&
                        type.getDimSize(0) == 1 &&
                        type.getDimSize(1) == result.getDimSize(1);
    if (!same && !rowBroadcast && !colBroadcast)
      return emitOpError() << "'" << name << "' (" << shapeOf(type)
                           << ") must have the shape of the result ("
                           << shapeOf(result) << "), be a row tile of "
                           << result.getDimSize(0) << " elements or a 1x"
                           << (rank == 2 ? result.getDimSize(1) : 1)
                           << " column tile";
  }
  return success();
}

LogicalResult MapOp::verifyRegions() {
  Block &block = getBodyBlock();
  int64_t rank = getRank();
  SmallVector<Type> expected(rank, IndexType::get(getContext()));
  for (Value input : getInputs())
    expected.push_back(getElementTypeOrSelf(input.getType()));
  if (block.getArgumentTypes() != ArrayRef<Type>(expected)) {
    InFlightDiagnostic diag = emitOpError()
                              << "body must take " << rank
                              << " index coordinates and one scalar per "
                                 "input: (";
    llvm::interleaveComma(expected, diag);
    return diag << "), got (" << block.getArgumentTypes() << ")";
  }
  auto yield = dyn_cast<YieldOp>(block.getTerminator());
  if (!yield || yield.getValues().size() != 1 ||
      yield.getValues().front().getType() !=
          getElementTypeOrSelf(getResult().getType()))
    return emitOpError() << "body must yield one "
                         << getElementTypeOrSelf(getResult().getType())
                         << " (the result's element type)";
  // Reads of memrefs (a mod's captures) are the one effect allowed: the
  // body runs once per element, in any order.
  for (Operation &op : block.without_terminator())
    if (!isMemoryEffectFree(&op) && !isa<memref::LoadOp>(op))
      return op.emitOpError() << "has memory effects, but an attn.map body "
                                 "must be pure (memref.load aside)";
  return success();
}

LogicalResult ReduceOp::verify() {
  Type tile = getTile().getType(), init = getInit().getType();
  if (failed(checkStaticShape(*this, "tile", tile)) ||
      failed(checkStaticShape(*this, "init", init)) ||
      failed(checkSameDim(*this, "tile", tile, 0, "init", init, 0,
                          "row count")))
    return failure();
  return success();
}

LogicalResult YieldOp::verify() {
  if (getValues().size() != 1)
    return emitOpError() << "must yield one value, got "
                         << getValues().size();
  return success();
}

#define GET_OP_CLASSES
#include "attn/Dialect/Attn/IR/AttnOps.cpp.inc"
