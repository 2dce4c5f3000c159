// RUN: attn-opt %s --attn-tile="tensor-core=wgmma" --attn-expand-online-softmax --canonicalize --convert-attn-to-nvvm --split-input-file | FileCheck %s

// sm_90a (the default chip), D = 128, causal: wgmma with 128x128 tiles, two
// warpgroups (256 threads), three K/V stages of 64 KiB after Q's 32 KiB, plus
// 1 KiB to align the swizzled tiles.
!t = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
// CHECK-LABEL: gpu.module @attn_kernels
// CHECK-SAME: attn.block_m = 128 : i32, attn.shared_bytes = 230400 : i32, attn.threads = 256 : i32
// CHECK: alignment = 1024 : i64
// CHECK: gpu.func @causal128
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// CHECK: scf.for
// cp.async writes reach wgmma's (async proxy) reads through a proxy fence.
// CHECK:   nvvm.cp.async.wait.group 1
// CHECK:   nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK:   nvvm.barrier0
// QKᵀ: 8 k steps, both operands from shared-memory descriptors (SS); the
// first starts from zero (no tied inputs), the others accumulate. Warpgroup 1
// issues after warpgroup 0 has (named barrier 1).
// CHECK:   llvm.inline_asm has_side_effects "bar.sync 1, 256;", ""
// CHECK:   nvvm.wgmma.fence.aligned
// CHECK:   llvm.inline_asm has_side_effects "{{.*}}wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{.*}}$63}, $64, $65, p, 1, 1, 0, 0;{{.*}}", "{{(=f,)+}}l,l,r"
// CHECK-COUNT-7: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{.*}}, p, 1, 1, 0, 0;
// CHECK:   nvvm.wgmma.commit.group.sync.aligned
// CHECK:   llvm.inline_asm has_side_effects "bar.arrive 1, 256;", ""
// The wait hands the accumulators on (S, and O of the P·V left running), so
// nothing reads them before it.
// CHECK:   llvm.inline_asm has_side_effects "wgmma.wait_group.sync.aligned 0;", "{{(=f,)+}}0,1,
// P·V: the rescaled O and P pass through the fence, then 8 k steps with P
// from registers and V transposed (imm-trans-b = 1), issued without order.
// CHECK-NOT: bar.sync
// CHECK:   llvm.inline_asm has_side_effects "wgmma.fence.sync.aligned;", "{{(=f,)+(=r,)+}}0,
// CHECK-COUNT-8: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{.*}}, {${{[0-9]+}}, ${{[0-9]+}}, ${{[0-9]+}}, ${{[0-9]+}}}, ${{[0-9]+}}, p, 1, 1, 1;
// With three stages P·V is left running into the next iteration: the next
// QKᵀ's wait ends it (the accumulators pass through that wait too), and after
// the loop one more wait does.
// CHECK:   nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: wgmma.wait_group
// CHECK-NOT: bar.arrive
// CHECK:   scf.yield
// CHECK: llvm.inline_asm has_side_effects "wgmma.wait_group.sync.aligned 0;", "{{(=f,)+}}0,1,
// CHECK-NOT: nvvm.ldmatrix
// CHECK-NOT: nvvm.mma.sync
func.func @causal128(%q: !t, %k: !t, %v: !t, %o: !t) {
  attn.sdpa %q, %k, %v into %o mask <causal> : !t, !t, !t -> !t
  return
}

// -----

// D = 256: 128x64 tiles, two stages (a third does not fit), so P·V is waited
// for in its iteration; QKᵀ is ordered as at D = 128.
!t256 = memref<?x?x?x256xbf16, strided<[?, ?, ?, 1], offset: ?>>
// CHECK-LABEL: gpu.module @attn_kernels
// CHECK-SAME: attn.block_m = 128 : i32, attn.shared_bytes = 197632 : i32, attn.threads = 256 : i32
// CHECK: scf.for
// CHECK:   %[[WG1:.*]] = arith.cmpi eq, %{{.*}}, %c1_i32
// CHECK:   scf.if %[[WG1]] {
// CHECK:     llvm.inline_asm has_side_effects "bar.sync 1, 256;", ""
// CHECK:   nvvm.wgmma.fence.aligned
// CHECK-COUNT-16: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// CHECK:   nvvm.wgmma.commit.group.sync.aligned
// CHECK:   %[[WG0:.*]] = arith.cmpi eq, %{{.*}}, %c0_i32
// CHECK:   scf.if %[[WG0]] {
// CHECK:     llvm.inline_asm has_side_effects "bar.arrive 1, 256;", ""
// CHECK-NOT: bar.sync
// CHECK:   llvm.inline_asm has_side_effects "wgmma.fence.sync.aligned;"
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16
// CHECK:   nvvm.wgmma.commit.group.sync.aligned
// CHECK:   llvm.inline_asm has_side_effects "wgmma.wait_group.sync.aligned 0;"
// CHECK:   nvvm.barrier0
// CHECK:   scf.yield
func.func @dense256(%q: !t256, %k: !t256, %v: !t256, %o: !t256) {
  attn.sdpa %q, %k, %v into %o : !t256, !t256, !t256 -> !t256
  return
}
