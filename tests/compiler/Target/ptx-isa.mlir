// The PTX ISA version follows the chip (features=auto, the default): the
// lowest version LLVM accepts for the chip, never below 8.0. sm_100a with PTX
// 8.0 used to end attn-opt with "LLVM ERROR: PTX version 8.0 does not support
// target 'sm_100a'"; an explicit version that is too old is now a diagnostic.
// RUN: attn-opt %s --attn-emit-ptx="chip=sm_80 output=%t.sm80.ptx" | FileCheck %s --check-prefix=ATTR80
// RUN: FileCheck %s --input-file=%t.sm80.ptx --check-prefix=SM80
// RUN: attn-opt %s --attn-emit-ptx="chip=sm_90a output=%t.sm90a.ptx" -o /dev/null
// RUN: FileCheck %s --input-file=%t.sm90a.ptx --check-prefix=SM90A
// RUN: attn-opt %s --attn-emit-ptx="chip=sm_100a output=%t.sm100a.ptx" | FileCheck %s --check-prefix=ATTR100A
// RUN: FileCheck %s --input-file=%t.sm100a.ptx --check-prefix=SM100A
// RUN: attn-opt %s --attn-emit-ptx="chip=sm_120a output=%t.sm120a.ptx" -o /dev/null
// RUN: FileCheck %s --input-file=%t.sm120a.ptx --check-prefix=SM120A
// RUN: attn-opt %s --attn-emit-ptx="chip=sm_100a features=+ptx87 output=%t.explicit.ptx" -o /dev/null
// RUN: FileCheck %s --input-file=%t.explicit.ptx --check-prefix=EXPLICIT
// RUN: not attn-opt %s --attn-emit-ptx="chip=sm_100a features=+ptx80" 2>&1 | FileCheck %s --check-prefix=TOOOLD

// The runtime's kernel for compute capability 10.0 (sm_100a): mma.sync, since
// wgmma is sm_90a only, in PTX ISA 8.6.
// RUN: attn-opt %S/../Pipelines/Inputs/empty.mlir --attn-to-ptx="head-dim=128 arch=sm_100a ptx-file=%t.kernel.ptx" | FileCheck %s --check-prefix=KERNELATTR
// RUN: FileCheck %s --input-file=%t.kernel.ptx --check-prefix=KERNEL

// ATTR80: #nvvm.target<O = 3, chip = "sm_80", features = "+ptx80">
// SM80: .version 8.0
// SM80: .target sm_80
// SM90A: .version 8.0
// SM90A: .target sm_90a
// ATTR100A: #nvvm.target<O = 3, chip = "sm_100a", features = "+ptx86">
// SM100A: .version 8.6
// SM100A: .target sm_100a
// SM120A: .version 8.7
// SM120A: .target sm_120a
// EXPLICIT: .version 8.7
// EXPLICIT: .target sm_100a
// TOOOLD: error: features '+ptx80' ask for PTX ISA 8.0, but sm_100a needs PTX ISA 8.6 or newer (features=auto chooses it)
// TOOOLD-NOT: LLVM ERROR

// KERNELATTR: gpu.binary @{{.*}}#nvvm.target<O = 3, chip = "sm_100a", features = "+ptx86">
// KERNEL: .version 8.6
// KERNEL: .target sm_100a
// KERNEL: .visible .entry attn_fwd(
// KERNEL: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// KERNEL-NOT: wgmma
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
