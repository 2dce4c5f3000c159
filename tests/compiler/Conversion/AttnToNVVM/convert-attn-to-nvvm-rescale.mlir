// RUN: attn-opt %s --attn-tile --attn-expand-online-softmax --canonicalize --convert-attn-to-nvvm="tensor-core=mma.sync" --split-input-file | FileCheck %s

// Masked, two m tiles per warp, D = 128: the accumulator is rescaled only
// when a row max of the warp moved (a vote and a warp-uniform branch), which
// keeps this kernel within 255 registers.
!t = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
// CHECK-LABEL: gpu.func @causal128
// CHECK: scf.for
// CHECK:   %[[MOVED:.*]] = nvvm.vote.sync any %{{.*}}, %{{.*}} -> i1
// CHECK:   scf.if %[[MOVED]] -> (f32,
// CHECK:     arith.mulf
func.func @causal128(%q: !t, %k: !t, %v: !t, %o: !t) {
  attn.sdpa %q, %k, %v into %o mask <causal> : !t, !t, !t -> !t
  return
}

// -----

// Elsewhere it is unconditional: the branch cost more than it saved.
!t = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
// CHECK-LABEL: gpu.func @dense128
// CHECK-NOT: nvvm.vote.sync
// CHECK: gpu.return
func.func @dense128(%q: !t, %k: !t, %v: !t, %o: !t) {
  attn.sdpa %q, %k, %v into %o : !t, !t, !t -> !t
  return
}

// -----

// D = 256: three stages would leave room for one CTA per SM only, so two
// stages, and a barrier before the next prefetch reuses a stage.
!t = memref<?x?x?x256xbf16, strided<[?, ?, ?, 1], offset: ?>>
// CHECK-LABEL: gpu.module @attn_kernels attributes {attn.block_m = 64 : i32, attn.shared_bytes = 101376 : i32
// CHECK: gpu.func @dense256
// CHECK: scf.for
// Two barriers in the loop body: after the wait, and before the yield.
// CHECK-COUNT-2: nvvm.barrier0
// CHECK: gpu.return
func.func @dense256(%q: !t, %k: !t, %v: !t, %o: !t) {
  attn.sdpa %q, %k, %v into %o : !t, !t, !t -> !t
  return
}
