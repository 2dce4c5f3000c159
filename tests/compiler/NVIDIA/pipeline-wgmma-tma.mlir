// RUN: attn-opt %s --split-input-file --attn-nv-pipeline-wgmma | FileCheck %s

// With TMA each warp releases a stage after the wait that retires its last
// read (attn-nv-pipeline-copies puts the release right behind each
// product's wait): K's release stays behind the QKᵀ wait of its iteration;
// V's moves with the wait that retires P·V -- to the next iteration (for
// the tile before: j - 1) and, for the last tile (hi - 1), behind the wait
// after the loop. Tile 0 releases only K.

#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "pv_in_flight", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = true>
#acc = #attn_nv.acc<warps = 8>
#rows = #attn_nv.rows<warps = 8>
#opa = #attn_nv.operand_a<warps = 8>
!t = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!s = !attn_nv.smem<128x128xbf16, swizzle_128b>
!s3 = !attn_nv.smem<3x128x128xbf16, swizzle_128b>

// pv_in_flight: P·V(j - 1) retires at the wait of QKᵀ(j).
// CHECK-LABEL: func.func @pv_in_flight(
// CHECK: %[[KE:.*]] = attn_nv.alloc_barriers
// CHECK: %[[VE:.*]] = attn_nv.alloc_barriers
// CHECK: %[[ANY:.*]] = arith.cmpi slt, %[[LO:.*]], %[[HI:.*]] : index
// CHECK:      attn_nv.wgmma_wait %{{.*}} {pending = 0 : i64}
// CHECK-NEXT: attn_nv.arrive_barrier %[[KE]][%[[LO]]]
// CHECK-NOT:  attn_nv.arrive_barrier
// CHECK:      scf.for %[[J:.*]] = %{{.*}} to %[[HI]]
// CHECK:        attn_nv.wgmma_wait %{{.*}}, %{{.*}} {pending = 0 : i64}
// CHECK-NEXT:   %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:   %[[PREV:.*]] = arith.subi %[[J]], %[[ONE]]
// CHECK-NEXT:   attn_nv.arrive_barrier %[[VE]][%[[PREV]]]
// CHECK-NEXT:   attn_nv.arrive_barrier %[[KE]][%[[J]]]
// CHECK-NOT:    attn_nv.arrive_barrier
// CHECK:        scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: attn_nv.wgmma_wait %{{.*}} {pending = 0 : i64}
// CHECK-NEXT: %[[ONE2:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[LAST:.*]] = arith.subi %[[HI]], %[[ONE2]]
// CHECK-NEXT: attn_nv.arrive_barrier %[[VE]][%[[LAST]]]
// CHECK-NEXT: scf.yield
func.func @pv_in_flight(%O: !t, %n: index) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zs = arith.constant dense<0.0> : tensor<128x128xf32, #acc>
  %m0 = arith.constant dense<0xFF800000> : tensor<128xf32, #rows>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %qs = attn_nv.alloc_shared : !s
    %ks = attn_nv.alloc_shared : !s3
    %vs = attn_nv.alloc_shared : !s3
    %ke = attn_nv.alloc_barriers : !attn_nv.barriers<3>
    %ve = attn_nv.alloc_barriers : !attn_nv.barriers<3>
    %r:2 = scf.for %it = %c0 to %n step %c1 iter_args(%m = %m0, %acc = %zs) -> (tensor<128xf32, #rows>, tensor<128x128xf32, #acc>) {
      %v = attn_nv.slot %vs[%it] : !s3 -> !s
      %k = attn_nv.slot %ks[%it] : !s3 -> !s
      %s0 = attn_nv.wgmma %qs, %k, %zs transpose_rhs : !s, !s, tensor<128x128xf32, #acc>
      %s = attn_nv.wgmma_wait %s0 {pending = 0 : i64} : tensor<128x128xf32, #acc>
      attn_nv.arrive_barrier %ke[%it] : !attn_nv.barriers<3>
      %mx = attn.reduce <max> %s, %m : tensor<128x128xf32, #acc>, tensor<128xf32, #rows>
      %alpha = attn.map(%m, %mx : tensor<128xf32, #rows>, tensor<128xf32, #rows>) -> tensor<128xf32, #rows> {
      ^bb0(%i: index, %x: f32, %y: f32):
        %d = arith.subf %x, %y : f32
        %e = math.exp2 %d : f32
        attn.yield %e : f32
      }
      %p = attn.map(%s, %mx : tensor<128x128xf32, #acc>, tensor<128xf32, #rows>) -> tensor<128x128xf32, #acc> {
      ^bb0(%i: index, %j: index, %x: f32, %y: f32):
        %d = arith.subf %x, %y : f32
        %e = math.exp2 %d : f32
        attn.yield %e : f32
      }
      %rescaled = attn.map(%acc, %alpha : tensor<128x128xf32, #acc>, tensor<128xf32, #rows>) -> tensor<128x128xf32, #acc> {
      ^bb0(%i: index, %j: index, %x: f32, %a: f32):
        %y = arith.mulf %x, %a : f32
        attn.yield %y : f32
      }
      %pa = attn_nv.convert_layout %p : tensor<128x128xf32, #acc> -> tensor<128x128xbf16, #opa>
      %o0 = attn_nv.wgmma %pa, %v, %rescaled : tensor<128x128xbf16, #opa>, !s, tensor<128x128xf32, #acc>
      %o = attn_nv.wgmma_wait %o0 {pending = 0 : i64} : tensor<128x128xf32, #acc>
      attn_nv.arrive_barrier %ve[%it] : !attn_nv.barriers<3>
      scf.yield %mx, %o : tensor<128xf32, #rows>, tensor<128x128xf32, #acc>
    }
    %out = attn.map(%r#1 : tensor<128x128xf32, #acc>) -> tensor<128x128xbf16, #acc> {
    ^bb0(%i: index, %j: index, %x: f32):
      %y = arith.truncf %x : f32 to bf16
      attn.yield %y : bf16
    }
    attn.store_tile %out, %O[%b, %h, %t] bounds %n : tensor<128x128xbf16, #acc>, !t
  }
  return
}

// -----

#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "softmax_overlaps_pv", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = true>
#acc = #attn_nv.acc<warps = 8>
#rows = #attn_nv.rows<warps = 8>
#opa = #attn_nv.operand_a<warps = 8>
!t = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!s = !attn_nv.smem<128x128xbf16, swizzle_128b>
!s3 = !attn_nv.smem<3x128x128xbf16, swizzle_128b>

// softmax_overlaps_pv: P·V(j - 1) is issued after QKᵀ(j) and retired by
// the wait 0 that ends iteration j.
// CHECK-LABEL: func.func @softmax_overlaps_pv(
// CHECK: %[[KE:.*]] = attn_nv.alloc_barriers
// CHECK: %[[VE:.*]] = attn_nv.alloc_barriers
// CHECK: %[[ANY:.*]] = arith.cmpi slt, %[[LO:.*]], %[[HI:.*]] : index
// CHECK:      attn_nv.wgmma_wait %{{.*}} {pending = 0 : i64}
// CHECK-NEXT: attn_nv.arrive_barrier %[[KE]][%[[LO]]]
// CHECK-NOT:  attn_nv.arrive_barrier
// CHECK:      scf.for %[[J:.*]] = %{{.*}} to %[[HI]]
// CHECK:        %[[PREV:.*]] = arith.subi %[[J]], %{{.*}}
// CHECK:        attn_nv.wgmma_wait %{{.*}} {pending = 1 : i64}
// CHECK-NEXT:   attn_nv.arrive_barrier %[[KE]][%[[J]]]
// CHECK-NOT:    attn_nv.arrive_barrier
// CHECK:        attn_nv.wgmma_wait %{{.*}}, %{{.*}} {pending = 0 : i64}
// CHECK-NEXT:   attn_nv.arrive_barrier %[[VE]][%[[PREV]]]
// CHECK-NEXT:   scf.yield
// CHECK-NEXT: }
// CHECK:      %[[LAST:.*]] = arith.subi %[[HI]], %{{.*}}
// CHECK:      attn_nv.wgmma_wait %{{.*}}, %{{.*}} {pending = 0 : i64}
// CHECK-NEXT: attn_nv.arrive_barrier %[[VE]][%[[LAST]]]
// CHECK-NEXT: scf.yield
func.func @softmax_overlaps_pv(%O: !t, %n: index) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zs = arith.constant dense<0.0> : tensor<128x128xf32, #acc>
  %m0 = arith.constant dense<0xFF800000> : tensor<128xf32, #rows>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %qs = attn_nv.alloc_shared : !s
    %ks = attn_nv.alloc_shared : !s3
    %vs = attn_nv.alloc_shared : !s3
    %ke = attn_nv.alloc_barriers : !attn_nv.barriers<3>
    %ve = attn_nv.alloc_barriers : !attn_nv.barriers<3>
    %r:2 = scf.for %it = %c0 to %n step %c1 iter_args(%m = %m0, %acc = %zs) -> (tensor<128xf32, #rows>, tensor<128x128xf32, #acc>) {
      %v = attn_nv.slot %vs[%it] : !s3 -> !s
      %k = attn_nv.slot %ks[%it] : !s3 -> !s
      %s0 = attn_nv.wgmma %qs, %k, %zs transpose_rhs : !s, !s, tensor<128x128xf32, #acc>
      %s = attn_nv.wgmma_wait %s0 {pending = 0 : i64} : tensor<128x128xf32, #acc>
      attn_nv.arrive_barrier %ke[%it] : !attn_nv.barriers<3>
      %mx = attn.reduce <max> %s, %m : tensor<128x128xf32, #acc>, tensor<128xf32, #rows>
      %alpha = attn.map(%m, %mx : tensor<128xf32, #rows>, tensor<128xf32, #rows>) -> tensor<128xf32, #rows> {
      ^bb0(%i: index, %x: f32, %y: f32):
        %d = arith.subf %x, %y : f32
        %e = math.exp2 %d : f32
        attn.yield %e : f32
      }
      %p = attn.map(%s, %mx : tensor<128x128xf32, #acc>, tensor<128xf32, #rows>) -> tensor<128x128xf32, #acc> {
      ^bb0(%i: index, %j: index, %x: f32, %y: f32):
        %d = arith.subf %x, %y : f32
        %e = math.exp2 %d : f32
        attn.yield %e : f32
      }
      %rescaled = attn.map(%acc, %alpha : tensor<128x128xf32, #acc>, tensor<128xf32, #rows>) -> tensor<128x128xf32, #acc> {
      ^bb0(%i: index, %j: index, %x: f32, %a: f32):
        %y = arith.mulf %x, %a : f32
        attn.yield %y : f32
      }
      %pa = attn_nv.convert_layout %p : tensor<128x128xf32, #acc> -> tensor<128x128xbf16, #opa>
      %o0 = attn_nv.wgmma %pa, %v, %rescaled : tensor<128x128xbf16, #opa>, !s, tensor<128x128xf32, #acc>
      %o = attn_nv.wgmma_wait %o0 {pending = 0 : i64} : tensor<128x128xf32, #acc>
      attn_nv.arrive_barrier %ve[%it] : !attn_nv.barriers<3>
      scf.yield %mx, %o : tensor<128xf32, #rows>, tensor<128x128xf32, #acc>
    }
    %out = attn.map(%r#1 : tensor<128x128xf32, #acc>) -> tensor<128x128xbf16, #acc> {
    ^bb0(%i: index, %j: index, %x: f32):
      %y = arith.truncf %x : f32 to bf16
      attn.yield %y : bf16
    }
    attn.store_tile %out, %O[%b, %h, %t] bounds %n : tensor<128x128xbf16, #acc>, !t
  }
  return
}

