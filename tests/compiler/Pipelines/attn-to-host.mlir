// RUN: attn-opt %s --attn-to-host="head-dim=32 dtype=f32 mask=causal block-m=16 block-n=16" | FileCheck %s

// The host pipeline ends in the LLVM dialect, with the C interface the
// runtime's ExecutionEngine calls.
// CHECK-LABEL: llvm.func @attn_fwd(
// CHECK: llvm.intr.exp2
// CHECK: llvm.func @_mlir_ciface_attn_fwd(
// CHECK-NOT: attn.
// CHECK-NOT: linalg.
// CHECK-NOT: tensor.
module {
}
