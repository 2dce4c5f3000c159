// RUN: attn-opt %s --attn-configure | FileCheck %s --check-prefix=SM90
// RUN: attn-opt %s --attn-configure="chip=sm_80" | FileCheck %s --check-prefix=SM80
// RUN: attn-opt %s --attn-configure="tensor-core=mma.sync" | FileCheck %s --check-prefix=MMA
// RUN: attn-opt %s --attn-configure="target=host" | FileCheck %s --check-prefix=HOST
// RUN: attn-opt %s --attn-configure="pack-gqa=true" | FileCheck %s --check-prefix=PACK
// RUN: attn-opt %s --attn-configure="block-m=64 block-n=64 stages=2" | FileCheck %s --check-prefix=EXPLICIT
// RUN: attn-opt %s --attn-configure="tensor-core=mma.sync block-m=64 warps=2 stages=2" | FileCheck %s --check-prefix=WARPS
// Configuring twice with the same options changes nothing.
// RUN: attn-opt %s --attn-configure --attn-configure | FileCheck %s --check-prefix=SM90

// attn-configure attaches the policy's whole decision to each function
// holding an attn.sdpa, per mapping, chip, head dim and mask.

!d64 = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!d96 = memref<?x?x?x96xf16, strided<[?, ?, ?, 1], offset: ?>>
!d128 = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!d256 = memref<?x?x?x256xbf16, strided<[?, ?, ?, 1], offset: ?>>
!d48 = memref<?x?x?x48xbf16, strided<[?, ?, ?, 1], offset: ?>>
!d72 = memref<?x?x?x72xbf16, strided<[?, ?, ?, 1], offset: ?>>
!d160 = memref<?x?x?x160xf16, strided<[?, ?, ?, 1], offset: ?>>

// wgmma, D = 64: two warpgroups, 64 keys, three stages that leave room for
// two CTAs per SM; the softmax overlaps the P·V of the tile before.
// SM90-LABEL: func.func @d64(
// SM90-SAME: attn.config = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 64, warps = 8, min_ctas_per_sm = 2, stages = 3, q_in_registers = false, schedule = "softmax_overlaps_pv", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
// mma.sync, D = 64: two m tiles per warp, Q's fragments fit in registers.
// SM80-LABEL: func.func @d64(
// SM80-SAME: attn.config = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 128, block_n = 64, warps = 4, min_ctas_per_sm = 1, stages = 3, q_in_registers = true, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
// MMA-LABEL: func.func @d64(
// MMA-SAME: #attn.config<mapping = "mma.sync", chip = "sm_90a", block_m = 128, block_n = 64, warps = 4, min_ctas_per_sm = 1, stages = 3, q_in_registers = true, schedule = "plain"
// The host: tiles only.
// HOST-LABEL: func.func @d64(
// HOST-SAME: attn.config = #attn.config<mapping = "host", chip = "", block_m = 128, block_n = 64, warps = 0, min_ctas_per_sm = 0, stages = 0, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
// PACK-LABEL: func.func @d64(
// PACK-SAME: mapping = "wgmma"
// PACK-SAME: pack_gqa = true
// One warpgroup of 64 rows, 128 keys, two stages: no pipelined schedule,
// no turns, and room for a second CTA.
// EXPLICIT-LABEL: func.func @d64(
// EXPLICIT-SAME: attn.config = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 64, block_n = 64, warps = 4, min_ctas_per_sm = 2, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
// Two warps of two m tiles each.
// WARPS-LABEL: func.func @d64(
// WARPS-SAME: attn.config = #attn.config<mapping = "mma.sync", chip = "sm_90a", block_m = 64, block_n = 64, warps = 2, min_ctas_per_sm = 1, stages = 2, q_in_registers = true, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
func.func @d64(%q: !d64, %k: !d64, %v: !d64, %o: !d64, %s: f32) {
  attn.sdpa %q, %k, %v into %o scale %s positive_scale : !d64, !d64, !d64 -> !d64
  return
}

// A causal wgmma grid launches its longest tiles first.
// SM90-LABEL: func.func @d64_causal(
// SM90-SAME: schedule = "softmax_overlaps_pv", ordered_issue = true, reverse_grid = true, pack_gqa = false, conditional_rescale = false>
// SM80-LABEL: func.func @d64_causal(
// SM80-SAME: q_in_registers = true, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
// HOST-LABEL: func.func @d64_causal(
// HOST-SAME: mapping = "host"
// HOST-SAME: reverse_grid = false
func.func @d64_causal(%q: !d64, %k: !d64, %v: !d64, %o: !d64) {
  attn.sdpa %q, %k, %v into %o mask <causal> : !d64, !d64, !d64 -> !d64
  return
}

// D = 96, a multiple of 16: wgmma with D = 128's tiles (its shared tiles
// are stored in two 64-column blocks, as D = 128's).
// SM90-LABEL: func.func @d96(
// SM90-SAME: attn.config = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "pv_in_flight", ordered_issue = true, reverse_grid = true, pack_gqa = false, conditional_rescale = false>
// mma.sync (the fallback): its own tiles, D = 128's 128 x 32 (two m tiles a
// warp; Q from shared memory, the rescale conditional with the mask).
// MMA-LABEL: func.func @d96(
// MMA-SAME: attn.config = #attn.config<mapping = "mma.sync", chip = "sm_90a", block_m = 128, block_n = 32, warps = 4, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = true>
// SM80-LABEL: func.func @d96(
// SM80-SAME: attn.config = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 128, block_n = 32, warps = 4, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "plain"
// HOST-LABEL: func.func @d96(
// HOST-SAME: block_m = 128, block_n = 32, warps = 0
func.func @d96(%q: !d96, %k: !d96, %v: !d96, %o: !d96) {
  attn.sdpa %q, %k, %v into %o mask <causal_bottom_right> : !d96, !d96, !d96 -> !d96
  return
}

// wgmma, D = 128: 128 keys, one CTA per SM, P·V left in flight.
// SM90-LABEL: func.func @d128_causal(
// SM90-SAME: attn.config = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "pv_in_flight", ordered_issue = true, reverse_grid = true, pack_gqa = false, conditional_rescale = false>
// mma.sync, D = 128, masked, two m tiles per warp: the rescale is
// conditional, and Q does not fit in registers.
// SM80-LABEL: func.func @d128_causal(
// SM80-SAME: attn.config = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 128, block_n = 32, warps = 4, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = true>
// MMA-LABEL: func.func @d128_causal(
// MMA-SAME: #attn.config<mapping = "mma.sync", chip = "sm_90a", block_m = 128, block_n = 32, warps = 4, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = true>
func.func @d128_causal(%q: !d128, %k: !d128, %v: !d128, %o: !d128) {
  attn.sdpa %q, %k, %v into %o mask <causal> : !d128, !d128, !d128 -> !d128
  return
}

// Unmasked: no conditional rescale.
// SM80-LABEL: func.func @d128(
// SM80-SAME: block_m = 128, block_n = 32, warps = 4, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
func.func @d128(%q: !d128, %k: !d128, %v: !d128, %o: !d128) {
  attn.sdpa %q, %k, %v into %o : !d128, !d128, !d128 -> !d128
  return
}

// D = 256: three stages would not fit, so two, and a plain schedule;
// without a mask or variant 80-key tiles (defaultTileSizes).
// SM90-LABEL: func.func @d256(
// SM90-SAME: attn.config = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 80, warps = 8, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
// SM80-LABEL: func.func @d256(
// SM80-SAME: attn.config = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 64, block_n = 32, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain"
func.func @d256(%q: !d256, %k: !d256, %v: !d256, %o: !d256) {
  attn.sdpa %q, %k, %v into %o : !d256, !d256, !d256 -> !d256
  return
}

// Head dims that are multiples of 16 take the tiles of the multiple of 64
// their shared tiles are stored as. D = 48: D = 64's, two CTAs per SM.
// SM90-LABEL: func.func @d48(
// SM90-SAME: attn.config = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 64, warps = 8, min_ctas_per_sm = 2, stages = 3, q_in_registers = false, schedule = "softmax_overlaps_pv", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
func.func @d48(%q: !d48, %k: !d48, %v: !d48, %o: !d48) {
  attn.sdpa %q, %k, %v into %o : !d48, !d48, !d48 -> !d48
  return
}

// D = 160 (stored as 192): 64 keys (128 would need two stages of 241 KB),
// three stages, P·V in flight.
// SM90-LABEL: func.func @d160(
// SM90-SAME: attn.config = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 64, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "pv_in_flight", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
func.func @d160(%q: !d160, %k: !d160, %v: !d160, %o: !d160) {
  attn.sdpa %q, %k, %v into %o : !d160, !d160, !d160 -> !d160
  return
}

// D = 72 is not a multiple of 16: mma.sync on sm_90a.
// SM90-LABEL: func.func @d72(
// SM90-SAME: attn.config = #attn.config<mapping = "mma.sync", chip = "sm_90a"
func.func @d72(%q: !d72, %k: !d72, %v: !d72, %o: !d72) {
  attn.sdpa %q, %k, %v into %o : !d72, !d72, !d72 -> !d72
  return
}

// A function without attention gets no configuration.
// HOST-LABEL: func.func @no_attention()
// HOST-NOT: attn.config
// HOST: return
func.func @no_attention() {
  return
}
