// RUN: attn-opt %s --attn-to-host="head-dim=32 dtype=f32 mask=causal block-m=16 block-n=16" | FileCheck %s
// RUN: attn-opt %s --attn-to-host="head-dim=32 dtype=f32 mask=causal block-m=16 block-n=16" | FileCheck %s --check-prefix=GONE

// The host pipeline ends in the LLVM dialect, with the C interface the
// runtime's ExecutionEngine calls. The kernel keeps its #attn.config (the
// host mapping, the tile sizes asked for); the softmax's max, exp2 and the
// LSE's log2 are LLVM intrinsics.
// CHECK-LABEL: llvm.func @attn_fwd(
// CHECK-SAME: attn.config = #attn.config<mapping = "host", chip = "", block_m = 16, block_n = 16, warps = 0,
// CHECK-SAME: llvm.emit_c_interface
// CHECK: llvm.intr.maxnum
// CHECK: llvm.intr.exp2
// CHECK: llvm.intr.log2
// CHECK: llvm.func @_mlir_ciface_attn_fwd(
// CHECK: llvm.call @attn_fwd(

// Nothing but the LLVM dialect is left: no attn op, no tensor, loop or
// memref op.
// GONE-NOT: {{^ *attn\.|= attn\.|linalg\.|tensor\.|scf\.|memref\.|bufferization\.|math\.|arith\.}}
module {
}
