// RUN: attn-opt %s --split-input-file --attn-nv-store-output-tma | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-nv-store-output-tma=report-fallbacks=true -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK

// A TMA kernel's output tile goes through Q's buffer (every QKᵀ reading it
// comes before) and O's tensor map, the third of the four maps; the LSE's
// row tile keeps its store.
#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = true>
#acc = #attn_nv.acc<warps = 8>
#rows = #attn_nv.rows<warps = 8>
!t = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!l = memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>
!s = !attn_nv.smem<128x128xbf16, swizzle_128b>

// CHECK-LABEL: func.func @stores(
// CHECK-SAME: %[[Q:[^:]*]]: memref
// CHECK-SAME: %[[OMAP:[^:]*]]: !llvm.ptr, %{{[^:]*}}: !llvm.ptr) attributes
// CHECK: attn.tile_grid (%[[B:.*]], %[[H:.*]], %[[T:.*]]) in
// CHECK: %[[QS:.*]] = attn_nv.alloc_shared : !attn_nv.smem<128x128xbf16, swizzle_128b>
// CHECK: attn_nv.wgmma %[[QS]]
// CHECK: attn_nv.store_shared %[[OUT:.*]], %[[QS]] :
// CHECK-NEXT: attn_nv.store_tma %[[QS]] into %[[OMAP]][%[[B]], %[[H]], %[[T]]] :
// CHECK-NOT: attn.store_tile %[[OUT]]
// CHECK: attn.store_tile %{{.*}}, %arg4
func.func @stores(%Q: !t, %K: !t, %V: !t, %O: !t, %L: !l, %scale: f32, %kmap: !llvm.ptr, %vmap: !llvm.ptr, %omap: !llvm.ptr, %qmap: !llvm.ptr) attributes {attn.config = #cfg} {
  %c2 = arith.constant 2 : index
  %n = memref.dim %Q, %c2 : !t
  %z = arith.constant dense<0.0> : tensor<128x128xf32, #acc>
  %zr = arith.constant dense<0.0> : tensor<128xf32, #rows>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %q = attn_nv.alloc_shared : !s
    %k = attn_nv.alloc_shared : !s
    attn_nv.copy_async %Q[%b, %h, %t] bounds %n into %q : !t, !s
    %s = attn_nv.wgmma %q, %k, %z transpose_rhs : !s, !s, tensor<128x128xf32, #acc>
    %out = arith.truncf %s : tensor<128x128xf32, #acc> to tensor<128x128xbf16, #acc>
    attn.store_tile %out, %O[%b, %h, %t] bounds %n : tensor<128x128xbf16, #acc>, !t
    attn.store_tile %zr, %L[%b, %h, %t] bounds %n : tensor<128xf32, #rows>, !l
  }
  return
}

// Q's buffer filled through Q's map (attn-nv-pipeline-copies' TMA form) is
// found the same way.
// CHECK-LABEL: func.func @q_by_tma(
// CHECK-SAME: %[[OMAP:[^:]*]]: !llvm.ptr, %{{[^:]*}}: !llvm.ptr) attributes
// CHECK: %[[QS:.*]] = attn_nv.alloc_shared : !attn_nv.smem<128x128xbf16, swizzle_128b>
// CHECK: attn_nv.store_shared %{{.*}}, %[[QS]] :
// CHECK-NEXT: attn_nv.store_tma %[[QS]] into %[[OMAP]]
func.func @q_by_tma(%Q: !t, %K: !t, %V: !t, %O: !t, %L: !l, %scale: f32, %kmap: !llvm.ptr, %vmap: !llvm.ptr, %omap: !llvm.ptr, %qmap: !llvm.ptr) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %n = memref.dim %Q, %c2 : !t
  %z = arith.constant dense<0.0> : tensor<128x128xbf16, #acc>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %qbar = attn_nv.alloc_barriers : !attn_nv.barriers<1>
    %q = attn_nv.alloc_shared : !s
    attn_nv.copy_tma %qmap[%b, %h, %t] into %q, %qbar[%c0] : !llvm.ptr, !s, !attn_nv.barriers<1>
    attn_nv.wait_barrier %qbar[%c0] : !attn_nv.barriers<1>
    attn.store_tile %z, %O[%b, %h, %t] bounds %n : tensor<128x128xbf16, #acc>, !t
  }
  return
}

// -----

// Stores it cannot move keep their st.global: without TMA (no maps), packed
// heads (rows_per_head), a bound other than O's rows, and a Q buffer read
// after the store.
#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = true>
#nomaps = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = false>
#acc = #attn_nv.acc<warps = 8>
!t = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!l = memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>
!s = !attn_nv.smem<128x128xbf16, swizzle_128b>

// CHECK-LABEL: func.func @no_tma(
// CHECK-NOT: attn_nv.store_tma
// CHECK: attn.store_tile
func.func @no_tma(%Q: !t, %K: !t, %V: !t, %O: !t, %L: !l, %scale: f32, %kmap: !llvm.ptr, %vmap: !llvm.ptr, %omap: !llvm.ptr, %qmap: !llvm.ptr) attributes {attn.config = #nomaps} {
  %c2 = arith.constant 2 : index
  %n = memref.dim %Q, %c2 : !t
  %z = arith.constant dense<0.0> : tensor<128x128xbf16, #acc>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %q = attn_nv.alloc_shared : !s
    attn_nv.copy_async %Q[%b, %h, %t] bounds %n into %q : !t, !s
    attn.store_tile %z, %O[%b, %h, %t] bounds %n : tensor<128x128xbf16, #acc>, !t
  }
  return
}

// With report-fallbacks each kept store of O says why (in this order):
// REMARK-NOT: remark
// REMARK: remark: attn-nv-store-output-tma: O is stored from registers: an accumulating or packed store
// REMARK: remark: attn-nv-store-output-tma: O is stored from registers: bounded by something other than O's rows
// REMARK: remark: attn-nv-store-output-tma: O is stored from registers: Q's buffer is used after the store
// REMARK-NOT: remark

// CHECK-LABEL: func.func @packed(
// CHECK-NOT: attn_nv.store_tma
// CHECK: attn.store_tile {{.*}} rows_per_head
func.func @packed(%Q: !t, %K: !t, %V: !t, %O: !t, %L: !l, %scale: f32, %kmap: !llvm.ptr, %vmap: !llvm.ptr, %omap: !llvm.ptr, %qmap: !llvm.ptr) attributes {attn.config = #cfg} {
  %c2 = arith.constant 2 : index
  %n = memref.dim %Q, %c2 : !t
  %z = arith.constant dense<0.0> : tensor<128x128xbf16, #acc>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %q = attn_nv.alloc_shared : !s
    attn_nv.copy_async %Q[%b, %h, %t] rows_per_head %n bounds %n into %q : !t, !s
    attn.store_tile %z, %O[%b, %h, %t] rows_per_head %n bounds %n : tensor<128x128xbf16, #acc>, !t
  }
  return
}

// CHECK-LABEL: func.func @other_bound(
// CHECK-NOT: attn_nv.store_tma
// CHECK: attn.store_tile
func.func @other_bound(%Q: !t, %K: !t, %V: !t, %O: !t, %L: !l, %scale: f32, %end: index, %kmap: !llvm.ptr, %vmap: !llvm.ptr, %omap: !llvm.ptr, %qmap: !llvm.ptr) attributes {attn.config = #cfg} {
  %c2 = arith.constant 2 : index
  %n = memref.dim %Q, %c2 : !t
  %z = arith.constant dense<0.0> : tensor<128x128xbf16, #acc>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %q = attn_nv.alloc_shared : !s
    attn_nv.copy_async %Q[%b, %h, %t] bounds %n into %q : !t, !s
    attn.store_tile %z, %O[%b, %h, %t] bounds %end : tensor<128x128xbf16, #acc>, !t
  }
  return
}

// CHECK-LABEL: func.func @q_read_after(
// CHECK-NOT: attn_nv.store_tma
// CHECK: attn.store_tile
func.func @q_read_after(%Q: !t, %K: !t, %V: !t, %O: !t, %L: !l, %scale: f32, %kmap: !llvm.ptr, %vmap: !llvm.ptr, %omap: !llvm.ptr, %qmap: !llvm.ptr) attributes {attn.config = #cfg} {
  %c2 = arith.constant 2 : index
  %n = memref.dim %Q, %c2 : !t
  %z = arith.constant dense<0.0> : tensor<128x128xbf16, #acc>
  %zf = arith.constant dense<0.0> : tensor<128x128xf32, #acc>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %q = attn_nv.alloc_shared : !s
    attn_nv.copy_async %Q[%b, %h, %t] bounds %n into %q : !t, !s
    attn.store_tile %z, %O[%b, %h, %t] bounds %n : tensor<128x128xbf16, #acc>, !t
    %s = attn_nv.wgmma %q, %q, %zf transpose_rhs : !s, !s, tensor<128x128xf32, #acc>
  }
  return
}
