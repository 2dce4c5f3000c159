// RUN: attn-opt %s -split-input-file -verify-diagnostics

// One test per verifier constraint, in the order of AttnOps.cpp.

func.func @sdpa_element_type(%q: memref<1x2x8x64xbf16>, %k: memref<1x2x8x64xf16>, %o: memref<1x2x8x64xbf16>) {
  // expected-error @+1 {{'key' (1x2x8x64xf16) must have the element type of 'query' (1x2x8x64xbf16)}}
  attn.sdpa %q, %k, %q into %o : memref<1x2x8x64xbf16>, memref<1x2x8x64xf16>, memref<1x2x8x64xbf16> -> memref<1x2x8x64xbf16>
  return
}

// -----

func.func @sdpa_dynamic_head_dim(%q: memref<1x2x8x?xbf16>, %o: memref<1x2x8x64xbf16>) {
  // expected-error @+1 {{'query' (1x2x8x?xbf16) must have a static head dim}}
  attn.sdpa %q, %q, %q into %o : memref<1x2x8x?xbf16>, memref<1x2x8x?xbf16>, memref<1x2x8x?xbf16> -> memref<1x2x8x64xbf16>
  return
}

// -----

func.func @sdpa_value_dynamic_head_dim(%q: memref<1x2x8x64xbf16>, %v: memref<1x2x8x?xbf16>, %o: memref<1x2x8x64xbf16>) {
  // expected-error @+1 {{'value' (1x2x8x?xbf16) must have a static head dim}}
  attn.sdpa %q, %q, %v into %o : memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16>, memref<1x2x8x?xbf16> -> memref<1x2x8x64xbf16>
  return
}

// -----

func.func @sdpa_key_head_dim(%q: memref<1x2x8x64xbf16>, %k: memref<1x2x8x32xbf16>) {
  // expected-error @+1 {{'query' (1x2x8x64xbf16) has head dim 64 but 'key' (1x2x8x32xbf16) has 32}}
  attn.sdpa %q, %k, %q into %q : memref<1x2x8x64xbf16>, memref<1x2x8x32xbf16>, memref<1x2x8x64xbf16> -> memref<1x2x8x64xbf16>
  return
}

// -----

func.func @sdpa_output_head_dim(%q: memref<1x2x8x64xbf16>, %o: memref<1x2x8x32xbf16>) {
  // expected-error @+1 {{'value' (1x2x8x64xbf16) has head dim 64 but 'output' (1x2x8x32xbf16) has 32}}
  attn.sdpa %q, %q, %q into %o : memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16> -> memref<1x2x8x32xbf16>
  return
}

// -----

func.func @sdpa_kv_length(%q: memref<1x2x8x64xbf16>, %k: memref<1x2x16x64xbf16>, %v: memref<1x2x12x64xbf16>) {
  // expected-error @+1 {{'key' (1x2x16x64xbf16) has sequence length 16 but 'value' (1x2x12x64xbf16) has 12}}
  attn.sdpa %q, %k, %v into %q : memref<1x2x8x64xbf16>, memref<1x2x16x64xbf16>, memref<1x2x12x64xbf16> -> memref<1x2x8x64xbf16>
  return
}

// -----

func.func @sdpa_output_length(%q: memref<1x2x8x64xbf16>, %o: memref<1x2x9x64xbf16>) {
  // expected-error @+1 {{'query' (1x2x8x64xbf16) has sequence length 8 but 'output' (1x2x9x64xbf16) has 9}}
  attn.sdpa %q, %q, %q into %o : memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16> -> memref<1x2x9x64xbf16>
  return
}

// -----

func.func @sdpa_batch(%q: memref<1x2x8x64xbf16>, %k: memref<3x2x8x64xbf16>) {
  // expected-error @+1 {{'query' (1x2x8x64xbf16) has batch 1 but 'key' (3x2x8x64xbf16) has 3}}
  attn.sdpa %q, %k, %k into %q : memref<1x2x8x64xbf16>, memref<3x2x8x64xbf16>, memref<3x2x8x64xbf16> -> memref<1x2x8x64xbf16>
  return
}

// -----

func.func @sdpa_heads(%q: memref<1x2x8x64xbf16>, %v: memref<1x4x8x64xbf16>) {
  // expected-error @+1 {{'query' (1x2x8x64xbf16) has head count 2 but 'value' (1x4x8x64xbf16) has 4}}
  attn.sdpa %q, %q, %v into %q : memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16>, memref<1x4x8x64xbf16> -> memref<1x2x8x64xbf16>
  return
}

// -----

func.func @sdpa_lse_length(%q: memref<1x2x8x64xbf16>, %lse: memref<1x2x7xf32>) {
  // expected-error @+1 {{'query' (1x2x8x64xbf16) has sequence length 8 but 'lse' (1x2x7xf32) has 7}}
  attn.sdpa %q, %q, %q into %q lse %lse : memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16> -> memref<1x2x8x64xbf16>, memref<1x2x7xf32>
  return
}

// -----

func.func @sdpa_inner_stride(%q: memref<1x2x8x64xbf16, strided<[1024, 512, 64, 2]>>, %o: memref<1x2x8x64xbf16>) {
  // expected-error @+1 {{'query' (1x2x8x64xbf16, layout strided<[1024, 512, 64, 2]>) must have a unit innermost stride}}
  attn.sdpa %q, %q, %q into %o : memref<1x2x8x64xbf16, strided<[1024, 512, 64, 2]>>, memref<1x2x8x64xbf16, strided<[1024, 512, 64, 2]>>, memref<1x2x8x64xbf16, strided<[1024, 512, 64, 2]>> -> memref<1x2x8x64xbf16>
  return
}

// -----

func.func @sdpa_rank(%q: memref<2x8x64xbf16>) {
  // expected-error @+1 {{operand #0 must be 4D memref of bfloat16 type or 16-bit float or 32-bit float values}}
  attn.sdpa %q, %q, %q into %q : memref<2x8x64xbf16>, memref<2x8x64xbf16>, memref<2x8x64xbf16> -> memref<2x8x64xbf16>
  return
}

// -----

func.func @sdpa_lse_type(%q: memref<1x2x8x64xbf16>, %lse: memref<1x2x8xbf16>) {
  // expected-error @+1 {{operand #4 must be 3D memref of 32-bit float values}}
  attn.sdpa %q, %q, %q into %q lse %lse : memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16>, memref<1x2x8x64xbf16> -> memref<1x2x8x64xbf16>, memref<1x2x8xbf16>
  return
}

// -----

func.func @grid_arguments(%n: index) {
  // expected-error @+1 {{'attn.tile_grid' op body must take three index arguments (batch, head, query tile), got 2}}
  "attn.tile_grid"(%n, %n, %n) ({
  ^bb0(%a: index, %b: index):
  }) : (index, index, index) -> ()
  return
}

// -----

func.func @grid_parse(%n: index) {
  // expected-error @+1 {{expected three coordinates (batch, head, tile)}}
  attn.tile_grid (%a, %b) in (%n, %n) {
  }
  return
}

// -----

func.func @kv_loop_dynamic(%n: index, %m: tensor<?xf32>, %a: tensor<16x64xf32>) {
  // expected-error @+1 {{tile 'max' (?xf32) must have a static shape}}
  %r:3 = "attn.kv_loop"(%n, %n, %n, %m, %m, %a) ({
  ^bb0(%i: index, %x: tensor<?xf32>, %y: tensor<?xf32>, %z: tensor<16x64xf32>):
    attn.yield %x, %y, %z : tensor<?xf32>, tensor<?xf32>, tensor<16x64xf32>
  }) : (index, index, index, tensor<?xf32>, tensor<?xf32>, tensor<16x64xf32>) -> (tensor<?xf32>, tensor<?xf32>, tensor<16x64xf32>)
  return
}

// -----

func.func @kv_loop_rows(%n: index, %m: tensor<16xf32>, %a: tensor<32x64xf32>) {
  // expected-error @+1 {{'max' (16xf32) has row count 16 but 'acc' (32x64xf32) has 32}}
  %r:3 = attn.kv_loop %kv = %n to %n step %n iter_args(%x = %m, %y = %m, %z = %a) : tensor<16xf32>, tensor<32x64xf32> {
    attn.yield %x, %y, %z : tensor<16xf32>, tensor<16xf32>, tensor<32x64xf32>
  }
  return
}

// -----

func.func @kv_loop_block_args(%n: index, %m: tensor<16xf32>, %a: tensor<16x64xf32>) {
  // expected-error @+1 {{body must take (index, max, sum, acc) arguments matching the iter_args}}
  %r:3 = "attn.kv_loop"(%n, %n, %n, %m, %m, %a) ({
  ^bb0(%i: index, %x: tensor<16xf32>, %y: tensor<16xf32>):
    attn.yield %x, %y, %a : tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>
  }) : (index, index, index, tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>)
  return
}

// -----

func.func @yield_types(%n: index, %m: tensor<16xf32>, %a: tensor<16x64xf32>) {
  %r:3 = attn.kv_loop %kv = %n to %n step %n iter_args(%x = %m, %y = %m, %z = %a) : tensor<16xf32>, tensor<16x64xf32> {
    // expected-error @+1 {{must yield (max, sum, acc) of types}}
    attn.yield %x, %y : tensor<16xf32>, tensor<16xf32>
  }
  return
}

// -----

func.func @load_dynamic_tile(%src: memref<1x2x8x64xbf16>, %i: index) {
  // expected-error @+1 {{tile 'result' (?x64xbf16) must have a static shape}}
  %t = attn.load_tile %src[%i, %i, %i] : memref<1x2x8x64xbf16> -> tensor<?x64xbf16>
  return
}

// -----

func.func @load_element_type(%src: memref<1x2x8x64xbf16>, %i: index) {
  // expected-error @+1 {{'result' (16x64xf16) must have the element type of 'source' (1x2x8x64xbf16)}}
  %t = attn.load_tile %src[%i, %i, %i] : memref<1x2x8x64xbf16> -> tensor<16x64xf16>
  return
}

// -----

func.func @load_source_dynamic_head_dim(%src: memref<1x2x8x?xbf16>, %i: index) {
  // expected-error @+1 {{'source' (1x2x8x?xbf16) must have a static head dim}}
  %t = attn.load_tile %src[%i, %i, %i] : memref<1x2x8x?xbf16> -> tensor<16x64xbf16>
  return
}

// -----

func.func @load_head_dim(%src: memref<1x2x8x64xbf16>, %i: index) {
  // expected-error @+1 {{'source' (1x2x8x64xbf16) has head dim 64 but 'result' (16x32xbf16) has 32}}
  %t = attn.load_tile %src[%i, %i, %i] : memref<1x2x8x64xbf16> -> tensor<16x32xbf16>
  return
}

// -----

func.func @load_inner_stride(%src: memref<1x2x8x64xbf16, strided<[2048, 1024, 128, 2]>>, %i: index) {
  // expected-error @+1 {{'source' (1x2x8x64xbf16, layout strided<[2048, 1024, 128, 2]>) must have a unit innermost stride}}
  %t = attn.load_tile %src[%i, %i, %i] : memref<1x2x8x64xbf16, strided<[2048, 1024, 128, 2]>> -> tensor<16x64xbf16>
  return
}

// -----

func.func @store_dynamic_tile(%t: tensor<?x64xbf16>, %dst: memref<1x2x8x64xbf16>, %i: index) {
  // expected-error @+1 {{tile 'tile' (?x64xbf16) must have a static shape}}
  attn.store_tile %t, %dst[%i, %i, %i] : tensor<?x64xbf16>, memref<1x2x8x64xbf16>
  return
}

// -----

func.func @store_rank(%t: tensor<16xf32>, %dst: memref<1x2x8x64xf32>, %i: index) {
  // expected-error @+1 {{'dest' (1x2x8x64xf32) must have rank 3 for a tile of rank 1 (16xf32)}}
  attn.store_tile %t, %dst[%i, %i, %i] : tensor<16xf32>, memref<1x2x8x64xf32>
  return
}

// -----

func.func @store_element_type(%t: tensor<16x64xf16>, %dst: memref<1x2x8x64xbf16>, %i: index) {
  // expected-error @+1 {{'tile' (16x64xf16) must have the element type of 'dest' (1x2x8x64xbf16)}}
  attn.store_tile %t, %dst[%i, %i, %i] : tensor<16x64xf16>, memref<1x2x8x64xbf16>
  return
}

// -----

func.func @store_head_dim(%t: tensor<16x32xbf16>, %dst: memref<1x2x8x64xbf16>, %i: index) {
  // expected-error @+1 {{'dest' (1x2x8x64xbf16) has head dim 64 but 'tile' (16x32xbf16) has 32}}
  attn.store_tile %t, %dst[%i, %i, %i] : tensor<16x32xbf16>, memref<1x2x8x64xbf16>
  return
}

// -----

func.func @store_inner_stride(%t: tensor<16x64xbf16>, %dst: memref<1x2x8x64xbf16, strided<[2048, 1024, 128, 2]>>, %i: index) {
  // expected-error @+1 {{'dest' (1x2x8x64xbf16, layout strided<[2048, 1024, 128, 2]>) must have a unit innermost stride}}
  attn.store_tile %t, %dst[%i, %i, %i] : tensor<16x64xbf16>, memref<1x2x8x64xbf16, strided<[2048, 1024, 128, 2]>>
  return
}

// -----

func.func @online_attention_head_dim(%q: tensor<16x64xbf16>, %k: tensor<32x32xbf16>, %m: tensor<16xf32>, %a: tensor<16x32xf32>, %i: index, %s: f32) {
  // expected-error @+1 {{'query' (16x64xbf16) has head dim 64 but 'key' (32x32xbf16) has 32}}
  %r:3 = attn.online_attention %q, %k, %k, %m, %m, %a at [%i, %i] bounds [%i, %i] scale %s : tensor<16x64xbf16>, tensor<32x32xbf16>, tensor<32x32xbf16>, tensor<16xf32>, tensor<16x32xf32>
  return
}

// -----

func.func @online_attention_element_type(%q: tensor<16x64xbf16>, %k: tensor<32x64xf16>, %m: tensor<16xf32>, %a: tensor<16x64xf32>, %i: index, %s: f32) {
  // expected-error @+1 {{'key' (32x64xf16) must have the element type of 'query' (16x64xbf16)}}
  %r:3 = attn.online_attention %q, %k, %k, %m, %m, %a at [%i, %i] bounds [%i, %i] scale %s : tensor<16x64xbf16>, tensor<32x64xf16>, tensor<32x64xf16>, tensor<16xf32>, tensor<16x64xf32>
  return
}

// -----

func.func @online_attention_kv_rows(%q: tensor<16x64xbf16>, %k: tensor<32x64xbf16>, %v: tensor<16x64xbf16>, %m: tensor<16xf32>, %a: tensor<16x64xf32>, %i: index, %s: f32) {
  // expected-error @+1 {{'key' (32x64xbf16) has row count 32 but 'value' (16x64xbf16) has 16}}
  %r:3 = attn.online_attention %q, %k, %v, %m, %m, %a at [%i, %i] bounds [%i, %i] scale %s : tensor<16x64xbf16>, tensor<32x64xbf16>, tensor<16x64xbf16>, tensor<16xf32>, tensor<16x64xf32>
  return
}

// -----

func.func @online_attention_query_rows(%q: tensor<16x64xbf16>, %k: tensor<32x64xbf16>, %m: tensor<8xf32>, %a: tensor<8x64xf32>, %i: index, %s: f32) {
  // expected-error @+1 {{'query' (16x64xbf16) has row count 16 but 'max' (8xf32) has 8}}
  %r:3 = attn.online_attention %q, %k, %k, %m, %m, %a at [%i, %i] bounds [%i, %i] scale %s : tensor<16x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<8xf32>, tensor<8x64xf32>
  return
}

// -----

func.func @online_attention_acc_rows(%q: tensor<16x64xbf16>, %k: tensor<32x64xbf16>, %m: tensor<16xf32>, %a: tensor<8x64xf32>, %i: index, %s: f32) {
  // expected-error @+1 {{'max' (16xf32) has row count 16 but 'acc' (8x64xf32) has 8}}
  %r:3 = attn.online_attention %q, %k, %k, %m, %m, %a at [%i, %i] bounds [%i, %i] scale %s : tensor<16x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<16xf32>, tensor<8x64xf32>
  return
}

// -----

func.func @online_attention_acc_dim(%q: tensor<16x64xbf16>, %k: tensor<32x64xbf16>, %m: tensor<16xf32>, %a: tensor<16x32xf32>, %i: index, %s: f32) {
  // expected-error @+1 {{'value' (32x64xbf16) has head dim 64 but 'acc' (16x32xf32) has 32}}
  %r:3 = attn.online_attention %q, %k, %k, %m, %m, %a at [%i, %i] bounds [%i, %i] scale %s : tensor<16x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<16xf32>, tensor<16x32xf32>
  return
}

// -----

func.func @online_attention_static(%q: tensor<?x64xbf16>, %k: tensor<32x64xbf16>, %m: tensor<16xf32>, %a: tensor<16x64xf32>, %i: index, %s: f32) {
  // expected-error @+1 {{tile 'query' (?x64xbf16) must have a static shape}}
  %r:3 = attn.online_attention %q, %k, %k, %m, %m, %a at [%i, %i] bounds [%i, %i] scale %s : tensor<?x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<16xf32>, tensor<16x64xf32>
  return
}

// -----

func.func @qk_rows(%q: tensor<16x64xbf16>, %k: tensor<32x64xbf16>, %s: f32) {
  // expected-error @+1 {{'query' (16x64xbf16) has row count 16 but 'scores' (8x32xf32) has 8}}
  %r = attn.qk %q, %k scale %s : tensor<16x64xbf16>, tensor<32x64xbf16> -> tensor<8x32xf32>
  return
}

// -----

func.func @qk_columns(%q: tensor<16x64xbf16>, %k: tensor<32x64xbf16>, %s: f32) {
  // expected-error @+1 {{'key' (32x64xbf16) has column count 32 but 'scores' (16x16xf32) has 16}}
  %r = attn.qk %q, %k scale %s : tensor<16x64xbf16>, tensor<32x64xbf16> -> tensor<16x16xf32>
  return
}

// -----

func.func @qk_static(%q: tensor<16x64xbf16>, %k: tensor<32x64xbf16>, %s: f32) {
  // expected-error @+1 {{tile 'scores' (16x?xf32) must have a static shape}}
  %r = attn.qk %q, %k scale %s : tensor<16x64xbf16>, tensor<32x64xbf16> -> tensor<16x?xf32>
  return
}

// -----

func.func @softmax_rows(%s: tensor<16x32xf32>, %m: tensor<8xf32>) {
  // expected-error @+1 {{'scores' (16x32xf32) has row count 16 but 'max' (8xf32) has 8}}
  %p, %m1, %l1, %a = attn.online_softmax %s, %m, %m : tensor<16x32xf32>, tensor<8xf32> -> tensor<16x32xbf16>
  return
}

// -----

func.func @softmax_probs_shape(%s: tensor<16x32xf32>, %m: tensor<16xf32>) {
  // expected-error @+1 {{'probs' (16x16xbf16) must have the shape of 'scores' (16x32xf32)}}
  %p, %m1, %l1, %a = attn.online_softmax %s, %m, %m : tensor<16x32xf32>, tensor<16xf32> -> tensor<16x16xbf16>
  return
}

// -----

func.func @softmax_static(%s: tensor<16x?xf32>, %m: tensor<16xf32>) {
  // expected-error @+1 {{tile 'scores' (16x?xf32) must have a static shape}}
  %p, %m1, %l1, %a = attn.online_softmax %s, %m, %m : tensor<16x?xf32>, tensor<16xf32> -> tensor<16x32xbf16>
  return
}

// -----

func.func @pv_element_type(%p: tensor<16x32xf16>, %v: tensor<32x64xbf16>, %a: tensor<16x64xf32>, %al: tensor<16xf32>) {
  // expected-error @+1 {{'probs' (16x32xf16) must have the element type of 'value' (32x64xbf16)}}
  %r = attn.pv %p, %v, %a, %al : tensor<16x32xf16>, tensor<32x64xbf16>, tensor<16x64xf32>, tensor<16xf32>
  return
}

// -----

func.func @pv_rows(%p: tensor<8x32xbf16>, %v: tensor<32x64xbf16>, %a: tensor<16x64xf32>, %al: tensor<16xf32>) {
  // expected-error @+1 {{'probs' (8x32xbf16) has row count 8 but 'acc' (16x64xf32) has 16}}
  %r = attn.pv %p, %v, %a, %al : tensor<8x32xbf16>, tensor<32x64xbf16>, tensor<16x64xf32>, tensor<16xf32>
  return
}

// -----

func.func @pv_keys(%p: tensor<16x16xbf16>, %v: tensor<32x64xbf16>, %a: tensor<16x64xf32>, %al: tensor<16xf32>) {
  // expected-error @+1 {{'probs' (16x16xbf16) has key count 16 but 'value' (32x64xbf16) has 32}}
  %r = attn.pv %p, %v, %a, %al : tensor<16x16xbf16>, tensor<32x64xbf16>, tensor<16x64xf32>, tensor<16xf32>
  return
}

// -----

func.func @pv_head_dim(%p: tensor<16x32xbf16>, %v: tensor<32x64xbf16>, %a: tensor<16x32xf32>, %al: tensor<16xf32>) {
  // expected-error @+1 {{'value' (32x64xbf16) has head dim 64 but 'acc' (16x32xf32) has 32}}
  %r = attn.pv %p, %v, %a, %al : tensor<16x32xbf16>, tensor<32x64xbf16>, tensor<16x32xf32>, tensor<16xf32>
  return
}

// -----

func.func @pv_alpha_rows(%p: tensor<16x32xbf16>, %v: tensor<32x64xbf16>, %a: tensor<16x64xf32>, %al: tensor<8xf32>) {
  // expected-error @+1 {{'alpha' (8xf32) has row count 8 but 'acc' (16x64xf32) has 16}}
  %r = attn.pv %p, %v, %a, %al : tensor<16x32xbf16>, tensor<32x64xbf16>, tensor<16x64xf32>, tensor<8xf32>
  return
}

// -----

func.func @finalize_output_shape(%a: tensor<16x64xf32>, %m: tensor<16xf32>) {
  // expected-error @+1 {{'output' (16x32xbf16) must have the shape of 'acc' (16x64xf32)}}
  %o, %l = attn.finalize %a, %m, %m : tensor<16x64xf32>, tensor<16xf32> -> tensor<16x32xbf16>
  return
}

// -----

func.func @finalize_rows(%a: tensor<16x64xf32>, %m: tensor<8xf32>) {
  // expected-error @+1 {{'max' (8xf32) has row count 8 but 'acc' (16x64xf32) has 16}}
  %o, %l = attn.finalize %a, %m, %m : tensor<16x64xf32>, tensor<8xf32> -> tensor<16x64xbf16>
  return
}
