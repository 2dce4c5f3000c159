// RUN: attn-opt %s --verify-diagnostics --attn-configure="tensor-core=mma.sync"
// RUN: attn-opt %s --attn-configure | FileCheck %s
// RUN: attn-opt %s --attn-configure="target=host" | FileCheck %s --check-prefix=HOST

// The atomic backward (dQ's accumulator) reads dS^T transposed from shared
// memory as the A operand: wgmma (sm_90a's default at D = 64) and the host
// map it, mma.sync has no such operand and refuses it. Its tiles stay
// 64 x 64 on one warpgroup (each step's dQ part has block_n rows over the
// warps that split block_m).
// CHECK: mapping = "wgmma", chip = "sm_90a", block_m = 64, block_n = 64, warps = 4,
// CHECK: dq_accum
// HOST: mapping = "host"
// HOST: dq_accum
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!a = memref<?x?x?x64xf32, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>

func.func @backward_atomic(%t: !t, %a: !a, %l: !lse) {
  // expected-error @+1 {{'attn.sdpa_backward' op 'dq_accum' (the atomic backward) is mapped on the host and on wgmma (sm_90a) up to head dim 128; the mma.sync backward at head dim 64 is the deterministic one}}
  attn.sdpa_backward %t, %t, %t, %t, %t, %l into %t, %t, %t delta %l dq_accum %a : !a
      : !t, !t, !t, !t, !lse -> !t, !t, !t, !lse
  return
}
