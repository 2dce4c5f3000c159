// RUN: attn-opt %s -split-input-file -verify-diagnostics

// One test per verifier constraint of the attn dialect, in the order of
// AttnOps.cpp (ConfigAttr, sdpa, tile_grid, load/store_tile,
// online_attention, finalize, matmul, map, reduce, yield), plus a few
// constraints of the op definitions and custom parsers.

// expected-error @+1 {{mapping must be host, mma.sync or wgmma, got 'cpu'}}
func.func @config_mapping() attributes {attn.config = #attn.config<mapping = "cpu", chip = "", block_m = 16, block_n = 32, warps = 0, min_ctas_per_sm = 0, stages = 0, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>} {
  return
}

// -----

// expected-error @+1 {{stages must be 0 and chip empty on the host, stages 2 or 3 on a GPU; got stages = 3, chip = '' for mapping host}}
func.func @config_host_stages() attributes {attn.config = #attn.config<mapping = "host", chip = "", block_m = 16, block_n = 32, warps = 0, min_ctas_per_sm = 0, stages = 3, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>} {
  return
}

// -----

// expected-error @+1 {{stages must be 0 and chip empty on the host, stages 2 or 3 on a GPU; got stages = 4, chip = 'sm_80' for mapping mma.sync}}
func.func @config_gpu_stages() attributes {attn.config = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 128, block_n = 32, warps = 4, min_ctas_per_sm = 1, stages = 4, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>} {
  return
}

// -----

// expected-error @+1 {{mapping wgmma needs chip sm_90a, got 'sm_80'}}
func.func @config_wgmma_chip() attributes {attn.config = #attn.config<mapping = "wgmma", chip = "sm_80", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>} {
  return
}

// -----

// expected-error @+1 {{schedule must be plain, pv_in_flight or softmax_overlaps_pv, got 'ping_pong'}}
func.func @config_schedule() attributes {attn.config = #attn.config<mapping = "host", chip = "", block_m = 16, block_n = 32, warps = 0, min_ctas_per_sm = 0, stages = 0, q_in_registers = false, schedule = "ping_pong", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>} {
  return
}

// -----

// expected-error @+1 {{tile sizes must be in [1, 1024], got block_m = 0, block_n = 32}}
func.func @config_block_m() attributes {attn.config = #attn.config<mapping = "host", chip = "", block_m = 0, block_n = 32, warps = 0, min_ctas_per_sm = 0, stages = 0, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>} {
  return
}

// -----

// expected-error @+1 {{tile sizes must be in [1, 1024], got block_m = 16, block_n = -32}}
func.func @config_block_n() attributes {attn.config = #attn.config<mapping = "host", chip = "", block_m = 16, block_n = -32, warps = 0, min_ctas_per_sm = 0, stages = 0, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>} {
  return
}

// -----

// Bounded as attn-configure bounds them (Limits.h): a hand-written
// configuration cannot make the tile passes run away (issue 14).
// expected-error @+1 {{tile sizes must be in [1, 1024], got block_m = 64, block_n = 1000000}}
func.func @config_block_n_huge() attributes {attn.config = #attn.config<mapping = "host", chip = "", block_m = 64, block_n = 1000000, warps = 0, min_ctas_per_sm = 0, stages = 0, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>} {
  return
}

// -----

// expected-error @+1 {{warps must be at most 32, got 64}}
func.func @config_warps_huge() attributes {attn.config = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 1024, block_n = 32, warps = 64, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>} {
  return
}

// -----

// expected-error @+1 {{warps must be 0 on the host and positive on a GPU, got 4 for mapping host}}
func.func @config_host_warps() attributes {attn.config = #attn.config<mapping = "host", chip = "", block_m = 16, block_n = 32, warps = 4, min_ctas_per_sm = 0, stages = 0, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>} {
  return
}

// -----

// expected-error @+1 {{warps must be 0 on the host and positive on a GPU, got 0 for mapping mma.sync}}
func.func @config_gpu_warps() attributes {attn.config = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 16, block_n = 32, warps = 0, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>} {
  return
}

// -----

// expected-error @+1 {{warps must be 0 on the host and positive on a GPU, got -4 for mapping wgmma}}
func.func @config_negative_warps() attributes {attn.config = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 16, block_n = 32, warps = -4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>} {
  return
}

// -----

// expected-error @+1 {{min_ctas_per_sm must be 0 on the host and positive on a GPU, got 1}}
func.func @config_host_min_ctas() attributes {attn.config = #attn.config<mapping = "host", chip = "", block_m = 16, block_n = 32, warps = 0, min_ctas_per_sm = 1, stages = 0, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>} {
  return
}

// -----

// expected-error @+1 {{min_ctas_per_sm must be 0 on the host and positive on a GPU, got 0}}
func.func @config_gpu_min_ctas() attributes {attn.config = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 16, block_n = 32, warps = 4, min_ctas_per_sm = 0, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>} {
  return
}

// -----

// expected-error @+1 {{schedule pv_in_flight needs mapping wgmma}}
func.func @config_schedule_mapping() attributes {attn.config = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 16, block_n = 32, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "pv_in_flight", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>} {
  return
}

// -----

// expected-error @+1 {{schedule softmax_overlaps_pv needs mapping wgmma}}
func.func @config_schedule_host() attributes {attn.config = #attn.config<mapping = "host", chip = "", block_m = 16, block_n = 32, warps = 0, min_ctas_per_sm = 0, stages = 0, q_in_registers = false, schedule = "softmax_overlaps_pv", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>} {
  return
}

// -----

func.func @sdpa_key_element_type(%q: memref<1x2x8x64xbf16>, %k: memref<1x2x8x64xf16>, %v: memref<1x2x8x64xbf16>, %o: memref<1x2x8x64xbf16>) {
  // expected-error @+1 {{'key' (1x2x8x64xf16) must have the element type of 'query' (1x2x8x64xbf16)}}
  attn.sdpa %q, %k, %v into %o : memref<1x2x8x64xbf16>, memref<1x2x8x64xf16>, memref<1x2x8x64xbf16> -> memref<1x2x8x64xbf16>
  return
}

// -----

func.func @sdpa_value_element_type(%q: memref<1x2x8x64xbf16>, %k: memref<1x2x8x64xbf16>, %v: memref<1x2x8x64xf32>, %o: memref<1x2x8x64xbf16>) {
  // expected-error @+1 {{'value' (1x2x8x64xf32) must have the element type of 'query' (1x2x8x64xbf16)}}
  attn.sdpa %q, %k, %v into %o : memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16>, memref<1x2x8x64xf32> -> memref<1x2x8x64xbf16>
  return
}

// -----

func.func @sdpa_output_element_type(%q: memref<1x2x8x64xbf16>, %k: memref<1x2x8x64xbf16>, %v: memref<1x2x8x64xbf16>, %o: memref<1x2x8x64xf16>) {
  // expected-error @+1 {{'output' (1x2x8x64xf16) must have the element type of 'query' (1x2x8x64xbf16)}}
  attn.sdpa %q, %k, %v into %o : memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16> -> memref<1x2x8x64xf16>
  return
}

// -----

// FP8: e4m3 inputs give a bf16 output and need their descale factors; the
// factors go with e4m3 only; the backward has no e4m3 form.
func.func @sdpa_e4m3_output(%q: memref<1x2x8x64xf8E4M3FN>, %o: memref<1x2x8x64xf16>, %d: f32) {
  // expected-error @+1 {{'output' must have bf16 elements with e4m3 inputs, got 'memref<1x2x8x64xf16>'}}
  attn.sdpa %q, %q, %q into %o descale(%d, %d, %d) : memref<1x2x8x64xf8E4M3FN>, memref<1x2x8x64xf8E4M3FN>, memref<1x2x8x64xf8E4M3FN> -> memref<1x2x8x64xf16>
  return
}

// -----

func.func @sdpa_e4m3_descale(%q: memref<1x2x8x64xf8E4M3FN>, %o: memref<1x2x8x64xbf16>) {
  // expected-error @+1 {{needs descale(%dq, %dk, %dv) with e4m3 inputs}}
  attn.sdpa %q, %q, %q into %o : memref<1x2x8x64xf8E4M3FN>, memref<1x2x8x64xf8E4M3FN>, memref<1x2x8x64xf8E4M3FN> -> memref<1x2x8x64xbf16>
  return
}

// -----

func.func @sdpa_bf16_descale(%q: memref<1x2x8x64xbf16>, %d: f32) {
  // expected-error @+1 {{takes descale factors only with e4m3 inputs}}
  attn.sdpa %q, %q, %q into %q descale(%d, %d, %d) : memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16> -> memref<1x2x8x64xbf16>
  return
}

// -----

func.func @sdpa_e4m3_mixed(%q: memref<1x2x8x64xf8E4M3FN>, %k: memref<1x2x8x64xbf16>, %o: memref<1x2x8x64xbf16>, %d: f32) {
  // expected-error @+1 {{'key' (1x2x8x64xbf16) must have the element type of 'query' (1x2x8x64xf8E4M3FN)}}
  attn.sdpa %q, %k, %q into %o descale(%d, %d, %d) : memref<1x2x8x64xf8E4M3FN>, memref<1x2x8x64xbf16>, memref<1x2x8x64xf8E4M3FN> -> memref<1x2x8x64xbf16>
  return
}

// -----

func.func @sdpa_query_dynamic_head_dim(%q: memref<1x2x8x?xbf16>, %k: memref<1x2x8x?xbf16>, %v: memref<1x2x8x64xbf16>, %o: memref<1x2x8x64xbf16>) {
  // expected-error @+1 {{'query' (1x2x8x?xbf16) must have a static head dim}}
  attn.sdpa %q, %k, %v into %o : memref<1x2x8x?xbf16>, memref<1x2x8x?xbf16>, memref<1x2x8x64xbf16> -> memref<1x2x8x64xbf16>
  return
}

// -----

func.func @sdpa_value_dynamic_head_dim(%q: memref<1x2x8x64xbf16>, %k: memref<1x2x8x64xbf16>, %v: memref<1x2x8x?xbf16>, %o: memref<1x2x8x64xbf16>) {
  // expected-error @+1 {{'value' (1x2x8x?xbf16) must have a static head dim}}
  attn.sdpa %q, %k, %v into %o : memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16>, memref<1x2x8x?xbf16> -> memref<1x2x8x64xbf16>
  return
}

// -----

func.func @sdpa_key_head_dim(%q: memref<1x2x8x64xbf16>, %k: memref<1x2x8x32xbf16>, %v: memref<1x2x8x64xbf16>, %o: memref<1x2x8x64xbf16>) {
  // expected-error @+1 {{'query' (1x2x8x64xbf16) has head dim 64 but 'key' (1x2x8x32xbf16) has 32}}
  attn.sdpa %q, %k, %v into %o : memref<1x2x8x64xbf16>, memref<1x2x8x32xbf16>, memref<1x2x8x64xbf16> -> memref<1x2x8x64xbf16>
  return
}

// -----

func.func @sdpa_output_head_dim(%q: memref<1x2x8x64xbf16>, %k: memref<1x2x8x64xbf16>, %v: memref<1x2x8x64xbf16>, %o: memref<1x2x8x32xbf16>) {
  // expected-error @+1 {{'value' (1x2x8x64xbf16) has head dim 64 but 'output' (1x2x8x32xbf16) has 32}}
  attn.sdpa %q, %k, %v into %o : memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16> -> memref<1x2x8x32xbf16>
  return
}

// -----

func.func @sdpa_kv_length(%q: memref<1x2x8x64xbf16>, %k: memref<1x2x16x64xbf16>, %v: memref<1x2x12x64xbf16>, %o: memref<1x2x8x64xbf16>) {
  // expected-error @+1 {{'key' (1x2x16x64xbf16) has sequence length 16 but 'value' (1x2x12x64xbf16) has 12}}
  attn.sdpa %q, %k, %v into %o : memref<1x2x8x64xbf16>, memref<1x2x16x64xbf16>, memref<1x2x12x64xbf16> -> memref<1x2x8x64xbf16>
  return
}

// -----

func.func @sdpa_output_length(%q: memref<1x2x8x64xbf16>, %k: memref<1x2x8x64xbf16>, %v: memref<1x2x8x64xbf16>, %o: memref<1x2x9x64xbf16>) {
  // expected-error @+1 {{'query' (1x2x8x64xbf16) has sequence length 8 but 'output' (1x2x9x64xbf16) has 9}}
  attn.sdpa %q, %k, %v into %o : memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16> -> memref<1x2x9x64xbf16>
  return
}

// -----

func.func @sdpa_output_heads(%q: memref<1x2x8x64xbf16>, %k: memref<1x2x8x64xbf16>, %v: memref<1x2x8x64xbf16>, %o: memref<1x4x8x64xbf16>) {
  // expected-error @+1 {{'query' (1x2x8x64xbf16) has head count 2 but 'output' (1x4x8x64xbf16) has 4}}
  attn.sdpa %q, %k, %v into %o : memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16> -> memref<1x4x8x64xbf16>
  return
}

// -----

func.func @sdpa_kv_heads(%q: memref<1x2x8x64xbf16>, %k: memref<1x2x8x64xbf16>, %v: memref<1x1x8x64xbf16>, %o: memref<1x2x8x64xbf16>) {
  // expected-error @+1 {{'key' (1x2x8x64xbf16) has head count 2 but 'value' (1x1x8x64xbf16) has 1}}
  attn.sdpa %q, %k, %v into %o : memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16>, memref<1x1x8x64xbf16> -> memref<1x2x8x64xbf16>
  return
}

// -----

func.func @sdpa_key_batch(%q: memref<1x2x8x64xbf16>, %k: memref<3x2x8x64xbf16>, %v: memref<3x2x8x64xbf16>, %o: memref<1x2x8x64xbf16>) {
  // expected-error @+1 {{'query' (1x2x8x64xbf16) has batch 1 but 'key' (3x2x8x64xbf16) has 3}}
  attn.sdpa %q, %k, %v into %o : memref<1x2x8x64xbf16>, memref<3x2x8x64xbf16>, memref<3x2x8x64xbf16> -> memref<1x2x8x64xbf16>
  return
}

// -----

func.func @sdpa_value_batch(%q: memref<1x2x8x64xbf16>, %k: memref<1x2x8x64xbf16>, %v: memref<2x2x8x64xbf16>, %o: memref<1x2x8x64xbf16>) {
  // expected-error @+1 {{'query' (1x2x8x64xbf16) has batch 1 but 'value' (2x2x8x64xbf16) has 2}}
  attn.sdpa %q, %k, %v into %o : memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16>, memref<2x2x8x64xbf16> -> memref<1x2x8x64xbf16>
  return
}

// -----

func.func @sdpa_output_batch(%q: memref<1x2x8x64xbf16>, %k: memref<1x2x8x64xbf16>, %v: memref<1x2x8x64xbf16>, %o: memref<2x2x8x64xbf16>) {
  // expected-error @+1 {{'query' (1x2x8x64xbf16) has batch 1 but 'output' (2x2x8x64xbf16) has 2}}
  attn.sdpa %q, %k, %v into %o : memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16> -> memref<2x2x8x64xbf16>
  return
}

// -----

func.func @sdpa_gqa_divisibility(%q: memref<1x8x8x64xbf16>, %k: memref<1x3x8x64xbf16>, %v: memref<1x3x8x64xbf16>, %o: memref<1x8x8x64xbf16>) {
  // expected-error @+1 {{'key' (1x3x8x64xbf16) has 3 heads, which must divide the 8 heads of 'query' (1x8x8x64xbf16)}}
  attn.sdpa %q, %k, %v into %o : memref<1x8x8x64xbf16>, memref<1x3x8x64xbf16>, memref<1x3x8x64xbf16> -> memref<1x8x8x64xbf16>
  return
}

// -----

func.func @sdpa_gqa_more_kv_heads(%q: memref<1x2x8x64xbf16>, %k: memref<1x4x8x64xbf16>, %v: memref<1x4x8x64xbf16>, %o: memref<1x2x8x64xbf16>) {
  // expected-error @+1 {{'key' (1x4x8x64xbf16) has 4 heads, which must divide the 2 heads of 'query' (1x2x8x64xbf16)}}
  attn.sdpa %q, %k, %v into %o : memref<1x2x8x64xbf16>, memref<1x4x8x64xbf16>, memref<1x4x8x64xbf16> -> memref<1x2x8x64xbf16>
  return
}

// -----

func.func @sdpa_gqa_zero_kv_heads(%q: memref<1x2x8x64xbf16>, %k: memref<1x0x8x64xbf16>, %v: memref<1x0x8x64xbf16>, %o: memref<1x2x8x64xbf16>) {
  // expected-error @+1 {{'key' (1x0x8x64xbf16) has 0 heads, which must divide the 2 heads of 'query' (1x2x8x64xbf16)}}
  attn.sdpa %q, %k, %v into %o : memref<1x2x8x64xbf16>, memref<1x0x8x64xbf16>, memref<1x0x8x64xbf16> -> memref<1x2x8x64xbf16>
  return
}

// -----

func.func @sdpa_lse_batch(%q: memref<1x2x8x64xbf16>, %k: memref<1x2x8x64xbf16>, %v: memref<1x2x8x64xbf16>, %o: memref<1x2x8x64xbf16>, %lse: memref<2x2x8xf32>) {
  // expected-error @+1 {{'query' (1x2x8x64xbf16) has batch 1 but 'lse' (2x2x8xf32) has 2}}
  attn.sdpa %q, %k, %v into %o lse %lse : memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16> -> memref<1x2x8x64xbf16>, memref<2x2x8xf32>
  return
}

// -----

func.func @sdpa_lse_heads(%q: memref<1x2x8x64xbf16>, %k: memref<1x2x8x64xbf16>, %v: memref<1x2x8x64xbf16>, %o: memref<1x2x8x64xbf16>, %lse: memref<1x4x8xf32>) {
  // expected-error @+1 {{'query' (1x2x8x64xbf16) has head count 2 but 'lse' (1x4x8xf32) has 4}}
  attn.sdpa %q, %k, %v into %o lse %lse : memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16> -> memref<1x2x8x64xbf16>, memref<1x4x8xf32>
  return
}

// -----

func.func @sdpa_lse_length(%q: memref<1x2x8x64xbf16>, %k: memref<1x2x8x64xbf16>, %v: memref<1x2x8x64xbf16>, %o: memref<1x2x8x64xbf16>, %lse: memref<1x2x7xf32>) {
  // expected-error @+1 {{'query' (1x2x8x64xbf16) has sequence length 8 but 'lse' (1x2x7xf32) has 7}}
  attn.sdpa %q, %k, %v into %o lse %lse : memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16> -> memref<1x2x8x64xbf16>, memref<1x2x7xf32>
  return
}

// -----

func.func @sdpa_query_inner_stride(%q: memref<1x2x8x64xbf16, strided<[1024, 512, 64, 2]>>, %k: memref<1x2x8x64xbf16>, %v: memref<1x2x8x64xbf16>, %o: memref<1x2x8x64xbf16>) {
  // expected-error @+1 {{'query' (1x2x8x64xbf16, layout strided<[1024, 512, 64, 2]>) must have a unit innermost stride}}
  attn.sdpa %q, %k, %v into %o : memref<1x2x8x64xbf16, strided<[1024, 512, 64, 2]>>, memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16> -> memref<1x2x8x64xbf16>
  return
}

// -----

func.func @sdpa_key_inner_stride(%q: memref<1x2x8x64xbf16>, %k: memref<1x2x8x64xbf16, strided<[1024, 512, 64, 2]>>, %v: memref<1x2x8x64xbf16>, %o: memref<1x2x8x64xbf16>) {
  // expected-error @+1 {{'key' (1x2x8x64xbf16, layout strided<[1024, 512, 64, 2]>) must have a unit innermost stride}}
  attn.sdpa %q, %k, %v into %o : memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16, strided<[1024, 512, 64, 2]>>, memref<1x2x8x64xbf16> -> memref<1x2x8x64xbf16>
  return
}

// -----

func.func @sdpa_value_inner_stride(%q: memref<1x2x8x64xbf16>, %k: memref<1x2x8x64xbf16>, %v: memref<1x2x8x64xbf16, strided<[1024, 512, 64, 2]>>, %o: memref<1x2x8x64xbf16>) {
  // expected-error @+1 {{'value' (1x2x8x64xbf16, layout strided<[1024, 512, 64, 2]>) must have a unit innermost stride}}
  attn.sdpa %q, %k, %v into %o : memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16, strided<[1024, 512, 64, 2]>> -> memref<1x2x8x64xbf16>
  return
}

// -----

func.func @sdpa_output_inner_stride(%q: memref<1x2x8x64xbf16>, %k: memref<1x2x8x64xbf16>, %v: memref<1x2x8x64xbf16>, %o: memref<1x2x8x64xbf16, strided<[1024, 512, 64, 2]>>) {
  // expected-error @+1 {{'output' (1x2x8x64xbf16, layout strided<[1024, 512, 64, 2]>) must have a unit innermost stride}}
  attn.sdpa %q, %k, %v into %o : memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16> -> memref<1x2x8x64xbf16, strided<[1024, 512, 64, 2]>>
  return
}

// -----

func.func @sdpa_not_strided(%q: memref<1x2x8x64xbf16, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 floordiv 2, d3)>>, %k: memref<1x2x8x64xbf16>, %v: memref<1x2x8x64xbf16>, %o: memref<1x2x8x64xbf16>) {
  // expected-error @+1 {{'query' (1x2x8x64xbf16, layout affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 floordiv 2, d3)>) must have a unit innermost stride}}
  attn.sdpa %q, %k, %v into %o : memref<1x2x8x64xbf16, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 floordiv 2, d3)>>, memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16> -> memref<1x2x8x64xbf16>
  return
}

// -----

func.func @sdpa_rank(%q: memref<2x8x64xbf16>, %k: memref<1x2x8x64xbf16>, %v: memref<1x2x8x64xbf16>, %o: memref<1x2x8x64xbf16>) {
  // expected-error @+1 {{operand #0 must be 4D memref of bfloat16 type or 16-bit float or 32-bit float or f8E4M3FN type values}}
  attn.sdpa %q, %k, %v into %o : memref<2x8x64xbf16>, memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16> -> memref<1x2x8x64xbf16>
  return
}

// -----

func.func @sdpa_lse_type(%q: memref<1x2x8x64xbf16>, %k: memref<1x2x8x64xbf16>, %v: memref<1x2x8x64xbf16>, %o: memref<1x2x8x64xbf16>, %lse: memref<1x2x8xbf16>) {
  // expected-error @+1 {{operand #4 must be 3D memref of 32-bit float values}}
  attn.sdpa %q, %k, %v into %o lse %lse : memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16> -> memref<1x2x8x64xbf16>, memref<1x2x8xbf16>
  return
}

// -----

// A variable-length batch needs both offsets and the query-length bound.
func.func @sdpa_varlen_partial(%q: memref<1x2x8x64xbf16>, %cu: memref<3xi32>) {
  // expected-error @+1 {{'attn.sdpa' op needs cu_seqlens_q, cu_seqlens_k and max_seqlen_q together (a variable-length batch) or none of them}}
  "attn.sdpa"(%q, %q, %q, %q, %cu) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0>}> ({}, {}) : (memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16>, memref<3xi32>) -> ()
  return
}

// -----

// A paged K/V cache needs the block table and the key counts together.
func.func @sdpa_paged_partial(%q: memref<2x2x8x64xbf16>, %kv: memref<9x2x16x64xbf16>, %bt: memref<2x4xi32>) {
  // expected-error @+1 {{'attn.sdpa' op needs block_table and seqused_k together (a paged K/V cache) or neither}}
  "attn.sdpa"(%q, %kv, %kv, %q, %bt) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0>}> ({}, {}) : (memref<2x2x8x64xbf16>, memref<9x2x16x64xbf16>, memref<9x2x16x64xbf16>, memref<2x2x8x64xbf16>, memref<2x4xi32>) -> ()
  return
}

// -----

func.func @sdpa_paged_page_size(%q: memref<2x2x8x64xbf16>, %kv: memref<9x2x24x64xbf16>, %bt: memref<2x4xi32>, %n: memref<2xi32>) {
  // expected-error @+1 {{'key' (9x2x24x64xbf16) must have a static page size (dim 2) that is a multiple of 16 in [16, 256] with a paged K/V cache}}
  attn.sdpa %q, %kv, %kv into %q paged(%bt, %n : memref<2x4xi32>, memref<2xi32>) : memref<2x2x8x64xbf16>, memref<9x2x24x64xbf16>, memref<9x2x24x64xbf16> -> memref<2x2x8x64xbf16>
  return
}

// -----

func.func @sdpa_paged_dynamic_page_size(%q: memref<2x2x8x64xbf16>, %kv: memref<9x2x?x64xbf16>, %bt: memref<2x4xi32>, %n: memref<2xi32>) {
  // expected-error @+1 {{'key' (9x2x?x64xbf16) must have a static page size (dim 2)}}
  attn.sdpa %q, %kv, %kv into %q paged(%bt, %n : memref<2x4xi32>, memref<2xi32>) : memref<2x2x8x64xbf16>, memref<9x2x?x64xbf16>, memref<9x2x?x64xbf16> -> memref<2x2x8x64xbf16>
  return
}

// -----

func.func @sdpa_paged_counts(%q: memref<2x2x8x64xbf16>, %kv: memref<9x2x16x64xbf16>, %bt: memref<2x4xi32>, %n: memref<3xi32>) {
  // expected-error @+1 {{'block_table' has 2 rows and 'seqused_k' 3 key counts: both must be one per sequence}}
  attn.sdpa %q, %kv, %kv into %q paged(%bt, %n : memref<2x4xi32>, memref<3xi32>) : memref<2x2x8x64xbf16>, memref<9x2x16x64xbf16>, memref<9x2x16x64xbf16> -> memref<2x2x8x64xbf16>
  return
}

// -----

func.func @sdpa_paged_sequences(%q: memref<3x2x8x64xbf16>, %kv: memref<9x2x16x64xbf16>, %bt: memref<2x4xi32>, %n: memref<2xi32>) {
  // expected-error @+1 {{'block_table' has 2 rows for 3 sequences of queries: one row per sequence}}
  attn.sdpa %q, %kv, %kv into %q paged(%bt, %n : memref<2x4xi32>, memref<2xi32>) : memref<3x2x8x64xbf16>, memref<9x2x16x64xbf16>, memref<9x2x16x64xbf16> -> memref<3x2x8x64xbf16>
  return
}

// -----

func.func @sdpa_paged_varlen_sequences(%q: memref<1x2x8x64xbf16>, %kv: memref<9x2x16x64xbf16>, %cq: memref<4xi32>, %m: index, %bt: memref<2x4xi32>, %n: memref<2xi32>) {
  // expected-error @+1 {{'block_table' has 2 rows for 3 sequences of queries: one row per sequence}}
  attn.sdpa %q, %kv, %kv into %q varlen(%cq, %m : memref<4xi32>) paged(%bt, %n : memref<2x4xi32>, memref<2xi32>) : memref<1x2x8x64xbf16>, memref<9x2x16x64xbf16>, memref<9x2x16x64xbf16> -> memref<1x2x8x64xbf16>
  return
}

// -----

func.func @sdpa_paged_cu_seqlens_k(%q: memref<1x2x8x64xbf16>, %kv: memref<9x2x16x64xbf16>, %cq: memref<3xi32>, %m: index, %bt: memref<2x4xi32>, %n: memref<2xi32>) {
  // expected-error @+1 {{'attn.sdpa' op takes no cu_seqlens_k with a paged K/V cache: seqused_k gives the key counts}}
  attn.sdpa %q, %kv, %kv into %q varlen(%cq, %cq, %m : memref<3xi32>, memref<3xi32>) paged(%bt, %n : memref<2x4xi32>, memref<2xi32>) : memref<1x2x8x64xbf16>, memref<9x2x16x64xbf16>, memref<9x2x16x64xbf16> -> memref<1x2x8x64xbf16>
  return
}

// -----

func.func @sdpa_paged_varlen_partial(%q: memref<1x2x8x64xbf16>, %kv: memref<9x2x16x64xbf16>, %cq: memref<3xi32>, %bt: memref<2x4xi32>, %n: memref<2xi32>) {
  // expected-error @+1 {{'attn.sdpa' op needs cu_seqlens_q and max_seqlen_q together}}
  "attn.sdpa"(%q, %kv, %kv, %q, %cq, %bt, %n) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0, 0>}> ({}, {}) : (memref<1x2x8x64xbf16>, memref<9x2x16x64xbf16>, memref<9x2x16x64xbf16>, memref<1x2x8x64xbf16>, memref<3xi32>, memref<2x4xi32>, memref<2xi32>) -> ()
  return
}

// -----

func.func @sdpa_paged_table_type(%q: memref<2x2x8x64xbf16>, %kv: memref<9x2x16x64xbf16>, %bt: memref<2x4xi64>, %n: memref<2xi32>) {
  // expected-error @+1 {{must be 2D memref of 32-bit signless integer values}}
  attn.sdpa %q, %kv, %kv into %q paged(%bt, %n : memref<2x4xi64>, memref<2xi32>) : memref<2x2x8x64xbf16>, memref<9x2x16x64xbf16>, memref<9x2x16x64xbf16> -> memref<2x2x8x64xbf16>
  return
}

// -----

func.func @load_tile_paged_page_size(%kv: memref<9x2x8x64xbf16>, %bt: memref<2x4xi32>, %i: index) {
  // expected-error @+1 {{'source' (9x2x8x64xbf16) must have a static page size (dim 2) that is a multiple of 16 in [16, 256] with pages}}
  %t = attn.load_tile %kv[%i, %i, %i] pages(%bt : memref<2x4xi32>) bounds %i : memref<9x2x8x64xbf16> -> tensor<32x64xbf16>
  return
}

// -----

func.func @load_tile_paged_packed(%kv: memref<9x2x16x64xbf16>, %bt: memref<2x4xi32>, %i: index) {
  // expected-error @+1 {{cannot pack heads (rows_per_head) of a paged source}}
  %t = attn.load_tile %kv[%i, %i, %i] rows_per_head %i pages(%bt : memref<2x4xi32>) bounds %i : memref<9x2x16x64xbf16> -> tensor<32x64xbf16>
  return
}

// -----

func.func @load_tile_paged_rows(%lse: memref<9x2x16xf32>, %bt: memref<2x4xi32>, %i: index) {
  // expected-error @+1 {{gathers rows of a paged (num_pages, H, page_size, D) source with pages, got 9x2x16xf32}}
  %t = attn.load_tile %lse[%i, %i, %i] pages(%bt : memref<2x4xi32>) bounds %i : memref<9x2x16xf32> -> tensor<32xf32>
  return
}

// -----

func.func @sdpa_varlen_batch(%q: memref<2x2x8x64xbf16>, %cu: memref<3xi32>, %n: index) {
  // expected-error @+1 {{'query' (2x2x8x64xbf16) must have batch 1 with cu_seqlens: the sequences of a variable-length batch are packed along its rows}}
  attn.sdpa %q, %q, %q into %q varlen(%cu, %cu, %n : memref<3xi32>, memref<3xi32>) : memref<2x2x8x64xbf16>, memref<2x2x8x64xbf16>, memref<2x2x8x64xbf16> -> memref<2x2x8x64xbf16>
  return
}

// -----

func.func @sdpa_varlen_no_offsets(%q: memref<1x2x8x64xbf16>, %cq: memref<3xi32>, %ck: memref<0xi32>, %n: index) {
  // expected-error @+1 {{'cu_seqlens_k' holds no offset: B + 1 offsets are needed}}
  attn.sdpa %q, %q, %q into %q varlen(%cq, %ck, %n : memref<3xi32>, memref<0xi32>) : memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16> -> memref<1x2x8x64xbf16>
  return
}

// -----

func.func @sdpa_varlen_offset_counts(%q: memref<1x2x8x64xbf16>, %cq: memref<3xi32>, %ck: memref<4xi32>, %n: index) {
  // expected-error @+1 {{'cu_seqlens_q' has 3 offsets and 'cu_seqlens_k' 4: both must hold B + 1}}
  attn.sdpa %q, %q, %q into %q varlen(%cq, %ck, %n : memref<3xi32>, memref<4xi32>) : memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16> -> memref<1x2x8x64xbf16>
  return
}

// -----

func.func @sdpa_varlen_offset_type(%q: memref<1x2x8x64xbf16>, %cq: memref<3xi64>, %n: index) {
  // expected-error @+1 {{operand #4 must be 1D memref of 32-bit signless integer values}}
  attn.sdpa %q, %q, %q into %q varlen(%cq, %cq, %n : memref<3xi64>, memref<3xi64>) : memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16> -> memref<1x2x8x64xbf16>
  return
}

// -----

func.func @grid_argument_count(%n: index) {
  // expected-error @+1 {{'attn.tile_grid' op body must take three index arguments (batch, head, query tile), got ('index', 'index')}}
  "attn.tile_grid"(%n, %n, %n) ({
  ^bb0(%a: index, %b: index):
  }) : (index, index, index) -> ()
  return
}

// -----

func.func @grid_argument_type(%n: index) {
  // expected-error @+1 {{'attn.tile_grid' op body must take three index arguments (batch, head, query tile), got ('index', 'index', 'i32')}}
  "attn.tile_grid"(%n, %n, %n) ({
  ^bb0(%a: index, %b: index, %c: i32):
  }) : (index, index, index) -> ()
  return
}

// -----

func.func @grid_parse_coordinates(%n: index) {
  // expected-error @+1 {{expected three coordinates (batch, head, tile)}}
  attn.tile_grid (%a, %b) in (%n, %n) {
  }
  return
}

// -----

func.func @grid_parse_bounds(%n: index) {
  // expected-error @+1 {{expected three coordinates (batch, head, tile)}}
  attn.tile_grid (%a, %b, %c) in (%n, %n, %n, %n) {
  }
  return
}

// -----

func.func @load_dynamic_tile(%src: memref<1x2x8x64xbf16>, %i: index) {
  // expected-error @+1 {{tile 'result' (?x64xbf16) must have a static shape}}
  %t = attn.load_tile %src[%i, %i, %i] bounds %i : memref<1x2x8x64xbf16> -> tensor<?x64xbf16>
  return
}

// -----

func.func @load_element_type(%src: memref<1x2x8x64xbf16>, %i: index) {
  // expected-error @+1 {{'result' (16x64xf16) must have the element type of 'source' (1x2x8x64xbf16)}}
  %t = attn.load_tile %src[%i, %i, %i] bounds %i : memref<1x2x8x64xbf16> -> tensor<16x64xf16>
  return
}

// -----

func.func @load_source_dynamic_head_dim(%src: memref<1x2x8x?xbf16>, %i: index) {
  // expected-error @+1 {{'source' (1x2x8x?xbf16) must have a static head dim}}
  %t = attn.load_tile %src[%i, %i, %i] bounds %i : memref<1x2x8x?xbf16> -> tensor<16x64xbf16>
  return
}

// -----

func.func @load_start_unpacked(%src: memref<1x2x8x64xbf16>, %i: index) {
  // expected-error @+1 {{has a 'start' without 'rows_per_head' (start offsets the rows of packed heads)}}
  %t = attn.load_tile %src[%i, %i, %i] start %i bounds %i : memref<1x2x8x64xbf16> -> tensor<16x64xbf16>
  return
}

// -----

func.func @store_start_unpacked(%t: tensor<16xf32>, %dst: memref<1x2x8xf32>, %i: index) {
  // expected-error @+1 {{has a 'start' without 'rows_per_head' (start offsets the rows of packed heads)}}
  attn.store_tile %t, %dst[%i, %i, %i] start %i bounds %i : tensor<16xf32>, memref<1x2x8xf32>
  return
}

// -----

func.func @load_head_dim(%src: memref<1x2x8x64xbf16>, %i: index) {
  // expected-error @+1 {{'source' (1x2x8x64xbf16) has head dim 64 but 'result' (16x32xbf16) has 32}}
  %t = attn.load_tile %src[%i, %i, %i] rows_per_head %i bounds %i : memref<1x2x8x64xbf16> -> tensor<16x32xbf16>
  return
}

// -----

func.func @load_inner_stride(%src: memref<1x2x8x64xbf16, strided<[2048, 1024, 128, 2]>>, %i: index) {
  // expected-error @+1 {{'source' (1x2x8x64xbf16, layout strided<[2048, 1024, 128, 2]>) must have a unit innermost stride}}
  %t = attn.load_tile %src[%i, %i, %i] bounds %i : memref<1x2x8x64xbf16, strided<[2048, 1024, 128, 2]>> -> tensor<16x64xbf16>
  return
}

// -----

func.func @load_result_rank(%src: memref<1x2x8x64xbf16>, %i: index) {
  // expected-error @+1 {{'result' (16xbf16) must have rank 2 for a rank-4 source (1x2x8x64xbf16)}}
  %t = attn.load_tile %src[%i, %i, %i] bounds %i : memref<1x2x8x64xbf16> -> tensor<16xbf16>
  return
}

// -----

func.func @load_huge_tile(%src: memref<1x2x8x64xbf16>, %i: index) {
  // expected-error @+1 {{tile 'result' (1000000x64xbf16) has a side larger than 1024}}
  %t = attn.load_tile %src[%i, %i, %i] bounds %i : memref<1x2x8x64xbf16> -> tensor<1000000x64xbf16>
  return
}

// -----

func.func @store_dynamic_tile(%t: tensor<?x64xbf16>, %dst: memref<1x2x8x64xbf16>, %i: index) {
  // expected-error @+1 {{tile 'tile' (?x64xbf16) must have a static shape}}
  attn.store_tile %t, %dst[%i, %i, %i] bounds %i : tensor<?x64xbf16>, memref<1x2x8x64xbf16>
  return
}

// -----

func.func @store_row_tile_rank(%t: tensor<16xf32>, %dst: memref<1x2x8x64xf32>, %i: index) {
  // expected-error @+1 {{'dest' (1x2x8x64xf32) must have rank 3 for a tile of rank 1 (16xf32)}}
  attn.store_tile %t, %dst[%i, %i, %i] bounds %i : tensor<16xf32>, memref<1x2x8x64xf32>
  return
}

// -----

// attn.store_tile accumulate: an f32 tile (atomic f32 adds) ...
func.func @store_accumulate_bf16(%t: tensor<16x64xbf16>, %dst: memref<1x2x8x64xbf16>, %i: index) {
  // expected-error @+1 {{with 'accumulate' needs an f32 tile of rank 2, got 'tensor<16x64xbf16>'}}
  attn.store_tile %t, %dst[%i, %i, %i] accumulate bounds %i : tensor<16x64xbf16>, memref<1x2x8x64xbf16>
  return
}

// -----

// ... of rank 2 ...
func.func @store_accumulate_row_tile(%t: tensor<16xf32>, %dst: memref<1x2x8xf32>, %i: index) {
  // expected-error @+1 {{with 'accumulate' needs an f32 tile of rank 2, got 'tensor<16xf32>'}}
  attn.store_tile %t, %dst[%i, %i, %i] accumulate bounds %i : tensor<16xf32>, memref<1x2x8xf32>
  return
}

// -----

// ... into unpacked rows.
func.func @store_accumulate_packed(%t: tensor<16x64xf32>, %dst: memref<1x2x8x64xf32>, %i: index) {
  // expected-error @+1 {{with 'accumulate' takes no 'rows_per_head' or 'start'}}
  attn.store_tile %t, %dst[%i, %i, %i] rows_per_head %i accumulate bounds %i : tensor<16x64xf32>, memref<1x2x8x64xf32>
  return
}

// -----

func.func @store_tile_rank(%t: tensor<16x64xf32>, %dst: memref<1x2x8xf32>, %i: index) {
  // expected-error @+1 {{'dest' (1x2x8xf32) must have rank 4 for a tile of rank 2 (16x64xf32)}}
  attn.store_tile %t, %dst[%i, %i, %i] rows_per_head %i bounds %i : tensor<16x64xf32>, memref<1x2x8xf32>
  return
}

// -----

func.func @store_element_type(%t: tensor<16x64xf16>, %dst: memref<1x2x8x64xbf16>, %i: index) {
  // expected-error @+1 {{'tile' (16x64xf16) must have the element type of 'dest' (1x2x8x64xbf16)}}
  attn.store_tile %t, %dst[%i, %i, %i] bounds %i : tensor<16x64xf16>, memref<1x2x8x64xbf16>
  return
}

// -----

func.func @store_row_tile_element_type(%t: tensor<16xbf16>, %dst: memref<1x2x8xf32>, %i: index) {
  // expected-error @+1 {{'tile' (16xbf16) must have the element type of 'dest' (1x2x8xf32)}}
  attn.store_tile %t, %dst[%i, %i, %i] bounds %i : tensor<16xbf16>, memref<1x2x8xf32>
  return
}

// -----

func.func @store_head_dim(%t: tensor<16x32xbf16>, %dst: memref<1x2x8x64xbf16>, %i: index) {
  // expected-error @+1 {{'dest' (1x2x8x64xbf16) has head dim 64 but 'tile' (16x32xbf16) has 32}}
  attn.store_tile %t, %dst[%i, %i, %i] bounds %i : tensor<16x32xbf16>, memref<1x2x8x64xbf16>
  return
}

// -----

func.func @store_inner_stride(%t: tensor<16x64xbf16>, %dst: memref<1x2x8x64xbf16, strided<[2048, 1024, 128, 2]>>, %i: index) {
  // expected-error @+1 {{'dest' (1x2x8x64xbf16, layout strided<[2048, 1024, 128, 2]>) must have a unit innermost stride}}
  attn.store_tile %t, %dst[%i, %i, %i] bounds %i : tensor<16x64xbf16>, memref<1x2x8x64xbf16, strided<[2048, 1024, 128, 2]>>
  return
}

// -----

func.func @online_attention_query_static(%q: tensor<?x64xbf16>, %k: tensor<32x64xbf16>, %v: tensor<32x64xbf16>, %m: tensor<16xf32>, %a: tensor<16x64xf32>, %i: index, %s: f32) {
  // expected-error @+1 {{tile 'query' (?x64xbf16) must have a static shape}}
  %r:3 = attn.online_attention %q, %k, %v, %m, %m, %a at [%i, %i] bounds [%i, %i] scale %s : tensor<?x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<16xf32>, tensor<16x64xf32>
  return
}

// -----

func.func @online_attention_key_static(%q: tensor<16x64xbf16>, %k: tensor<32x?xbf16>, %v: tensor<32x64xbf16>, %m: tensor<16xf32>, %a: tensor<16x64xf32>, %i: index, %s: f32) {
  // expected-error @+1 {{tile 'key' (32x?xbf16) must have a static shape}}
  %r:3 = attn.online_attention %q, %k, %v, %m, %m, %a at [%i, %i] bounds [%i, %i] scale %s : tensor<16x64xbf16>, tensor<32x?xbf16>, tensor<32x64xbf16>, tensor<16xf32>, tensor<16x64xf32>
  return
}

// -----

func.func @online_attention_value_static(%q: tensor<16x64xbf16>, %k: tensor<32x64xbf16>, %v: tensor<?x64xbf16>, %m: tensor<16xf32>, %a: tensor<16x64xf32>, %i: index, %s: f32) {
  // expected-error @+1 {{tile 'value' (?x64xbf16) must have a static shape}}
  %r:3 = attn.online_attention %q, %k, %v, %m, %m, %a at [%i, %i] bounds [%i, %i] scale %s : tensor<16x64xbf16>, tensor<32x64xbf16>, tensor<?x64xbf16>, tensor<16xf32>, tensor<16x64xf32>
  return
}

// -----

func.func @online_attention_max_static(%q: tensor<16x64xbf16>, %k: tensor<32x64xbf16>, %v: tensor<32x64xbf16>, %m: tensor<?xf32>, %a: tensor<16x64xf32>, %i: index, %s: f32) {
  // expected-error @+1 {{tile 'max' (?xf32) must have a static shape}}
  %r:3 = attn.online_attention %q, %k, %v, %m, %m, %a at [%i, %i] bounds [%i, %i] scale %s : tensor<16x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<?xf32>, tensor<16x64xf32>
  return
}

// -----

func.func @online_attention_acc_static(%q: tensor<16x64xbf16>, %k: tensor<32x64xbf16>, %v: tensor<32x64xbf16>, %m: tensor<16xf32>, %a: tensor<16x?xf32>, %i: index, %s: f32) {
  // expected-error @+1 {{tile 'acc' (16x?xf32) must have a static shape}}
  %r:3 = attn.online_attention %q, %k, %v, %m, %m, %a at [%i, %i] bounds [%i, %i] scale %s : tensor<16x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<16xf32>, tensor<16x?xf32>
  return
}

// -----

func.func @online_attention_key_element_type(%q: tensor<16x64xbf16>, %k: tensor<32x64xf16>, %v: tensor<32x64xf16>, %m: tensor<16xf32>, %a: tensor<16x64xf32>, %i: index, %s: f32) {
  // expected-error @+1 {{'key' (32x64xf16) must have the element type of 'query' (16x64xbf16)}}
  %r:3 = attn.online_attention %q, %k, %v, %m, %m, %a at [%i, %i] bounds [%i, %i] scale %s : tensor<16x64xbf16>, tensor<32x64xf16>, tensor<32x64xf16>, tensor<16xf32>, tensor<16x64xf32>
  return
}

// -----

func.func @online_attention_value_element_type(%q: tensor<16x64xbf16>, %k: tensor<32x64xbf16>, %v: tensor<32x64xf16>, %m: tensor<16xf32>, %a: tensor<16x64xf32>, %i: index, %s: f32) {
  // expected-error @+1 {{'value' (32x64xf16) must have the element type of 'key' (32x64xbf16)}}
  %r:3 = attn.online_attention %q, %k, %v, %m, %m, %a at [%i, %i] rows_per_head %i bounds [%i, %i] scale %s : tensor<16x64xbf16>, tensor<32x64xbf16>, tensor<32x64xf16>, tensor<16xf32>, tensor<16x64xf32>
  return
}

// -----

func.func @online_attention_head_dim(%q: tensor<16x64xbf16>, %k: tensor<32x32xbf16>, %v: tensor<32x32xbf16>, %m: tensor<16xf32>, %a: tensor<16x32xf32>, %i: index, %s: f32) {
  // expected-error @+1 {{'query' (16x64xbf16) has head dim 64 but 'key' (32x32xbf16) has 32}}
  %r:3 = attn.online_attention %q, %k, %v, %m, %m, %a at [%i, %i] bounds [%i, %i] scale %s : tensor<16x64xbf16>, tensor<32x32xbf16>, tensor<32x32xbf16>, tensor<16xf32>, tensor<16x32xf32>
  return
}

// -----

func.func @online_attention_kv_rows(%q: tensor<16x64xbf16>, %k: tensor<32x64xbf16>, %v: tensor<16x64xbf16>, %m: tensor<16xf32>, %a: tensor<16x64xf32>, %i: index, %s: f32) {
  // expected-error @+1 {{'key' (32x64xbf16) has row count 32 but 'value' (16x64xbf16) has 16}}
  %r:3 = attn.online_attention %q, %k, %v, %m, %m, %a at [%i, %i] bounds [%i, %i] scale %s : tensor<16x64xbf16>, tensor<32x64xbf16>, tensor<16x64xbf16>, tensor<16xf32>, tensor<16x64xf32>
  return
}

// -----

func.func @online_attention_query_rows(%q: tensor<16x64xbf16>, %k: tensor<32x64xbf16>, %v: tensor<32x64xbf16>, %m: tensor<8xf32>, %a: tensor<8x64xf32>, %i: index, %s: f32) {
  // expected-error @+1 {{'query' (16x64xbf16) has row count 16 but 'max' (8xf32) has 8}}
  %r:3 = attn.online_attention %q, %k, %v, %m, %m, %a at [%i, %i] bounds [%i, %i] scale %s : tensor<16x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<8xf32>, tensor<8x64xf32>
  return
}

// -----

func.func @online_attention_acc_rows(%q: tensor<16x64xbf16>, %k: tensor<32x64xbf16>, %v: tensor<32x64xbf16>, %m: tensor<16xf32>, %a: tensor<8x64xf32>, %i: index, %s: f32) {
  // expected-error @+1 {{'max' (16xf32) has row count 16 but 'acc' (8x64xf32) has 8}}
  %r:3 = attn.online_attention %q, %k, %v, %m, %m, %a at [%i, %i] bounds [%i, %i] scale %s : tensor<16x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<16xf32>, tensor<8x64xf32>
  return
}

// -----

func.func @online_attention_acc_head_dim(%q: tensor<16x64xbf16>, %k: tensor<32x64xbf16>, %v: tensor<32x64xbf16>, %m: tensor<16xf32>, %a: tensor<16x32xf32>, %i: index, %s: f32) {
  // expected-error @+1 {{'value' (32x64xbf16) has head dim 64 but 'acc' (16x32xf32) has 32}}
  %r:3 = attn.online_attention %q, %k, %v, %m, %m, %a at [%i, %i] bounds [%i, %i] scale %s : tensor<16x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<16xf32>, tensor<16x32xf32>
  return
}

// -----

func.func @online_attention_acc_type(%q: tensor<16x64xbf16>, %k: tensor<32x64xbf16>, %v: tensor<32x64xbf16>, %m: tensor<16xf32>, %a: tensor<16x64xbf16>, %i: index, %s: f32) {
  // expected-error @+1 {{operand #5 must be 2D tensor of 32-bit float values}}
  %r:3 = attn.online_attention %q, %k, %v, %m, %m, %a at [%i, %i] bounds [%i, %i] scale %s : tensor<16x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<16xf32>, tensor<16x64xbf16>
  return
}

// -----

func.func @finalize_max_static(%a: tensor<16x64xf32>, %m: tensor<?xf32>) {
  // expected-error @+1 {{tile 'max' (?xf32) must have a static shape}}
  %o, %l = attn.finalize %a, %m, %m : tensor<16x64xf32>, tensor<?xf32> -> tensor<16x64xbf16>
  return
}

// -----

func.func @finalize_acc_static(%a: tensor<16x?xf32>, %m: tensor<16xf32>) {
  // expected-error @+1 {{tile 'acc' (16x?xf32) must have a static shape}}
  %o, %l = attn.finalize %a, %m, %m : tensor<16x?xf32>, tensor<16xf32> -> tensor<16x64xbf16>
  return
}

// -----

func.func @finalize_rows(%a: tensor<16x64xf32>, %m: tensor<8xf32>) {
  // expected-error @+1 {{'max' (8xf32) has row count 8 but 'acc' (16x64xf32) has 16}}
  %o, %l = attn.finalize %a, %m, %m : tensor<16x64xf32>, tensor<8xf32> -> tensor<16x64xbf16>
  return
}

// -----

func.func @finalize_output_shape(%a: tensor<16x64xf32>, %m: tensor<16xf32>) {
  // expected-error @+1 {{'output' (16x32xbf16) must have the shape of 'acc' (16x64xf32)}}
  %o, %l = attn.finalize %a, %m, %m : tensor<16x64xf32>, tensor<16xf32> -> tensor<16x32xbf16>
  return
}

// -----

func.func @finalize_output_dynamic(%a: tensor<16x64xf32>, %m: tensor<16xf32>) {
  // expected-error @+1 {{'output' (16x?xbf16) must have the shape of 'acc' (16x64xf32)}}
  %o, %l = attn.finalize %a, %m, %m : tensor<16x64xf32>, tensor<16xf32> -> tensor<16x?xbf16>
  return
}

// -----

func.func @matmul_lhs_static(%l: tensor<?x128xbf16>, %r: tensor<128x32xbf16>, %a: tensor<64x32xf32>) {
  // expected-error @+1 {{tile 'lhs' (?x128xbf16) must have a static shape}}
  %0 = attn.matmul %l, %r, %a : tensor<?x128xbf16>, tensor<128x32xbf16>, tensor<64x32xf32>
  return
}

// -----

func.func @matmul_rhs_static(%l: tensor<64x128xbf16>, %r: tensor<128x?xbf16>, %a: tensor<64x32xf32>) {
  // expected-error @+1 {{tile 'rhs' (128x?xbf16) must have a static shape}}
  %0 = attn.matmul %l, %r, %a : tensor<64x128xbf16>, tensor<128x?xbf16>, tensor<64x32xf32>
  return
}

// -----

func.func @matmul_acc_static(%l: tensor<64x128xbf16>, %r: tensor<128x32xbf16>, %a: tensor<64x?xf32>) {
  // expected-error @+1 {{tile 'acc' (64x?xf32) must have a static shape}}
  %0 = attn.matmul %l, %r, %a : tensor<64x128xbf16>, tensor<128x32xbf16>, tensor<64x?xf32>
  return
}

// -----

func.func @matmul_element_type(%l: tensor<64x128xbf16>, %r: tensor<128x32xf16>, %a: tensor<64x32xf32>) {
  // expected-error @+1 {{'rhs' (128x32xf16) must have the element type of 'lhs' (64x128xbf16)}}
  %0 = attn.matmul %l, %r, %a : tensor<64x128xbf16>, tensor<128x32xf16>, tensor<64x32xf32>
  return
}

// -----

func.func @matmul_acc_type(%l: tensor<64x128xbf16>, %r: tensor<128x32xbf16>, %a: tensor<64x32xbf16>) {
  // expected-error @+1 {{operand #2 must be 2D tensor of 32-bit float values}}
  %0 = attn.matmul %l, %r, %a : tensor<64x128xbf16>, tensor<128x32xbf16>, tensor<64x32xbf16>
  return
}

// -----

func.func @matmul_reduction(%l: tensor<64x128xbf16>, %r: tensor<64x32xbf16>, %a: tensor<64x32xf32>) {
  // expected-error @+1 {{'lhs' (64x128xbf16) has reduction size 128 but 'rhs' (64x32xbf16) has 64}}
  %0 = attn.matmul %l, %r, %a : tensor<64x128xbf16>, tensor<64x32xbf16>, tensor<64x32xf32>
  return
}

// -----

func.func @matmul_rows(%l: tensor<64x128xbf16>, %r: tensor<128x32xbf16>, %a: tensor<32x32xf32>) {
  // expected-error @+1 {{'lhs' (64x128xbf16) has row count 64 but 'acc' (32x32xf32) has 32}}
  %0 = attn.matmul %l, %r, %a : tensor<64x128xbf16>, tensor<128x32xbf16>, tensor<32x32xf32>
  return
}

// -----

func.func @matmul_columns(%l: tensor<64x128xbf16>, %r: tensor<128x32xbf16>, %a: tensor<64x64xf32>) {
  // expected-error @+1 {{'rhs' (128x32xbf16) has column count 32 but 'acc' (64x64xf32) has 64}}
  %0 = attn.matmul %l, %r, %a : tensor<64x128xbf16>, tensor<128x32xbf16>, tensor<64x64xf32>
  return
}

// -----

func.func @matmul_rhs_t_reduction(%l: tensor<64x128xbf16>, %r: tensor<32x64xbf16>, %a: tensor<64x32xf32>) {
  // expected-error @+1 {{'lhs' (64x128xbf16) has reduction size 128 but 'rhs' (32x64xbf16) has 64}}
  %0 = attn.matmul %l, %r, %a transpose_rhs : tensor<64x128xbf16>, tensor<32x64xbf16>, tensor<64x32xf32>
  return
}

// -----

func.func @matmul_rhs_t_rows(%l: tensor<64x128xbf16>, %r: tensor<32x128xbf16>, %a: tensor<128x32xf32>) {
  // expected-error @+1 {{'lhs' (64x128xbf16) has row count 64 but 'acc' (128x32xf32) has 128}}
  %0 = attn.matmul %l, %r, %a transpose_rhs : tensor<64x128xbf16>, tensor<32x128xbf16>, tensor<128x32xf32>
  return
}

// -----

func.func @matmul_rhs_t_columns(%l: tensor<64x128xbf16>, %r: tensor<32x128xbf16>, %a: tensor<64x128xf32>) {
  // expected-error @+1 {{'rhs' (32x128xbf16) has column count 32 but 'acc' (64x128xf32) has 128}}
  %0 = attn.matmul %l, %r, %a transpose_rhs : tensor<64x128xbf16>, tensor<32x128xbf16>, tensor<64x128xf32>
  return
}

// -----

func.func @matmul_lhs_t_reduction(%l: tensor<128x64xbf16>, %r: tensor<64x32xbf16>, %a: tensor<64x32xf32>) {
  // expected-error @+1 {{'lhs' (128x64xbf16) has reduction size 128 but 'rhs' (64x32xbf16) has 64}}
  %0 = attn.matmul %l, %r, %a transpose_lhs : tensor<128x64xbf16>, tensor<64x32xbf16>, tensor<64x32xf32>
  return
}

// -----

func.func @matmul_lhs_t_rows(%l: tensor<128x64xbf16>, %r: tensor<128x32xbf16>, %a: tensor<128x32xf32>) {
  // expected-error @+1 {{'lhs' (128x64xbf16) has row count 64 but 'acc' (128x32xf32) has 128}}
  %0 = attn.matmul %l, %r, %a transpose_lhs : tensor<128x64xbf16>, tensor<128x32xbf16>, tensor<128x32xf32>
  return
}

// -----

func.func @matmul_lhs_t_columns(%l: tensor<128x64xbf16>, %r: tensor<128x32xbf16>, %a: tensor<64x128xf32>) {
  // expected-error @+1 {{'rhs' (128x32xbf16) has column count 32 but 'acc' (64x128xf32) has 128}}
  %0 = attn.matmul %l, %r, %a transpose_lhs : tensor<128x64xbf16>, tensor<128x32xbf16>, tensor<64x128xf32>
  return
}

// -----

func.func @matmul_both_t_reduction(%l: tensor<128x64xbf16>, %r: tensor<32x64xbf16>, %a: tensor<64x32xf32>) {
  // expected-error @+1 {{'lhs' (128x64xbf16) has reduction size 128 but 'rhs' (32x64xbf16) has 64}}
  %0 = attn.matmul %l, %r, %a transpose_lhs transpose_rhs : tensor<128x64xbf16>, tensor<32x64xbf16>, tensor<64x32xf32>
  return
}

// -----

func.func @matmul_both_t_rows(%l: tensor<128x64xbf16>, %r: tensor<32x128xbf16>, %a: tensor<128x32xf32>) {
  // expected-error @+1 {{'lhs' (128x64xbf16) has row count 64 but 'acc' (128x32xf32) has 128}}
  %0 = attn.matmul %l, %r, %a transpose_lhs transpose_rhs : tensor<128x64xbf16>, tensor<32x128xbf16>, tensor<128x32xf32>
  return
}

// -----

func.func @matmul_both_t_columns(%l: tensor<128x64xbf16>, %r: tensor<32x128xbf16>, %a: tensor<64x128xf32>) {
  // expected-error @+1 {{'rhs' (32x128xbf16) has column count 32 but 'acc' (64x128xf32) has 128}}
  %0 = attn.matmul %l, %r, %a transpose_lhs transpose_rhs : tensor<128x64xbf16>, tensor<32x128xbf16>, tensor<64x128xf32>
  return
}

// -----

func.func @map_result_static() {
  // expected-error @+1 {{tile 'result' (?x32xf32) must have a static shape}}
  %0 = attn.map -> tensor<?x32xf32> {
  ^bb0(%i: index, %j: index):
    %c = arith.constant 0.0 : f32
    attn.yield %c : f32
  }
  return
}

// -----

func.func @map_offset_count(%i: index) {
  // expected-error @+1 {{takes 2 offsets for a rank-2 result (64x32xf32), got 1}}
  %0 = attn.map at [%i] -> tensor<64x32xf32> {
  ^bb0(%r: index, %c: index):
    %z = arith.constant 0.0 : f32
    attn.yield %z : f32
  }
  return
}

// -----

func.func @map_offset_count_1d(%i: index) {
  // expected-error @+1 {{takes 1 offsets for a rank-1 result (64xf32), got 2}}
  %0 = attn.map at [%i, %i] -> tensor<64xf32> {
  ^bb0(%r: index):
    %z = arith.constant 0.0 : f32
    attn.yield %z : f32
  }
  return
}

// -----

func.func @map_input_static(%t: tensor<64x?xf32>) {
  // expected-error @+1 {{tile 'input #0' (64x?xf32) must have a static shape}}
  %0 = attn.map(%t : tensor<64x?xf32>) -> tensor<64x32xf32> {
  ^bb0(%r: index, %c: index, %x: f32):
    attn.yield %x : f32
  }
  return
}

// -----

func.func @map_input_shape(%s: tensor<64x32xf32>, %t: tensor<64x16xf32>) {
  // expected-error @+1 {{'input #1' (64x16xf32) must have the shape of the result (64x32xf32), be a row tile of 64 elements or a 1x32 column tile}}
  %0 = attn.map(%s, %t : tensor<64x32xf32>, tensor<64x16xf32>) -> tensor<64x32xf32> {
  ^bb0(%r: index, %c: index, %x: f32, %y: f32):
    attn.yield %x : f32
  }
  return
}

// -----

func.func @map_row_tile_length(%s: tensor<64x32xf32>, %m: tensor<32xf32>) {
  // expected-error @+1 {{'input #1' (32xf32) must have the shape of the result (64x32xf32), be a row tile of 64 elements or a 1x32 column tile}}
  %0 = attn.map(%s, %m : tensor<64x32xf32>, tensor<32xf32>) -> tensor<64x32xf32> {
  ^bb0(%r: index, %c: index, %x: f32, %y: f32):
    attn.yield %x : f32
  }
  return
}

// -----

func.func @map_1d_input_shape(%m: tensor<32xf32>) {
  // expected-error @+1 {{'input #0' (32xf32) must have the shape of the result (64xf32), be a row tile of 64 elements or a 1x1 column tile}}
  %0 = attn.map(%m : tensor<32xf32>) -> tensor<64xf32> {
  ^bb0(%r: index, %x: f32):
    attn.yield %x : f32
  }
  return
}

// -----

func.func @map_1d_no_broadcast(%s: tensor<64x1xf32>) {
  // expected-error @+1 {{'input #0' (64x1xf32) must have the shape of the result (64xf32), be a row tile of 64 elements or a 1x1 column tile}}
  %0 = attn.map(%s : tensor<64x1xf32>) -> tensor<64xf32> {
  ^bb0(%r: index, %x: f32):
    attn.yield %x : f32
  }
  return
}

// -----

func.func @map_result_rank() {
  // expected-error @+1 {{result #0 must be 1D/2D tensor of any type values, but got 'tensor<4x4x4xf32>'}}
  %0 = attn.map -> tensor<4x4x4xf32> {
  ^bb0(%r: index, %c: index, %d: index):
    %z = arith.constant 0.0 : f32
    attn.yield %z : f32
  }
  return
}

// -----

func.func @map_body_arity(%s: tensor<64x32xf32>) {
  // expected-error @+1 {{body must take 2 index coordinates and one scalar per input: ('index', 'index', 'f32'), got ('index', 'f32')}}
  %0 = attn.map(%s : tensor<64x32xf32>) -> tensor<64x32xf32> {
  ^bb0(%r: index, %x: f32):
    attn.yield %x : f32
  }
  return
}

// -----

func.func @map_body_types(%s: tensor<64x32xbf16>, %m: tensor<64xf32>) {
  // expected-error @+1 {{body must take 2 index coordinates and one scalar per input: ('index', 'index', 'bf16', 'f32'), got ('index', 'index', 'f32', 'f32')}}
  %0 = attn.map(%s, %m : tensor<64x32xbf16>, tensor<64xf32>) -> tensor<64x32xf32> {
  ^bb0(%r: index, %c: index, %x: f32, %y: f32):
    attn.yield %x : f32
  }
  return
}

// -----

func.func @map_body_coordinate_type() {
  // expected-error @+1 {{body must take 1 index coordinates and one scalar per input: ('index'), got ('i32')}}
  %0 = attn.map -> tensor<64xi32> {
  ^bb0(%r: i32):
    attn.yield %r : i32
  }
  return
}

// -----

func.func @map_yield_type(%s: tensor<64x32xf32>) {
  // expected-error @+1 {{body must yield one 'bf16' (the result's element type)}}
  %0 = attn.map(%s : tensor<64x32xf32>) -> tensor<64x32xbf16> {
  ^bb0(%r: index, %c: index, %x: f32):
    attn.yield %x : f32
  }
  return
}

// -----

func.func @map_foreign_terminator() {
  // expected-error @+1 {{body must yield one 'f32' (the result's element type)}}
  %0 = attn.map -> tensor<64xf32> {
  ^bb0(%r: index):
    llvm.unreachable
  }
  return
}

// -----

func.func @map_impure_body(%buf: memref<f32>) {
  %0 = attn.map -> tensor<64xf32> {
  ^bb0(%r: index):
    %x = arith.constant 1.0 : f32
    // expected-error @+1 {{'memref.store' op has memory effects, but an attn.map body must be pure (memref.load aside)}}
    memref.store %x, %buf[] : memref<f32>
    attn.yield %x : f32
  }
  return
}

// -----

func.func @reduce_rows(%s: tensor<64x32xf32>, %m: tensor<32xf32>) {
  // expected-error @+1 {{'tile' (64x32xf32) has row count 64 but 'init' (32xf32) has 32}}
  %0 = attn.reduce <max> %s, %m : tensor<64x32xf32>, tensor<32xf32>
  return
}

// -----

func.func @reduce_tile_static(%s: tensor<?x32xf32>, %m: tensor<64xf32>) {
  // expected-error @+1 {{tile 'tile' (?x32xf32) must have a static shape}}
  %0 = attn.reduce <add> %s, %m : tensor<?x32xf32>, tensor<64xf32>
  return
}

// -----

func.func @reduce_init_static(%s: tensor<64x32xf32>, %m: tensor<?xf32>) {
  // expected-error @+1 {{tile 'init' (?xf32) must have a static shape}}
  %0 = attn.reduce <add> %s, %m : tensor<64x32xf32>, tensor<?xf32>
  return
}

// -----

func.func @reduce_kind(%s: tensor<64x32xf32>, %m: tensor<64xf32>) {
  // expected-error @+2 {{expected ::mlir::attn::ReduceKind to be one of: max, add}}
  // expected-error @+1 {{failed to parse Attn_ReduceKindAttr parameter 'value'}}
  %0 = attn.reduce <min> %s, %m : tensor<64x32xf32>, tensor<64xf32>
  return
}

// -----

func.func @yield_two() {
  %0 = attn.map -> tensor<64xf32> {
  ^bb0(%r: index):
    %z = arith.constant 0.0 : f32
    // expected-error @+1 {{'attn.yield' op must yield one value, got 2}}
    attn.yield %z, %z : f32, f32
  }
  return
}

// -----

func.func @yield_none() {
  %0 = attn.map -> tensor<64xf32> {
  ^bb0(%r: index):
    // expected-error @+1 {{'attn.yield' op must yield one value, got 0}}
    attn.yield
  }
  return
}

// -----

func.func @yield_parent(%x: f32) {
  // expected-error @+1 {{'attn.yield' op expects parent op to be one of 'attn.map, attn.sdpa, attn.sdpa_backward, attn.online_attention, attn.score_grad'}}
  attn.yield %x : f32
}

// -----

// expected-error @+1 {{schedule pv_in_flight needs mapping wgmma with 3 stages (a product in flight reads a stage while the next tile is copied)}}
func.func @config_pipelined_two_stages() attributes {attn.config = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "pv_in_flight", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false>} {
  return
}

// -----

// expected-error @+1 {{q_in_registers needs mapping mma.sync (wgmma reads Q from shared memory)}}
func.func @config_wgmma_q_in_registers() attributes {attn.config = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = true, schedule = "plain", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false>} {
  return
}

// -----

!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @mod_arity(%q: !t, %w: index, %c: f32, %buf: memref<f32>) {
  // expected-error @+1 {{'attn.sdpa' op 'mask_mod' must take 5 arguments (b, h, q_idx, kv_idx: index, then one per capture), got 4}}
  attn.sdpa %q, %q, %q into %q captures(%w : index) mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %t = arith.constant true
    attn.yield %t : i1
  } : !t, !t, !t -> !t
  return
}

// -----

!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @mod_arg_type(%q: !t, %w: index, %c: f32, %buf: memref<f32>) {
  // expected-error @+1 {{'attn.sdpa' op 'score_mod' argument #0 must be 'f32', got 'f16'}}
  attn.sdpa %q, %q, %q into %q score_mod {
  ^bb0(%s: f16, %b: index, %h: index, %i: index, %j: index):
    %x = arith.extf %s : f16 to f32
    attn.yield %x : f32
  } : !t, !t, !t -> !t
  return
}

// -----

!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @mod_terminator(%q: !t, %w: index, %c: f32, %buf: memref<f32>) {
  // expected-error @+1 {{'attn.sdpa' op 'mask_mod' must end in attn.yield}}
  attn.sdpa %q, %q, %q into %q mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    llvm.unreachable
  } : !t, !t, !t -> !t
  return
}

// -----

!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @mod_yield_type(%q: !t, %w: index, %c: f32, %buf: memref<f32>) {
  attn.sdpa %q, %q, %q into %q mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %x = arith.constant 1.0 : f32
    // expected-error @+1 {{'attn.yield' op in 'mask_mod' must yield one 'i1'}}
    attn.yield %x : f32
  } : !t, !t, !t -> !t
  return
}

// -----

!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @mod_impure(%q: !t, %w: index, %c: f32, %buf: memref<f32>) {
  attn.sdpa %q, %q, %q into %q captures(%buf : memref<f32>) score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %m: memref<f32>):
    // expected-error @+1 {{'memref.store' op is not allowed in 'score_mod': only pure ops without regions and loads of captures}}
    memref.store %s, %m[] : memref<f32>
    attn.yield %s : f32
  } : !t, !t, !t -> !t
  return
}

// -----

!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @mod_region(%q: !t, %w: index, %c: f32, %buf: memref<f32>) {
  attn.sdpa %q, %q, %q into %q score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    // expected-error @+1 {{'scf.execute_region' op is not allowed in 'score_mod': only pure ops without regions and loads of captures}}
    %x = scf.execute_region -> f32 {
      scf.yield %s : f32
    }
    attn.yield %x : f32
  } : !t, !t, !t -> !t
  return
}

// -----

!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @mod_load_not_capture(%q: !t, %w: index, %c: f32, %buf: memref<f32>) {
  attn.sdpa %q, %q, %q into %q score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    // expected-error @+1 {{'memref.load' op in 'score_mod' must load from a captured memref (a block argument)}}
    %x = memref.load %buf[] : memref<f32>
    attn.yield %x : f32
  } : !t, !t, !t -> !t
  return
}

// -----

!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @mod_outside_value(%q: !t, %w: index, %c: f32, %buf: memref<f32>) {
  attn.sdpa %q, %q, %q into %q score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    // expected-error @+1 {{'arith.mulf' op in 'score_mod' uses a value defined outside it: pass it as a capture}}
    %x = arith.mulf %s, %c : f32
    attn.yield %x : f32
  } : !t, !t, !t -> !t
  return
}

// -----

!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @captures_without_mods(%q: !t, %w: index, %c: f32, %buf: memref<f32>) {
  // expected-error @+1 {{'attn.sdpa' op has captures but no score_mod or mask_mod to read them}}
  attn.sdpa %q, %q, %q into %q captures(%w : index) : !t, !t, !t -> !t
  return
}

// -----

func.func @online_mods_need_batch_head(%q: tensor<64x64xbf16>, %k: tensor<32x64xbf16>, %m: tensor<64xf32>, %acc: tensor<64x64xf32>, %i: index, %s: f32) {
  // expected-error @+1 {{'attn.online_attention' op needs 'batch' and 'head' exactly when it has a score_mod or mask_mod}}
  %m1, %l1, %a1 = attn.online_attention %q, %k, %k, %m, %m, %acc at [%i, %i] bounds [%i, %i] scale %s mask_mod {
  ^bb0(%b: index, %h: index, %x: index, %y: index):
    %t = arith.constant true
    attn.yield %t : i1
  } : tensor<64x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<64xf32>, tensor<64x64xf32>
  return
}

// -----

// attn.sdpa_backward has no FP8 form.
!e = memref<?x?x?x64xf8E4M3FN, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>
func.func @backward_e4m3(%t: !e, %l: !lse) {
  // expected-error @+1 {{has no FP8 (e4m3) form}}
  attn.sdpa_backward %t, %t, %t, %t, %t, %l into %t, %t, %t delta %l
      : !e, !e, !e, !e, !lse -> !e, !e, !e, !lse
  return
}

// -----

// attn.sdpa_backward: gradients of the tensors' element type.
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!h = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>
func.func @backward_element_type(%t: !t, %h: !h, %l: !lse) {
  // expected-error @+1 {{'grad_key'}}
  attn.sdpa_backward %t, %t, %t, %t, %t, %l into %t, %h, %t delta %l
      : !t, !t, !t, !t, !lse -> !t, !h, !t, !lse
  return
}

// -----

// attn.sdpa_backward: each gradient has its tensor's shape.
!t = memref<2x4x8x64xbf16>
!k = memref<2x4x16x64xbf16>
!lse = memref<2x4x8xf32>
func.func @backward_grad_shape(%t: !t, %k: !k, %l: !lse) {
  // expected-error @+1 {{'grad_key' (2x4x8x64xbf16)}}
  attn.sdpa_backward %t, %k, %k, %t, %t, %l into %t, %t, %k delta %l
      : !t, !k, !k, !t, !lse -> !t, !t, !k, !lse
  return
}

// -----

// attn.sdpa_backward: K/V heads divide the query heads.
!t = memref<2x4x8x64xbf16>
!k = memref<2x3x8x64xbf16>
!lse = memref<2x4x8xf32>
func.func @backward_heads(%t: !t, %k: !k, %l: !lse) {
  // expected-error @+1 {{'key' (2x3x8x64xbf16) has 3 heads, which must divide the 4 heads of 'query' (2x4x8x64xbf16)}}
  attn.sdpa_backward %t, %k, %k, %t, %t, %l into %t, %k, %k delta %l
      : !t, !k, !k, !t, !lse -> !t, !k, !k, !lse
  return
}

// -----

// attn.sdpa_backward: the row terms are (B, H, Nq).
!t = memref<2x4x8x64xbf16>
!lse = memref<2x4x8xf32>
!bad = memref<2x4x9xf32>
func.func @backward_delta(%t: !t, %l: !lse, %d: !bad) {
  // expected-error @+1 {{'delta'}}
  attn.sdpa_backward %t, %t, %t, %t, %t, %l into %t, %t, %t delta %d
      : !t, !t, !t, !t, !lse -> !t, !t, !t, !bad
  return
}

// -----

// attn.sdpa_backward: gradients are written row by row (unit innermost
// stride).
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!s = memref<?x?x?x64xbf16, strided<[?, ?, ?, 2], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>
func.func @backward_stride(%t: !t, %s: !s, %l: !lse) {
  // expected-error @+1 {{'grad_query'}}
  attn.sdpa_backward %t, %t, %t, %t, %t, %l into %s, %t, %t delta %l
      : !t, !t, !t, !t, !lse -> !s, !t, !t, !lse
  return
}

// -----

// attn.sdpa_backward: its score_mod must be differentiable.
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>
func.func @backward_not_differentiable(%t: !t, %l: !lse) {
  attn.sdpa_backward %t, %t, %t, %t, %t, %l into %t, %t, %t delta %l score_mod {
  ^bb0(%x: f32, %b: index, %h: index, %i: index, %j: index):
    // expected-error @+1 {{'math.sin' op in the score_mod of 'attn.sdpa_backward' cannot be differentiated with respect to the score}}
    %y = math.sin %x : f32
    attn.yield %y : f32
  } : !t, !t, !t, !t, !lse -> !t, !t, !t, !lse
  return
}

// -----

// attn.load_tile: row terms load as a row tile or a 1xR tile.
!lse = memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>
func.func @load_row_terms(%l: !lse, %i: index) {
  // expected-error @+1 {{'result' (2x16xf32) must be a row tile (R) or a 1xR tile for a rank-3 source}}
  %t = attn.load_tile %l[%i, %i, %i] bounds %i : !lse -> tensor<2x16xf32>
  return
}

// -----

// attn.score_grad: results are queries x keys, or keys x queries.
func.func @score_grad_shape(%q: tensor<16x64xbf16>, %k: tensor<32x64xbf16>, %r: tensor<16xf32>, %i: index, %s: f32) {
  // expected-error @+1 {{'probs' (32x16xbf16) must be 16x32 (queries x keys)}}
  %p, %ds = attn.score_grad %q, %k, %k, %q, %r, %r at [%i, %i] bounds [%i, %i] scale %s
      : tensor<16x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<16x64xbf16>, tensor<16xf32> -> tensor<32x16xbf16>
  return
}

// -----

// attn.score_grad: keys-major row terms are 1xBM tiles.
func.func @score_grad_row_terms(%q: tensor<16x64xbf16>, %k: tensor<32x64xbf16>, %r: tensor<16xf32>, %i: index, %s: f32) {
  // expected-error @+1 {{'lse' (16xf32) must be a 1x16 f32 tile}}
  %p, %ds = attn.score_grad %q, %k, %k, %q, %r, %r at [%i, %i] bounds [%i, %i] scale %s keys_major
      : tensor<16x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<16x64xbf16>, tensor<16xf32> -> tensor<32x16xbf16>
  return
}

// -----

// attn.score_grad: dO has the query tile's rows.
func.func @score_grad_grad_output(%q: tensor<16x64xbf16>, %k: tensor<32x64xbf16>, %r: tensor<16xf32>, %i: index, %s: f32) {
  // expected-error @+1 {{'grad_output' (32x64xbf16)}}
  %p, %ds = attn.score_grad %q, %k, %k, %k, %r, %r at [%i, %i] bounds [%i, %i] scale %s
      : tensor<16x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<16xf32> -> tensor<16x32xbf16>
  return
}

// -----

// attn.score_grad: a mod needs the tile's batch and head.
func.func @score_grad_batch_head(%q: tensor<16x64xbf16>, %k: tensor<32x64xbf16>, %r: tensor<16xf32>, %i: index, %s: f32) {
  // expected-error @+1 {{needs 'batch' and 'head' exactly when it has a score_mod or mask_mod}}
  %p, %ds = attn.score_grad %q, %k, %k, %q, %r, %r at [%i, %i] bounds [%i, %i] scale %s mask_mod {
  ^bb0(%b: index, %h: index, %x: index, %y: index):
    %t = arith.cmpi sle, %y, %x : index
    attn.yield %t : i1
  } : tensor<16x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<16x64xbf16>, tensor<16xf32> -> tensor<16x32xbf16>
  return
}

// -----

// attn.score_grad: its score_mod must be differentiable.
func.func @score_grad_not_differentiable(%q: tensor<16x64xbf16>, %k: tensor<32x64xbf16>, %r: tensor<16xf32>, %i: index, %s: f32) {
  %p, %ds = attn.score_grad %q, %k, %k, %q, %r, %r at [%i, %i] bounds [%i, %i] scale %s batch %i head %i score_mod {
  ^bb0(%x: f32, %b: index, %h: index, %a: index, %c: index):
    // expected-error @+1 {{'math.cos' op in the score_mod of 'attn.score_grad' cannot be differentiated}}
    %y = math.cos %x : f32
    attn.yield %y : f32
  } : tensor<16x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<16x64xbf16>, tensor<16xf32> -> tensor<16x32xbf16>
  return
}

// -----

// attn.map: a 1xC tile has the result's columns.
func.func @map_column_tile(%x: tensor<32x16xf32>, %c: tensor<1x8xf32>) {
  // expected-error @+1 {{'input #1' (1x8xf32) must have the shape of the result (32x16xf32), be a row tile of 32 elements or a 1x16 column tile}}
  %m = attn.map(%x, %c : tensor<32x16xf32>, tensor<1x8xf32>) -> tensor<32x16xf32> {
  ^bb0(%a: index, %b: index, %u: f32, %v: f32):
    attn.yield %u : f32
  }
  return
}

// -----

// Split-KV needs the count and both workspaces.
func.func @sdpa_split_partial(%q: memref<1x2x8x64xbf16>, %n: index) {
  // expected-error @+1 {{'attn.sdpa' op needs the split count and both partial workspaces together (split-KV) or none of them}}
  "attn.sdpa"(%q, %q, %q, %q, %n) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0>}> ({}, {}) : (memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16>, index) -> ()
  return
}

// -----

// A partial output row is shaped as the output's.
func.func @sdpa_split_head_dim(%q: memref<1x2x8x64xbf16>, %n: index, %po: memref<4x2x8x32xf32>, %pl: memref<4x2x8xf32>) {
  // expected-error @+1 {{'output' (1x2x8x64xbf16) has head dim 64 but 'output_partial' (4x2x8x32xf32) has 32}}
  attn.sdpa %q, %q, %q into %q split(%n, %po, %pl : memref<4x2x8x32xf32>, memref<4x2x8xf32>) : memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16> -> memref<1x2x8x64xbf16>
  return
}

// -----

func.func @sdpa_split_rows(%q: memref<1x2x8x64xbf16>, %n: index, %po: memref<4x2x8x64xf32>, %pl: memref<3x2x8xf32>) {
  // expected-error @+1 {{'output_partial' (4x2x8x64xf32) has split rows 4 but 'lse_partial' (3x2x8xf32) has 3}}
  attn.sdpa %q, %q, %q into %q split(%n, %po, %pl : memref<4x2x8x64xf32>, memref<3x2x8xf32>) : memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16> -> memref<1x2x8x64xbf16>
  return
}

// -----

func.func @sdpa_split_lse_rows(%q: memref<1x2x8x64xbf16>, %n: index, %po: memref<4x2x8x64xf32>, %pl: memref<4x2x9xf32>) {
  // expected-error @+1 {{'output' (1x2x8x64xbf16) has sequence length 8 but 'lse_partial' (4x2x9xf32) has 9}}
  attn.sdpa %q, %q, %q into %q split(%n, %po, %pl : memref<4x2x8x64xf32>, memref<4x2x9xf32>) : memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16> -> memref<1x2x8x64xbf16>
  return
}

// -----

func.func @sdpa_split_element(%q: memref<1x2x8x64xbf16>, %n: index, %po: memref<4x2x8x64xbf16>, %pl: memref<4x2x8xf32>) {
  // expected-error @+1 {{must be 4D memref of 32-bit float values}}
  attn.sdpa %q, %q, %q into %q split(%n, %po, %pl : memref<4x2x8x64xbf16>, memref<4x2x8xf32>) : memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16> -> memref<1x2x8x64xbf16>
  return
}

// -----

// attn.sdpa_backward: dQ's accumulator holds f32 ...
!t = memref<2x4x8x64xbf16>
!lse = memref<2x4x8xf32>
func.func @backward_dq_accum_type(%t: !t, %l: !lse) {
  // expected-error @+1 {{'dq_accum' must have f32 elements, got 'memref<2x4x8x64xbf16>'}}
  attn.sdpa_backward %t, %t, %t, %t, %t, %l into %t, %t, %t delta %l dq_accum %t : !t
      : !t, !t, !t, !t, !lse -> !t, !t, !t, !lse
  return
}

// -----

// expected-error @+1 {{warp_specialize needs tma (the producer issues the TMA copies)}}
func.func @config_warp_specialize_without_tma() attributes {attn.config = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "plain", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false, warp_specialize = true>} {
  return
}

// -----

// expected-error @+1 {{persistent needs warp_specialize (the producer loads the next work tile while the consumers finish this one)}}
func.func @config_persistent_without_producer() attributes {attn.config = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "plain", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = true, persistent = true>} {
  return
}

// -----

// expected-error @+1 {{q_stages must be 1 or 2, got 3}}
func.func @config_three_q_stages() attributes {attn.config = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = true, warp_specialize = true, persistent = true, q_stages = 3>} {
  return
}

// -----

// expected-error @+1 {{q_stages = 2 needs persistent (a CTA of one work tile loads one Q)}}
func.func @config_two_q_stages_without_persistent() attributes {attn.config = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = true, warp_specialize = true, q_stages = 2>} {
  return
}

// -----

// ... shaped as Q.
!t = memref<2x4x8x64xbf16>
!a = memref<2x4x16x64xf32>
!lse = memref<2x4x8xf32>
func.func @backward_dq_accum_shape(%t: !t, %a: !a, %l: !lse) {
  // expected-error @+1 {{'query' (2x4x8x64xbf16) has size 8 but 'dq_accum' (2x4x16x64xf32) has 16}}
  attn.sdpa_backward %t, %t, %t, %t, %t, %l into %t, %t, %t delta %l dq_accum %a : !a
      : !t, !t, !t, !t, !lse -> !t, !t, !t, !lse
  return
}

// -----

// expected-error @+1 {{warp_specialize: 32 warps and the 128 producer threads exceed 1024 threads}}
func.func @config_warp_specialize_threads() attributes {attn.config = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 32, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "plain", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = true, warp_specialize = true>} {
  return
}

// -----

// expected-error @+1 {{narrow_compares needs mapping wgmma (the mma.sync kernels have no registers for the differences)}}
func.func @config_narrow_compares_mma_sync() attributes {attn.config = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 128, block_n = 32, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false, narrow_compares = true>} {
  return
}

// -----

// expected-error @+1 {{barrier_per_tile needs tma (cp.async stages always take a CTA barrier per tile)}}
func.func @config_barrier_per_tile_without_tma() attributes {attn.config = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 64, warps = 8, min_ctas_per_sm = 2, stages = 3, q_in_registers = false, schedule = "softmax_overlaps_pv", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false, barrier_per_tile = true>} {
  return
}

// -----

// expected-error @+1 {{warp_specialize needs the empty barriers, not barrier_per_tile (the producer never reaches the consumers' CTA barrier)}}
func.func @config_barrier_per_tile_with_producer() attributes {attn.config = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "plain", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = true, warp_specialize = true, barrier_per_tile = true>} {
  return
}

// -----

// expected-error @+1 {{grid_group_ctas must be 0 on the host and non-negative on a GPU, got 256}}
func.func @config_host_grid_group() attributes {attn.config = #attn.config<mapping = "host", chip = "", block_m = 16, block_n = 32, warps = 0, min_ctas_per_sm = 0, stages = 0, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false, grid_group_ctas = 256>} {
  return
}

// -----

// expected-error @+1 {{grid_group_ctas must be 0 on the host and non-negative on a GPU, got -1}}
func.func @config_negative_grid_group() attributes {attn.config = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "plain", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false, grid_group_ctas = -1>} {
  return
}
