// RUN: attn-opt %s --split-input-file --attn-nv-skip-rescale | FileCheck %s

// With conditional_rescale, acc · alpha feeding an mma runs only when some
// factor of the warp's rows differs from 1 (x · 1 = x exactly).

#cfg = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 128, block_n = 32, warps = 4, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = true>
#acc = #attn_nv.acc<warps = 4>
#rows = #attn_nv.rows<warps = 4>
#opa = #attn_nv.operand_a<warps = 4>
!v = !attn_nv.smem<32x128xbf16, padded>

// CHECK-LABEL: func.func @rescale(
// CHECK-SAME: %[[P:[^:]*]]: tensor<128x32xbf16, #attn_nv.operand_a<warps = 4>>, %[[V:[^:]*]]: !attn_nv.smem<32x128xbf16, padded>, %[[ACC:[^:]*]]: tensor<128x128xf32, #attn_nv.acc<warps = 4>>, %[[ALPHA:[^:]*]]: tensor<128xf32, #attn_nv.rows<warps = 4>>)
// CHECK:      %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[MOVED:.*]] = attn.map(%[[ALPHA]] : tensor<128xf32, #attn_nv.rows<warps = 4>>) -> tensor<128xi1, #attn_nv.rows<warps = 4>> {
// CHECK-NEXT: ^bb0(%{{.*}}: index, %[[A:.*]]: f32):
// CHECK-NEXT:   %[[NE:.*]] = arith.cmpf une, %[[A]], %[[ONE]] : f32
// CHECK-NEXT:   attn.yield %[[NE]] : i1
// CHECK-NEXT: }
// CHECK-NEXT: %[[ANY:.*]] = attn_nv.warp_any %[[MOVED]] : tensor<128xi1, #attn_nv.rows<warps = 4>>
// CHECK-NEXT: %[[R:.*]] = scf.if %[[ANY]] -> (tensor<128x128xf32, #attn_nv.acc<warps = 4>>) {
// CHECK-NEXT:   %[[M:.*]] = attn.map(%[[ACC]], %[[ALPHA]] :
// CHECK:        scf.yield %[[M]]
// CHECK-NEXT: } else {
// CHECK-NEXT:   scf.yield %[[ACC]]
// CHECK-NEXT: }
// CHECK-NEXT: attn_nv.mma %[[P]], %[[V]], %[[R]] :
func.func @rescale(%p: tensor<128x32xbf16, #opa>, %v: !v, %acc: tensor<128x128xf32, #acc>, %alpha: tensor<128xf32, #rows>) -> tensor<128x128xf32, #acc> attributes {attn.config = #cfg} {
  %r = attn.map(%acc, %alpha : tensor<128x128xf32, #acc>, tensor<128xf32, #rows>) -> tensor<128x128xf32, #acc> {
  ^bb0(%i: index, %j: index, %x: f32, %a: f32):
    %y = arith.mulf %x, %a : f32
    attn.yield %y : f32
  }
  %o = attn_nv.mma %p, %v, %r : tensor<128x32xbf16, #opa>, !v, tensor<128x128xf32, #acc>
  return %o : tensor<128x128xf32, #acc>
}

// -----

// alpha · acc is the same product.
#cfg = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 128, block_n = 32, warps = 4, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = true>
#acc = #attn_nv.acc<warps = 4>
#rows = #attn_nv.rows<warps = 4>
#opa = #attn_nv.operand_a<warps = 4>
!v = !attn_nv.smem<32x128xbf16, padded>

// CHECK-LABEL: func.func @commuted(
// CHECK: attn_nv.warp_any
// CHECK: scf.if
func.func @commuted(%p: tensor<128x32xbf16, #opa>, %v: !v, %acc: tensor<128x128xf32, #acc>, %alpha: tensor<128xf32, #rows>) -> tensor<128x128xf32, #acc> attributes {attn.config = #cfg} {
  %r = attn.map(%acc, %alpha : tensor<128x128xf32, #acc>, tensor<128xf32, #rows>) -> tensor<128x128xf32, #acc> {
  ^bb0(%i: index, %j: index, %x: f32, %a: f32):
    %y = arith.mulf %a, %x : f32
    attn.yield %y : f32
  }
  %o = attn_nv.mma %p, %v, %r : tensor<128x32xbf16, #opa>, !v, tensor<128x128xf32, #acc>
  return %o : tensor<128x128xf32, #acc>
}

// -----

// Left alone: other maps feeding an mma (acc · alpha + 1, a map read twice)
// and a rescale that feeds no product (the epilogue's acc / l).
#cfg = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 128, block_n = 32, warps = 4, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = true>
#acc = #attn_nv.acc<warps = 4>
#rows = #attn_nv.rows<warps = 4>
#opa = #attn_nv.operand_a<warps = 4>
!v = !attn_nv.smem<32x128xbf16, padded>

// CHECK-LABEL: func.func @not_a_rescale(
// CHECK-NOT: attn_nv.warp_any
// CHECK-NOT: scf.if
// CHECK: return
func.func @not_a_rescale(%p: tensor<128x32xbf16, #opa>, %v: !v, %acc: tensor<128x128xf32, #acc>, %alpha: tensor<128xf32, #rows>) -> (tensor<128x128xf32, #acc>, tensor<128x128xf32, #acc>, tensor<128x128xf32, #acc>) attributes {attn.config = #cfg} {
  %r1 = attn.map(%acc, %alpha : tensor<128x128xf32, #acc>, tensor<128xf32, #rows>) -> tensor<128x128xf32, #acc> {
  ^bb0(%i: index, %j: index, %x: f32, %a: f32):
    %one = arith.constant 1.0 : f32
    %y = arith.mulf %x, %a : f32
    %z = arith.addf %y, %one : f32
    attn.yield %z : f32
  }
  %o1 = attn_nv.mma %p, %v, %r1 : tensor<128x32xbf16, #opa>, !v, tensor<128x128xf32, #acc>
  %r2 = attn.map(%acc, %alpha : tensor<128x128xf32, #acc>, tensor<128xf32, #rows>) -> tensor<128x128xf32, #acc> {
  ^bb0(%i: index, %j: index, %x: f32, %a: f32):
    %y = arith.mulf %x, %a : f32
    attn.yield %y : f32
  }
  %o2 = attn_nv.mma %p, %v, %r2 : tensor<128x32xbf16, #opa>, !v, tensor<128x128xf32, #acc>
  %o3 = attn_nv.mma %p, %v, %r2 : tensor<128x32xbf16, #opa>, !v, tensor<128x128xf32, #acc>
  %r3 = attn.map(%acc, %alpha : tensor<128x128xf32, #acc>, tensor<128xf32, #rows>) -> tensor<128x128xf32, #acc> {
  ^bb0(%i: index, %j: index, %x: f32, %a: f32):
    %y = arith.mulf %x, %a : f32
    attn.yield %y : f32
  }
  return %o1, %o3, %r3 : tensor<128x128xf32, #acc>, tensor<128x128xf32, #acc>, tensor<128x128xf32, #acc>
}

// -----

// Without conditional_rescale nothing changes.
#cfg = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 128, block_n = 32, warps = 4, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
#acc = #attn_nv.acc<warps = 4>
#rows = #attn_nv.rows<warps = 4>
#opa = #attn_nv.operand_a<warps = 4>
!v = !attn_nv.smem<32x128xbf16, padded>

// CHECK-LABEL: func.func @unconditional(
// CHECK-NOT: attn_nv.warp_any
// CHECK: %[[R:.*]] = attn.map
// CHECK: attn_nv.mma %{{.*}}, %{{.*}}, %[[R]]
func.func @unconditional(%p: tensor<128x32xbf16, #opa>, %v: !v, %acc: tensor<128x128xf32, #acc>, %alpha: tensor<128xf32, #rows>) -> tensor<128x128xf32, #acc> attributes {attn.config = #cfg} {
  %r = attn.map(%acc, %alpha : tensor<128x128xf32, #acc>, tensor<128xf32, #rows>) -> tensor<128x128xf32, #acc> {
  ^bb0(%i: index, %j: index, %x: f32, %a: f32):
    %y = arith.mulf %x, %a : f32
    attn.yield %y : f32
  }
  %o = attn_nv.mma %p, %v, %r : tensor<128x32xbf16, #opa>, !v, tensor<128x128xf32, #acc>
  return %o : tensor<128x128xf32, #acc>
}
