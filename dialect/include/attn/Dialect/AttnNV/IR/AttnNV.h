//===- AttnNV.h - NVIDIA tile dialect ---------------------------*- C++ -*-===//

#ifndef ATTN_DIALECT_ATTNNV_IR_ATTNNV_H
#define ATTN_DIALECT_ATTNNV_IR_ATTNNV_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/TensorEncoding.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "attn/Dialect/AttnNV/IR/AttnNVDialect.h.inc"
#include "attn/Dialect/AttnNV/IR/AttnNVEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "attn/Dialect/AttnNV/IR/AttnNVAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "attn/Dialect/AttnNV/IR/AttnNVTypes.h.inc"

#define GET_OP_CLASSES
#include "attn/Dialect/AttnNV/IR/AttnNVOps.h.inc"

#endif // ATTN_DIALECT_ATTNNV_IR_ATTNNV_H
