// RUN: attn-opt %s --split-input-file --attn-nv-defer-row-sums | FileCheck %s

// Row sums stay per-thread partial sums (#attn_nv.rows<..., partial = true>)
// through linear arithmetic; an attn_nv.convert_layout adds each quad up
// where something non-linear reads them.

#cfg = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 64, block_n = 64, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
#acc = #attn_nv.acc<warps = 4>
#rows = #attn_nv.rows<warps = 4>
!lse = memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>

// The online softmax's l' = alpha · l + rowsum(P), carried from 0: partial
// through the loop; 1 / l and the store read the sum, from one conversion.
// CHECK-LABEL: func.func @online_sum(
// CHECK-SAME: %[[P:[^:]*]]: tensor<64x64xf32, #attn_nv.acc<warps = 4>>, %[[ALPHA:[^:]*]]: tensor<64xf32, #attn_nv.rows<warps = 4>>
// CHECK: attn.tile_grid
// CHECK:   %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<64xf32, #attn_nv.rows<warps = 4, partial = true>>
// CHECK:   %[[L:.*]] = scf.for {{.*}} iter_args(%[[LI:.*]] = %[[Z]]) -> (tensor<64xf32, #attn_nv.rows<warps = 4, partial = true>>) {
// CHECK:     %[[Z2:.*]] = arith.constant dense<0.000000e+00> : tensor<64xf32, #attn_nv.rows<warps = 4, partial = true>>
// CHECK:     %[[S:.*]] = attn.reduce <add> %[[P]], %[[Z2]] : tensor<64x64xf32, #attn_nv.acc<warps = 4>>, tensor<64xf32, #attn_nv.rows<warps = 4, partial = true>>
// CHECK-NOT: convert_layout
// CHECK:     %[[L1:.*]] = attn.map(%[[LI]], %[[ALPHA]], %[[S]] : tensor<64xf32, #attn_nv.rows<warps = 4, partial = true>>, tensor<64xf32, #attn_nv.rows<warps = 4>>, tensor<64xf32, #attn_nv.rows<warps = 4, partial = true>>) -> tensor<64xf32, #attn_nv.rows<warps = 4, partial = true>>
// CHECK:     scf.yield %[[L1]] : tensor<64xf32, #attn_nv.rows<warps = 4, partial = true>>
// CHECK:   }
// CHECK-NEXT: %[[SUM:.*]] = attn_nv.convert_layout %[[L]] : tensor<64xf32, #attn_nv.rows<warps = 4, partial = true>> -> tensor<64xf32, #attn_nv.rows<warps = 4>>
// CHECK-NEXT: %[[INV:.*]] = attn.map(%[[SUM]] : tensor<64xf32, #attn_nv.rows<warps = 4>>)
// CHECK: attn.store_tile %[[INV]]
// CHECK-NEXT: attn.store_tile %[[SUM]]
// CHECK-NOT: convert_layout
func.func @online_sum(%p: tensor<64x64xf32, #acc>, %alpha: tensor<64xf32, #rows>, %n: index, %L: !lse) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant dense<0.0> : tensor<64xf32, #rows>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %l = scf.for %i = %c0 to %n step %c1 iter_args(%li = %z) -> (tensor<64xf32, #rows>) {
      %s = attn.reduce <add> %p, %z : tensor<64x64xf32, #acc>, tensor<64xf32, #rows>
      %l1 = attn.map(%li, %alpha, %s : tensor<64xf32, #rows>, tensor<64xf32, #rows>, tensor<64xf32, #rows>) -> tensor<64xf32, #rows> {
      ^bb0(%r: index, %x: f32, %a: f32, %y: f32):
        %ax = arith.mulf %a, %x : f32
        %sum = arith.addf %ax, %y : f32
        attn.yield %sum : f32
      }
      scf.yield %l1 : tensor<64xf32, #rows>
    }
    %inv = attn.map(%l : tensor<64xf32, #rows>) -> tensor<64xf32, #rows> {
    ^bb0(%r: index, %x: f32):
      %one = arith.constant 1.0 : f32
      %y = arith.divf %one, %x : f32
      attn.yield %y : f32
    }
    attn.store_tile %inv, %L[%b, %h, %t] bounds %n : tensor<64xf32, #rows>, !lse
    attn.store_tile %l, %L[%b, %h, %t] bounds %n : tensor<64xf32, #rows>, !lse
  }
  return
}

// -----

// l + rowsum + 1 is not linear in the partial sums (the 1 would be counted
// four times): the loop stays full and the row sum is added up right after
// the reduction.
#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 64, block_n = 64, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
#acc = #attn_nv.acc<warps = 4>
#rows = #attn_nv.rows<warps = 4>
!lse = memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>

// CHECK-LABEL: func.func @non_linear(
// CHECK: %[[L:.*]] = scf.for {{.*}} -> (tensor<64xf32, #attn_nv.rows<warps = 4>>) {
// CHECK:   %[[S:.*]] = attn.reduce <add> %{{.*}}, %{{.*}} : tensor<64x64xf32, #attn_nv.acc<warps = 4>>, tensor<64xf32, #attn_nv.rows<warps = 4, partial = true>>
// CHECK-NEXT: %[[SUM:.*]] = attn_nv.convert_layout %[[S]] : tensor<64xf32, #attn_nv.rows<warps = 4, partial = true>> -> tensor<64xf32, #attn_nv.rows<warps = 4>>
// CHECK-NEXT: %[[L1:.*]] = attn.map(%{{.*}}, %[[SUM]] : tensor<64xf32, #attn_nv.rows<warps = 4>>, tensor<64xf32, #attn_nv.rows<warps = 4>>) -> tensor<64xf32, #attn_nv.rows<warps = 4>>
// CHECK:   scf.yield %[[L1]] : tensor<64xf32, #attn_nv.rows<warps = 4>>
// CHECK: attn.store_tile %[[L]]
func.func @non_linear(%p: tensor<64x64xf32, #acc>, %n: index, %L: !lse) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant dense<0.0> : tensor<64xf32, #rows>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %l = scf.for %i = %c0 to %n step %c1 iter_args(%li = %z) -> (tensor<64xf32, #rows>) {
      %s = attn.reduce <add> %p, %z : tensor<64x64xf32, #acc>, tensor<64xf32, #rows>
      %l1 = attn.map(%li, %s : tensor<64xf32, #rows>, tensor<64xf32, #rows>) -> tensor<64xf32, #rows> {
      ^bb0(%r: index, %x: f32, %y: f32):
        %one = arith.constant 1.0 : f32
        %sum = arith.addf %x, %y : f32
        %plus = arith.addf %sum, %one : f32
        attn.yield %plus : f32
      }
      scf.yield %l1 : tensor<64xf32, #rows>
    }
    attn.store_tile %l, %L[%b, %h, %t] bounds %n : tensor<64xf32, #rows>, !lse
  }
  return
}

// -----

// Products of two partial sums, and sums that do not start from 0, are not
// partial either.
#cfg = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 64, block_n = 64, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
#acc = #attn_nv.acc<warps = 4>
#rows = #attn_nv.rows<warps = 4>
!lse = memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>

// CHECK-LABEL: func.func @not_partial(
// CHECK-SAME: %[[P:[^:]*]]: tensor<64x64xf32, #attn_nv.acc<warps = 4>>, %[[INIT:[^:]*]]: tensor<64xf32, #attn_nv.rows<warps = 4>>
// CHECK: %[[A:.*]] = attn.reduce <add> %[[P]], %{{.*}} : {{.*}}, tensor<64xf32, #attn_nv.rows<warps = 4, partial = true>>
// CHECK-NEXT: %[[SA:.*]] = attn_nv.convert_layout %[[A]]
// CHECK: %[[B:.*]] = attn.reduce <add> %[[P]], %{{.*}} : {{.*}}, tensor<64xf32, #attn_nv.rows<warps = 4, partial = true>>
// CHECK-NEXT: %[[SB:.*]] = attn_nv.convert_layout %[[B]]
// CHECK-NEXT: %[[AB:.*]] = attn.map(%[[SA]], %[[SB]] : tensor<64xf32, #attn_nv.rows<warps = 4>>, tensor<64xf32, #attn_nv.rows<warps = 4>>) -> tensor<64xf32, #attn_nv.rows<warps = 4>>
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf
// CHECK: %[[C:.*]] = attn.reduce <add> %[[P]], %[[INIT]] : tensor<64x64xf32, #attn_nv.acc<warps = 4>>, tensor<64xf32, #attn_nv.rows<warps = 4>>
// CHECK-NOT: convert_layout
// CHECK: return
func.func @not_partial(%p: tensor<64x64xf32, #acc>, %init: tensor<64xf32, #rows>, %n: index, %L: !lse) attributes {attn.config = #cfg} {
  %z = arith.constant dense<0.0> : tensor<64xf32, #rows>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %a = attn.reduce <add> %p, %z : tensor<64x64xf32, #acc>, tensor<64xf32, #rows>
    %b2 = attn.reduce <add> %p, %z : tensor<64x64xf32, #acc>, tensor<64xf32, #rows>
    %ab = attn.map(%a, %b2 : tensor<64xf32, #rows>, tensor<64xf32, #rows>) -> tensor<64xf32, #rows> {
    ^bb0(%r: index, %x: f32, %y: f32):
      %m = arith.mulf %x, %y : f32
      attn.yield %m : f32
    }
    %c = attn.reduce <add> %p, %init : tensor<64x64xf32, #acc>, tensor<64xf32, #rows>
    attn.store_tile %ab, %L[%b, %h, %t] bounds %n : tensor<64xf32, #rows>, !lse
    attn.store_tile %c, %L[%b, %h, %t] bounds %n : tensor<64xf32, #rows>, !lse
  }
  return
}
