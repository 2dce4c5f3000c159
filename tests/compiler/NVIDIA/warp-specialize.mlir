// RUN: attn-opt %s --split-input-file --attn-nv-warp-specialize | FileCheck %s

// The K/V loop and the epilogue become the consumers' region, without
// their copies (and the branch that held them); the producer's region
// copies tiles 1 ... n - 1 as the loop copied tile it + 1, with it = u - 1,
// each single_thread after the stage's release. n is the loop's own bound,
// computed before the split; tile 0's copy and both CTA barriers stay in
// the prologue.

#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "plain", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = true, warp_specialize = true>
#acc = #attn_nv.acc<warps = 8>
!t = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!s = !attn_nv.smem<128x128xbf16, swizzle_128b>
!s3 = !attn_nv.smem<3x128x128xbf16, swizzle_128b>

// CHECK-LABEL: func.func @split(
// CHECK-SAME: %[[KMAP:[^:]*]]: !llvm.ptr
// CHECK: attn.tile_grid (%[[B:.*]], %[[H:.*]], %{{.*}}) in
// CHECK: attn_nv.init_barriers %[[KE:[^ ]*]] arrivals 8
// CHECK-NEXT: nvvm.barrier0
// CHECK: scf.if
// CHECK-NEXT: attn_nv.slot
// CHECK-NEXT: attn_nv.copy_tma %[[KMAP]]{{.*}} after %[[KE]] :
// CHECK: nvvm.barrier0
// CHECK: %[[N:.*]] = arith.maxsi
// CHECK-NEXT: attn_nv.warp_specialize consumers(256 threads, 232 registers) {
// CHECK-NEXT: scf.for %[[IT:.*]] = %{{.*}} to %[[N]]
// CHECK-NOT: copy_tma
// CHECK-NOT: scf.if
// CHECK: attn_nv.wait_barrier
// CHECK: attn_nv.arrive_barrier %[[KE]][%[[IT]]]
// CHECK: attn.store_tile
// CHECK-NEXT: } producer(40 registers) {
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT: scf.for %[[U:.*]] = %[[ONE]] to %[[N]] step %[[ONE]] {
// CHECK-NEXT: %[[PREV:.*]] = arith.subi %[[U]], %[[ONE]]
// CHECK-DAG: %[[ROW:.*]] = arith.muli %[[PREV]]
// CHECK-DAG: %[[USE:.*]] = arith.addi %[[PREV]], %{{.*}}
// CHECK: %[[SLOT:.*]] = attn_nv.slot %{{.*}}[%[[USE]]]
// CHECK: attn_nv.copy_tma %[[KMAP]][%[[B]], %[[H]], %{{.*}}] into %[[SLOT]], %{{.*}}[%[[USE]]] after %[[KE]] {single_thread}
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: }
func.func @split(%K: !t, %O: !t, %n: index, %lo: index, %hi: index, %kmap: !llvm.ptr) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %zs = arith.constant dense<0.0> : tensor<128x128xf32, #acc>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %ks = attn_nv.alloc_shared : !s3
    %kf = attn_nv.alloc_barriers : !attn_nv.barriers<3>
    %ke = attn_nv.alloc_barriers : !attn_nv.barriers<3>
    attn_nv.init_barriers %kf : !attn_nv.barriers<3>
    attn_nv.init_barriers %ke arrivals 8 : !attn_nv.barriers<3>
    nvvm.barrier0
    %any = arith.cmpi slt, %lo, %hi : index
    scf.if %any {
      %k0 = attn_nv.slot %ks[%c0] : !s3 -> !s
      attn_nv.copy_tma %kmap[%b, %h, %lo] into %k0, %kf[%c0] after %ke : !llvm.ptr, !s, !attn_nv.barriers<3>, !attn_nv.barriers<3>
    }
    nvvm.barrier0
    %span = arith.subi %hi, %lo : index
    %tiles = arith.ceildivsi %span, %c128 : index
    %iters = arith.maxsi %tiles, %c0 : index
    %r = scf.for %it = %c0 to %iters step %c1 iter_args(%acc = %zs) -> (tensor<128x128xf32, #acc>) {
      %step = arith.muli %it, %c128 : index
      %kv = arith.addi %lo, %step : index
      %next = arith.addi %kv, %c128 : index
      %nextIt = arith.addi %it, %c1 : index
      attn_nv.wait_barrier %kf[%it] : !attn_nv.barriers<3>
      %more = arith.cmpi slt, %next, %hi : index
      scf.if %more {
        %kn = attn_nv.slot %ks[%nextIt] : !s3 -> !s
        attn_nv.copy_tma %kmap[%b, %h, %next] into %kn, %kf[%nextIt] after %ke : !llvm.ptr, !s, !attn_nv.barriers<3>, !attn_nv.barriers<3>
      }
      attn_nv.arrive_barrier %ke[%it] : !attn_nv.barriers<3>
      scf.yield %acc : tensor<128x128xf32, #acc>
    }
    %out = attn.map(%r : tensor<128x128xf32, #acc>) -> tensor<128x128xbf16, #acc> {
    ^bb0(%i: index, %j: index, %x: f32):
      %y = arith.truncf %x : f32 to bf16
      attn.yield %y : bf16
    }
    attn.store_tile %out, %O[%b, %h, %t] bounds %n : tensor<128x128xbf16, #acc>, !t
  }
  return
}

// -----

// Without warp_specialize nothing changes.
#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "plain", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = true>
!s = !attn_nv.smem<128x128xbf16, swizzle_128b>

// CHECK-LABEL: func.func @not_asked(
// CHECK-NOT: attn_nv.warp_specialize
// CHECK: attn_nv.copy_tma
// CHECK-NOT: single_thread
func.func @not_asked(%n: index, %kmap: !llvm.ptr) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %k = attn_nv.alloc_shared : !s
    %kf = attn_nv.alloc_barriers : !attn_nv.barriers<3>
    attn_nv.init_barriers %kf : !attn_nv.barriers<3>
    nvvm.barrier0
    attn_nv.copy_tma %kmap[%b, %h, %c0] into %k, %kf[%c0] : !llvm.ptr, !s, !attn_nv.barriers<3>
  }
  return
}

// -----

// Three consumer warpgroups (192 query rows, FlashAttention-3's D = 64
// tile): the registers left beside the producer's 32, 160 a thread
// (3 · 128 · 160 + 128 · 32 = 65536); two keep the measured 232 / 40.
#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 192, block_n = 128, warps = 12, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "plain", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = true, warp_specialize = true>
#acc = #attn_nv.acc<warps = 12>
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!s = !attn_nv.smem<128x64xbf16, swizzle_128b>
!s3 = !attn_nv.smem<3x128x64xbf16, swizzle_128b>

// CHECK-LABEL: func.func @three_consumer_warpgroups(
// CHECK: attn_nv.warp_specialize consumers(384 threads, 160 registers) {
// CHECK: } producer(32 registers) {
func.func @three_consumer_warpgroups(%O: !t, %n: index, %lo: index, %hi: index, %kmap: !llvm.ptr) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %zs = arith.constant dense<0.0> : tensor<192x64xf32, #acc>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %ks = attn_nv.alloc_shared : !s3
    %kf = attn_nv.alloc_barriers : !attn_nv.barriers<3>
    %ke = attn_nv.alloc_barriers : !attn_nv.barriers<3>
    attn_nv.init_barriers %kf : !attn_nv.barriers<3>
    attn_nv.init_barriers %ke arrivals 12 : !attn_nv.barriers<3>
    nvvm.barrier0
    %any = arith.cmpi slt, %lo, %hi : index
    scf.if %any {
      %k0 = attn_nv.slot %ks[%c0] : !s3 -> !s
      attn_nv.copy_tma %kmap[%b, %h, %lo] into %k0, %kf[%c0] after %ke : !llvm.ptr, !s, !attn_nv.barriers<3>, !attn_nv.barriers<3>
    }
    nvvm.barrier0
    %span = arith.subi %hi, %lo : index
    %tiles = arith.ceildivsi %span, %c128 : index
    %iters = arith.maxsi %tiles, %c0 : index
    %r = scf.for %it = %c0 to %iters step %c1 iter_args(%acc = %zs) -> (tensor<192x64xf32, #acc>) {
      %step = arith.muli %it, %c128 : index
      %kv = arith.addi %lo, %step : index
      %next = arith.addi %kv, %c128 : index
      %nextIt = arith.addi %it, %c1 : index
      attn_nv.wait_barrier %kf[%it] : !attn_nv.barriers<3>
      %more = arith.cmpi slt, %next, %hi : index
      scf.if %more {
        %kn = attn_nv.slot %ks[%nextIt] : !s3 -> !s
        attn_nv.copy_tma %kmap[%b, %h, %next] into %kn, %kf[%nextIt] after %ke : !llvm.ptr, !s, !attn_nv.barriers<3>, !attn_nv.barriers<3>
      }
      attn_nv.arrive_barrier %ke[%it] : !attn_nv.barriers<3>
      scf.yield %acc : tensor<192x64xf32, #acc>
    }
    %out = attn.map(%r : tensor<192x64xf32, #acc>) -> tensor<192x64xbf16, #acc> {
    ^bb0(%i: index, %j: index, %x: f32):
      %y = arith.truncf %x : f32 to bf16
      attn.yield %y : bf16
    }
    attn.store_tile %out, %O[%b, %h, %t] bounds %n : tensor<192x64xbf16, #acc>, !t
  }
  return
}
