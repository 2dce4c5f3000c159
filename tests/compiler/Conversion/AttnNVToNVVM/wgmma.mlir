// RUN: attn-opt %s --convert-attn-nv-to-nvvm --allow-unregistered-dialect | FileCheck %s

// attn_nv.wgmma as inline PTX wgmma.mma_async m64nNk16 (one warpgroup per 64
// rows, N/2 f32 accumulator registers a thread), one instruction per 16-deep
// k step, committed as one group; operands from 128-byte-swizzle matrix
// descriptors (SS) or A from registers (RS). A zero accumulator is not
// read (scale-d = 0 on the first step). The fence before a product that
// reads registers, and wgmma_wait, pass those registers through (tied).
// warpgroup_turn orders the warpgroups with named barriers.

#wg8 = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 64, warps = 8, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
#wg4 = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 64, block_n = 64, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
!acc8 = tensor<128x64xf32, #attn_nv.acc<warps = 8>>
!acc = tensor<64x64xf32, #attn_nv.acc<warps = 4>>

// QKᵀ, SS, from zero, in warpgroup order: Q (128x64) and K (64 keys x 64)
// swizzled; warpgroup w reads Q from 64 rows x 128 bytes on. Descriptors:
// (address >> 4) | 16 >> 4 << 16 (leading byte offset) | 1024 >> 4 << 32
// (stride byte offset) | 1 << 62 (128-byte swizzle) = ... | 0x4000004000010000.
// 64 columns: 4 k steps, each 32 bytes (2 in the descriptor) on. Only
// warpgroup 1 waits for warpgroup 0 (named barrier 1, 256 threads), which
// arrives after its turn.
// CHECK-LABEL: gpu.func @qk_ss_in_turn
// CHECK: scf.for
// CHECK: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK: %[[WG:.*]] = arith.divui %[[TID]], %c128_i32 : i32
// CHECK: %[[IS1:.*]] = arith.cmpi eq, %[[WG]], %c1_i32 : i32
// CHECK: scf.if %[[IS1]] {
// CHECK:   nvvm.barrier id = %[[ID:.*]] number_of_threads = %[[N256:.*]]
// CHECK: }
// CHECK: %[[SMEM:.*]] = llvm.mlir.addressof @attn_smem : !llvm.ptr<3>
// CHECK: %[[ADDR:.*]] = llvm.ptrtoint %[[SMEM]] : !llvm.ptr<3> to i32
// CHECK: %[[PAD:.*]] = arith.andi %{{.*}}, %c1023_i32 : i32
// CHECK: %[[BASE:.*]] = arith.addi %[[ADDR]], %[[PAD]] : i32
// CHECK: %[[TID2:.*]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK: %[[WG2:.*]] = arith.divui %[[TID2]], %c128_i32{{.*}} : i32
// CHECK: %[[WGOFF:.*]] = arith.muli %[[WG2]], %c8192_i32 : i32
// CHECK: %[[QOFF:.*]] = arith.addi %c0_i32{{.*}}, %[[WGOFF]] : i32
// CHECK: %[[QADDR:.*]] = arith.addi %[[BASE]], %[[QOFF]] : i32
// CHECK: %[[QA4:.*]] = arith.shrui %[[QADDR]], %c4_i32 : i32
// CHECK: %[[QA64:.*]] = arith.extui %[[QA4]] : i32 to i64
// CHECK: %[[ADESC:.*]] = arith.ori %[[QA64]], %c4611686293305360384_i64 : i64
// CHECK: %[[KADDR:.*]] = arith.addi %[[BASE]], %c16384_i32 : i32
// CHECK: %[[KA4:.*]] = arith.shrui %[[KADDR]], %c4_i32{{.*}} : i32
// CHECK: %[[KA64:.*]] = arith.extui %[[KA4]] : i32 to i64
// CHECK: %[[BDESC:.*]] = arith.ori %[[KA64]], %c4611686293305360384_i64{{.*}} : i64
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: %[[D0:.*]] = llvm.inline_asm has_side_effects "{\0A.reg .pred p;\0Asetp.ne.b32 p, $34, 0;\0Awgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {$0, $1, {{.*}}, $31}, $32, $33, p, 1, 1, 0, 0;\0A}", "{{(=f,){32}l}},l,r" %[[ADESC]], %[[BDESC]], %c0_i32{{.*}} : (i64, i64, i32) -> !llvm.struct<({{(f32, ){31}f32}})>
// CHECK: %[[B1:.*]] = arith.addi %[[BDESC]], %c2_i64{{.*}} : i64
// CHECK: %[[A1:.*]] = arith.addi %[[ADESC]], %c2_i64{{.*}} : i64
// CHECK: llvm.inline_asm has_side_effects "{\0A.reg .pred p;\0Asetp.ne.b32 p, $66, 0;\0Awgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {$0, {{.*}}, $31}, $64, $65, p, 1, 1, 0, 0;\0A}", "{{(=f,){32}0}},1,2,{{.*}},30,31,l,l,r" %{{.*}}, %[[A1]], %[[B1]], %c1_i32{{.*}} : ({{(f32, ){32}i}}64, i64, i32)
// CHECK: arith.addi %[[BDESC]], %c4_i64
// CHECK: llvm.inline_asm
// CHECK: arith.addi %[[BDESC]], %c6_i64
// CHECK: llvm.inline_asm
// CHECK-NOT: llvm.inline_asm
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: %[[IS0:.*]] = arith.cmpi eq, %[[WG]], %c0_i32{{.*}} : i32
// CHECK: scf.if %[[IS0]] {
// CHECK:   nvvm.barrier.arrive id = %[[ID]] number_of_threads = %[[N256]]
// CHECK: }
// The wait: the 32 accumulator registers pass through.
// CHECK: %[[W:.*]] = llvm.inline_asm has_side_effects "wgmma.wait_group.sync.aligned 0;", "{{(=f,){32}0}},1,{{.*}},30,31" {{.*}} : ({{(f32, ){31}f32}}) -> !llvm.struct<({{(f32, ){31}f32}})>
// CHECK: %[[R0:.*]] = llvm.extractvalue %[[W]][0]
// CHECK: scf.yield %[[R0]],
func.func @qk_ss_in_turn(%n: index) attributes {attn.config = #wg8} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %q = attn_nv.alloc_shared {offset = 0} : !attn_nv.smem<128x64xbf16, swizzle_128b>
  %k = attn_nv.alloc_shared {offset = 16384} : !attn_nv.smem<64x64xbf16, swizzle_128b>
  %zero = arith.constant dense<0.0> : !acc8
  %r = scf.for %it = %c0 to %n step %c1 iter_args(%acc = %zero) -> (!acc8) {
    %s0 = attn_nv.warpgroup_turn warpgroups 2 -> !acc8 {
      %s = attn_nv.wgmma %q, %k, %zero transpose_rhs : !attn_nv.smem<128x64xbf16, swizzle_128b>, !attn_nv.smem<64x64xbf16, swizzle_128b>, !acc8
      attn_nv.yield %s : !acc8
    }
    %s1 = attn_nv.wgmma_wait %s0 {pending = 0} : !acc8
    scf.yield %s1 : !acc8
  }
  return
}

// SS onto a loaded accumulator: the accumulator passes through the fence
// (tied), every step reads it (scale-d = 1). A head dim of 128: two
// 64-column blocks; k step 4 starts the second block, 64 rows x 128 bytes
// (512 in the descriptor) on for Q and K alike.
// CHECK-LABEL: gpu.func @qk_ss_acc
// CHECK: scf.for %{{.*}} iter_args(%[[C0:arg[0-9]+]] = %{{[[:alnum:]_]+}}, %[[C1:arg[0-9]+]] = %{{[[:alnum:]_]+}}, {{.*}}) -> ({{(f32, ){31}f32}})
// CHECK-NOT: nvvm.wgmma.fence.aligned
// CHECK: %[[F:.*]] = llvm.inline_asm has_side_effects "wgmma.fence.sync.aligned;", "{{(=f,){32}0}},1,{{.*}},31" %[[C0]], %[[C1]],
// CHECK: %[[F0:.*]] = llvm.extractvalue %[[F]][0]
// CHECK: llvm.inline_asm has_side_effects "{\0A.reg .pred p;\0Asetp.ne.b32 p, $66, 0;\0Awgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{.*}}, $64, $65, p, 1, 1, 0, 0;\0A}", "{{(=f,){32}0}},{{.*}},31,l,l,r" %[[F0]], {{.*}}, %c1_i32
// CHECK: arith.addi %{{.*}}, %c2_i64
// CHECK: arith.addi %{{.*}}, %c4_i64
// CHECK: arith.addi %{{.*}}, %c6_i64
// CHECK: arith.addi %{{.*}}, %c512_i64
// CHECK: arith.addi %{{.*}}, %c514_i64
// CHECK: arith.addi %{{.*}}, %c516_i64
// CHECK: arith.addi %{{.*}}, %c518_i64
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: nvvm.barrier
// CHECK: scf.yield
func.func @qk_ss_acc(%n: index) attributes {attn.config = #wg4} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %q = attn_nv.alloc_shared {offset = 0} : !attn_nv.smem<64x128xbf16, swizzle_128b>
  %k = attn_nv.alloc_shared {offset = 16384} : !attn_nv.smem<64x128xbf16, swizzle_128b>
  %zero = arith.constant dense<0.0> : !acc
  %r = scf.for %it = %c0 to %n step %c1 iter_args(%acc = %zero) -> (!acc) {
    %s = attn_nv.wgmma %q, %k, %acc transpose_rhs : !attn_nv.smem<64x128xbf16, swizzle_128b>, !attn_nv.smem<64x128xbf16, swizzle_128b>, !acc
    %s1 = attn_nv.wgmma_wait %s {pending = 0} : !acc
    scf.yield %s1 : !acc
  }
  return
}

// The same product with `advance_in_ptx` (the backward's kernels): each k
// step's descriptors are advanced inside the instruction's PTX from the
// tile's own, not by LLVM arithmetic that LICM would hoist out of the loop
// (a register pair each for the whole loop).
// CHECK-LABEL: gpu.func @qk_ss_advance_in_ptx
// CHECK: scf.for
// CHECK: llvm.inline_asm has_side_effects "{\0A.reg .pred p;\0Asetp.ne.b32 p, $66, 0;\0Awgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{.*}}, $64, $65, p, 1, 1, 0, 0;\0A}", "{{(=f,){32}0}},{{.*}},31,l,l,r" {{.*}}, %[[QD:[[:alnum:]_]+]], %[[KD:[[:alnum:]_]+]], %c1_i32
// CHECK: llvm.inline_asm has_side_effects "{\0A.reg .pred p;\0A.reg .b64 da;\0Aadd.s64 da, $64, 2;\0A.reg .b64 db;\0Aadd.s64 db, $65, 2;\0Asetp.ne.b32 p, $66, 0;\0Awgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{.*}}, da, db, p, 1, 1, 0, 0;\0A}", {{.*}}, %[[QD]], %[[KD]], %c1_i32
// CHECK-COUNT-2: add.s64 da, $64, {{[46]}};
// CHECK: add.s64 da, $64, 512;
// CHECK-SAME: add.s64 db, $65, 512;
// CHECK-COUNT-3: add.s64 da, $64, {{51[468]}};
// CHECK-NOT: arith.addi %{{.*}}, %c{{[0-9]+}}_i64
// CHECK: nvvm.wgmma.commit.group.sync.aligned
func.func @qk_ss_advance_in_ptx(%n: index) attributes {attn.config = #wg4} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %q = attn_nv.alloc_shared {offset = 0} : !attn_nv.smem<64x128xbf16, swizzle_128b>
  %k = attn_nv.alloc_shared {offset = 16384} : !attn_nv.smem<64x128xbf16, swizzle_128b>
  %zero = arith.constant dense<0.0> : !acc
  %r = scf.for %it = %c0 to %n step %c1 iter_args(%acc = %zero) -> (!acc) {
    %s = attn_nv.wgmma %q, %k, %acc transpose_rhs advance_in_ptx : !attn_nv.smem<64x128xbf16, swizzle_128b>, !attn_nv.smem<64x128xbf16, swizzle_128b>, !acc
    %s1 = attn_nv.wgmma_wait %s {pending = 0} : !acc
    scf.yield %s1 : !acc
  }
  return
}

// P·V, RS: P (64x64 f16) as 16 A registers a thread (4 per k step), V
// (64 keys x 64) MN-major: leading byte offset 64 rows x 128 bytes = 8192
// (the next 64-column block), stride byte offset 1024, swizzle:
// 0x4000004002000000; a k step is 16 rows x 128 bytes (128 in the
// descriptor). The fence passes the 32 accumulator and the 16 A registers
// through; imm-trans-b = 1 (MN-major). wgmma_wait of the accumulator and P:
// f32 and 32-bit registers through one wait.
// CHECK-LABEL: gpu.func @pv_rs
// CHECK: scf.for %{{.*}} -> ({{(f32, ){32}(vector<2xf16>, ){15}vector<2xf16>}})
// CHECK: %[[VADDR:.*]] = arith.addi %{{.*}}, %c8192_i32 : i32
// CHECK: %[[V4:.*]] = arith.shrui %[[VADDR]], %c4_i32 : i32
// CHECK: %[[V64:.*]] = arith.extui %[[V4]] : i32 to i64
// CHECK: %[[BDESC:.*]] = arith.ori %[[V64]], %c4611686293338849280_i64 : i64
// CHECK-COUNT-16: llvm.bitcast %{{.*}} : vector<2xf16> to i32
// CHECK: %[[F:.*]] = llvm.inline_asm has_side_effects "wgmma.fence.sync.aligned;", "{{(=f,){32}(=r,){16}0}},1,{{.*}},46,47" {{.*}} : ({{(f32, ){32}(i32, ){15}i32}})
// CHECK: %[[A0:.*]] = llvm.extractvalue %[[F]][32] : !llvm.struct<({{(f32, ){32}(i32, ){15}i32}})>
// CHECK: %[[A0H:.*]] = llvm.bitcast %[[A0]] : i32 to vector<2xf16>
// CHECK: %[[A0R:.*]] = llvm.bitcast %[[A0H]] : vector<2xf16> to i32
// CHECK: llvm.inline_asm has_side_effects "{\0A.reg .pred p;\0Asetp.ne.b32 p, $69, 0;\0Awgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {$0, {{.*}}, $31}, {$64, $65, $66, $67}, $68, p, 1, 1, 1;\0A}", "{{(=f,){32}0}},{{.*}},31,r,r,r,r,l,r" {{.*}}, %[[A0R]], %{{.*}}, %{{.*}}, %{{.*}}, %[[BDESC]], %c1_i32
// CHECK: %[[B1:.*]] = arith.addi %[[BDESC]], %c128_i64 : i64
// CHECK: llvm.inline_asm {{.*}}wgmma.mma_async{{.*}}, %[[B1]], %c1_i32
// CHECK: arith.addi %[[BDESC]], %c256_i64 : i64
// CHECK: llvm.inline_asm {{.*}}wgmma.mma_async
// CHECK: arith.addi %[[BDESC]], %c384_i64 : i64
// CHECK: llvm.inline_asm {{.*}}wgmma.mma_async
// CHECK-NOT: wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: llvm.inline_asm has_side_effects "wgmma.wait_group.sync.aligned 1;", "{{(=f,){32}(=r,){16}0}},{{.*}},47"
func.func @pv_rs(%n: index) attributes {attn.config = #wg4} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %v = attn_nv.alloc_shared {offset = 8192} : !attn_nv.smem<64x64xf16, swizzle_128b>
  %zero = arith.constant dense<0.0> : !acc
  %p0 = attn_nv.convert_layout %zero : !acc -> tensor<64x64xf16, #attn_nv.operand_a<warps = 4>>
  %r:2 = scf.for %it = %c0 to %n step %c1 iter_args(%acc = %zero, %p = %p0) -> (!acc, tensor<64x64xf16, #attn_nv.operand_a<warps = 4>>) {
    %o = attn_nv.wgmma %p, %v, %acc : tensor<64x64xf16, #attn_nv.operand_a<warps = 4>>, !attn_nv.smem<64x64xf16, swizzle_128b>, !acc
    %o1, %p1 = attn_nv.wgmma_wait %o, %p {pending = 1} : !acc, tensor<64x64xf16, #attn_nv.operand_a<warps = 4>>
    scf.yield %o1, %p1 : !acc, tensor<64x64xf16, #attn_nv.operand_a<warps = 4>>
  }
  return
}

// RS from zero: only the A registers pass through the fence; the first
// step does not read the accumulator (scale-d = 0).
// CHECK-LABEL: gpu.func @pv_rs_zero
// CHECK: llvm.inline_asm has_side_effects "wgmma.fence.sync.aligned;", "{{(=r,){16}0}},1,{{.*}},15"
// CHECK: llvm.inline_asm has_side_effects "{\0A.reg .pred p;\0Asetp.ne.b32 p, $37, 0;\0Awgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {$0, {{.*}}, $31}, {$32, $33, $34, $35}, $36, p, 1, 1, 1;\0A}", "{{(=f,){32}r}},r,r,r,l,r" {{.*}}, %c0_i32
// CHECK: setp.ne.b32 p, $69, 0;
// CHECK-SAME: %c1_i32
func.func @pv_rs_zero(%n: index) attributes {attn.config = #wg4} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %v = attn_nv.alloc_shared {offset = 8192} : !attn_nv.smem<64x64xbf16, swizzle_128b>
  %zero = arith.constant dense<0.0> : !acc
  %p0 = attn_nv.convert_layout %zero : !acc -> tensor<64x64xbf16, #attn_nv.operand_a<warps = 4>>
  %r:2 = scf.for %it = %c0 to %n step %c1 iter_args(%acc = %zero, %p = %p0) -> (!acc, tensor<64x64xbf16, #attn_nv.operand_a<warps = 4>>) {
    %o = attn_nv.wgmma %p, %v, %zero : tensor<64x64xbf16, #attn_nv.operand_a<warps = 4>>, !attn_nv.smem<64x64xbf16, swizzle_128b>, !acc
    %o1 = attn_nv.wgmma_wait %o {pending = 0} : !acc
    scf.yield %o1, %p : !acc, tensor<64x64xbf16, #attn_nv.operand_a<warps = 4>>
  }
  return
}

// A head dim of 96 (not a multiple of 64): Q and K are stored in two
// 64-column blocks, the second half used. QKᵀ takes 96 / 16 = 6 k steps:
// 4 in block 0 (32 bytes apart: 2, 4, 6 in the descriptor), 2 in block 1,
// 64 rows x 128 bytes (512) on; nothing reads the block's unused half.
// CHECK-LABEL: gpu.func @qk_ss_d96
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// CHECK: arith.addi %{{.*}}, %c2_i64
// CHECK: wgmma.mma_async
// CHECK: arith.addi %{{.*}}, %c4_i64
// CHECK: wgmma.mma_async
// CHECK: arith.addi %{{.*}}, %c6_i64
// CHECK: wgmma.mma_async
// CHECK: arith.addi %{{.*}}, %c512_i64
// CHECK: arith.addi %{{.*}}, %c512_i64
// CHECK: wgmma.mma_async
// CHECK: arith.addi %{{.*}}, %c514_i64
// CHECK: arith.addi %{{.*}}, %c514_i64
// CHECK: wgmma.mma_async
// CHECK-NOT: wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
func.func @qk_ss_d96(%n: index) attributes {attn.config = #wg4} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %q = attn_nv.alloc_shared {offset = 0} : !attn_nv.smem<64x96xbf16, swizzle_128b>
  %k = attn_nv.alloc_shared {offset = 16384} : !attn_nv.smem<64x96xbf16, swizzle_128b>
  %zero = arith.constant dense<0.0> : !acc
  %r = scf.for %it = %c0 to %n step %c1 iter_args(%acc = %zero) -> (!acc) {
    %s = attn_nv.wgmma %q, %k, %zero transpose_rhs : !attn_nv.smem<64x96xbf16, swizzle_128b>, !attn_nv.smem<64x96xbf16, swizzle_128b>, !acc
    %s1 = attn_nv.wgmma_wait %s {pending = 0} : !acc
    scf.yield %s1 : !acc
  }
  return
}

// P·V with N = 96: one m64n96k16 per k step (48 accumulator registers a
// thread) reads all of V's block 0 and the used half of block 1; the
// leading byte offset steps to block 1: 128 keys x 128 bytes = 16384
// (1024 << 16 in the descriptor), stride byte offset 1024, swizzle:
// 0x4000004004000000. 128 keys: 8 k steps of 16 rows x 128 bytes (128).
// CHECK-LABEL: gpu.func @pv_rs_n96
// CHECK: %[[VADDR:.*]] = arith.addi %{{.*}}, %c8192_i32 : i32
// CHECK: %[[V4:.*]] = arith.shrui %[[VADDR]], %c4_i32 : i32
// CHECK: %[[V64:.*]] = arith.extui %[[V4]] : i32 to i64
// CHECK: %[[BDESC:.*]] = arith.ori %[[V64]], %c4611686293372403712_i64 : i64
// CHECK: llvm.inline_asm has_side_effects "{\0A.reg .pred p;\0Asetp.ne.b32 p, $53, 0;\0Awgmma.mma_async.sync.aligned.m64n96k16.f32.bf16.bf16 {$0, {{.*}}, $47}, {$48, $49, $50, $51}, $52, p, 1, 1, 1;\0A}", "{{(=f,){48}r}},r,r,r,l,r" {{.*}}, %[[BDESC]], %c0_i32
// CHECK: arith.addi %[[BDESC]], %c128_i64 : i64
// CHECK: wgmma.mma_async.sync.aligned.m64n96k16
// CHECK: arith.addi %[[BDESC]], %c896_i64 : i64
// CHECK: wgmma.mma_async.sync.aligned.m64n96k16
// CHECK-NOT: wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
func.func @pv_rs_n96(%n: index) attributes {attn.config = #wg4} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %v = attn_nv.alloc_shared {offset = 8192} : !attn_nv.smem<128x96xbf16, swizzle_128b>
  %zero = arith.constant dense<0.0> : tensor<64x96xf32, #attn_nv.acc<warps = 4>>
  %pz = arith.constant dense<0.0> : tensor<64x128xf32, #attn_nv.acc<warps = 4>>
  %p0 = attn_nv.convert_layout %pz : tensor<64x128xf32, #attn_nv.acc<warps = 4>> -> tensor<64x128xbf16, #attn_nv.operand_a<warps = 4>>
  %r = scf.for %it = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<64x96xf32, #attn_nv.acc<warps = 4>>) {
    %o = attn_nv.wgmma %p0, %v, %zero : tensor<64x128xbf16, #attn_nv.operand_a<warps = 4>>, !attn_nv.smem<128x96xbf16, swizzle_128b>, tensor<64x96xf32, #attn_nv.acc<warps = 4>>
    %o1 = attn_nv.wgmma_wait %o {pending = 0} : tensor<64x96xf32, #attn_nv.acc<warps = 4>>
    scf.yield %o1 : tensor<64x96xf32, #attn_nv.acc<warps = 4>>
  }
  return
}

// Three warpgroups: 1 waits on barrier 1, 2 on barrier 2; after its turn 0
// arrives at 1, 1 at 2. The body's results are the op's.
// CHECK-LABEL: gpu.func @turn_three
// CHECK: %[[WG:.*]] = arith.divui %{{.*}}, %c128_i32 : i32
// CHECK: %[[IS1:.*]] = arith.cmpi eq, %[[WG]], %c1_i32 : i32
// CHECK: scf.if %[[IS1]] {
// CHECK:   nvvm.barrier id = %c1_i32{{.*}} number_of_threads = %c256_i32
// CHECK: %[[IS2:.*]] = arith.cmpi eq, %[[WG]], %c2_i32 : i32
// CHECK: scf.if %[[IS2]] {
// CHECK:   nvvm.barrier id = %c2_i32{{.*}} number_of_threads = %c256_i32
// CHECK: %[[X:.*]] = "test.body"() : () -> i32
// CHECK: %[[IS0:.*]] = arith.cmpi eq, %[[WG]], %c0_i32 : i32
// CHECK: scf.if %[[IS0]] {
// CHECK:   nvvm.barrier.arrive id = %c1_i32{{.*}} number_of_threads = %c256_i32
// CHECK: %[[IS1B:.*]] = arith.cmpi eq, %[[WG]], %c1_i32{{.*}} : i32
// CHECK: scf.if %[[IS1B]] {
// CHECK:   nvvm.barrier.arrive id = %c2_i32{{.*}} number_of_threads = %c256_i32
// CHECK-NOT: nvvm.barrier
// CHECK: "test.sink"(%[[X]])
func.func @turn_three() attributes {attn.config = #wg4} {
  %x = attn_nv.warpgroup_turn warpgroups 3 -> i32 {
    %y = "test.body"() : () -> i32
    attn_nv.yield %y : i32
  }
  "test.sink"(%x) : (i32) -> ()
  return
}

// One warpgroup: no barrier.
// CHECK-LABEL: gpu.func @turn_one
// CHECK-NOT: nvvm.barrier
// CHECK: "test.body"
// CHECK-NOT: nvvm.barrier
// CHECK: gpu.return
func.func @turn_one() attributes {attn.config = #wg4} {
  attn_nv.warpgroup_turn warpgroups 1 {
    "test.body"() : () -> ()
    attn_nv.yield
  }
  return
}

// A numbered turn (TMA kernels, no CTA barrier per tile): turn k takes the
// barrier set k mod rotation, ids 1 + (k mod 3) with two warpgroups, each
// a constant in the PTX text behind an if/else chain on the set: no
// unreachable default (an `exit` inside the loop serialises every wgmma),
// no id in a register (ptxas would reserve all 16 barriers).
// CHECK-LABEL: gpu.func @turn_numbered(
// CHECK-SAME: %[[K:[^:]*]]: index
// CHECK: %[[WG:.*]] = arith.divui %{{.*}}, %c128_i32 : i32
// CHECK: %[[K32:.*]] = arith.index_castui %[[K]] : index to i32
// CHECK: %[[SET:.*]] = arith.remui %[[K32]], %c3_i32 : i32
// CHECK: %[[IS1:.*]] = arith.cmpi eq, %[[WG]], %c1_i32{{.*}} : i32
// CHECK: scf.if %[[IS1]] {
// CHECK:   %[[S0:.*]] = arith.cmpi eq, %[[SET]], %c0_i32{{.*}} : i32
// CHECK:   scf.if %[[S0]] {
// CHECK:     llvm.inline_asm has_side_effects "bar.sync 1, 256;"
// CHECK:   } else {
// CHECK:     %[[S1:.*]] = arith.cmpi eq, %[[SET]], %c1_i32{{.*}} : i32
// CHECK:     scf.if %[[S1]] {
// CHECK:       llvm.inline_asm has_side_effects "bar.sync 2, 256;"
// CHECK:     } else {
// CHECK:       llvm.inline_asm has_side_effects "bar.sync 3, 256;"
// CHECK: "test.body"
// CHECK: %[[IS0:.*]] = arith.cmpi eq, %[[WG]], %c0_i32{{.*}} : i32
// CHECK: scf.if %[[IS0]] {
// CHECK:     llvm.inline_asm has_side_effects "bar.arrive 1, 256;"
// CHECK:     llvm.inline_asm has_side_effects "bar.arrive 2, 256;"
// CHECK:     llvm.inline_asm has_side_effects "bar.arrive 3, 256;"
// CHECK-NOT: nvvm.barrier
// CHECK-NOT: bar.
// CHECK: gpu.return
func.func @turn_numbered(%k: index) attributes {attn.config = #wg8} {
  attn_nv.warpgroup_turn warpgroups 2 turn %k rotation 3 {
    "test.body"() : () -> ()
    attn_nv.yield
  }
  return
}

// The atomic backward's (dSᵀ)ᵀ K, SS with both operands MN-major: dSᵀ
// (64 keys x 64 queries, K×M) and K (64 keys x 128, K×N) read as P·V's V
// is (leading byte offset 64 rows x 128 bytes, stride byte offset 1024:
// 0x4000004002000000), warpgroup w's queries from its 64-column block
// (8192 bytes on); a k step is 16 rows (128 in both descriptors);
// imm-trans-a = imm-trans-b = 1. From zero: no register passes the fence.
!acc128 = tensor<64x128xf32, #attn_nv.acc<warps = 4>>
// CHECK-LABEL: gpu.func @ds_k_transposed_lhs
// CHECK: %[[WG:.*]] = arith.divui %{{.*}}, %c128_i32 : i32
// CHECK: %[[WGOFF:.*]] = arith.muli %[[WG]], %c8192_i32{{.*}} : i32
// CHECK: %[[DSOFF:.*]] = arith.addi %c0_i32{{.*}}, %[[WGOFF]] : i32
// CHECK: arith.addi %{{.*}}, %[[DSOFF]] : i32
// CHECK: %[[ADESC:.*]] = arith.ori %{{.*}}, %c4611686293338849280_i64 : i64
// CHECK: %[[BDESC:.*]] = arith.ori %{{.*}}, %c4611686293338849280_i64{{.*}} : i64
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: llvm.inline_asm has_side_effects "{\0A.reg .pred p;\0Asetp.ne.b32 p, $66, 0;\0Awgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {$0, {{.*}}, $63}, $64, $65, p, 1, 1, 1, 1;\0A}", "{{(=f,){64}l}},l,r" %[[ADESC]], %[[BDESC]], %c0_i32
// CHECK: %[[A1:.*]] = arith.addi %[[ADESC]], %c128_i64{{.*}} : i64
// CHECK: %[[B1:.*]] = arith.addi %[[BDESC]], %c128_i64{{.*}} : i64
// CHECK: llvm.inline_asm {{.*}}p, 1, 1, 1, 1;{{.*}}, %[[A1]], %[[B1]], %c1_i32
// CHECK: arith.addi %[[ADESC]], %c256_i64
// CHECK: llvm.inline_asm {{.*}}wgmma.mma_async
// CHECK: arith.addi %[[ADESC]], %c384_i64
// CHECK: llvm.inline_asm {{.*}}wgmma.mma_async
// CHECK-NOT: wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
func.func @ds_k_transposed_lhs(%n: index) attributes {attn.config = #wg4} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ds = attn_nv.alloc_shared {offset = 0} : !attn_nv.smem<64x64xbf16, swizzle_128b>
  %k = attn_nv.alloc_shared {offset = 8192} : !attn_nv.smem<64x128xbf16, swizzle_128b>
  %zero = arith.constant dense<0.0> : !acc128
  %r = scf.for %it = %c0 to %n step %c1 iter_args(%acc = %zero) -> (!acc128) {
    %dq = attn_nv.wgmma %ds, %k, %zero transpose_lhs : !attn_nv.smem<64x64xbf16, swizzle_128b>, !attn_nv.smem<64x128xbf16, swizzle_128b>, !acc128
    %dq1 = attn_nv.wgmma_wait %dq {pending = 0} : !acc128
    scf.yield %dq1 : !acc128
  }
  return
}

// The same product split over the head dim (col_groups = 2: the atomic
// backward on two warpgroups of 64 keys, dSᵀ 128 keys x 64 queries): every
// warpgroup reads all of dSᵀ (no offset of A) and its own 64-column block
// of K (warpgroup w: 128 rows x 128 bytes = 16384 bytes on); m64n64k16,
// 32 accumulator registers a thread, 8 k steps of 16 keys; both
// descriptors step 128 rows x 128 bytes between 64-column blocks
// (0x4000004004000000).
!accg = tensor<64x128xf32, #attn_nv.acc<warps = 8, col_groups = 2>>
// CHECK-LABEL: gpu.func @ds_k_column_groups
// CHECK: %[[WG:.*]] = arith.divui %{{.*}}, %c128_i32 : i32
// CHECK: %[[WGOFF:.*]] = arith.muli %[[WG]], %c16384_i32{{.*}} : i32
// CHECK: %[[KOFF:.*]] = arith.addi %c16384_i32, %[[WGOFF]] : i32
// CHECK: %[[DSADDR:.*]] = arith.addi %{{.*}}, %c0_i32 : i32
// CHECK: arith.shrui %[[DSADDR]]
// CHECK: %[[ADESC:.*]] = arith.ori %{{.*}}, %c4611686293372403712_i64 : i64
// CHECK: arith.addi %{{.*}}, %[[KOFF]] : i32
// CHECK: %[[BDESC:.*]] = arith.ori %{{.*}}, %c4611686293372403712_i64{{.*}} : i64
// CHECK: llvm.inline_asm has_side_effects "{\0A.reg .pred p;\0Asetp.ne.b32 p, $34, 0;\0Awgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {$0, {{.*}}, $31}, $32, $33, p, 1, 1, 1, 1;\0A}", "{{(=f,){32}l}},l,r" %[[ADESC]], %[[BDESC]], %c0_i32
// CHECK-COUNT-7: wgmma.mma_async.sync.aligned.m64n64k16
// CHECK-NOT: wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
func.func @ds_k_column_groups(%n: index) attributes {attn.config = #wg8} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ds = attn_nv.alloc_shared {offset = 0} : !attn_nv.smem<128x64xbf16, swizzle_128b>
  %k = attn_nv.alloc_shared {offset = 16384} : !attn_nv.smem<128x128xbf16, swizzle_128b>
  %zero = arith.constant dense<0.0> : !accg
  %r = scf.for %it = %c0 to %n step %c1 iter_args(%acc = %zero) -> (!accg) {
    %dq = attn_nv.wgmma %ds, %k, %zero transpose_lhs : !attn_nv.smem<128x64xbf16, swizzle_128b>, !attn_nv.smem<128x128xbf16, swizzle_128b>, !accg
    %dq1 = attn_nv.wgmma_wait %dq {pending = 0} : !accg
    scf.yield %dq1 : !accg
  }
  return
}
