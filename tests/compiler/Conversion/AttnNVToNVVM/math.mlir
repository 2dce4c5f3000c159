// RUN: attn-opt %s --convert-attn-nv-to-nvvm --allow-unregistered-dialect | FileCheck %s

// The softmax's exp2 and log2 become the approximate NVVM intrinsics
// (ex2.approx.ftz: one MUFU.EX2; lg2.approx), maxnumf LLVM's maxnum, a
// softcap's tanh LLVM's tanh with afn (NVPTX: tanh.approx.f32, one
// MUFU.TANH), not the libdevice calls convert-gpu-to-nvvm would emit. Inside attn.map bodies
// they are lowered the same way, once per value.

#cfg = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 64, block_n = 32, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>

// CHECK-LABEL: gpu.func @scalars
// CHECK-SAME: (%[[X:.*]]: f32, %[[Y:.*]]: f32)
// CHECK: %[[E:.*]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%[[X]]) : (f32) -> f32
// CHECK: %[[L:.*]] = llvm.call_intrinsic "llvm.nvvm.lg2.approx.f"(%[[Y]]) : (f32) -> f32
// CHECK: %[[M:.*]] = llvm.intr.maxnum(%[[E]], %[[L]]) : (f32, f32) -> f32
// CHECK: %[[T:.*]] = llvm.intr.tanh(%[[M]]) {fastmathFlags = #llvm.fastmath<afn>} : (f32) -> f32
// CHECK: "test.sink"(%[[T]])
// CHECK-NOT: math.
func.func @scalars(%x: f32, %y: f32) attributes {attn.config = #cfg} {
  %a = math.exp2 %x : f32
  %b = math.log2 %y : f32
  %c = arith.maxnumf %a, %b : f32
  %t = math.tanh %c : f32
  "test.sink"(%t) : (f32) -> ()
  return
}

// In a map over a 64x32 accumulator: 16 exp2s a thread.
// CHECK-LABEL: gpu.func @in_map
// CHECK-COUNT-16: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK-NOT: llvm.call_intrinsic
// CHECK: scf.yield
func.func @in_map(%n: index) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %s0 = arith.constant dense<0.0> : tensor<64x32xf32, #attn_nv.acc<warps = 4>>
  %res = scf.for %it = %c0 to %n step %c1 iter_args(%s = %s0) -> (tensor<64x32xf32, #attn_nv.acc<warps = 4>>) {
    %p = attn.map(%s : tensor<64x32xf32, #attn_nv.acc<warps = 4>>) -> tensor<64x32xf32, #attn_nv.acc<warps = 4>> {
    ^bb0(%i: index, %j: index, %a: f32):
      %e = math.exp2 %a : f32
      attn.yield %e : f32
    }
    scf.yield %p : tensor<64x32xf32, #attn_nv.acc<warps = 4>>
  }
  return
}
