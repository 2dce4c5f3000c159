// RUN: attn-opt %s --split-input-file --attn-nv-stage-tables="report-fallbacks=1" -verify-diagnostics | FileCheck %s

// attn-nv-stage-tables replaces a map that reads a captured 2-D f32 table
// at each score's own (query, key) position (clamped for memory safety
// only, attn.bounds_clamp) by the table's tile: copied into shared memory
// with the synchronous form of the K/V copies (attn-nv-pipeline-copies
// stages them), read right before the map's first user (after QKᵀ). Any
// other read keeps its per-element gather, with a remark under
// report-fallbacks.

#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 64, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "pv_in_flight", ordered_issue = true, reverse_grid = true, pack_gqa = false, conditional_rescale = false>
#acc = #attn_nv.acc<warps = 8>
!t = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!table = memref<?x?xf32, strided<[?, ?], offset: ?>>
!q = !attn_nv.smem<128x128xbf16, swizzle_128b>
!k = !attn_nv.smem<64x128xbf16, swizzle_128b>

// CHECK-LABEL: func.func @bias
// CHECK: attn.tile_grid
// CHECK-NEXT: %[[BUF:.*]] = attn_nv.alloc_shared : !attn_nv.smem<128x64xf32, swizzle_pairs>
// CHECK: scf.for %[[KV:[^ ]*]] =
// CHECK: %[[LASTROW:.*]] = arith.subi %{{.*}}, %c1 : index
// CHECK: %[[LASTCOL:.*]] = arith.subi %{{.*}}, %c1 : index
// CHECK-NOT: attn.map
// CHECK: %[[ROWS:.*]] = arith.addi %[[LASTROW]], %[[ONE:.*]] : index
// CHECK: %[[COLS:.*]] = arith.addi %[[LASTCOL]], %[[ONE]] : index
// CHECK: attn_nv.copy_table_async %arg3[%[[ROW:.*]], %[[KV]]] bounds %[[ROWS]], %[[COLS]] into %[[BUF]] : memref<?x?xf32, strided<[?, ?], offset: ?>>, !attn_nv.smem<128x64xf32, swizzle_pairs>
// CHECK-NEXT: nvvm.cp.async.commit.group
// CHECK-NEXT: nvvm.cp.async.wait.group 0
// CHECK-NEXT: nvvm.barrier0
// CHECK: attn_nv.wgmma_wait
// CHECK-NEXT: %[[B:.*]] = attn_nv.load_shared %[[BUF]] : !attn_nv.smem<128x64xf32, swizzle_pairs> -> tensor<128x64xf32, #attn_nv.acc<warps = 8>>
// CHECK-NEXT: attn.map(%{{.*}}, %[[B]] : {{.*}}) at [%[[ROW]], %[[KV]]]
// CHECK-NOT: memref.load
func.func @bias(%Q: !t, %K: !t, %n: index, %bias: !table, %lo: index, %hi: index) attributes {attn.config = #cfg} {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %zs = arith.constant dense<0.0> : tensor<128x64xf32, #acc>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %qs = attn_nv.alloc_shared : !q
    %ks = attn_nv.alloc_shared : !k
    %row = arith.muli %t, %c64 : index
    %r = scf.for %kv = %lo to %hi step %c64 iter_args(%acc = %zs) -> (tensor<128x64xf32, #acc>) {
      attn_nv.copy_async %K[%b, %h, %kv] bounds %n into %ks : !t, !k
      nvvm.cp.async.commit.group
      nvvm.cp.async.wait.group 0
      nvvm.barrier0
      %lastRow = arith.subi %n, %c1 : index
      %lastCol = arith.subi %n, %c1 : index
      %g = attn.map at [%row, %kv] -> tensor<128x64xf32, #acc> {
      ^bb0(%i: index, %j: index):
        %qi = arith.minsi %i, %lastRow {attn.bounds_clamp} : index
        %kj = arith.minsi %j, %lastCol {attn.bounds_clamp} : index
        %x = memref.load %bias[%qi, %kj] : !table
        attn.yield %x : f32
      }
      %w = attn_nv.wgmma %qs, %ks, %zs transpose_rhs : !q, !k, tensor<128x64xf32, #acc>
      %s = attn_nv.wgmma_wait %w {pending = 0 : i64} : tensor<128x64xf32, #acc>
      %y = attn.map(%s, %g : tensor<128x64xf32, #acc>, tensor<128x64xf32, #acc>) at [%row, %kv] -> tensor<128x64xf32, #acc> {
      ^bb0(%i: index, %j: index, %e: f32, %v: f32):
        %z = arith.addf %e, %v : f32
        attn.yield %z : f32
      }
      nvvm.barrier0
      scf.yield %y : tensor<128x64xf32, #acc>
    }
  }
  return
}

// -----

// A bucketed relative position (T5): not the score's own position.
#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 64, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "pv_in_flight", ordered_issue = true, reverse_grid = true, pack_gqa = false, conditional_rescale = false>
#acc = #attn_nv.acc<warps = 8>
!t = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!table = memref<?x?xf32, strided<[?, ?], offset: ?>>
!k = !attn_nv.smem<64x128xbf16, swizzle_128b>

// CHECK-LABEL: func.func @bucketed
// CHECK-NOT: attn_nv.alloc_shared : !attn_nv.smem<128x64xf32
// CHECK: memref.load
// CHECK-NOT: attn_nv.copy_table_async
func.func @bucketed(%K: !t, %n: index, %bias: !table, %lo: index, %hi: index) attributes {attn.config = #cfg} {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %zs = arith.constant dense<0.0> : tensor<128x64xf32, #acc>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %ks = attn_nv.alloc_shared : !k
    %r = scf.for %kv = %lo to %hi step %c64 iter_args(%acc = %zs) -> (tensor<128x64xf32, #acc>) {
      attn_nv.copy_async %K[%b, %h, %kv] bounds %n into %ks : !t, !k
      %last = arith.subi %n, %c1 : index
      // expected-remark @+1 {{attn-nv-stage-tables: the table is gathered per element: the table is not read at the score's own (query, key) position}}
      %g = attn.map at [%t, %kv] -> tensor<128x64xf32, #acc> {
      ^bb0(%i: index, %j: index):
        %d = arith.subi %i, %j : index
        %bucket = arith.minsi %d, %last {attn.bounds_clamp} : index
        %x = memref.load %bias[%h, %bucket] : !table
        attn.yield %x : f32
      }
      scf.yield %g : tensor<128x64xf32, #acc>
    }
  }
  return
}

// -----

// A clamp of the mod's own (no attn.bounds_clamp): its value is observed.
#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 64, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "pv_in_flight", ordered_issue = true, reverse_grid = true, pack_gqa = false, conditional_rescale = false>
#acc = #attn_nv.acc<warps = 8>
!t = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!table = memref<?x?xf32, strided<[?, ?], offset: ?>>
!k = !attn_nv.smem<64x128xbf16, swizzle_128b>

// CHECK-LABEL: func.func @own_clamp
// CHECK-NOT: attn_nv.copy_table_async
func.func @own_clamp(%K: !t, %n: index, %bias: !table, %lo: index, %hi: index) attributes {attn.config = #cfg} {
  %c64 = arith.constant 64 : index
  %c10 = arith.constant 10 : index
  %zs = arith.constant dense<0.0> : tensor<128x64xf32, #acc>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %ks = attn_nv.alloc_shared : !k
    %r = scf.for %kv = %lo to %hi step %c64 iter_args(%acc = %zs) -> (tensor<128x64xf32, #acc>) {
      attn_nv.copy_async %K[%b, %h, %kv] bounds %n into %ks : !t, !k
      // expected-remark @+1 {{the table is not read at the score's own (query, key) position}}
      %g = attn.map at [%t, %kv] -> tensor<128x64xf32, #acc> {
      ^bb0(%i: index, %j: index):
        %qi = arith.minsi %i, %c10 : index
        %kj = arith.minsi %j, %c10 : index
        %x = memref.load %bias[%qi, %kj] : !table
        attn.yield %x : f32
      }
      scf.yield %g : tensor<128x64xf32, #acc>
    }
  }
  return
}

// -----

// A TMA kernel without barrier_per_tile: its stages are released by
// per-warp mbarriers.
#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 64, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "pv_in_flight", ordered_issue = true, reverse_grid = true, pack_gqa = false, conditional_rescale = false, tma = true>
#acc = #attn_nv.acc<warps = 8>
!t = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!table = memref<?x?xf32, strided<[?, ?], offset: ?>>
!k = !attn_nv.smem<64x128xbf16, swizzle_128b>

// CHECK-LABEL: func.func @tma
// CHECK-NOT: attn_nv.copy_table_async
func.func @tma(%K: !t, %n: index, %bias: !table, %lo: index, %hi: index) attributes {attn.config = #cfg} {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %zs = arith.constant dense<0.0> : tensor<128x64xf32, #acc>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %ks = attn_nv.alloc_shared : !k
    %r = scf.for %kv = %lo to %hi step %c64 iter_args(%acc = %zs) -> (tensor<128x64xf32, #acc>) {
      attn_nv.copy_async %K[%b, %h, %kv] bounds %n into %ks : !t, !k
      %last = arith.subi %n, %c1 : index
      // expected-remark @+1 {{TMA kernels without barrier_per_tile release their stages by per-warp mbarriers, which the table's copies do not join}}
      %g = attn.map at [%t, %kv] -> tensor<128x64xf32, #acc> {
      ^bb0(%i: index, %j: index):
        %qi = arith.minsi %i, %last {attn.bounds_clamp} : index
        %kj = arith.minsi %j, %last {attn.bounds_clamp} : index
        %x = memref.load %bias[%qi, %kj] : !table
        attn.yield %x : f32
      }
      scf.yield %g : tensor<128x64xf32, #acc>
    }
  }
  return
}

// -----

// Three stages of a 128 x 64 f32 table (96 KB) beside 128 KB of Q and
// K/V stages: more than sm_90a's 227 KB.
#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 64, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "pv_in_flight", ordered_issue = true, reverse_grid = true, pack_gqa = false, conditional_rescale = false>
#acc = #attn_nv.acc<warps = 8>
!t = memref<?x?x?x256xbf16, strided<[?, ?, ?, 1], offset: ?>>
!table = memref<?x?xf32, strided<[?, ?], offset: ?>>
!q = !attn_nv.smem<128x256xbf16, swizzle_128b>
!k = !attn_nv.smem<64x256xbf16, swizzle_128b>

// CHECK-LABEL: func.func @too_big
// CHECK-NOT: attn_nv.copy_table_async
func.func @too_big(%K: !t, %n: index, %bias: !table, %lo: index, %hi: index) attributes {attn.config = #cfg} {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %zs = arith.constant dense<0.0> : tensor<128x64xf32, #acc>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %qs = attn_nv.alloc_shared : !q
    %ks = attn_nv.alloc_shared : !k
    %r = scf.for %kv = %lo to %hi step %c64 iter_args(%acc = %zs) -> (tensor<128x64xf32, #acc>) {
      attn_nv.copy_async %K[%b, %h, %kv] bounds %n into %ks : !t, !k
      %last = arith.subi %n, %c1 : index
      // expected-remark @+1 {{its stages would need 263168 bytes of shared memory, more than the 232448 of sm_90a}}
      %g = attn.map at [%t, %kv] -> tensor<128x64xf32, #acc> {
      ^bb0(%i: index, %j: index):
        %qi = arith.minsi %i, %last {attn.bounds_clamp} : index
        %kj = arith.minsi %j, %last {attn.bounds_clamp} : index
        %x = memref.load %bias[%qi, %kj] : !table
        attn.yield %x : f32
      }
      scf.yield %g : tensor<128x64xf32, #acc>
    }
  }
  return
}
