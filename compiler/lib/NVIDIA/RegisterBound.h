//===- RegisterBound.h - loops bound by registers --------------*- C++ -*-===//
//
// The backward's kernels hold one or two D-wide accumulators (dK and dV, or
// dQ) beside a step's score tiles, and keep their own tiles in shared memory
// through the loop, so values that LLVM hoists out of the loop as invariant
// (a copy's chunk addresses, a wgmma k step's descriptor) stay live across
// it in registers they do not have: spills (issue 12). Two passes choose
// lowerings that keep such values in the loop there, and only there (the
// forward's loops have the registers, and ran faster with LLVM's choice):
// attn-nv-pipeline-copies (`strided` copies) and attn-nv-assign-layouts
// (`advance_in_ptx` products). One definition of which kernels those are.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_NVIDIA_REGISTERBOUND_H
#define ATTN_NVIDIA_REGISTERBOUND_H

#include "attn/Compiler/KernelABI.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir::attn::nv {

/// Whether `kernel`'s loop is bound by registers: a backward kernel.
inline bool loopBoundByRegisters(FunctionOpInterface kernel) {
  return kernel && ::attn::abi::isBackwardKernel(kernel.getName());
}

} // namespace mlir::attn::nv

#endif // ATTN_NVIDIA_REGISTERBOUND_H
