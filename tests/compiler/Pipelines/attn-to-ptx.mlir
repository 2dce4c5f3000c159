// RUN: attn-opt %s --attn-to-ptx="head-dim=128 dtype=bf16 causal=1 ptx-file=%t.ptx" | FileCheck %s
// RUN: FileCheck %s --input-file=%t.ptx --check-prefix=PTX
// RUN: attn-opt %s --attn-to-ptx="head-dim=64 dtype=f16 arch=sm_80 ptx-file=%t80.ptx" -o /dev/null
// RUN: FileCheck %s --input-file=%t80.ptx --check-prefix=PTX80

// With head-dim set and an empty module, the pipeline compiles the runtime's
// canonical kernel: tiling, online softmax, mma.sync mapping, NVVM, NVPTX.
// CHECK: gpu.binary @attn_kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx80">, assembly =
// CHECK-NOT: attn.

// PTX: .target sm_90a
// PTX: .visible .entry attn_fwd(
// PTX: .maxntid 128, 1, 1
// PTX: .minnctapersm 1
// PTX-DAG: cp.async.cg.shared.global
// PTX-DAG: cp.async.wait_group 1
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX-DAG: ex2.approx.ftz.f32
// PTX-DAG: shfl.sync.bfly.b32
// PTX-DAG: lg2.approx.f32
// PTX-NOT: .local

// PTX80: .target sm_80
// PTX80: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
module {
}
