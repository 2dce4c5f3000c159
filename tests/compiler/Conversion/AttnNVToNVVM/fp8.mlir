// RUN: attn-opt %s --convert-attn-nv-to-nvvm --canonicalize | FileCheck %s
// RUN: attn-opt %s --convert-attn-nv-to-nvvm | grep -c "nvvm.shfl.sync  idx" | FileCheck %s --check-prefix=SHUFFLES
// RUN: attn-opt %s --convert-attn-nv-to-nvvm | grep -c "nvvm.convert.f32x2.to.f8x2" | FileCheck %s --check-prefix=CONVERSIONS

// FP8 (e4m3) on wgmma: 8-bit products read both operands K-major, 32
// elements (32 bytes) of K per instruction, with no transpose immediates;
// P's accumulator fragments become 8-bit A fragments through two shuffles
// per row and 32 columns; V arrives transposed by a transposed tensor map.

#wg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = true>
!acc = tensor<128x128xf32, #attn_nv.acc<warps = 8>>
!pa = tensor<128x128xf8E4M3FN, #attn_nv.operand_a<warps = 8>>
!s8 = !attn_nv.smem<128x128xf8E4M3FN, swizzle_128b>

// QKᵀ at D = 128 (SS): 4 k steps of m64n128k32.e4m3, each 32 bytes (2 in
// the descriptor's address field) past the last, all in one 128-byte
// block; 64 accumulator registers a thread; no transpose immediates.
// CHECK-LABEL: gpu.func @qk
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 {{.*}} p, 1, 1;
// CHECK-NOT: wgmma.mma_async
func.func @qk(%n: index) attributes {attn.config = #wg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %q = attn_nv.alloc_shared {offset = 0} : !s8
  %k = attn_nv.alloc_shared {offset = 16384} : !s8
  %zero = arith.constant dense<0.0> : !acc
  %r = scf.for %it = %c0 to %n step %c1 iter_args(%acc = %zero) -> (!acc) {
    %s0 = attn_nv.wgmma %q, %k, %zero transpose_rhs : !s8, !s8, !acc
    %s = attn_nv.wgmma_wait %s0 {pending = 0} : !acc
    scf.yield %s : !acc
  }
  return
}

// P·V (RS): P's 128 keys as 4 k blocks of 4 registers, Vᵀ (128 head-dim
// rows x 128 keys) K-major: the descriptors step 32 bytes per k block.
// CHECK-LABEL: gpu.func @pv
// CHECK: scf.for
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 {{.*}}, {${{[0-9]+}}, ${{[0-9]+}}, ${{[0-9]+}}, ${{[0-9]+}}}, ${{[0-9]+}}, p, 1, 1;
// CHECK-NOT: wgmma.mma_async
func.func @pv(%n: index) attributes {attn.config = #wg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %vt = attn_nv.alloc_shared {offset = 16384} : !s8
  %zero = arith.constant dense<0.0> : !acc
  %p0 = attn_nv.convert_layout %zero : !acc -> !pa
  %r:2 = scf.for %it = %c0 to %n step %c1 iter_args(%acc = %zero, %p = %p0) -> (!acc, !pa) {
    %o0 = attn_nv.wgmma %p, %vt, %acc transpose_rhs : !pa, !s8, !acc
    %o, %p1 = attn_nv.wgmma_wait %o0, %p {pending = 0} : !acc, !pa
    scf.yield %o, %p1 : !acc, !pa
  }
  return
}

// P (f32 accumulator) to 8-bit A fragments: per m tile, 32-column k block
// and row (g, g + 8), the 8 values a thread holds become two e4m3x2 pairs
// per 16 columns (cvt.rn.satfinite), packed two to a register (lo: blocks
// 0-1, hi: 2-3); a byte permute offers block t mod 2 of both in one
// shuffle and block 1 - t mod 2 in the other; two permutes put the pulled
// halves in column order. 4 k blocks x 2 rows: 32 conversions, 16
// shuffles (shfl.idx), 16 + 16 permutes, 16 registers out; two such
// conversions in this file (@pv's and this one's in the loop).
// SHUFFLES: 32
// CONVERSIONS: 64
// CHECK-LABEL: gpu.func @p_to_fp8
// CHECK: scf.for
// CHECK-COUNT-4: nvvm.convert.f32x2.to.f8x2
// CHECK: %[[MINE:.*]] = nvvm.prmt <default> %{{.*}}, %[[LO:.*]], %[[HI:.*]] : i32
// CHECK-NEXT: %[[X:.*]] = nvvm.shfl.sync  idx %{{.*}}, %[[MINE]], %{{.*}}, %c31_i32 : i32 -> i32
// CHECK-NEXT: %[[OTHER:.*]] = nvvm.prmt <default> %{{.*}}, %[[LO]], %[[HI]] : i32
// CHECK-NEXT: %[[Y:.*]] = nvvm.shfl.sync  idx %{{.*}}, %[[OTHER]], %{{.*}}, %c31_i32 : i32 -> i32
// CHECK: nvvm.prmt <default> %{{.*}}, %[[X]], %[[Y]] : i32
// CHECK: nvvm.prmt <default> %{{.*}}, %[[X]], %[[Y]] : i32
func.func @p_to_fp8(%n: index) attributes {attn.config = #wg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %vt = attn_nv.alloc_shared {offset = 16384} : !s8
  %zero = arith.constant dense<0.0> : !acc
  %r:2 = scf.for %it = %c0 to %n step %c1 iter_args(%s = %zero, %o = %zero) -> (!acc, !acc) {
    %p = attn_nv.convert_layout %s : !acc -> !pa
    %o0 = attn_nv.wgmma %p, %vt, %o transpose_rhs : !pa, !s8, !acc
    %o1, %p1 = attn_nv.wgmma_wait %o0, %p {pending = 0} : !acc, !pa
    scf.yield %o1, %o1 : !acc, !acc
  }
  return
}

// A transposed copy (Vᵀ, 128 head-dim rows x 128 keys, one 128-byte box
// of keys): one box at coordinates (row, 0, head, batch), 16384 bytes.
// CHECK-LABEL: gpu.func @copy_transposed(
// CHECK-SAME: %[[B:[^:]*]]: index, %[[H:[^:]*]]: index, %[[ROW:[^:]*]]: index, %[[IT:[^:]*]]: index, %[[VMAP:[^:]*]]: !llvm.ptr
// CHECK: nvvm.mbarrier.arrive.expect_tx %[[BAR:.*]], %c16384_i32
// CHECK-NEXT: %[[R:.*]] = arith.index_castui %[[ROW]] : index to i32
// CHECK-NEXT: %[[HH:.*]] = arith.index_castui %[[H]] : index to i32
// CHECK-NEXT: %[[BB:.*]] = arith.index_castui %[[B]] : index to i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[VMAP]], %[[BAR]], box[%[[R]], %c0_i32, %[[HH]], %[[BB]]]
// CHECK-NOT: nvvm.cp.async.bulk.tensor
func.func @copy_transposed(%b: index, %h: index, %row: index, %it: index, %vmap: !llvm.ptr, %kmap: !llvm.ptr) attributes {attn.config = #wg} {
  %bars = attn_nv.alloc_barriers {offset = 98304 : i64} : !attn_nv.barriers<3>
  %vt = attn_nv.alloc_shared {offset = 32768 : i64} : !s8
  attn_nv.copy_tma %vmap[%b, %h, %row] into %vt, %bars[%it] transposed : !llvm.ptr, !s8, !attn_nv.barriers<3>
  return
}
