//===- AttnOps.h - attn dialect operations ----------------------*- C++ -*-===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNOPS_H
#define ATTN_DIALECT_ATTN_IR_ATTNOPS_H

#include "attn/Dialect/Attn/IR/AttnDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "attn/Dialect/Attn/IR/AttnEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "attn/Dialect/Attn/IR/AttnAttrs.h.inc"

#define GET_OP_CLASSES
#include "attn/Dialect/Attn/IR/AttnOps.h.inc"

namespace mlir::attn {

/// Where row `row` of a tile at head `head` lies, as (head, row) index
/// values: itself, or with `rowsPerHead` (heads packed end to end, see
/// attn.load_tile) head + row / rowsPerHead, start + row mod rowsPerHead
/// (`start` null: 0). The one definition of packed rows, for every lowering
/// of loads and stores.
std::pair<Value, Value> getPackedRowPosition(OpBuilder &b, Location loc,
                                             Value head, Value row,
                                             Value rowsPerHead,
                                             Value start = Value());

/// Where key row `row` of a paged cache lies (attn.load_tile with pages),
/// as (block-table column, row in the page) index values: min(row /
/// pageSize, maxPages - 1) and row mod pageSize; and a page number read
/// from the block table clamped into [0, numPages). The one definition of
/// the gather, for every lowering, so that wrong device data never reads
/// outside the block table or the cache.
std::pair<Value, Value> getPagedRowPosition(OpBuilder &b, Location loc,
                                            Value row, int64_t pageSize,
                                            Value maxPages);
Value clampPage(OpBuilder &b, Location loc, Value page, Value numPages);

/// Whether `tile` is a constant tile of +0.0 (a product starting from zero,
/// a sum that can start anywhere).
bool isZeroTile(Value tile);

} // namespace mlir::attn

#endif // ATTN_DIALECT_ATTN_IR_ATTNOPS_H
