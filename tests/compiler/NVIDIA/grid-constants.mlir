// RUN: attn-opt %s --split-input-file --pass-pipeline="builtin.module(gpu.module(attn-nv-grid-constants))" --verify-diagnostics | FileCheck %s

// The last attn.tensor_maps parameters of a kernel (KernelABI.h's
// kTensorMaps) become 128-byte grid-constant by-value parameters, 64-byte
// aligned; the others and kernels without the attribute stay as they were.
// CHECK-LABEL: llvm.func @attn_fwd(
// CHECK-SAME: %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: i64,
// CHECK-SAME: %{{[^:]*}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant},
// CHECK-SAME: %{{[^:]*}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant})
// CHECK-LABEL: llvm.func @plain(
// CHECK-SAME: %{{[^:]*}}: !llvm.ptr)
// CHECK-NOT: grid_constant
gpu.module @attn_kernels {
  llvm.func @attn_fwd(%p: !llvm.ptr, %n: i64, %k: !llvm.ptr {llvm.align = 64 : i64}, %v: !llvm.ptr {llvm.align = 64 : i64}) attributes {attn.tensor_maps = 2 : i32, nvvm.kernel} {
    llvm.return
  }
  llvm.func @plain(%p: !llvm.ptr) attributes {nvvm.kernel} {
    llvm.return
  }
}

// -----

gpu.module @attn_kernels {
  // expected-error @+1 {{tensor map parameter #0 is not a pointer}}
  llvm.func @attn_fwd(%n: i64) attributes {attn.tensor_maps = 1 : i32, nvvm.kernel} {
    llvm.return
  }
}

// -----

gpu.module @attn_kernels {
  // expected-error @+1 {{has 3 tensor maps but 1 parameters}}
  llvm.func @attn_fwd(%p: !llvm.ptr) attributes {attn.tensor_maps = 3 : i32, nvvm.kernel} {
    llvm.return
  }
}
