// RUN: attn-opt %s --attn-tile --attn-expand-online-softmax --canonicalize --convert-attn-to-nvvm="tensor-core=mma.sync" --split-input-file --verify-diagnostics | FileCheck %s

!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>

// CHECK-LABEL: gpu.module @attn_kernels
// CHECK-SAME: attn.block_m = 128 : i32, attn.shared_bytes = 73728 : i32, attn.threads = 128 : i32
// CHECK: llvm.mlir.global external @attn_smem() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<0 x i8>
// Each memref argument is (pointer, sizes, strides); the scale follows.
// CHECK: gpu.func @attn_fwd(%{{.*}}: !llvm.ptr<1>, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64,
// CHECK-SAME: %{{.*}}: f32) kernel attributes {known_block_size = array<i32: 128, 1, 1>, nvvm.minctasm = 1 : i32}
// CHECK: nvvm.read.ptx.sreg.ctaid.x
// Q, K and V reach shared memory by cp.async, 16 bytes a thread, zero-filled
// past the sequence end.
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache = cg, %{{.*}}
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.cp.async.wait.group 1
// CHECK: nvvm.barrier0
// CHECK: nvvm.ldmatrix {{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, num = 4 : i32, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>}
// The K/V loop: prefetch of the next stage, then QKᵀ and P·V on tensor cores.
// CHECK: scf.for
// CHECK:   scf.if
// CHECK:     nvvm.cp.async.shared.global
// CHECK:   nvvm.cp.async.wait.group 1
// CHECK:   nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>}
// CHECK:   nvvm.shfl.sync bfly
// CHECK:   llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// V is read transposed for the B operand of P·V.
// CHECK:   nvvm.ldmatrix {{.*}} layout = #nvvm.mma_layout<col>
// Three K/V stages fit here, so the stage the next prefetch overwrites was
// read two iterations back: no barrier ends the loop body.
// CHECK-NOT: nvvm.barrier0
// CHECK:   scf.yield
// CHECK: llvm.call_intrinsic "llvm.nvvm.lg2.approx.f"
// CHECK: llvm.store
// CHECK: gpu.return
// CHECK-NOT: func.func @attn_fwd
func.func @attn_fwd(%q: !t, %k: !t, %v: !t, %o: !t, %lse: !lse, %s: f32) {
  attn.sdpa %q, %k, %v into %o lse %lse scale %s mask <causal> : !t, !t, !t -> !t, !lse
  return
}

// -----

!t = memref<?x?x?x64xf32, strided<[?, ?, ?, 1], offset: ?>>

func.func @attn_f32(%q: !t, %k: !t, %v: !t, %o: !t) {
  // expected-error @+1 {{the NVIDIA mapping supports bf16 and f16 tiles, got 'f32'}}
  attn.sdpa %q, %k, %v into %o : !t, !t, !t -> !t
  return
}
