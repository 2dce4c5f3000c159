// RUN: attn-opt %s --attn-configure="tma=1 warp-specialize=1 persistent=1" | FileCheck %s
// RUN: attn-opt %s --attn-configure="tma=1 warp-specialize=1 persistent=1 q-stages=1" | FileCheck %s --check-prefix=ONEQ
// RUN: attn-opt %s --attn-configure="tma=1 warp-specialize=1 persistent=1 short-work-tiles=1" | FileCheck %s --check-prefix=SHORT

// A persistent causal grid hands its work tiles out in a fixed order
// (attn-nv-persist's rounds): every head of a query tile together
// (grid_group_ctas = 2^30), so that the order runs longest first across
// heads; without a mask the query tile stays the fastest index.
//
// A persistent CTA takes two Q buffers where two K/V stages fit beside
// them: at D = 128 (32 KB tiles) two Q buffers and two stages (192 KB) in
// place of one and three (224 KB), with the plain schedule that two
// stages have; at D = 256 two Q buffers do not fit (q_stages = 1, elided).
// q-stages=1 keeps one Q buffer and the three stages.
//
// Short work tiles (the runtime's D = 128 bands: short sequences, short
// windows) balance head by head, so the causal grid keeps the query tile
// its fastest index (no grid_group_ctas): a pair's K/V stays in L2 and no
// work tile computes the grouped order.

!d128 = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!d256 = memref<?x?x?x256xbf16, strided<[?, ?, ?, 1], offset: ?>>

// CHECK-LABEL: func.func @causal(
// CHECK-SAME: stages = 2,
// CHECK-SAME: schedule = "plain"
// CHECK-SAME: reverse_grid = true,
// CHECK-SAME: grid_group_ctas = 1073741824
// CHECK-SAME: persistent = true, q_stages = 2>
// ONEQ-LABEL: func.func @causal(
// ONEQ-SAME: stages = 3,
// ONEQ-SAME: schedule = "pv_in_flight"
// ONEQ-SAME: persistent = true>
// SHORT-LABEL: func.func @causal(
// SHORT-SAME: reverse_grid = true,
// SHORT-NOT: grid_group_ctas
// SHORT-SAME: persistent = true, q_stages = 2>
func.func @causal(%q: !d128, %k: !d128, %v: !d128, %o: !d128) {
  attn.sdpa %q, %k, %v into %o mask <causal> : !d128, !d128, !d128 -> !d128
  return
}

// CHECK-LABEL: func.func @none(
// CHECK-NOT: grid_group_ctas
// CHECK-SAME: persistent = true, q_stages = 2>
func.func @none(%q: !d128, %k: !d128, %v: !d128, %o: !d128) {
  attn.sdpa %q, %k, %v into %o : !d128, !d128, !d128 -> !d128
  return
}

// CHECK-LABEL: func.func @d256(
// CHECK-SAME: persistent = true>
func.func @d256(%q: !d256, %k: !d256, %v: !d256, %o: !d256) {
  attn.sdpa %q, %k, %v into %o : !d256, !d256, !d256 -> !d256
  return
}
