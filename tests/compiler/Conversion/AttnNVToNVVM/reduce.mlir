// RUN: attn-opt %s --convert-attn-nv-to-nvvm | FileCheck %s

// attn.reduce over an #attn_nv.acc tile: each thread combines its values of
// each of its rows, two butterfly shuffles (lane masks 1, 2) combine the
// quad that shares the row, and the initial row value comes last; a
// partial (#attn_nv.rows<partial>) sum stays per thread. attn_nv.warp_any
// is one vote.any over the thread's values.

#cfg = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 64, block_n = 32, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
!acc = tensor<64x32xf32, #attn_nv.acc<warps = 4>>
!rows = tensor<64xf32, #attn_nv.rows<warps = 4>>
!part = tensor<64xf32, #attn_nv.rows<warps = 4, partial = true>>

// Max: 16 values in two rows (values 0, 1, 4, 5, ... of row g; 2, 3, 6, 7,
// ... of row g + 8): 7 maxnums each, then two shuffles and the initial max.
// arith.maxnumf is lowered to llvm.intr.maxnum (Math.cpp).
// CHECK-LABEL: gpu.func @max_full
// CHECK: scf.for %{{.*}} iter_args(%[[V0:arg[0-9]+]] = %{{[[:alnum:]_]+}}, %[[V1:arg[0-9]+]] = %{{[[:alnum:]_]+}}, %[[V2:arg[0-9]+]] = %{{[[:alnum:]_]+}}, %[[V3:arg[0-9]+]] = %{{[[:alnum:]_]+}}, %[[V4:arg[0-9]+]] = %{{[[:alnum:]_]+}}, {{.*}}, %[[M0:arg[0-9]+]] = %{{[[:alnum:]_]+}}, %[[M1:arg[0-9]+]] = %{{[[:alnum:]_]+}}) -> ({{(f32, ){17}(f32)}})
// CHECK-NOT: nvvm.shfl.sync
// CHECK: %[[A:.*]] = llvm.intr.maxnum(%[[V0]], %[[V1]]) : (f32, f32) -> f32
// CHECK-NEXT: llvm.intr.maxnum(%[[V2]], %[[V3]]) : (f32, f32) -> f32
// CHECK-NEXT: llvm.intr.maxnum(%[[A]], %[[V4]]) : (f32, f32) -> f32
// CHECK-NOT: nvvm.shfl.sync
// CHECK-COUNT-11: llvm.intr.maxnum
// CHECK: %[[S1:.*]] = nvvm.shfl.sync bfly %{{.*}}, %[[P0:.*]], %c1_i32{{.*}}, %c31_i32{{.*}} : f32 -> f32
// CHECK: %[[Q1:.*]] = llvm.intr.maxnum(%[[P0]], %[[S1]])
// CHECK: %[[S2:.*]] = nvvm.shfl.sync bfly %{{.*}}, %[[Q1]], %c2_i32{{.*}}, %c31_i32{{.*}} : f32 -> f32
// CHECK: %[[Q2:.*]] = llvm.intr.maxnum(%[[Q1]], %[[S2]])
// CHECK: %[[R0:.*]] = llvm.intr.maxnum(%[[M0]], %[[Q2]])
// CHECK: nvvm.shfl.sync bfly %{{.*}}, %{{.*}}, %c1_i32
// CHECK: llvm.intr.maxnum
// CHECK: nvvm.shfl.sync bfly %{{.*}}, %{{.*}}, %c2_i32
// CHECK: llvm.intr.maxnum
// CHECK: %[[R1:.*]] = llvm.intr.maxnum(%[[M1]], %{{.*}})
// CHECK-NOT: nvvm.shfl.sync
// CHECK-NOT: llvm.intr.maxnum
// CHECK: scf.yield {{.*}}, %[[R0]], %[[R1]] :
func.func @max_full(%n: index) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %s0 = arith.constant dense<1.0> : !acc
  %m0 = arith.constant dense<0xFF800000> : !rows
  %res:2 = scf.for %it = %c0 to %n step %c1 iter_args(%s = %s0, %m = %m0) -> (!acc, !rows) {
    %m1 = attn.reduce <max> %s, %m : !acc, !rows
    scf.yield %s, %m1 : !acc, !rows
  }
  return
}

// A full sum: the same with adds.
// CHECK-LABEL: gpu.func @add_full
// CHECK-COUNT-14: arith.addf
// CHECK: nvvm.shfl.sync bfly %{{.*}}, %{{.*}}, %c1_i32
// CHECK: arith.addf
// CHECK: nvvm.shfl.sync bfly %{{.*}}, %{{.*}}, %c2_i32
// CHECK: arith.addf
// CHECK: arith.addf %arg{{[0-9]+}}, %{{.*}} : f32
// CHECK: nvvm.shfl.sync bfly %{{.*}}, %{{.*}}, %c1_i32
// CHECK: arith.addf
// CHECK: nvvm.shfl.sync bfly %{{.*}}, %{{.*}}, %c2_i32
// CHECK: arith.addf
// CHECK: arith.addf %arg{{[0-9]+}}, %{{.*}} : f32
// CHECK-NOT: nvvm.shfl.sync
// CHECK-NOT: arith.addf
// CHECK: scf.yield
func.func @add_full(%n: index) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %s0 = arith.constant dense<1.0> : !acc
  %l0 = arith.constant dense<0.0> : !rows
  %res:2 = scf.for %it = %c0 to %n step %c1 iter_args(%s = %s0, %l = %l0) -> (!acc, !rows) {
    %l1 = attn.reduce <add> %s, %l : !acc, !rows
    scf.yield %s, %l1 : !acc, !rows
  }
  return
}

// A partial sum: no shuffle. The values are a map's results, computed in
// order: each is added right after it is computed, interleaved with the
// map's exp2s, not after all of them.
// CHECK-LABEL: gpu.func @add_partial
// CHECK: scf.for %{{.*}} iter_args({{.*}}, %[[L0:arg[0-9]+]] = %{{[[:alnum:]_]+}}, %[[L1:arg[0-9]+]] = %{{[[:alnum:]_]+}}) -> ({{(f32, ){17}(f32)}})
// CHECK-NOT: nvvm.shfl.sync
// CHECK: %[[E0:.*]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK-NEXT: %[[E1:.*]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK-NEXT: %[[A01:.*]] = arith.addf %[[E0]], %[[E1]] : f32
// CHECK-NEXT: %[[E2:.*]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK-NEXT: %[[E3:.*]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK-NEXT: %[[A23:.*]] = arith.addf %[[E2]], %[[E3]] : f32
// CHECK-NEXT: %[[E4:.*]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK-NEXT: arith.addf %[[A01]], %[[E4]] : f32
// CHECK-COUNT-11: arith.addf
// CHECK-NEXT: %[[R0:.*]] = arith.addf %[[L0]], %{{.*}} : f32
// CHECK-NEXT: %[[R1:.*]] = arith.addf %[[L1]], %{{.*}} : f32
// CHECK-NOT: nvvm.shfl.sync
// CHECK: scf.yield {{.*}}, %[[R0]], %[[R1]] :
func.func @add_partial(%n: index) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %s0 = arith.constant dense<1.0> : !acc
  %l0 = arith.constant dense<0.0> : !part
  %res:2 = scf.for %it = %c0 to %n step %c1 iter_args(%s = %s0, %l = %l0) -> (!acc, !part) {
    %p = attn.map(%s : !acc) -> !acc {
    ^bb0(%i: index, %j: index, %a: f32):
      %e = math.exp2 %a : f32
      attn.yield %e : f32
    }
    %l1 = attn.reduce <add> %p, %l : !acc, !part
    scf.yield %s, %l1 : !acc, !part
  }
  return
}

// Columns padded to 16 in registers are left out: a 64x8 tile holds 8
// values, of which 4 (columns 8-15) are padding.
// CHECK-LABEL: gpu.func @padding
// CHECK: scf.for %{{.*}} iter_args(%[[V0:arg[0-9]+]] = %{{[[:alnum:]_]+}}, %[[V1:arg[0-9]+]] = %{{[[:alnum:]_]+}}, %[[V2:arg[0-9]+]] = %{{[[:alnum:]_]+}}, %[[V3:arg[0-9]+]] = %{{[[:alnum:]_]+}}, {{.*}}) -> ({{(f32, ){9}(f32)}})
// CHECK: llvm.intr.maxnum(%[[V0]], %[[V1]])
// CHECK: llvm.intr.maxnum(%[[V2]], %[[V3]])
// CHECK-COUNT-6: llvm.intr.maxnum
// CHECK-NOT: llvm.intr.maxnum
// CHECK: scf.yield
func.func @padding(%n: index) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %s0 = arith.constant dense<1.0> : tensor<64x8xf32, #attn_nv.acc<warps = 4>>
  %m0 = arith.constant dense<0xFF800000> : !rows
  %res:2 = scf.for %it = %c0 to %n step %c1 iter_args(%s = %s0, %m = %m0) -> (tensor<64x8xf32, #attn_nv.acc<warps = 4>>, !rows) {
    %m1 = attn.reduce <max> %s, %m : tensor<64x8xf32, #attn_nv.acc<warps = 4>>, !rows
    scf.yield %s, %m1 : tensor<64x8xf32, #attn_nv.acc<warps = 4>>, !rows
  }
  return
}

// vote.any over the OR of the thread's values: the same in every lane of a
// warp, so a branch on it is warp-uniform.
// CHECK-LABEL: gpu.func @warp_any
// CHECK: scf.for %{{.*}} iter_args(%[[B0:arg[0-9]+]] = %{{[[:alnum:]_]+}}, %[[B1:arg[0-9]+]] = %{{[[:alnum:]_]+}}) -> (i1, i1)
// CHECK: %[[O0:.*]] = arith.ori %false{{.*}}, %[[B0]] : i1
// CHECK: %[[O1:.*]] = arith.ori %[[O0]], %[[B1]] : i1
// CHECK: %[[ANY:.*]] = nvvm.vote.sync any %c-1_i32, %[[O1]] -> i1
// CHECK: scf.if %[[ANY]]
func.func @warp_any(%n: index) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b0 = arith.constant dense<false> : tensor<64xi1, #attn_nv.rows<warps = 4>>
  %res = scf.for %it = %c0 to %n step %c1 iter_args(%b = %b0) -> (tensor<64xi1, #attn_nv.rows<warps = 4>>) {
    %x = attn_nv.warp_any %b : tensor<64xi1, #attn_nv.rows<warps = 4>>
    scf.if %x {
      nvvm.barrier0
    }
    scf.yield %b : tensor<64xi1, #attn_nv.rows<warps = 4>>
  }
  return
}
