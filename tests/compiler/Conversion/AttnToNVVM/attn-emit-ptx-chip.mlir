// RUN: not attn-opt %s --split-input-file --attn-emit-ptx="chip=sm_80" 2>&1 | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-emit-ptx="chip=sm_90a" | FileCheck %s --check-prefix=SM90A
// RUN: not attn-opt %s --split-input-file --attn-emit-ptx="chip=sm_100a" 2>&1 | FileCheck %s --check-prefix=SM100A

// sm_90 instructions (a wgmma kernel, configured for sm_90a) emitted for a
// chip without them are a diagnostic on the op. attn-opt-fuzzer found
// `--attn-to-ptx="arch=sm_80"` on the wgmma tests' IR ending the process in
// the NVPTX backend: "LLVM ERROR: Cannot select: intrinsic
// %llvm.nvvm.wgmma.commit_group.sync.aligned" (and ...fence.proxy.async...).

// CHECK: error: 'nvvm.wgmma.commit.group.sync.aligned' op needs sm_90a, not sm_80 (was the kernel configured for another chip?)
// CHECK: error: 'nvvm.fence.proxy' op needs sm_90 or newer, not sm_80 (was the kernel configured for another chip?)
// CHECK-NOT: LLVM ERROR
// SM90A-COUNT-2: gpu.binary
// SM100A: error: 'nvvm.wgmma.commit.group.sync.aligned' op needs sm_90a, not sm_100a
// SM100A: gpu.binary @fence
module attributes {gpu.container_module} {
  gpu.module @wgmma {
    llvm.func @commit() attributes {nvvm.kernel} {
      nvvm.wgmma.commit.group.sync.aligned
      llvm.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @fence {
    llvm.func @fence() attributes {nvvm.kernel} {
      nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
      llvm.return
    }
  }
}
