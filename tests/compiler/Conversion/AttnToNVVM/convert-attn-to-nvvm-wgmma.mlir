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
// The K/V loop is software-pipelined, inside a branch taken when there is at
// least one K/V tile; at D = 128, P·V is left running into the next tile.
// Tile 0 first: its copies are waited for and made visible to wgmma's (async
// proxy) reads by a proxy fence, then QKᵀ.
// CHECK: scf.if
// CHECK:   nvvm.cp.async.wait.group 0
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
// The wait hands S on, so nothing reads it before.
// CHECK:   llvm.inline_asm has_side_effects "wgmma.wait_group.sync.aligned 0;", "{{(=f,)+}}0,1,
// Tile 0's P·V, issued before the loop and left running: the rescaled O and
// P pass through the fence; P from registers, V transposed (imm-trans-b = 1).
// CHECK:   llvm.inline_asm has_side_effects "wgmma.fence.sync.aligned;", "{{(=f,)+(=r,)+}}0,
// CHECK-COUNT-8: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{.*}}, {${{[0-9]+}}, ${{[0-9]+}}, ${{[0-9]+}}, ${{[0-9]+}}}, ${{[0-9]+}}, p, 1, 1, 1;
// CHECK:   nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: wgmma.wait_group
// Tiles 1 ...: the copies, barrier and QKᵀ issue run while the previous
// tile's P·V does; the wait for QKᵀ ends that P·V too, O passing through it.
// CHECK:   scf.for
// CHECK:     nvvm.cp.async.wait.group 0
// CHECK:     nvvm.fence.proxy
// CHECK:     nvvm.barrier0
// CHECK:     llvm.inline_asm has_side_effects "bar.sync 1, 256;", ""
// CHECK-COUNT-8: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{.*}}, p, 1, 1, 0, 0;
// CHECK:     llvm.inline_asm has_side_effects "bar.arrive 1, 256;", ""
// CHECK:     llvm.inline_asm has_side_effects "wgmma.wait_group.sync.aligned 0;", "{{(=f,)+}}0,1,
// CHECK-NOT: bar.sync
// CHECK:     llvm.inline_asm has_side_effects "wgmma.fence.sync.aligned;", "{{(=f,)+(=r,)+}}0,
// CHECK-COUNT-8: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{.*}}, p, 1, 1, 1;
// CHECK:     nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: wgmma.wait_group
// CHECK:     scf.yield
// After the loop one more wait ends the last P·V.
// CHECK:   llvm.inline_asm has_side_effects "wgmma.wait_group.sync.aligned 0;", "{{(=f,)+}}0,1,
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

// -----

// D = 64 (128x64 tiles, three stages): iteration j issues QKᵀ of tile j and
// then P·V of tile j - 1; waiting for all but one group gives S, and the mask
// and softmax of tile j run while that P·V does; a last wait ends it, with O
// and P of tile j - 1 passing through.
!t64 = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
// CHECK-LABEL: gpu.module @attn_kernels
// CHECK-SAME: attn.block_m = 128 : i32, attn.shared_bytes = 66560 : i32, attn.threads = 256 : i32
// CHECK: scf.for
// CHECK:   llvm.inline_asm has_side_effects "bar.sync 1, 256;", ""
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{.*}}, p, 1, 1, 0, 0;
// CHECK:   llvm.inline_asm has_side_effects "bar.arrive 1, 256;", ""
// CHECK:   llvm.inline_asm has_side_effects "wgmma.fence.sync.aligned;"
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{.*}}, p, 1, 1, 1;
// CHECK:   nvvm.wgmma.commit.group.sync.aligned
// CHECK:   llvm.inline_asm has_side_effects "wgmma.wait_group.sync.aligned 1;", "{{(=f,)+}}0,1,
// CHECK:   llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK:   llvm.inline_asm has_side_effects "wgmma.wait_group.sync.aligned 0;", "{{(=f,)+(=r,)+}}0,
// CHECK:   scf.yield
// CHECK: llvm.inline_asm has_side_effects "wgmma.fence.sync.aligned;"
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{.*}}, p, 1, 1, 1;
// CHECK: llvm.inline_asm has_side_effects "wgmma.wait_group.sync.aligned 0;"
func.func @dense64(%q: !t64, %k: !t64, %v: !t64, %o: !t64) {
  attn.sdpa %q, %k, %v into %o : !t64, !t64, !t64 -> !t64
  return
}
