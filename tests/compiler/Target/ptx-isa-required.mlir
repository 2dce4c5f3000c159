// A gpu.module whose lowering needs a newer PTX ISA than its chip's lowest
// (attn.min_ptx_version: the atomic backward's red.global.add.v2.f32, 8.1)
// gets it with features=auto; explicit features naming an older version
// are a diagnostic, not PTX that ptxas would reject; features naming no
// version get it added.
// RUN: attn-opt %s --attn-emit-ptx="chip=sm_90a output=%t.auto.ptx" | FileCheck %s --check-prefix=ATTR
// RUN: FileCheck %s --input-file=%t.auto.ptx --check-prefix=AUTO
// RUN: attn-opt %s --attn-emit-ptx="chip=sm_100a output=%t.newer.ptx" -o /dev/null
// RUN: FileCheck %s --input-file=%t.newer.ptx --check-prefix=NEWER
// RUN: not attn-opt %s --attn-emit-ptx="chip=sm_90a features=+ptx80" 2>&1 | FileCheck %s --check-prefix=TOOOLD
// RUN: attn-opt %s --attn-emit-ptx="chip=sm_90a features=+sm_90a" | FileCheck %s --check-prefix=ADDED

// ATTR: #nvvm.target<O = 3, chip = "sm_90a", features = "+ptx81">
// AUTO: .version 8.1
// AUTO: .target sm_90a
// AUTO: red.relaxed.gpu.global.add.v2.f32
// NEWER: .version 8.6
// TOOOLD: error: features '+ptx80' ask for PTX ISA 8.0, but the kernels need PTX ISA 8.1 or newer (features=auto chooses it)
// TOOOLD-NOT: LLVM ERROR
// ADDED: features = "+sm_90a,+ptx81"
module attributes {gpu.container_module} {
  gpu.module @kernels attributes {attn.min_ptx_version = 81 : i32} {
    llvm.func @add_pair(%p: !llvm.ptr<1>, %a: f32, %b: f32) attributes {nvvm.kernel} {
      llvm.inline_asm has_side_effects "red.relaxed.gpu.global.add.v2.f32 [$0], {$1, $2};", "l,f,f" %p, %a, %b : (!llvm.ptr<1>, f32, f32) -> ()
      llvm.return
    }
  }
}
