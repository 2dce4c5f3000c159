// RUN: attn-opt %s --split-input-file --attn-nv-pipeline-wgmma | FileCheck %s

// attn-nv-pipeline-wgmma keeps wgmma products in flight across K/V
// iterations, per the configuration's schedule. Its input is the K/V loop
// of attn-nv-pipeline-copies (over tile indices, K and V from their stage),
// each product followed by its own wait.

#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "pv_in_flight", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
#acc = #attn_nv.acc<warps = 8>
#rows = #attn_nv.rows<warps = 8>
#opa = #attn_nv.operand_a<warps = 8>
!t = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!s = !attn_nv.smem<128x128xbf16, swizzle_128b>
!s3 = !attn_nv.smem<3x128x128xbf16, swizzle_128b>

// pv_in_flight: tile 0 is peeled under `if (tiles > 0)` so that every value
// reaching the last wait comes from a wgmma; the P·V of tile j is left in
// flight and retired by the wait for the QKᵀ of tile j + 1, which takes the
// accumulator; one wait after the loop retires the last.
// CHECK-LABEL: func.func @pv_in_flight(
// CHECK-DAG: %[[ZS:.*]] = arith.constant dense<0.000000e+00> : tensor<128x128xf32, #attn_nv.acc<warps = 8>>
// CHECK-DAG: %[[M0:.*]] = arith.constant dense<0xFF800000> : tensor<128xf32, #attn_nv.rows<warps = 8>>
// CHECK: %[[QS:.*]] = attn_nv.alloc_shared : !attn_nv.smem<128x128xbf16, swizzle_128b>
// CHECK: %[[KS:.*]] = attn_nv.alloc_shared
// CHECK: %[[VS:.*]] = attn_nv.alloc_shared
// CHECK: %[[ANY:.*]] = arith.cmpi slt, %[[LO:.*]], %[[HI:.*]] : index
// CHECK-NEXT: %[[RES:.*]]:2 = scf.if %[[ANY]] -> (tensor<128xf32, #attn_nv.rows<warps = 8>>, tensor<128x128xf32, #attn_nv.acc<warps = 8>>) {
// Tile 0.
// CHECK-DAG:  %[[V0:.*]] = attn_nv.slot %[[VS]][%[[LO]]]
// CHECK-DAG:  %[[K0:.*]] = attn_nv.slot %[[KS]][%[[LO]]]
// CHECK:      %[[S00:.*]] = attn_nv.wgmma %[[QS]], %[[K0]], %[[ZS]] transpose_rhs
// CHECK-NEXT: %[[S0:.*]] = attn_nv.wgmma_wait %[[S00]] {pending = 0 : i64}
// CHECK-NEXT: %[[MX0:.*]] = attn.reduce <max> %[[S0]], %[[M0]]
// CHECK:      %[[R0:.*]] = attn.map(%[[ZS]], %{{.*}} :
// CHECK:      %[[P0:.*]] = attn_nv.convert_layout
// CHECK-NEXT: %[[PV0:.*]] = attn_nv.wgmma %[[P0]], %[[V0]], %[[R0]] :
// CHECK-NOT:  attn_nv.wgmma_wait
// Tiles 1 ... n - 1.
// CHECK:      %[[LB:.*]] = arith.addi %[[LO]], %{{.*}} : index
// CHECK-NEXT: %[[LOOP:.*]]:2 = scf.for %[[J:.*]] = %[[LB]] to %[[HI]] step %{{.*}} iter_args(%[[M:.*]] = %[[MX0]], %[[ACC:.*]] = %[[PV0]])
// CHECK-DAG:    %[[V:.*]] = attn_nv.slot %[[VS]][%[[J]]]
// CHECK-DAG:    %[[K:.*]] = attn_nv.slot %[[KS]][%[[J]]]
// CHECK:        %[[S1:.*]] = attn_nv.wgmma %[[QS]], %[[K]], %[[ZS]] transpose_rhs
// One wait retires this QKᵀ and the P·V of the tile before (groups retire
// in order).
// CHECK-NEXT:   %[[W:.*]]:2 = attn_nv.wgmma_wait %[[S1]], %[[ACC]] {pending = 0 : i64} : tensor<128x128xf32, #attn_nv.acc<warps = 8>>, tensor<128x128xf32, #attn_nv.acc<warps = 8>>
// CHECK-NEXT:   %[[MX:.*]] = attn.reduce <max> %[[W]]#0, %[[M]]
// The accumulator is read only after that wait.
// CHECK:        %[[R:.*]] = attn.map(%[[W]]#1, %{{.*}} :
// CHECK:        %[[P:.*]] = attn_nv.convert_layout
// CHECK-NEXT:   %[[PV:.*]] = attn_nv.wgmma %[[P]], %[[V]], %[[R]] :
// CHECK-NEXT:   scf.yield %[[MX]], %[[PV]]
// CHECK-NEXT: }
// The last P·V.
// CHECK-NEXT: %[[LAST:.*]] = attn_nv.wgmma_wait %[[LOOP]]#1 {pending = 0 : i64}
// CHECK-NEXT: scf.yield %[[LOOP]]#0, %[[LAST]]
// No tile: the initial state.
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.yield %[[M0]], %[[ZS]]
// CHECK: attn.map(%[[RES]]#1 :
func.func @pv_in_flight(%O: !t, %n: index) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zs = arith.constant dense<0.0> : tensor<128x128xf32, #acc>
  %m0 = arith.constant dense<0xFF800000> : tensor<128xf32, #rows>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %qs = attn_nv.alloc_shared : !s
    %ks = attn_nv.alloc_shared : !s3
    %vs = attn_nv.alloc_shared : !s3
    %r:2 = scf.for %it = %c0 to %n step %c1 iter_args(%m = %m0, %acc = %zs) -> (tensor<128xf32, #rows>, tensor<128x128xf32, #acc>) {
      %v = attn_nv.slot %vs[%it] : !s3 -> !s
      %k = attn_nv.slot %ks[%it] : !s3 -> !s
      %s0 = attn_nv.wgmma %qs, %k, %zs transpose_rhs : !s, !s, tensor<128x128xf32, #acc>
      %s = attn_nv.wgmma_wait %s0 {pending = 0 : i64} : tensor<128x128xf32, #acc>
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

#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "softmax_overlaps_pv", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
#acc = #attn_nv.acc<warps = 8>
#rows = #attn_nv.rows<warps = 8>
#opa = #attn_nv.operand_a<warps = 8>
!t = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!s = !attn_nv.smem<128x128xbf16, swizzle_128b>
!s3 = !attn_nv.smem<3x128x128xbf16, swizzle_128b>

// softmax_overlaps_pv: iteration j issues QKᵀ of tile j, then P·V of tile
// j − 1 (P and alpha carried in registers), waits with pending = 1 for the
// QKᵀ only, and runs the softmax of tile j while that P·V runs; a wait of
// the P·V and of the P it reads ends the iteration.
// CHECK-LABEL: func.func @softmax_overlaps_pv(
// CHECK-DAG: %[[ZS:.*]] = arith.constant dense<0.000000e+00> : tensor<128x128xf32, #attn_nv.acc<warps = 8>>
// CHECK: %[[QS:.*]] = attn_nv.alloc_shared : !attn_nv.smem<128x128xbf16, swizzle_128b>
// CHECK: %[[KS:.*]] = attn_nv.alloc_shared
// CHECK: %[[VS:.*]] = attn_nv.alloc_shared
// CHECK: %[[ANY:.*]] = arith.cmpi slt, %[[LO:.*]], %[[HI:.*]] : index
// CHECK-NEXT: %[[RES:.*]]:2 = scf.if %[[ANY]]
// Tile 0: QKᵀ and the softmax only.
// CHECK:      %[[S00:.*]] = attn_nv.wgmma %[[QS]], %{{.*}}, %[[ZS]] transpose_rhs
// CHECK-NEXT: %[[S0:.*]] = attn_nv.wgmma_wait %[[S00]] {pending = 0 : i64}
// CHECK-NEXT: %[[MX0:.*]] = attn.reduce <max> %[[S0]]
// CHECK-NEXT: %[[ALPHA0:.*]] = attn.map
// CHECK:      %[[P0:.*]] = attn_nv.convert_layout
// CHECK-NOT:  attn_nv.wgmma
// CHECK:      scf.for %[[J:.*]] = %{{.*}} to %[[HI]] step %{{.*}} iter_args(%[[M:.*]] = %[[MX0]], %[[ACC:.*]] = %[[ZS]], %[[PREVP:.*]] = %[[P0]], %[[PREVALPHA:.*]] = %[[ALPHA0]]) -> (tensor<128xf32, #attn_nv.rows<warps = 8>>, tensor<128x128xf32, #attn_nv.acc<warps = 8>>, tensor<128x128xbf16, #attn_nv.operand_a<warps = 8>>, tensor<128xf32, #attn_nv.rows<warps = 8>>)
// CHECK-DAG:    %[[K:.*]] = attn_nv.slot %[[KS]][%[[J]]]
// CHECK:        %[[S1:.*]] = attn_nv.wgmma %[[QS]], %[[K]], %[[ZS]] transpose_rhs
// CHECK-NEXT:   %[[PREV:.*]] = arith.subi %[[J]], %{{.*}} : index
// CHECK-NEXT:   %[[R:.*]] = attn.map(%[[ACC]], %[[PREVALPHA]] :
// CHECK:        %[[VPREV:.*]] = attn_nv.slot %[[VS]][%[[PREV]]]
// CHECK-NEXT:   %[[PV:.*]] = attn_nv.wgmma %[[PREVP]], %[[VPREV]], %[[R]] :
// CHECK-NEXT:   %[[S:.*]] = attn_nv.wgmma_wait %[[S1]] {pending = 1 : i64} : tensor<128x128xf32, #attn_nv.acc<warps = 8>>
// CHECK-NEXT:   %[[MX:.*]] = attn.reduce <max> %[[S]], %[[M]]
// CHECK-NEXT:   %[[ALPHA:.*]] = attn.map
// CHECK:        %[[P:.*]] = attn_nv.convert_layout
// CHECK-NEXT:   %[[DONE:.*]]:2 = attn_nv.wgmma_wait %[[PV]], %[[PREVP]] {pending = 0 : i64} : tensor<128x128xf32, #attn_nv.acc<warps = 8>>, tensor<128x128xbf16, #attn_nv.operand_a<warps = 8>>
// CHECK-NEXT:   scf.yield %[[MX]], %[[DONE]]#0, %[[P]], %[[ALPHA]]
// The last tile's P·V, from the last stage.
// CHECK:      %[[LASTSTAGE:.*]] = arith.subi %[[HI]], %{{.*}} : index
// CHECK-NEXT: %[[RL:.*]] = attn.map(%[[LOOP:.*]]#1, %[[LOOP]]#3 :
// CHECK:      %[[VL:.*]] = attn_nv.slot %[[VS]][%[[LASTSTAGE]]]
// CHECK-NEXT: %[[PVL:.*]] = attn_nv.wgmma %[[LOOP]]#2, %[[VL]], %[[RL]] :
// CHECK-NEXT: %[[WL:.*]]:2 = attn_nv.wgmma_wait %[[PVL]], %[[LOOP]]#2 {pending = 0 : i64}
// CHECK-NEXT: scf.yield %[[LOOP]]#0, %[[WL]]#0
// CHECK-NEXT: } else {
func.func @softmax_overlaps_pv(%O: !t, %n: index) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zs = arith.constant dense<0.0> : tensor<128x128xf32, #acc>
  %m0 = arith.constant dense<0xFF800000> : tensor<128xf32, #rows>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %qs = attn_nv.alloc_shared : !s
    %ks = attn_nv.alloc_shared : !s3
    %vs = attn_nv.alloc_shared : !s3
    %r:2 = scf.for %it = %c0 to %n step %c1 iter_args(%m = %m0, %acc = %zs) -> (tensor<128xf32, #rows>, tensor<128x128xf32, #acc>) {
      %v = attn_nv.slot %vs[%it] : !s3 -> !s
      %k = attn_nv.slot %ks[%it] : !s3 -> !s
      %s0 = attn_nv.wgmma %qs, %k, %zs transpose_rhs : !s, !s, tensor<128x128xf32, #acc>
      %s = attn_nv.wgmma_wait %s0 {pending = 0 : i64} : tensor<128x128xf32, #acc>
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

#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
#acc = #attn_nv.acc<warps = 8>
#rows = #attn_nv.rows<warps = 8>
#opa = #attn_nv.operand_a<warps = 8>
!t = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!s = !attn_nv.smem<128x128xbf16, swizzle_128b>
!s3 = !attn_nv.smem<3x128x128xbf16, swizzle_128b>

// plain: nothing changes.
// CHECK-LABEL: func.func @plain(
// CHECK-NOT: scf.if
// CHECK: scf.for
// CHECK-COUNT-2: attn_nv.wgmma_wait %{{.*}} {pending = 0 : i64} : tensor<128x128xf32, #attn_nv.acc<warps = 8>>
// CHECK: scf.yield
func.func @plain(%O: !t, %n: index) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zs = arith.constant dense<0.0> : tensor<128x128xf32, #acc>
  %m0 = arith.constant dense<0xFF800000> : tensor<128xf32, #rows>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %qs = attn_nv.alloc_shared : !s
    %ks = attn_nv.alloc_shared : !s3
    %vs = attn_nv.alloc_shared : !s3
    %r:2 = scf.for %it = %c0 to %n step %c1 iter_args(%m = %m0, %acc = %zs) -> (tensor<128xf32, #rows>, tensor<128x128xf32, #acc>) {
      %v = attn_nv.slot %vs[%it] : !s3 -> !s
      %k = attn_nv.slot %ks[%it] : !s3 -> !s
      %s0 = attn_nv.wgmma %qs, %k, %zs transpose_rhs : !s, !s, tensor<128x128xf32, #acc>
      %s = attn_nv.wgmma_wait %s0 {pending = 0 : i64} : tensor<128x128xf32, #acc>
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

// Split-KV's merge grid (attn.grid = "rows") has no products: the schedule
// leaves it as it is (any other grid without its K/V loop is a diagnostic,
// pipeline-wgmma-invalid.mlir).
#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "pv_in_flight", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
// CHECK-LABEL: func.func @merge_grid(
// CHECK: attn.tile_grid {{.*}} attributes {attn.grid = "rows"} {
// CHECK-NEXT: arith.constant
// CHECK-NEXT: }
func.func @merge_grid(%n: index) attributes {attn.config = #cfg} {
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) attributes {attn.grid = "rows"} {
    %c = arith.constant 0 : index
  }
  return
}
