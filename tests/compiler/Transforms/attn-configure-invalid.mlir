// RUN: attn-opt %s --split-input-file --verify-diagnostics --attn-configure="tensor-core=wgmma"
//
// Options the policy cannot plan: each is a diagnostic on the sdpa (or, for
// the target, the module), never a silently different kernel. They apply to
// every function, so they are checked on the output of the whole file.
// RUN: not attn-opt %s --split-input-file --attn-configure="tensor-core=wgmma chip=sm_80" 2>&1 | FileCheck %s --check-prefix=SM80
// RUN: not attn-opt %s --split-input-file --attn-configure="tensor-core=wgmma warps=4" 2>&1 | FileCheck %s --check-prefix=WG-WARPS
// RUN: not attn-opt %s --split-input-file --attn-configure="tensor-core=wgmma block-m=96" 2>&1 | FileCheck %s --check-prefix=WG-M
// RUN: not attn-opt %s --split-input-file --attn-configure="tensor-core=wgmma block-n=512" 2>&1 | FileCheck %s --check-prefix=WG-N
// RUN: not attn-opt %s --split-input-file --attn-configure="tensor-core=hmma" 2>&1 | FileCheck %s --check-prefix=NAME
// RUN: not attn-opt %s --split-input-file --attn-configure="block-m=96" 2>&1 | FileCheck %s --check-prefix=SPLIT
// RUN: not attn-opt %s --split-input-file --attn-configure="tensor-core=mma.sync warps=3" 2>&1 | FileCheck %s --check-prefix=WARPS
// RUN: not attn-opt %s --split-input-file --attn-configure="block-n=24" 2>&1 | FileCheck %s --check-prefix=BLOCK-N
// RUN: not attn-opt %s --split-input-file --attn-configure="stages=4" 2>&1 | FileCheck %s --check-prefix=STAGES
// RUN: not attn-opt %s --split-input-file --attn-configure="target=host block-m=-64" 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: not attn-opt %s --split-input-file --attn-configure="target=gpu" 2>&1 | FileCheck %s --check-prefix=TARGET
// Checked up front against the chip's limits (issue 14): chips older than
// sm_80 (LLVM aborted on their missing cp.async), warps, tile sides, shared
// memory and registers, on either target.
// RUN: not attn-opt %s --split-input-file --attn-configure="chip=sm_70" 2>&1 | FileCheck %s --check-prefix=SM70
// RUN: not attn-opt %s --split-input-file --attn-configure="chip=sm_75 tensor-core=mma.sync" 2>&1 | FileCheck %s --check-prefix=SM75
// RUN: not attn-opt %s --split-input-file --attn-configure="chip=gfx90a" 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not attn-opt %s --split-input-file --attn-configure="warps=-1" 2>&1 | FileCheck %s --check-prefix=NEG-WARPS
// RUN: not attn-opt %s --split-input-file --attn-configure="tensor-core=mma.sync block-m=1024 warps=64" 2>&1 | FileCheck %s --check-prefix=MANY-WARPS
// RUN: not attn-opt %s --split-input-file --attn-configure="block-m=1000000 block-n=1000000" 2>&1 | FileCheck %s --check-prefix=HUGE
// RUN: not attn-opt %s --split-input-file --attn-configure="target=host block-m=64 block-n=1000000" 2>&1 | FileCheck %s --check-prefix=HUGE-HOST
// RUN: not attn-opt %s --split-input-file --attn-configure="block-m=1024" 2>&1 | FileCheck %s --check-prefix=SHARED
// RUN: not attn-opt %s --split-input-file --attn-configure="tensor-core=mma.sync block-m=512 stages=2" 2>&1 | FileCheck %s --check-prefix=REGISTERS

// SM80: error: 'attn.sdpa' op cannot be configured: tensor-core=wgmma needs sm_90a, got sm_80
// WG-WARPS: error: 'attn.sdpa' op cannot be configured: tensor-core=wgmma needs warps = block-m / 16
// WG-M: error: 'attn.sdpa' op cannot be configured: tensor-core=wgmma needs block-m a multiple of 64 up to 256
// WG-N: error: 'attn.sdpa' op cannot be configured: tensor-core=wgmma needs block-n up to 256
// NAME: error: 'attn.sdpa' op cannot be configured: tensor-core must be auto, mma.sync or wgmma, got 'hmma'
// auto takes mma.sync for 96 rows, whose 4 warps cannot split them.
// SPLIT: error: 'attn.sdpa' op cannot be configured: a query tile of 96 rows is not a whole number of 16-row tiles for each of warps=4
// WARPS: error: 'attn.sdpa' op cannot be configured: a query tile of 128 rows is not a whole number of 16-row tiles for each of warps=3
// BLOCK-N: error: 'attn.sdpa' op cannot be configured: K/V tiles must have a multiple of 16 rows, got 24
// STAGES: error: 'attn.sdpa' op cannot be configured: stages must be 2, 3 or 0 (automatic), got 4
// NEGATIVE: error: 'attn.sdpa' op cannot be configured: tile sizes must be positive, got block-m=-64 block-n=64
// TARGET: error: attn-configure: target must be nvidia or host, got 'gpu'
// SM70: error: 'attn.sdpa' op cannot be configured: chip sm_70 is not supported: the kernels need sm_80 or newer (bf16 mma.sync, cp.async, ldmatrix)
// SM75: error: 'attn.sdpa' op cannot be configured: chip sm_75 is not supported
// CHIP: error: 'attn.sdpa' op cannot be configured: unknown NVIDIA chip 'gfx90a' (expected sm_<version>, such as sm_80 or sm_90a)
// NEG-WARPS: error: 'attn.sdpa' op cannot be configured: warps must be in [1, 32] (0: automatic), got -1
// MANY-WARPS: error: 'attn.sdpa' op cannot be configured: warps must be in [1, 32] (0: automatic), got 64
// HUGE: error: 'attn.sdpa' op cannot be configured: tile sizes must be at most 1024, got block-m=1000000 block-n=1000000
// HUGE-HOST: error: 'attn.sdpa' op cannot be configured: tile sizes must be at most 1024, got block-m=64 block-n=1000000
// SHARED: error: 'attn.sdpa' op cannot be configured: tiles of 1024x32 with 2 stages need {{[0-9]+}} bytes of shared memory; sm_90a gives a CTA at most 232448
// 512 rows on 4 warps: 128 rows a warp, 128 x (64 + 64) / 32 = 512 values.
// REGISTERS: error: 'attn.sdpa' op cannot be configured: tiles of 512x64 at head dim 64 with 4 warps hold 512 f32 values a thread; a thread has 255 registers, and a kernel needing more than 2 times that would run from local memory

!d64 = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>

func.func @d64(%q: !d64, %k: !d64, %v: !d64, %o: !d64) {
  attn.sdpa %q, %k, %v into %o : !d64, !d64, !d64 -> !d64
  return
}

// -----

// wgmma reduces over the head dim in k steps of 16 (auto would take
// mma.sync).
!d88 = memref<?x?x?x88xbf16, strided<[?, ?, ?, 1], offset: ?>>

func.func @d88(%q: !d88, %k: !d88, %v: !d88, %o: !d88) {
  // expected-error @+1 {{'attn.sdpa' op cannot be configured: tensor-core=wgmma needs a head dim that is a multiple of 16}}
  attn.sdpa %q, %k, %v into %o : !d88, !d88, !d88 -> !d88
  return
}

// -----

// The backward takes wgmma at multiples of 64 only (the forward at any
// multiple of 16).
!d96 = memref<?x?x?x96xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>

func.func @backward_d96(%t: !d96, %l: !lse) {
  // expected-error @+1 {{'attn.sdpa_backward' op cannot be configured: tensor-core=wgmma: the backward needs a head dim that is a multiple of 64, got 96}}
  attn.sdpa_backward %t, %t, %t, %t, %t, %l into %t, %t, %t delta %l
      : !d96, !d96, !d96, !d96, !lse -> !d96, !d96, !d96, !lse
  return
}

// -----

!f32 = memref<?x?x?x64xf32, strided<[?, ?, ?, 1], offset: ?>>

func.func @f32(%q: !f32, %k: !f32, %v: !f32, %o: !f32) {
  // expected-error @+1 {{'attn.sdpa' op cannot be configured: the NVIDIA mapping supports bf16, f16 and e4m3, got f32}}
  attn.sdpa %q, %k, %v into %o : !f32, !f32, !f32 -> !f32
  return
}

// -----

!d320 = memref<?x?x?x320xbf16, strided<[?, ?, ?, 1], offset: ?>>

func.func @d320(%q: !d320, %k: !d320, %v: !d320, %o: !d320) {
  // expected-error @+1 {{'attn.sdpa' op cannot be configured: head dim must be a multiple of 8 in [8, 256], got 320}}
  attn.sdpa %q, %k, %v into %o : !d320, !d320, !d320 -> !d320
  return
}

// -----

!qk = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!vo = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>

func.func @dv_differs(%q: !qk, %k: !qk, %v: !vo, %o: !vo) {
  // expected-error @+1 {{'attn.sdpa' op the NVIDIA mapping needs Dv = D}}
  attn.sdpa %q, %k, %v into %o : !qk, !qk, !vo -> !vo
  return
}

// -----

// One function is one kernel: one configuration.
!d64 = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!d128 = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>

func.func @two_configs(%q: !d64, %k: !d64, %v: !d64, %o: !d64,
                       %q2: !d128, %k2: !d128, %v2: !d128, %o2: !d128) {
  attn.sdpa %q, %k, %v into %o : !d64, !d64, !d64 -> !d64
  // expected-error @+1 {{'attn.sdpa' op its function holds attention of two configurations: #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 64, warps = 8, min_ctas_per_sm = 2, stages = 3, q_in_registers = false, schedule = "softmax_overlaps_pv", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false> and #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "pv_in_flight", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false>}}
  attn.sdpa %q2, %k2, %v2 into %o2 : !d128, !d128, !d128 -> !d128
  return
}

// -----

// A function configured before, differently.
!d64 = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>

func.func @configured(%q: !d64, %k: !d64, %v: !d64, %o: !d64) attributes {
    attn.config = #attn.config<mapping = "host", chip = "", block_m = 64, block_n = 64, warps = 0, min_ctas_per_sm = 0, stages = 0, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>} {
  // expected-error @+1 {{'attn.sdpa' op its function holds attention of two configurations: #attn.config<mapping = "host"}}
  attn.sdpa %q, %k, %v into %o : !d64, !d64, !d64 -> !d64
  return
}
