// RUN: attn-opt %s --attn-create-kernel="head-dim=96 dtype=f16 mask=causal_bottom_right" | FileCheck %s
// RUN: attn-opt %s --attn-create-kernel | FileCheck %s --check-prefix=NONE
// RUN: not attn-opt %s --attn-create-kernel="head-dim=64 dtype=f64" 2>&1 | FileCheck %s --check-prefix=DTYPE
// RUN: not attn-opt %s --attn-create-kernel="head-dim=64 mask=sliding" 2>&1 | FileCheck %s --check-prefix=MASK

// CHECK-LABEL: func.func @attn_fwd
// CHECK-SAME: memref<?x?x?x96xf16, strided<[?, ?, ?, 1], offset: ?>>
// CHECK-SAME: memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, %{{.*}}: f32)
// CHECK-SAME: attributes {llvm.emit_c_interface}
// CHECK: attn.sdpa %arg0, %arg1, %arg2 into %arg3 lse %arg4 scale %arg5 mask <causal_bottom_right>
// NONE-NOT: func.func
// DTYPE: dtype must be bf16, f16 or f32, got 'f64'
// MASK: mask must be none, causal or causal_bottom_right, got 'sliding'
module {
}
