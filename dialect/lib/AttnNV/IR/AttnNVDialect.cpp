//===- AttnNVDialect.cpp - attn_nv registration, layouts and types --------===//

#include "attn/Dialect/AttnNV/IR/AttnNV.h"
#include "attn/Dialect/AttnNV/IR/Layouts.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::attn::nv;

#include "attn/Dialect/AttnNV/IR/AttnNVDialect.cpp.inc"
#include "attn/Dialect/AttnNV/IR/AttnNVEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "attn/Dialect/AttnNV/IR/AttnNVAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "attn/Dialect/AttnNV/IR/AttnNVTypes.cpp.inc"

void AttnNVDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "attn/Dialect/AttnNV/IR/AttnNVOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "attn/Dialect/AttnNV/IR/AttnNVAttrs.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "attn/Dialect/AttnNV/IR/AttnNVTypes.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Layouts: the shapes each can distribute
//===----------------------------------------------------------------------===//

/// Rows must split into whole 16-row m tiles per warp.
static LogicalResult
verifyRowsPerWarp(ArrayRef<int64_t> shape, int64_t warps, StringRef layout,
                  function_ref<InFlightDiagnostic()> emitError) {
  if (warps <= 0)
    return emitError() << layout << " needs a positive warp count, got "
                       << warps;
  if (llvm::any_of(shape, ShapedType::isDynamic))
    return emitError() << layout << " distributes static tiles only";
  if (shape.empty() || shape[0] % (16 * warps) != 0)
    return emitError() << layout << " needs rows in whole 16-row tiles for "
                       << "each of " << warps << " warps, got shape "
                       << (shape.empty() ? 0 : shape[0]);
  return success();
}

LogicalResult
AccLayoutAttr::verifyEncoding(ArrayRef<int64_t> shape, Type elementType,
                              function_ref<InFlightDiagnostic()> emitError) const {
  if (shape.size() != 2)
    return emitError() << "#attn_nv.acc needs a 2-D tile";
  int64_t groups = getColGroups();
  if (groups <= 0 || getWarps() % groups != 0)
    return emitError() << "#attn_nv.acc needs col_groups dividing warps = "
                       << getWarps() << ", got " << groups;
  if (failed(verifyRowsPerWarp(shape, getWarps() / groups, "#attn_nv.acc",
                               emitError)))
    return failure();
  if (shape[1] % (8 * groups) != 0)
    return emitError() << "#attn_nv.acc needs columns in 8-column blocks"
                       << (groups > 1 ? " for each column group" : "")
                       << ", got " << shape[1];
  return success();
}

LogicalResult
RowsLayoutAttr::verifyEncoding(ArrayRef<int64_t> shape, Type elementType,
                               function_ref<InFlightDiagnostic()> emitError) const {
  if (shape.size() != 1)
    return emitError() << "#attn_nv.rows needs a 1-D tile";
  return verifyRowsPerWarp(shape, getWarps(), "#attn_nv.rows", emitError);
}

LogicalResult
ColsLayoutAttr::verifyEncoding(ArrayRef<int64_t> shape, Type elementType,
                               function_ref<InFlightDiagnostic()> emitError) const {
  if (shape.size() != 2 || shape[0] != 1)
    return emitError() << "#attn_nv.cols needs a 1xC tile";
  if (shape[1] % 8 != 0)
    return emitError() << "#attn_nv.cols needs columns in 8-column blocks, got "
                       << shape[1];
  return success();
}

LogicalResult OperandALayoutAttr::verifyEncoding(
    ArrayRef<int64_t> shape, Type elementType,
    function_ref<InFlightDiagnostic()> emitError) const {
  if (shape.size() != 2)
    return emitError() << "#attn_nv.operand_a needs a 2-D tile";
  if (!elementType.isBF16() && !elementType.isF16() &&
      !isa<Float8E4M3FNType>(elementType))
    return emitError() << "#attn_nv.operand_a holds bf16, f16 or "
                          "f8E4M3FN, got "
                       << elementType;
  if (failed(verifyRowsPerWarp(shape, getWarps(), "#attn_nv.operand_a",
                               emitError)))
    return failure();
  if (shape[1] % 8 != 0)
    return emitError() << "#attn_nv.operand_a needs columns in 8-column "
                       << "halves of 16-column k blocks, got " << shape[1];
  if (isa<Float8E4M3FNType>(elementType) && shape[1] % 32 != 0)
    return emitError() << "#attn_nv.operand_a of 8-bit elements needs "
                       << "columns in 32-column k blocks, got " << shape[1];
  return success();
}

//===----------------------------------------------------------------------===//
// SmemType
//===----------------------------------------------------------------------===//

Type SmemType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape;
  Type element;
  std::string layoutName;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/false,
                                /*withTrailingX=*/true) ||
      parser.parseType(element) || parser.parseComma() ||
      parser.parseKeywordOrString(&layoutName) || parser.parseGreater())
    return {};
  std::optional<SharedLayout> layout = symbolizeSharedLayout(layoutName);
  if (!layout) {
    parser.emitError(loc, "expected a shared layout (padded, swizzle_128b), "
                          "got '")
        << layoutName << "'";
    return {};
  }
  return parser.getChecked<SmemType>(parser.getContext(), shape, element,
                                     *layout);
}

void SmemType::print(AsmPrinter &printer) const {
  printer << "<";
  for (int64_t d : getShape())
    printer << d << "x";
  printer << getElementType() << ", " << stringifySharedLayout(getLayout())
          << ">";
}

LogicalResult SmemType::verify(function_ref<InFlightDiagnostic()> emitError,
                               ArrayRef<int64_t> shape, Type elementType,
                               SharedLayout layout) {
  if (shape.size() != 2 && shape.size() != 3)
    return emitError() << "!attn_nv.smem is a tile (R×C) or stages of tiles "
                          "(S×R×C), got rank "
                       << shape.size();
  if (llvm::any_of(shape, [](int64_t d) { return d <= 0; }))
    return emitError() << "!attn_nv.smem needs positive sizes";
  // f32: a table staged for maps (attn_nv.copy_table_async); f8E4M3FN:
  // FP8 tiles (wgmma only: the products' verifiers).
  if (!elementType.isBF16() && !elementType.isF16() && !elementType.isF32() &&
      !isa<Float8E4M3FNType>(elementType))
    return emitError() << "!attn_nv.smem holds bf16, f16, f32 or f8E4M3FN "
                          "tiles, got "
                       << elementType;
  if (layout == SharedLayout::SwizzlePairs && !elementType.isF32())
    return emitError() << "!attn_nv.smem swizzle_pairs is the layout of f32 "
                          "tables read in pairs, got "
                       << elementType;
  // 8 columns at least (an 8-column block of the accumulator), 16 of
  // 8-bit elements.
  int64_t cols = shape.back();
  int64_t multiple = elementType.getIntOrFloatBitWidth() == 8 ? 16 : 8;
  if (cols % multiple != 0)
    return emitError() << "!attn_nv.smem rows are copied in 16-byte pieces: "
                          "columns must be a multiple of "
                       << multiple << ", got " << cols;
  return success();
}

int64_t SmemType::getTileBytes() const {
  return SharedGeometry(*this).tileBytes();
}

SmemType SmemType::getTileType() const {
  if (getRank() == 2)
    return *this;
  return SmemType::get(getContext(), getShape().drop_front(),
                       getElementType(), getLayout());
}

LogicalResult
BarriersType::verify(function_ref<InFlightDiagnostic()> emitError,
                     int64_t count) {
  if (count <= 0)
    return emitError() << "!attn_nv.barriers needs a positive count, got "
                       << count;
  return success();
}
