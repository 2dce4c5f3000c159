// RUN: attn-opt %s --verify-diagnostics --attn-configure

// Past D = 128 the NVIDIA backward keeps dQ, dK and dV in kernels of their
// own (splitsBackwardGrads): there is no atomic form, whose K/V tiles'
// kernel holds dK and dV together, even on wgmma.
!t = memref<?x?x?x256xbf16, strided<[?, ?, ?, 1], offset: ?>>
!a = memref<?x?x?x256xf32, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>

func.func @backward_atomic_wide(%t: !t, %a: !a, %l: !lse) {
  // expected-error @+1 {{'attn.sdpa_backward' op 'dq_accum' (the atomic backward) is mapped on the host and on wgmma (sm_90a) up to head dim 128; the wgmma backward at head dim 256 is the deterministic one}}
  attn.sdpa_backward %t, %t, %t, %t, %t, %l into %t, %t, %t delta %l dq_accum %a : !a
      : !t, !t, !t, !t, !lse -> !t, !t, !t, !lse
  return
}
