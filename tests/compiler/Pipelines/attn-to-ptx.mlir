// RUN: attn-opt %s --attn-to-ptx="head-dim=128 dtype=bf16 causal=1 ptx-file=%t.ptx" | FileCheck %s
// RUN: FileCheck %s --input-file=%t.ptx --check-prefix=PTX
// RUN: attn-opt %s --attn-to-ptx="head-dim=64 dtype=f16 arch=sm_80 ptx-file=%t80.ptx" -o /dev/null
// RUN: FileCheck %s --input-file=%t80.ptx --check-prefix=PTX80
// RUN: attn-opt %s --attn-to-ptx="head-dim=128 tensor-core=mma.sync ptx-file=%tmma.ptx" -o /dev/null
// RUN: FileCheck %s --input-file=%tmma.ptx --check-prefix=MMA

// With head-dim set and an empty module, the pipeline compiles the runtime's
// canonical kernel: tiling, online softmax, tensor-core mapping (wgmma on
// sm_90a, mma.sync elsewhere or on request), NVVM, NVPTX.
// CHECK: gpu.binary @attn_kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx80">, assembly =
// CHECK-NOT: attn.

// sm_90a, D = 128: two warpgroups, 128x128 tiles on wgmma.
// PTX: .target sm_90a
// PTX: .visible .entry attn_fwd(
// PTX: .maxntid 256, 1, 1
// PTX: .minnctapersm 1
// PTX-DAG: cp.async.cg.shared.global
// PTX-DAG: cp.async.wait_group 0
// PTX-DAG: fence.proxy.async.shared::cta
// PTX-DAG: wgmma.fence.sync.aligned
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// PTX-DAG: wgmma.commit_group.sync.aligned
// PTX-DAG: wgmma.wait_group.sync.aligned 0
// PTX-DAG: ex2.approx.ftz.f32
// PTX-DAG: shfl.sync.bfly.b32
// PTX-DAG: lg2.approx.f32
// PTX-NOT: mma.sync
// PTX-NOT: .local

// MMA: .maxntid 128, 1, 1
// MMA-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// MMA-DAG: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// MMA-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// MMA-NOT: wgmma

// PTX80: .target sm_80
// PTX80: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
module {
}
