//===- Passes.h - NVIDIA schedule passes ------------------------*- C++ -*-===//

#ifndef ATTN_NVIDIA_PASSES_H
#define ATTN_NVIDIA_PASSES_H

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/AttnNV/IR/AttnNV.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Pass/Pass.h"

namespace mlir::attn::nv {

#define GEN_PASS_DECL
#include "attn/NVIDIA/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "attn/NVIDIA/Passes.h.inc"

} // namespace mlir::attn::nv

#endif // ATTN_NVIDIA_PASSES_H
