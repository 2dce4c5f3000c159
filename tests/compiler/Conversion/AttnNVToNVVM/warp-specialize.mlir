// RUN: attn-opt %s --convert-attn-nv-to-nvvm --canonicalize | FileCheck %s

// attn_nv.warp_specialize: threads below 256 (the consumers) raise their
// register limit and run their region; the last warpgroup lowers its limit
// and its first thread (256) runs the producer's, whose single_thread copy
// is issued with no thread-0 guard (the elected thread is already alone).
// The kernel's block is 384 threads: the config's 8 warps and the producer.

// CHECK-LABEL: gpu.func @split(
// CHECK-SAME: %[[B:[^:]*]]: index, %[[H:[^:]*]]: index, %[[ROW:[^:]*]]: index, %[[IT:[^:]*]]: index, %[[KMAP:[^:]*]]: !llvm.ptr
// CHECK-SAME: attn.threads = 384 : i32
// CHECK-SAME: known_block_size = array<i32: 384, 1, 1>
// CHECK: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x
// CHECK: %[[CONSUMER:.*]] = arith.cmpi ult, %[[TID]], %c256_i32
// CHECK-NEXT: scf.if %[[CONSUMER]] {
// CHECK-NEXT: nvvm.setmaxregister increase 232
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-NEXT: } else {
// CHECK-NEXT: nvvm.setmaxregister decrease 40
// CHECK-NEXT: %[[ELECTED:.*]] = arith.cmpi eq, %[[TID]], %c256_i32
// CHECK-NEXT: scf.if %[[ELECTED]] {
// CHECK-NOT: nvvm.read.ptx.sreg.tid.x
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.mbarrier.arrive.expect_tx
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[KMAP]]
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[KMAP]]
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: gpu.return

#ws = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "pv_in_flight", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = true, warp_specialize = true>
!s = !attn_nv.smem<128x128xbf16, swizzle_128b>

func.func @split(%b: index, %h: index, %row: index, %it: index, %kmap: !llvm.ptr, %vmap: !llvm.ptr) attributes {attn.config = #ws} {
  %bars = attn_nv.alloc_barriers {offset = 98304 : i64} : !attn_nv.barriers<3>
  %empty = attn_nv.alloc_barriers {offset = 98328 : i64} : !attn_nv.barriers<3>
  %k = attn_nv.alloc_shared {offset = 32768 : i64} : !s
  attn_nv.warp_specialize consumers(256 threads, 232 registers) {
    attn_nv.wait_barrier %bars[%it] : !attn_nv.barriers<3>
  } producer(40 registers) {
    attn_nv.copy_tma %kmap[%b, %h, %row] into %k, %bars[%it] after %empty {single_thread} : !llvm.ptr, !s, !attn_nv.barriers<3>, !attn_nv.barriers<3>
  }
  return
}
