// RUN: attn-opt %s --attn-emit-ptx="chip=sm_80 output=%t.ptx" | FileCheck %s
// RUN: FileCheck %s --input-file=%t.ptx --check-prefix=PTX
// RUN: not attn-opt %s --attn-emit-ptx="chip=sm_1" 2>&1 | FileCheck %s --check-prefix=BADCHIP
// RUN: not attn-opt %s --attn-emit-ptx="chip=sm_75 features=+ptx80" 2>&1 | FileCheck %s --check-prefix=OLDCHIP
// RUN: not attn-opt %s --attn-emit-ptx="chip=sm_80 output=%t.missing/dir/x.ptx" 2>&1 | FileCheck %s --check-prefix=NOFILE

// An unknown chip is a diagnostic on the gpu.module, not an LLVM abort.
// BADCHIP: error: unknown NVIDIA chip 'sm_1' (expected an NVPTX processor such as sm_80 or sm_90a)
// BADCHIP-NOT: LLVM ERROR
// BADCHIP-NOT: see current operation

// Known to LLVM but older than the kernels: refused whatever the features
// (LLVM aborted selecting cp.async and ldmatrix for them; issue 14).
// OLDCHIP: error: chip 'sm_75' is not supported: attn kernels need sm_80 or newer
// OLDCHIP-NOT: see current operation

// An unwritable output is one line, not followed by the module (issue 14).
// NOFILE: error: cannot write PTX to '{{.*}}x.ptx':
// NOFILE-NOT: see current operation
// NOFILE-NOT: gpu.binary

// CHECK: gpu.binary @kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_80", features = "+ptx80">, assembly = "
// CHECK-NOT: gpu.module
// PTX: .target sm_80
// PTX: .visible .entry add_one(
// PTX: add.rn.f32
module attributes {gpu.container_module} {
  gpu.module @kernels {
    llvm.func @add_one(%p: !llvm.ptr<1>) attributes {nvvm.kernel} {
      %x = llvm.load %p : !llvm.ptr<1> -> f32
      %one = llvm.mlir.constant(1.0 : f32) : f32
      %y = llvm.fadd %x, %one : f32
      llvm.store %y, %p : f32, !llvm.ptr<1>
      llvm.return
    }
  }
}
