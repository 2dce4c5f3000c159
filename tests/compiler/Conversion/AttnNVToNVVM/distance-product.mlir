// RUN: attn-opt %s --convert-attn-nv-to-nvvm | FileCheck %s

// ALiBi's slope · (j - i) in a map body (AffineCoords.h): the distance is
// the thread's base plus each value's constant, so the product with a
// value defined outside the body (the slope, the same for every value) is
// u · k + u · base: u · base once per thread, then per value one
// contracted multiply and add (an FFMA) -- (0, 0) the product itself,
// (0, 1) +1, (8, 0) -8, (8, 1) -7 -- and no product per value of u with a
// converted distance.
#cfg = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 64, block_n = 32, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
!acc = tensor<64x32xf32, #attn_nv.acc<warps = 4>>

// CHECK-LABEL: gpu.func @distance_times_uniform
// CHECK: scf.for
// CHECK: %[[F:.*]] = arith.sitofp %{{.*}} : i32 to f32
// CHECK: %[[UB:.*]] = arith.mulf %arg3, %[[F]] : f32
// CHECK: arith.addf %{{.*}}, %[[UB]] : f32
// CHECK: arith.constant 1.000000e+00 : f32
// CHECK: %[[UK1:.*]] = arith.mulf %arg3, %{{.*}} fastmath<contract> : f32
// CHECK: %[[P1:.*]] = arith.addf %[[UK1]], %[[UB]] fastmath<contract> : f32
// CHECK: arith.addf %{{.*}}, %[[P1]] : f32
// CHECK: arith.constant -8.000000e+00 : f32
// CHECK: %[[UK8:.*]] = arith.mulf %arg3, %{{.*}} fastmath<contract> : f32
// CHECK: arith.addf %[[UK8]], %[[UB]] fastmath<contract> : f32
// CHECK: arith.constant -7.000000e+00 : f32
// CHECK: %[[UK7:.*]] = arith.mulf %arg3, %{{.*}} fastmath<contract> : f32
// CHECK: arith.addf %[[UK7]], %[[UB]] fastmath<contract> : f32
// CHECK-NOT: arith.sitofp
// CHECK-NOT: arith.mulf %arg3, %{{[0-9]+}} : f32
// CHECK: scf.yield
func.func @distance_times_uniform(%n: index, %row: index, %col: index, %u: f32) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %s0 = arith.constant dense<0.0> : !acc
  %res = scf.for %it = %c0 to %n step %c1 iter_args(%s = %s0) -> (!acc) {
    %y = attn.map(%s : !acc) at [%row, %col] -> !acc {
    ^bb0(%i: index, %j: index, %a: f32):
      %d = arith.subi %j, %i : index
      %di = arith.index_cast %d : index to i32
      %df = arith.sitofp %di : i32 to f32
      %p = arith.mulf %u, %df : f32
      %z = arith.addf %a, %p : f32
      attn.yield %z : f32
    }
    scf.yield %y : !acc
  }
  return
}

// A factor computed in the body (not known to be the same for every
// value) keeps the product per value.
// CHECK-LABEL: gpu.func @distance_times_value
// CHECK: scf.for
// CHECK-NOT: fastmath<contract>
// CHECK: scf.yield
func.func @distance_times_value(%n: index, %row: index, %col: index) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %s0 = arith.constant dense<0.0> : !acc
  %res = scf.for %it = %c0 to %n step %c1 iter_args(%s = %s0) -> (!acc) {
    %y = attn.map(%s : !acc) at [%row, %col] -> !acc {
    ^bb0(%i: index, %j: index, %a: f32):
      %d = arith.subi %j, %i : index
      %di = arith.index_cast %d : index to i32
      %df = arith.sitofp %di : i32 to f32
      %p = arith.mulf %a, %df : f32
      %z = arith.addf %a, %p : f32
      attn.yield %z : f32
    }
    scf.yield %y : !acc
  }
  return
}
