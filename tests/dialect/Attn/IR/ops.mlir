// RUN: attn-opt %s -split-input-file | attn-opt -split-input-file | FileCheck %s
// RUN: attn-opt %s -split-input-file --mlir-print-op-generic | attn-opt -split-input-file | FileCheck %s

// Round trip of every op and attribute of the attn dialect, in custom and
// generic form.

!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>

// CHECK-LABEL: func.func @sdpa
func.func @sdpa(%q: !t, %k: !t, %v: !t, %o: !t, %lse: !lse, %s: f32) {
  // CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} into %{{.*}} lse %{{.*}} scale %{{.*}} mask <causal> positive_scale : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>, memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>, memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>> -> memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>
  attn.sdpa %q, %k, %v into %o lse %lse scale %s mask <causal> positive_scale : !t, !t, !t -> !t, !lse
  // CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} into %{{.*}} : memref<{{.*}}>, memref<{{.*}}>, memref<{{.*}}> -> memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>{{$}}
  attn.sdpa %q, %k, %v into %o : !t, !t, !t -> !t
  // CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} into %{{.*}} mask <causal_bottom_right> :
  attn.sdpa %q, %k, %v into %o mask <causal_bottom_right> : !t, !t, !t -> !t
  // CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} into %{{.*}} lse %{{.*}} :
  attn.sdpa %q, %k, %v into %o lse %lse : !t, !t, !t -> !t, !lse
  // CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} into %{{.*}} scale %{{.*}} :
  attn.sdpa %q, %k, %v into %o scale %s : !t, !t, !t -> !t
  // The default mask is not printed.
  // CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} into %{{.*}} scale %{{.*}} positive_scale :
  attn.sdpa %q, %k, %v into %o scale %s mask <none> positive_scale : !t, !t, !t -> !t
  return
}

// FP8: e4m3 inputs with their descale factors, a bf16 output.
// CHECK-LABEL: func.func @sdpa_e4m3
func.func @sdpa_e4m3(%q: memref<?x?x?x64xf8E4M3FN, strided<[?, ?, ?, 1], offset: ?>>, %o: !t, %dq: f32, %dk: f32, %dv: f32) {
  // CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} into %{{.*}} descale(%arg2, %arg3, %arg4) mask <causal> :
  attn.sdpa %q, %q, %q into %o descale(%dq, %dk, %dv) mask <causal> : memref<?x?x?x64xf8E4M3FN, strided<[?, ?, ?, 1], offset: ?>>, memref<?x?x?x64xf8E4M3FN, strided<[?, ?, ?, 1], offset: ?>>, memref<?x?x?x64xf8E4M3FN, strided<[?, ?, ?, 1], offset: ?>> -> !t
  return
}

// CHECK-LABEL: func.func @sdpa_split
func.func @sdpa_split(%q: !t, %o: !t, %n: index, %po: memref<?x?x?x64xf32, strided<[?, ?, ?, 1], offset: ?>>, %pl: !lse) {
  // CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} into %{{.*}} split(%{{.*}}, %{{.*}}, %{{.*}} : memref<?x?x?x64xf32, strided<[?, ?, ?, 1], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>) mask <causal_bottom_right> :
  attn.sdpa %q, %q, %q into %o split(%n, %po, %pl : memref<?x?x?x64xf32, strided<[?, ?, ?, 1], offset: ?>>, !lse) mask <causal_bottom_right> : !t, !t, !t -> !t
  return
}


// -----

// A paged K/V cache: (num_pages, Hkv, page_size, D) caches, a block table
// and key counts, under an ordinary batch of queries or packed ones; a
// load gathers rows through the block table.
!pq = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!pkv = memref<?x?x16x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!bt = memref<?x?xi32, strided<[?, ?], offset: ?>>
!n = memref<?xi32, strided<[?], offset: ?>>
// CHECK-LABEL: func.func @sdpa_paged
func.func @sdpa_paged(%q: !pq, %k: !pkv, %v: !pkv, %o: !pq, %bt: !bt, %n: !n, %cq: !n, %m: index, %i: index) {
  // CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} into %{{.*}} paged(%{{.*}}, %{{.*}} : memref<?x?xi32, strided<[?, ?], offset: ?>>, memref<?xi32, strided<[?], offset: ?>>) mask <causal_bottom_right> :
  attn.sdpa %q, %k, %v into %o paged(%bt, %n : !bt, !n) mask <causal_bottom_right> : !pq, !pkv, !pkv -> !pq
  // CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} into %{{.*}} varlen(%{{.*}}, %{{.*}} : memref<?xi32, strided<[?], offset: ?>>) paged(%{{.*}}, %{{.*}} : memref<?x?xi32, strided<[?, ?], offset: ?>>, memref<?xi32, strided<[?], offset: ?>>) :
  attn.sdpa %q, %k, %v into %o varlen(%cq, %m : !n) paged(%bt, %n : !bt, !n) : !pq, !pkv, !pkv -> !pq
  // CHECK: attn.load_tile %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] pages(%{{.*}} : memref<?x?xi32, strided<[?, ?], offset: ?>>) bounds %{{.*}} :
  %t = attn.load_tile %k[%i, %i, %i] pages(%bt : !bt) bounds %i : !pkv -> tensor<64x64xbf16>
  return
}

// -----

// A variable-length batch: sequences packed along the rows of batch 1.
!p = memref<1x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!cu = memref<?xi32, strided<[?], offset: ?>>
// CHECK-LABEL: func.func @sdpa_varlen
func.func @sdpa_varlen(%q: !p, %k: !p, %o: !p, %cq: !cu, %ck: !cu, %n: index) {
  // CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} into %{{.*}} varlen(%{{.*}}, %{{.*}}, %{{.*}} : memref<?xi32, strided<[?], offset: ?>>, memref<?xi32, strided<[?], offset: ?>>) mask <causal_bottom_right> :
  attn.sdpa %q, %k, %k into %o varlen(%cq, %ck, %n : !cu, !cu) mask <causal_bottom_right> : !p, !p, !p -> !p
  return
}

// -----

// Grouped-query (8 query heads over 2 K/V heads) and multi-query (1 K/V
// head) attention, f16, with a value head dim (32) different from the QK
// head dim (64).
// CHECK-LABEL: func.func @sdpa_gqa
func.func @sdpa_gqa(%q: memref<1x8x?x64xf16>, %k: memref<1x2x?x64xf16>,
                    %v: memref<1x2x?x32xf16>, %o: memref<1x8x?x32xf16>,
                    %k1: memref<1x1x?x64xf16>, %v1: memref<1x1x?x32xf16>,
                    %lse: memref<1x8x?xf32>) {
  // CHECK: attn.sdpa {{.*}} : memref<1x8x?x64xf16>, memref<1x2x?x64xf16>, memref<1x2x?x32xf16> -> memref<1x8x?x32xf16>, memref<1x8x?xf32>
  attn.sdpa %q, %k, %v into %o lse %lse : memref<1x8x?x64xf16>, memref<1x2x?x64xf16>, memref<1x2x?x32xf16> -> memref<1x8x?x32xf16>, memref<1x8x?xf32>
  // CHECK: attn.sdpa {{.*}} : memref<1x8x?x64xf16>, memref<1x1x?x64xf16>, memref<1x1x?x32xf16> -> memref<1x8x?x32xf16>
  attn.sdpa %q, %k1, %v1 into %o : memref<1x8x?x64xf16>, memref<1x1x?x64xf16>, memref<1x1x?x32xf16> -> memref<1x8x?x32xf16>
  return
}

// -----

!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>

// The tile program: grid, loads, the K/V loop of online-attention steps,
// finalize, stores.
// CHECK-LABEL: func.func @tile_program
// CHECK-SAME: attributes {attn.config = #attn.config<mapping = "host", chip = "", block_m = 16, block_n = 32, warps = 0, min_ctas_per_sm = 0, stages = 0, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>}
func.func @tile_program(%Q: !t, %K: !t, %V: !t, %O: !t, %LSE: !lse,
                        %B: index, %H: index, %T: index, %nq: index,
                        %nk: index, %s: f32) attributes {attn.config = #attn.config<
    mapping = "host", chip = "", block_m = 16, block_n = 32, warps = 0,
    min_ctas_per_sm = 0, stages = 0, q_in_registers = false,
    schedule = "plain", ordered_issue = false, reverse_grid = false,
    pack_gqa = false, conditional_rescale = false>} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %m0 = arith.constant dense<0xFF800000> : tensor<16xf32>
  %l0 = arith.constant dense<0.0> : tensor<16xf32>
  %a0 = arith.constant dense<0.0> : tensor<16x64xf32>
  // CHECK: attn.tile_grid (%[[B:.*]], %[[H:.*]], %[[T:.*]]) in (%{{.*}}, %{{.*}}, %{{.*}}) {
  attn.tile_grid (%b, %h, %t) in (%B, %H, %T) {
    %row = arith.muli %t, %c16 : index
    // CHECK: attn.load_tile %{{.*}}[%[[B]], %[[H]], %[[ROW:.*]]] bounds %{{.*}} : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>> -> tensor<16x64xbf16>
    %q = attn.load_tile %Q[%b, %h, %row] bounds %nq : !t -> tensor<16x64xbf16>
    // CHECK: scf.for %[[KV:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args
    %m, %l, %acc = scf.for %kv = %c0 to %nk step %c32
        iter_args(%mi = %m0, %li = %l0, %ai = %a0) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>) {
      // CHECK: attn.load_tile %{{.*}}[%[[B]], %[[H]], %[[KV]]] bounds %{{.*}} : memref<{{.*}}> -> tensor<32x64xbf16>
      %k = attn.load_tile %K[%b, %h, %kv] bounds %nk : !t -> tensor<32x64xbf16>
      %v = attn.load_tile %V[%b, %h, %kv] bounds %nk : !t -> tensor<32x64xbf16>
      // CHECK: attn.online_attention %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} at [%[[ROW]], %[[KV]]] bounds [%{{.*}}, %{{.*}}] scale %{{.*}} mask <causal> : tensor<16x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<16xf32>, tensor<16x64xf32>
      %m1, %l1, %a1 = attn.online_attention %q, %k, %v, %mi, %li, %ai
          at [%row, %kv] bounds [%nq, %nk] scale %s mask <causal>
          : tensor<16x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<16xf32>, tensor<16x64xf32>
      scf.yield %m1, %l1, %a1 : tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>
    }
    // CHECK: attn.finalize %{{.*}}, %{{.*}}, %{{.*}} : tensor<16x64xf32>, tensor<16xf32> -> tensor<16x64xbf16>
    %out, %lse = attn.finalize %acc, %m, %l : tensor<16x64xf32>, tensor<16xf32> -> tensor<16x64xbf16>
    // An output scale (FP8's value descale).
    // CHECK: attn.finalize %{{.*}}, %{{.*}}, %{{.*}} scale %{{.*}} : tensor<16x64xf32>, tensor<16xf32> -> tensor<16x64xbf16>
    %scaledOut, %scaledLse = attn.finalize %acc, %m, %l scale %s : tensor<16x64xf32>, tensor<16xf32> -> tensor<16x64xbf16>
    // CHECK: attn.store_tile %{{.*}}, %{{.*}}[%[[B]], %[[H]], %[[ROW]]] bounds %{{.*}} : tensor<16x64xbf16>, memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
    attn.store_tile %out, %O[%b, %h, %row] bounds %nq : tensor<16x64xbf16>, !t
    // CHECK: attn.store_tile %{{.*}}, %{{.*}}[%[[B]], %[[H]], %[[ROW]]] bounds %{{.*}} : tensor<16xf32>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>
    attn.store_tile %lse, %LSE[%b, %h, %row] bounds %nq : tensor<16xf32>, !lse
  }
  return
}

// -----

// Packed GQA heads: rows_per_head on loads, stores and the step; an f32
// tile program; a tile_grid with an attribute dictionary.
// CHECK-LABEL: func.func @packed_heads
// CHECK-SAME: attn.config = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = true, schedule = "plain", ordered_issue = true, reverse_grid = true, pack_gqa = true, conditional_rescale = true>
func.func @packed_heads(%Q: memref<?x?x?x32xf32>, %O: memref<?x?x?x32xf32>,
                        %LSE: memref<?x?x?xf32>, %n: index, %rph: index,
                        %rows: index, %s: f32,
                        %m: tensor<64xf32>, %l: tensor<64xf32>,
                        %acc: tensor<64x32xf32>) attributes {attn.config = #attn.config<
    mapping = "mma.sync", chip = "sm_80", block_m = 128, block_n = 128,
    warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = true,
    schedule = "plain", ordered_issue = true, reverse_grid = true,
    pack_gqa = true, conditional_rescale = true>} {
  // CHECK: attn.tile_grid (%[[B:.*]], %[[H:.*]], %[[T:.*]]) in (%{{.*}}, %{{.*}}, %{{.*}}) attributes {tag = 1 : i64} {
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) attributes {tag = 1} {
    // CHECK: attn.load_tile %{{.*}}[%[[B]], %[[H]], %[[T]]] rows_per_head %{{.*}} bounds %{{.*}} : memref<?x?x?x32xf32> -> tensor<64x32xf32>
    %q = attn.load_tile %Q[%b, %h, %t] rows_per_head %rph bounds %rows : memref<?x?x?x32xf32> -> tensor<64x32xf32>
    // CHECK: attn.online_attention %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} at [%{{.*}}, %{{.*}}] rows_per_head %{{.*}} bounds [%{{.*}}, %{{.*}}] scale %{{.*}} positive_scale : tensor<64x32xf32>, tensor<64x32xf32>, tensor<64x32xf32>, tensor<64xf32>, tensor<64x32xf32>
    %m1, %l1, %a1 = attn.online_attention %q, %q, %q, %m, %l, %acc
        at [%t, %n] rows_per_head %rph bounds [%n, %n] scale %s positive_scale
        : tensor<64x32xf32>, tensor<64x32xf32>, tensor<64x32xf32>, tensor<64xf32>, tensor<64x32xf32>
    // CHECK: attn.online_attention {{.*}} rows_per_head %{{.*}} bounds [%{{.*}}, %{{.*}}] scale %{{.*}} mask <causal_bottom_right> positive_scale :
    %m2, %l2, %a2 = attn.online_attention %q, %q, %q, %m1, %l1, %a1
        at [%t, %n] rows_per_head %rph bounds [%n, %n] scale %s mask <causal_bottom_right> positive_scale
        : tensor<64x32xf32>, tensor<64x32xf32>, tensor<64x32xf32>, tensor<64xf32>, tensor<64x32xf32>
    // CHECK: attn.finalize {{.*}} : tensor<64x32xf32>, tensor<64xf32> -> tensor<64x32xf32>
    %o, %lse = attn.finalize %a2, %m2, %l2 : tensor<64x32xf32>, tensor<64xf32> -> tensor<64x32xf32>
    // CHECK: attn.store_tile %{{.*}}, %{{.*}}[%[[B]], %[[H]], %[[T]]] rows_per_head %{{.*}} bounds %{{.*}} : tensor<64x32xf32>, memref<?x?x?x32xf32>
    attn.store_tile %o, %O[%b, %h, %t] rows_per_head %rph bounds %rows : tensor<64x32xf32>, memref<?x?x?x32xf32>
    // CHECK: attn.store_tile %{{.*}}, %{{.*}}[%[[B]], %[[H]], %[[T]]] rows_per_head %{{.*}} bounds %{{.*}} : tensor<64xf32>, memref<?x?x?xf32>
    attn.store_tile %lse, %LSE[%b, %h, %t] rows_per_head %rph bounds %rows : tensor<64xf32>, memref<?x?x?xf32>
    // One sequence of a packed batch: its packed rows from row %n.
    // CHECK: attn.load_tile %{{.*}}[%[[B]], %[[H]], %[[T]]] rows_per_head %{{.*}} start %{{.*}} bounds %{{.*}} : memref<?x?x?x32xf32> -> tensor<64x32xf32>
    %qs = attn.load_tile %Q[%b, %h, %t] rows_per_head %rph start %n bounds %rows : memref<?x?x?x32xf32> -> tensor<64x32xf32>
    // CHECK: attn.store_tile %{{.*}}, %{{.*}}[%[[B]], %[[H]], %[[T]]] rows_per_head %{{.*}} start %{{.*}} bounds %{{.*}} : tensor<64x32xf32>, memref<?x?x?x32xf32>
    attn.store_tile %qs, %O[%b, %h, %t] rows_per_head %rph start %n bounds %rows : tensor<64x32xf32>, memref<?x?x?x32xf32>
    // An atomic sum into the rows (the backward's dQ accumulator).
    // CHECK: attn.store_tile %{{.*}}, %{{.*}}[%[[B]], %[[H]], %[[T]]] accumulate bounds %{{.*}} : tensor<64x32xf32>, memref<?x?x?x32xf32>
    attn.store_tile %q, %O[%b, %h, %t] accumulate bounds %rows : tensor<64x32xf32>, memref<?x?x?x32xf32>
  }
  return
}

// -----

// The other mapping and schedule: mma.sync (plain schedule), and wgmma
// with softmax_overlaps_pv.
// CHECK-LABEL: func.func @config_mma_sync
// CHECK-SAME: #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 64, block_n = 64, warps = 4, min_ctas_per_sm = 2, stages = 2, q_in_registers = true, schedule = "plain", ordered_issue = false, reverse_grid = true, pack_gqa = false, conditional_rescale = true>
func.func @config_mma_sync() attributes {attn.config = #attn.config<
    mapping = "mma.sync", chip = "sm_80", block_m = 64, block_n = 64,
    warps = 4, min_ctas_per_sm = 2, stages = 2, q_in_registers = true,
    schedule = "plain", ordered_issue = false, reverse_grid = true,
    pack_gqa = false, conditional_rescale = true>} {
  return
}

// CHECK-LABEL: func.func @config_softmax_overlaps_pv
// CHECK-SAME: schedule = "softmax_overlaps_pv"
func.func @config_softmax_overlaps_pv() attributes {attn.config = #attn.config<
    mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128,
    warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false,
    schedule = "softmax_overlaps_pv", ordered_issue = false,
    reverse_grid = false, pack_gqa = false, conditional_rescale = false>} {
  return
}

// -----

// CHECK-LABEL: func.func @matmul
func.func @matmul(%a: tensor<64x128xbf16>, %b: tensor<32x128xbf16>,
                  %c: tensor<128x32xbf16>, %d: tensor<128x64xbf16>,
                  %acc: tensor<64x32xf32>, %acc2: tensor<64x64xf32>,
                  %f: tensor<16x8xf32>, %g: tensor<8x16xf32>,
                  %h: tensor<16x16xf32>) -> (tensor<64x32xf32>, tensor<64x32xf32>, tensor<16x16xf32>, tensor<16x16xf32>) {
  // Q·Kᵀ: lhs M×K, rhs N×K.
  // CHECK: attn.matmul %{{.*}}, %{{.*}}, %{{.*}} transpose_rhs : tensor<64x128xbf16>, tensor<32x128xbf16>, tensor<64x32xf32>
  %0 = attn.matmul %a, %b, %acc transpose_rhs : tensor<64x128xbf16>, tensor<32x128xbf16>, tensor<64x32xf32>
  // Plain: lhs M×K, rhs K×N.
  // CHECK: attn.matmul %{{.*}}, %{{.*}}, %{{.*}} : tensor<64x128xbf16>, tensor<128x32xbf16>, tensor<64x32xf32>
  %1 = attn.matmul %a, %c, %0 : tensor<64x128xbf16>, tensor<128x32xbf16>, tensor<64x32xf32>
  // Pᵀ·dO: lhs K×M, rhs K×N.
  // CHECK: attn.matmul %{{.*}}, %{{.*}}, %{{.*}} transpose_lhs : tensor<128x64xbf16>, tensor<128x64xbf16>, tensor<64x64xf32>
  %2 = attn.matmul %d, %d, %acc2 transpose_lhs : tensor<128x64xbf16>, tensor<128x64xbf16>, tensor<64x64xf32>
  // Both transposed, f32 operands: lhs K×M, rhs N×K.
  // CHECK: attn.matmul %{{.*}}, %{{.*}}, %{{.*}} transpose_lhs transpose_rhs : tensor<8x16xf32>, tensor<16x8xf32>, tensor<16x16xf32>
  %3 = attn.matmul %g, %f, %h transpose_lhs transpose_rhs : tensor<8x16xf32>, tensor<16x8xf32>, tensor<16x16xf32>
  // CHECK: attn.matmul %{{.*}}, %{{.*}}, %{{.*}} : tensor<16x8xf32>, tensor<8x16xf32>, tensor<16x16xf32>
  %4 = attn.matmul %f, %g, %3 : tensor<16x8xf32>, tensor<8x16xf32>, tensor<16x16xf32>
  return %0, %1, %3, %4 : tensor<64x32xf32>, tensor<64x32xf32>, tensor<16x16xf32>, tensor<16x16xf32>
}

// -----

// CHECK-LABEL: func.func @maps
func.func @maps(%s: tensor<64x32xf32>, %m: tensor<64xf32>, %row: index,
                %col: index, %p: tensor<64x32xbf16>)
    -> (tensor<64x32xf32>, tensor<64x32xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x32xi1>, tensor<64x32xbf16>) {
  %neginf = arith.constant 0xFF800000 : f32
  // 2-D map with offsets (the causal mask).
  // CHECK: attn.map(%{{.*}} : tensor<64x32xf32>) at [%{{.*}}, %{{.*}}] -> tensor<64x32xf32> {
  // CHECK-NEXT: ^bb0(%[[I:.*]]: index, %[[J:.*]]: index, %[[X:.*]]: f32):
  // CHECK-NEXT: %[[H:.*]] = arith.cmpi ugt, %[[J]], %[[I]] : index
  // CHECK-NEXT: %[[Y:.*]] = arith.select %[[H]], %{{.*}}, %[[X]] : f32
  // CHECK-NEXT: attn.yield %[[Y]] : f32
  // CHECK-NEXT: }
  %0 = attn.map(%s : tensor<64x32xf32>) at [%row, %col] -> tensor<64x32xf32> {
  ^bb0(%i: index, %j: index, %x: f32):
    %hidden = arith.cmpi ugt, %j, %i : index
    %y = arith.select %hidden, %neginf, %x : f32
    attn.yield %y : f32
  }
  // 2-D map of a tile and a row tile broadcast along the columns, no
  // offsets.
  // CHECK: attn.map(%{{.*}}, %{{.*}} : tensor<64x32xf32>, tensor<64xf32>) -> tensor<64x32xf32> {
  // CHECK-NEXT: ^bb0(%{{.*}}: index, %{{.*}}: index, %[[X:.*]]: f32, %[[R:.*]]: f32):
  // CHECK-NEXT: arith.subf %[[X]], %[[R]] : f32
  %1 = attn.map(%0, %m : tensor<64x32xf32>, tensor<64xf32>) -> tensor<64x32xf32> {
  ^bb0(%i: index, %j: index, %x: f32, %r: f32):
    %d = arith.subf %x, %r : f32
    %e = math.exp2 %d : f32
    attn.yield %e : f32
  }
  // 1-D map with an offset.
  // CHECK: attn.map(%{{.*}}, %{{.*}} : tensor<64xf32>, tensor<64xf32>) at [%{{.*}}] -> tensor<64xf32> {
  // CHECK-NEXT: ^bb0(%{{.*}}: index, %{{.*}}: f32, %{{.*}}: f32):
  %2 = attn.map(%m, %m : tensor<64xf32>, tensor<64xf32>) at [%row] -> tensor<64xf32> {
  ^bb0(%i: index, %a: f32, %b: f32):
    %d = arith.maximumf %a, %b : f32
    attn.yield %d : f32
  }
  // 1-D map without inputs or offsets (a row index ramp).
  // CHECK: attn.map -> tensor<64xf32> {
  // CHECK-NEXT: ^bb0(%{{.*}}: index):
  %3 = attn.map -> tensor<64xf32> {
  ^bb0(%i: index):
    %n = arith.index_cast %i : index to i32
    %f = arith.sitofp %n : i32 to f32
    attn.yield %f : f32
  }
  // 2-D map without inputs, with offsets, to another element type.
  // CHECK: attn.map at [%{{.*}}, %{{.*}}] -> tensor<64x32xi1> {
  // CHECK-NEXT: ^bb0(%{{.*}}: index, %{{.*}}: index):
  %4 = attn.map at [%row, %col] -> tensor<64x32xi1> {
  ^bb0(%i: index, %j: index):
    %c = arith.cmpi ult, %j, %i : index
    attn.yield %c : i1
  }
  // A map that rounds f32 to bf16, mixing i1 and f32 inputs.
  // CHECK: attn.map(%{{.*}}, %{{.*}} : tensor<64x32xi1>, tensor<64x32xf32>) -> tensor<64x32xbf16> {
  // CHECK-NEXT: ^bb0(%{{.*}}: index, %{{.*}}: index, %{{.*}}: i1, %{{.*}}: f32):
  // CHECK: attn.yield %{{.*}} : bf16
  %5 = attn.map(%4, %1 : tensor<64x32xi1>, tensor<64x32xf32>) -> tensor<64x32xbf16> {
  ^bb0(%i: index, %j: index, %c: i1, %x: f32):
    %z = arith.constant 0.0 : f32
    %y = arith.select %c, %x, %z : f32
    %t = arith.truncf %y : f32 to bf16
    attn.yield %t : bf16
  }
  return %0, %1, %2, %3, %4, %5 : tensor<64x32xf32>, tensor<64x32xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x32xi1>, tensor<64x32xbf16>
}

// -----

// CHECK-LABEL: func.func @reduce
func.func @reduce(%s: tensor<64x32xf32>, %m: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  // CHECK: attn.reduce <max> %{{.*}}, %{{.*}} : tensor<64x32xf32>, tensor<64xf32>
  %0 = attn.reduce <max> %s, %m : tensor<64x32xf32>, tensor<64xf32>
  // CHECK: attn.reduce <add> %{{.*}}, %{{.*}} : tensor<64x32xf32>, tensor<64xf32>
  %1 = attn.reduce <add> %s, %0 : tensor<64x32xf32>, tensor<64xf32>
  return %0, %1 : tensor<64xf32>, tensor<64xf32>
}

// -----

// Tiles with attn_nv layouts: the generic tile ops ignore the encoding.
#acc = #attn_nv.acc<warps = 4>
#rows = #attn_nv.rows<warps = 4>

// CHECK-LABEL: func.func @encoded_tiles
func.func @encoded_tiles(%s: tensor<64x32xf32, #acc>, %m: tensor<64xf32, #rows>)
    -> (tensor<64x32xf32, #acc>, tensor<64xf32, #rows>) {
  // CHECK: attn.map(%{{.*}}, %{{.*}} : tensor<64x32xf32, #attn_nv.acc<warps = 4>>, tensor<64xf32, #attn_nv.rows<warps = 4>>) -> tensor<64x32xf32, #attn_nv.acc<warps = 4>> {
  // CHECK-NEXT: ^bb0(%{{.*}}: index, %{{.*}}: index, %{{.*}}: f32, %{{.*}}: f32):
  %0 = attn.map(%s, %m : tensor<64x32xf32, #acc>, tensor<64xf32, #rows>) -> tensor<64x32xf32, #acc> {
  ^bb0(%i: index, %j: index, %x: f32, %r: f32):
    %d = arith.subf %x, %r : f32
    attn.yield %d : f32
  }
  // CHECK: attn.reduce <max> %{{.*}}, %{{.*}} : tensor<64x32xf32, #attn_nv.acc<warps = 4>>, tensor<64xf32, #attn_nv.rows<warps = 4>>
  %1 = attn.reduce <max> %0, %m : tensor<64x32xf32, #acc>, tensor<64xf32, #rows>
  return %0, %1 : tensor<64x32xf32, #acc>, tensor<64xf32, #rows>
}

// -----

// The backward pass: whole tensors, a softcap score_mod and a window mask.
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>

// CHECK-LABEL: func.func @sdpa_backward
func.func @sdpa_backward(%q: !t, %k: !t, %v: !t, %o: !t, %do: !t, %lse: !lse,
                         %dq: !t, %dk: !t, %dv: !t, %delta: !lse, %s: f32,
                         %c: f32, %w: index, %acc: memref<?x?x?x64xf32>) {
  // CHECK: attn.sdpa_backward %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} into %{{.*}}, %{{.*}}, %{{.*}} delta %{{.*}} scale %{{.*}} mask <causal> positive_scale :
  attn.sdpa_backward %q, %k, %v, %o, %do, %lse into %dq, %dk, %dv delta %delta
      scale %s mask <causal> positive_scale
      : !t, !t, !t, !t, !lse -> !t, !t, !t, !lse
  // With dQ's f32 accumulator (the atomic form).
  // CHECK: attn.sdpa_backward {{.*}} delta %{{.*}} dq_accum %{{.*}} : memref<?x?x?x64xf32> scale %{{.*}} :
  attn.sdpa_backward %q, %k, %v, %o, %do, %lse into %dq, %dk, %dv delta %delta
      dq_accum %acc : memref<?x?x?x64xf32> scale %s
      : !t, !t, !t, !t, !lse -> !t, !t, !t, !lse
  // CHECK: attn.sdpa_backward {{.*}} captures(%{{.*}}, %{{.*}} : f32, index) score_mod {
  // CHECK: math.tanh
  // CHECK: } mask_mod {
  attn.sdpa_backward %q, %k, %v, %o, %do, %lse into %dq, %dk, %dv delta %delta
      captures(%c, %w : f32, index) score_mod {
  ^bb0(%x: f32, %b: index, %h: index, %i: index, %j: index, %cap: f32, %n: index):
    %y = arith.divf %x, %cap : f32
    %t = math.tanh %y : f32
    %z = arith.mulf %t, %cap : f32
    attn.yield %z : f32
  } mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index, %cap: f32, %n: index):
    %d = arith.subi %i, %j : index
    %in = arith.cmpi slt, %d, %n : index
    attn.yield %in : i1
  } : !t, !t, !t, !t, !lse -> !t, !t, !t, !lse
  return
}

// -----

// A backward step, queries-major and keys-major; row terms loaded as a row
// tile and as a 1xR tile; a map broadcasting a 1xC tile along its rows.
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>

// CHECK-LABEL: func.func @score_grad
func.func @score_grad(%l: !lse, %q: tensor<16x64xbf16>, %k: tensor<32x64xbf16>,
                      %i: index, %s: f32, %st: tensor<32x16xf32>) {
  // CHECK: attn.load_tile %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] bounds %{{.*}} : memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>> -> tensor<16xf32>
  %row = attn.load_tile %l[%i, %i, %i] bounds %i : !lse -> tensor<16xf32>
  // CHECK: attn.load_tile %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] bounds %{{.*}} : memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>> -> tensor<1x16xf32>
  %col = attn.load_tile %l[%i, %i, %i] bounds %i : !lse -> tensor<1x16xf32>
  // CHECK: attn.score_grad %{{.*}} at [%{{.*}}, %{{.*}}] bounds [%{{.*}}, %{{.*}}] scale %{{.*}} positive_scale : tensor<16x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<16x64xbf16>, tensor<16xf32> -> tensor<16x32xbf16>
  %p, %ds = attn.score_grad %q, %k, %k, %q, %row, %row at [%i, %i] bounds [%i, %i]
      scale %s positive_scale
      : tensor<16x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<16x64xbf16>, tensor<16xf32> -> tensor<16x32xbf16>
  // CHECK: attn.score_grad {{.*}} keys_major : {{.*}} tensor<1x16xf32> -> tensor<32x16xbf16>
  %pt, %dst = attn.score_grad %q, %k, %k, %q, %col, %col at [%i, %i] bounds [%i, %i]
      scale %s keys_major
      : tensor<16x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<16x64xbf16>, tensor<1x16xf32> -> tensor<32x16xbf16>
  // CHECK: attn.map(%{{.*}}, %{{.*}} : tensor<32x16xf32>, tensor<1x16xf32>) -> tensor<32x16xf32>
  %m = attn.map(%st, %col : tensor<32x16xf32>, tensor<1x16xf32>) -> tensor<32x16xf32> {
  ^bb0(%a: index, %b: index, %x: f32, %y: f32):
    %z = arith.subf %x, %y : f32
    attn.yield %z : f32
  }
  return
}
