// RUN: attn-opt %s --split-input-file --convert-attn-nv-to-nvvm --allow-unregistered-dialect --verify-diagnostics

// Every diagnostic of the lowering patterns: input they cannot lower is an
// error at the op, not a crash or wrong code.

#cfg = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 64, block_n = 32, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>

// Kernel parameters are memrefs, scalars and (last) tensor maps.
// expected-error @+2 {{'func.func' op argument #1 of type 'tensor<64x32xf32, #attn_nv.acc<warps = 4>>' cannot be a kernel parameter (memrefs, scalars and tensor maps only)}}
// expected-error @+1 {{failed to legalize operation 'func.func' that was explicitly marked illegal}}
func.func @tile_argument(%n: index, %t: tensor<64x32xf32, #attn_nv.acc<warps = 4>>) attributes {attn.config = #cfg} {
  return
}

// -----

#cfg = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 64, block_n = 32, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>

// expected-error @+2 {{'func.func' op argument #0 of type 'vector<4xf32>' cannot be a kernel parameter (memrefs, scalars and tensor maps only)}}
// expected-error @+1 {{failed to legalize operation 'func.func' that was explicitly marked illegal}}
func.func @vector_argument(%v: vector<4xf32>) attributes {attn.config = #cfg} {
  return
}

// -----

#cfg = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 64, block_n = 32, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>

func.func @dynamic_dim(%m: memref<?x?x?x64xbf16>, %i: index) attributes {attn.config = #cfg} {
  // expected-error @+2 {{'memref.dim' op unsupported in an attn kernel: the dim must be a constant of a kernel argument}}
  // expected-error @+1 {{failed to legalize operation 'memref.dim' that was explicitly marked illegal}}
  %d = memref.dim %m, %i : memref<?x?x?x64xbf16>
  "test.sink"(%d) : (index) -> ()
  return
}

// -----

#cfg = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 64, block_n = 32, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>

func.func @alloc_without_offset() attributes {attn.config = #cfg} {
  // expected-error @+2 {{'attn_nv.alloc_shared' op has no offset: run attn-nv-allocate-shared first}}
  // expected-error @+1 {{failed to legalize operation 'attn_nv.alloc_shared' that was explicitly marked illegal}}
  %b = attn_nv.alloc_shared : !attn_nv.smem<64x64xbf16, padded>
  return
}

// -----

// cp.async needs the kernel's thread count.
func.func @copy_outside_kernel(%K: memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>, %i: index) {
  %k = attn_nv.alloc_shared {offset = 0} : !attn_nv.smem<32x64xbf16, padded>
  // expected-error @+2 {{'attn_nv.copy_async' op needs the kernel's NVIDIA attn.config}}
  // expected-error @+1 {{failed to legalize operation 'attn_nv.copy_async' that was explicitly marked illegal}}
  attn_nv.copy_async %K[%i, %i, %i] bounds %i into %k : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>, !attn_nv.smem<32x64xbf16, padded>
  return
}

// -----

#cfg = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 64, block_n = 32, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>

func.func @non_splat_constant() attributes {attn.config = #cfg} {
  // expected-error @+2 {{'arith.constant' op a tile constant must be a splat on NVIDIA}}
  // expected-error @+1 {{failed to legalize operation 'arith.constant'}}
  %c = arith.constant dense<[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0, 32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0, 40.0, 41.0, 42.0, 43.0, 44.0, 45.0, 46.0, 47.0, 48.0, 49.0, 50.0, 51.0, 52.0, 53.0, 54.0, 55.0, 56.0, 57.0, 58.0, 59.0, 60.0, 61.0, 62.0, 63.0]> : tensor<64xf32, #attn_nv.rows<warps = 4>>
  %m = attn.map(%c : tensor<64xf32, #attn_nv.rows<warps = 4>>) -> tensor<64xf32, #attn_nv.rows<warps = 4>> {
  ^bb0(%i: index, %x: f32):
    attn.yield %x : f32
  }
  return
}

// -----

#cfg = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 64, block_n = 32, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>

// A map computes values a thread holds: not mma A-operand registers.
func.func @map_to_operand_a() attributes {attn.config = #cfg} {
  %c = arith.constant dense<1.0> : tensor<64x32xf32, #attn_nv.acc<warps = 4>>
  // expected-error @+2 {{'attn.map' op needs a result with an #attn_nv.acc, #attn_nv.rows or #attn_nv.cols layout, got 'tensor<64x32xbf16, #attn_nv.operand_a<warps = 4>>'}}
  // expected-error @+1 {{failed to legalize operation 'attn.map' that was explicitly marked illegal}}
  %m = attn.map(%c : tensor<64x32xf32, #attn_nv.acc<warps = 4>>) -> tensor<64x32xbf16, #attn_nv.operand_a<warps = 4>> {
  ^bb0(%i: index, %j: index, %x: f32):
    %y = arith.truncf %x : f32 to bf16
    attn.yield %y : bf16
  }
  return
}

// -----

#cfg = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 64, block_n = 32, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>

// ... nor a tile without a layout (attn-nv-assign-layouts did not run).
func.func @map_without_layout() attributes {attn.config = #cfg} {
  // expected-error @+2 {{'attn.map' op needs a result with an #attn_nv.acc, #attn_nv.rows or #attn_nv.cols layout, got 'tensor<64x32xf32>'}}
  // expected-error @+1 {{failed to legalize operation 'attn.map' that was explicitly marked illegal}}
  %m = attn.map -> tensor<64x32xf32> {
  ^bb0(%i: index, %j: index):
    %c = arith.constant 0.0 : f32
    attn.yield %c : f32
  }
  return
}

// -----

#cfg = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 64, block_n = 32, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>

// A row max cannot stay partial over the quad.
func.func @partial_max() attributes {attn.config = #cfg} {
  %s = arith.constant dense<1.0> : tensor<64x32xf32, #attn_nv.acc<warps = 4>>
  %m = arith.constant dense<0.0> : tensor<64xf32, #attn_nv.rows<warps = 4, partial = true>>
  // expected-error @+2 {{'attn.reduce' op needs an #attn_nv.acc tile (no column groups) and an #attn_nv.rows result of the same warps (partial only for sums)}}
  // expected-error @+1 {{failed to legalize operation 'attn.reduce' that was explicitly marked illegal}}
  %r = attn.reduce <max> %s, %m : tensor<64x32xf32, #attn_nv.acc<warps = 4>>, tensor<64xf32, #attn_nv.rows<warps = 4, partial = true>>
  return
}

// -----

#cfg = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 64, block_n = 32, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>

func.func @reduce_other_warps() attributes {attn.config = #cfg} {
  %s = arith.constant dense<1.0> : tensor<64x32xf32, #attn_nv.acc<warps = 4>>
  %m = arith.constant dense<0.0> : tensor<64xf32, #attn_nv.rows<warps = 2>>
  // expected-error @+2 {{'attn.reduce' op needs an #attn_nv.acc tile (no column groups) and an #attn_nv.rows result of the same warps (partial only for sums)}}
  // expected-error @+1 {{failed to legalize operation 'attn.reduce' that was explicitly marked illegal}}
  %r = attn.reduce <add> %s, %m : tensor<64x32xf32, #attn_nv.acc<warps = 4>>, tensor<64xf32, #attn_nv.rows<warps = 2>>
  return
}

// -----

#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 64, warps = 8, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>

// A tile split over column groups holds only part of each row a thread.
func.func @reduce_column_groups() attributes {attn.config = #cfg} {
  %s = arith.constant dense<1.0> : tensor<128x128xf32, #attn_nv.acc<warps = 8, col_groups = 2>>
  %m = arith.constant dense<0.0> : tensor<128xf32, #attn_nv.rows<warps = 8>>
  // expected-error @+2 {{'attn.reduce' op needs an #attn_nv.acc tile (no column groups) and an #attn_nv.rows result of the same warps (partial only for sums)}}
  // expected-error @+1 {{failed to legalize operation 'attn.reduce' that was explicitly marked illegal}}
  %r = attn.reduce <add> %s, %m : tensor<128x128xf32, #attn_nv.acc<warps = 8, col_groups = 2>>, tensor<128xf32, #attn_nv.rows<warps = 8>>
  return
}

// -----

#wg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 64, block_n = 64, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>

// wgmma with both operands in shared memory: the rhs K-major.
func.func @wgmma_ss_mn_major() attributes {attn.config = #wg} {
  %a = attn_nv.alloc_shared {offset = 0} : !attn_nv.smem<64x64xbf16, swizzle_128b>
  %b = attn_nv.alloc_shared {offset = 8192} : !attn_nv.smem<64x64xbf16, swizzle_128b>
  %acc = arith.constant dense<0.0> : tensor<64x64xf32, #attn_nv.acc<warps = 4>>
  // expected-error @+2 {{'attn_nv.wgmma' op with lhs in shared memory takes a K-major (transposed) rhs}}
  // expected-error @+1 {{failed to legalize operation 'attn_nv.wgmma' that was explicitly marked illegal}}
  %o = attn_nv.wgmma %a, %b, %acc : !attn_nv.smem<64x64xbf16, swizzle_128b>, !attn_nv.smem<64x64xbf16, swizzle_128b>, tensor<64x64xf32, #attn_nv.acc<warps = 4>>
  return
}

// -----

#wg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 64, block_n = 64, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>

// ... with the lhs in registers: the rhs MN-major.
func.func @wgmma_rs_k_major() attributes {attn.config = #wg} {
  %z = arith.constant dense<0.0> : tensor<64x64xf32, #attn_nv.acc<warps = 4>>
  %a = attn_nv.convert_layout %z : tensor<64x64xf32, #attn_nv.acc<warps = 4>> -> tensor<64x64xbf16, #attn_nv.operand_a<warps = 4>>
  %b = attn_nv.alloc_shared {offset = 8192} : !attn_nv.smem<64x64xbf16, swizzle_128b>
  // expected-error @+2 {{'attn_nv.wgmma' op with lhs in registers takes an MN-major (K×N) rhs}}
  // expected-error @+1 {{failed to legalize operation 'attn_nv.wgmma' that was explicitly marked illegal}}
  %o = attn_nv.wgmma %a, %b, %z transpose_rhs : tensor<64x64xbf16, #attn_nv.operand_a<warps = 4>>, !attn_nv.smem<64x64xbf16, swizzle_128b>, tensor<64x64xf32, #attn_nv.acc<warps = 4>>
  return
}

// -----

#cfg = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 64, block_n = 32, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>

// Stores take what a thread holds as elements, not A-operand registers.
func.func @store_operand_a(%O: memref<?x?x?x32xbf16, strided<[?, ?, ?, 1], offset: ?>>, %i: index) attributes {attn.config = #cfg} {
  %z = arith.constant dense<0.0> : tensor<64x32xf32, #attn_nv.acc<warps = 4>>
  %a = attn_nv.convert_layout %z : tensor<64x32xf32, #attn_nv.acc<warps = 4>> -> tensor<64x32xbf16, #attn_nv.operand_a<warps = 4>>
  // expected-error @+2 {{'attn.store_tile' op stores 16-bit or f32 #attn_nv.acc tiles and #attn_nv.rows tiles (not partial sums), got 'tensor<64x32xbf16, #attn_nv.operand_a<warps = 4>>'}}
  // expected-error @+1 {{failed to legalize operation 'attn.store_tile' that was explicitly marked illegal}}
  attn.store_tile %a, %O[%i, %i, %i] bounds %i : tensor<64x32xbf16, #attn_nv.operand_a<warps = 4>>, memref<?x?x?x32xbf16, strided<[?, ?, ?, 1], offset: ?>>
  return
}

// -----

#cfg = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 64, block_n = 32, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>

// Row terms as columns are read, never stored (the rows layout stores them).
func.func @store_cols(%L: memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, %O: memref<?x?x?x64xf32, strided<[?, ?, ?, 1], offset: ?>>, %i: index) attributes {attn.config = #cfg} {
  %t = attn.load_tile %L[%i, %i, %i] bounds %i : memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>> -> tensor<1x64xf32, #attn_nv.cols<warps = 4>>
  // expected-error @+2 {{'attn.store_tile' op stores 16-bit or f32 #attn_nv.acc tiles and #attn_nv.rows tiles (not partial sums), got 'tensor<1x64xf32, #attn_nv.cols<warps = 4>>'}}
  // expected-error @+1 {{failed to legalize operation 'attn.store_tile' that was explicitly marked illegal}}
  attn.store_tile %t, %O[%i, %i, %i] bounds %i : tensor<1x64xf32, #attn_nv.cols<warps = 4>>, memref<?x?x?x64xf32, strided<[?, ?, ?, 1], offset: ?>>
  return
}

// -----

#cfg = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 64, block_n = 32, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>

// Accumulating stores are vector reductions (red.global.add.v2.f32, sm_90
// and newer): wgmma kernels only, as the atomic backward.
func.func @accumulate_sm80(%O: memref<?x?x?x32xf32, strided<[?, ?, ?, 1], offset: ?>>, %i: index) attributes {attn.config = #cfg} {
  %z = arith.constant dense<0.0> : tensor<64x32xf32, #attn_nv.acc<warps = 4>>
  // expected-error @+2 {{'attn.store_tile' op accumulates in wgmma kernels only (sm_90a: red.global.add.v2.f32), got mapping 'mma.sync'}}
  // expected-error @+1 {{failed to legalize operation 'attn.store_tile' that was explicitly marked illegal}}
  attn.store_tile %z, %O[%i, %i, %i] accumulate bounds %i : tensor<64x32xf32, #attn_nv.acc<warps = 4>>, memref<?x?x?x32xf32, strided<[?, ?, ?, 1], offset: ?>>
  return
}

// -----

#cfg = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 64, block_n = 32, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>

func.func @exp2_f16(%x: f16) attributes {attn.config = #cfg} {
  // expected-error @+2 {{'math.exp2' op only f32 is supported on NVIDIA}}
  // expected-error @+1 {{failed to legalize operation 'math.exp2' that was explicitly marked illegal}}
  %y = math.exp2 %x : f16
  "test.sink"(%y) : (f16) -> ()
  return
}

// -----

#cfg = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 64, block_n = 32, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>

func.func @log2_f16(%x: f16) attributes {attn.config = #cfg} {
  // expected-error @+2 {{'math.log2' op only f32 is supported on NVIDIA}}
  // expected-error @+1 {{failed to legalize operation 'math.log2' that was explicitly marked illegal}}
  %y = math.log2 %x : f16
  "test.sink"(%y) : (f16) -> ()
  return
}

// -----

#cfg = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 64, block_n = 32, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>

// Arithmetic on whole tiles is not lowered: it belongs in an attn.map.
func.func @tile_arith(%n: index) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a0 = arith.constant dense<1.0> : tensor<64xf32, #attn_nv.rows<warps = 4>>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %a0) -> (tensor<64xf32, #attn_nv.rows<warps = 4>>) {
    // expected-error @+1 {{failed to legalize operation 'arith.addf'}}
    %b = arith.addf %a, %a : tensor<64xf32, #attn_nv.rows<warps = 4>>
    scf.yield %b : tensor<64xf32, #attn_nv.rows<warps = 4>>
  }
  return
}

// -----

#wg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 64, block_n = 64, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = true>

func.func @barriers_without_offset() attributes {attn.config = #wg} {
  // expected-error @+2 {{'attn_nv.alloc_barriers' op has no offset: run attn-nv-allocate-shared first}}
  // expected-error @+1 {{failed to legalize operation 'attn_nv.alloc_barriers' that was explicitly marked illegal}}
  %bars = attn_nv.alloc_barriers : !attn_nv.barriers<2>
  return
}

// -----

#wg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 64, block_n = 64, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = true>

// expected-error @+2 {{'func.func' op tensor maps (pointer arguments) must be the last 4 arguments}}
// expected-error @+1 {{failed to legalize operation 'func.func' that was explicitly marked illegal}}
func.func @map_not_last(%map: !llvm.ptr, %a: index, %b: index, %c: index, %d: index) attributes {attn.config = #wg} {
  return
}

// -----

// The launch's block size is the config's: a split that does not match it
// would run consumers the launch lacks.
#ws = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 64, block_n = 128, warps = 4, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "pv_in_flight", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = true, warp_specialize = true>

func.func @mismatch() attributes {attn.config = #ws} {
  // expected-error @+2 {{needs a kernel configured with warp_specialize and consumer_threads = 32 x warps}}
  // expected-error @+1 {{failed to legalize operation 'attn_nv.warp_specialize' that was explicitly marked illegal}}
  attn_nv.warp_specialize consumers(256 threads, 232 registers) {
  } producer(40 registers) {
  }
  return
}

// -----

// A kernel that is not persistent launches one CTA a tile: no work tiles.
func.func @work_tile_not_persistent(%w: index, %n: index) attributes {attn.config = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "pv_in_flight", ordered_issue = true, reverse_grid = true, pack_gqa = false, conditional_rescale = false, tma = true, warp_specialize = true>} {
  // expected-error @+2 {{'attn_nv.work_tile' op needs a kernel whose attn.config is persistent (its launch covers the grid's work tiles)}}
  // expected-error @+1 {{failed to legalize operation 'attn_nv.work_tile' that was explicitly marked illegal}}
  %b, %h, %t = attn_nv.work_tile %w of (%n, %n, %n)
  "test.sink"(%b, %h, %t) : (index, index, index) -> ()
  return
}
