// RUN: attn-opt %s --attn-configure="tma=1 warp-specialize=1 persistent=1" | FileCheck %s

// A persistent causal grid hands its work tiles out in a fixed order
// (attn-nv-persist's rounds): every head of a query tile together
// (grid_group_ctas = 2^30), so that the order runs longest first across
// heads; without a mask the query tile stays the fastest index.

!d128 = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>

// CHECK-LABEL: func.func @causal(
// CHECK-SAME: reverse_grid = true,
// CHECK-SAME: grid_group_ctas = 1073741824
// CHECK-SAME: persistent = true>
func.func @causal(%q: !d128, %k: !d128, %v: !d128, %o: !d128) {
  attn.sdpa %q, %k, %v into %o mask <causal> : !d128, !d128, !d128 -> !d128
  return
}

// CHECK-LABEL: func.func @none(
// CHECK-NOT: grid_group_ctas
// CHECK-SAME: persistent = true>
func.func @none(%q: !d128, %k: !d128, %v: !d128, %o: !d128) {
  attn.sdpa %q, %k, %v into %o : !d128, !d128, !d128 -> !d128
  return
}
