// RUN: attn-opt %s -split-input-file -verify-diagnostics

// One test per verifier constraint of the attn_nv dialect: the layouts'
// verifyEncoding (AttnNVDialect.cpp), !attn_nv.smem's parser and verifier,
// then the op verifiers in the order of AttnNVOps.cpp.

// expected-error @+1 {{#attn_nv.acc needs a 2-D tile}}
func.func @acc_rank(%x: tensor<64xf32, #attn_nv.acc<warps = 4>>) {
  return
}

// -----

// expected-error @+1 {{#attn_nv.acc needs a positive warp count, got 0}}
func.func @acc_warps(%x: tensor<64x64xf32, #attn_nv.acc<warps = 0>>) {
  return
}

// -----

// expected-error @+1 {{#attn_nv.acc needs rows in whole 16-row tiles for each of 4 warps, got shape 32}}
func.func @acc_rows(%x: tensor<32x64xf32, #attn_nv.acc<warps = 4>>) {
  return
}

// -----

// expected-error @+1 {{#attn_nv.acc needs rows in whole 16-row tiles for each of 1 warps, got shape 24}}
func.func @acc_rows_not_16(%x: tensor<24x64xf32, #attn_nv.acc<warps = 1>>) {
  return
}

// -----

// expected-error @+1 {{#attn_nv.acc distributes static tiles only}}
func.func @acc_dynamic_rows(%x: tensor<?x64xf32, #attn_nv.acc<warps = 4>>) {
  return
}

// -----

// expected-error @+1 {{#attn_nv.acc needs columns in 8-column blocks, got 12}}
func.func @acc_columns(%x: tensor<64x12xf32, #attn_nv.acc<warps = 4>>) {
  return
}

// -----

// expected-error @+1 {{#attn_nv.acc needs col_groups dividing warps = 4, got 3}}
func.func @acc_col_groups(%x: tensor<64x96xf32, #attn_nv.acc<warps = 4, col_groups = 3>>) {
  return
}

// -----

// Each column group holds whole 8-column blocks: 72 columns over 2 groups
// are 36 a group.
// expected-error @+1 {{#attn_nv.acc needs columns in 8-column blocks for each column group, got 72}}
func.func @acc_col_groups_columns(%x: tensor<64x72xf32, #attn_nv.acc<warps = 8, col_groups = 2>>) {
  return
}

// -----

// expected-error @+1 {{#attn_nv.rows needs a 1-D tile}}
func.func @rows_rank(%x: tensor<64x64xf32, #attn_nv.rows<warps = 4>>) {
  return
}

// -----

// expected-error @+1 {{#attn_nv.rows needs a positive warp count, got -4}}
func.func @rows_warps(%x: tensor<64xf32, #attn_nv.rows<warps = -4, partial = true>>) {
  return
}

// -----

// expected-error @+1 {{#attn_nv.rows needs rows in whole 16-row tiles for each of 8 warps, got shape 64}}
func.func @rows_rows(%x: tensor<64xf32, #attn_nv.rows<warps = 8>>) {
  return
}

// -----

// expected-error @+1 {{#attn_nv.operand_a needs a 2-D tile}}
func.func @operand_a_rank(%x: tensor<64xbf16, #attn_nv.operand_a<warps = 4>>) {
  return
}

// -----

// expected-error @+1 {{#attn_nv.operand_a holds bf16, f16 or f8E4M3FN, got 'f32'}}
func.func @operand_a_element_type(%x: tensor<64x64xf32, #attn_nv.operand_a<warps = 4>>) {
  return
}

// -----

// expected-error @+1 {{#attn_nv.operand_a needs a positive warp count, got 0}}
func.func @operand_a_warps(%x: tensor<64x64xbf16, #attn_nv.operand_a<warps = 0>>) {
  return
}

// -----

// expected-error @+1 {{#attn_nv.operand_a needs rows in whole 16-row tiles for each of 4 warps, got shape 48}}
func.func @operand_a_rows(%x: tensor<48x64xf16, #attn_nv.operand_a<warps = 4>>) {
  return
}

// -----

// expected-error @+1 {{#attn_nv.operand_a needs columns in 8-column halves of 16-column k blocks, got 20}}
func.func @operand_a_columns(%x: tensor<64x20xbf16, #attn_nv.operand_a<warps = 4>>) {
  return
}

// -----

// expected-error @+1 {{!attn_nv.smem is a tile (R×C) or stages of tiles (S×R×C), got rank 1}}
func.func @smem_rank_1(%x: !attn_nv.smem<64xbf16, padded>) {
  return
}

// -----

// expected-error @+1 {{!attn_nv.smem is a tile (R×C) or stages of tiles (S×R×C), got rank 4}}
func.func @smem_rank_4(%x: !attn_nv.smem<2x2x64x64xbf16, padded>) {
  return
}

// -----

// expected-error @+1 {{!attn_nv.smem needs positive sizes}}
func.func @smem_sizes(%x: !attn_nv.smem<0x64x64xbf16, swizzle_128b>) {
  return
}

// -----

// expected-error @+1 {{!attn_nv.smem holds bf16, f16, f32 or f8E4M3FN tiles, got 'f64'}}
func.func @smem_element_type(%x: !attn_nv.smem<64x64xf64, padded>) {
  return
}

// -----

// expected-error @+1 {{!attn_nv.smem swizzle_pairs is the layout of f32 tables read in pairs, got 'bf16'}}
func.func @smem_pairs_element_type(%x: !attn_nv.smem<64x64xbf16, swizzle_pairs>) {
  return
}

// -----

// An f32 shared tile (a staged table) is no tensor-core operand.
func.func @product_f32_operand(%l: !attn_nv.smem<64x64xf32, swizzle_128b>, %r: !attn_nv.smem<64x64xf32, swizzle_128b>, %a: tensor<64x64xf32, #attn_nv.acc<warps = 4>>) {
  // expected-error @+1 {{'attn_nv.wgmma' op multiplies 16-bit tiles (or, on wgmma, f8E4M3FN ones), got '!attn_nv.smem<64x64xf32, swizzle_128b>'}}
  %0 = attn_nv.wgmma %l, %r, %a transpose_rhs : !attn_nv.smem<64x64xf32, swizzle_128b>, !attn_nv.smem<64x64xf32, swizzle_128b>, tensor<64x64xf32, #attn_nv.acc<warps = 4>>
  return
}

// -----

// expected-error @+1 {{!attn_nv.smem rows are copied in 16-byte pieces: columns must be a multiple of 8, got 36}}
func.func @smem_columns(%x: !attn_nv.smem<64x36xbf16, padded>) {
  return
}

// -----

// A swizzled tile of 72 columns is a type (two 64-column blocks, the
// second partly used), but wgmma reduces over 16 columns at a time and
// nothing zero-fills a swizzled tile past its columns.
func.func @wgmma_k_multiple_of_16(%l: !attn_nv.smem<64x72xbf16, swizzle_128b>, %r: !attn_nv.smem<64x72xbf16, swizzle_128b>, %a: tensor<64x64xf32, #attn_nv.acc<warps = 4>>) {
  // expected-error @+1 {{'attn_nv.wgmma' op wgmma reduces in steps of 16 elements (32 bytes): needs K a multiple of 16, got 72}}
  %0 = attn_nv.wgmma %l, %r, %a transpose_rhs : !attn_nv.smem<64x72xbf16, swizzle_128b>, !attn_nv.smem<64x72xbf16, swizzle_128b>, tensor<64x64xf32, #attn_nv.acc<warps = 4>>
  return
}

// -----

// expected-error @+1 {{expected a shared layout (padded, swizzle_128b), got 'swizzle_64b'}}
func.func @smem_layout_keyword(%x: !attn_nv.smem<64x64xbf16, swizzle_64b>) {
  return
}

// -----

// expected-error @+1 {{expected a shared layout (padded, swizzle_128b), got 'Padded'}}
func.func @smem_layout_string(%x: !attn_nv.smem<64x64xbf16, "Padded">) {
  return
}

// -----

func.func @alloc_offset() {
  // expected-error @+1 {{'attn_nv.alloc_shared' op offset must not be negative, got -1024}}
  %0 = attn_nv.alloc_shared {offset = -1024} : !attn_nv.smem<64x64xbf16, padded>
  return
}

// -----

func.func @alloc_result_type() {
  // expected-error @+1 {{'attn_nv.alloc_shared' op result #0 must be shared-memory tile, but got 'memref<64x64xbf16, 3>'}}
  %0 = "attn_nv.alloc_shared"() : () -> memref<64x64xbf16, 3>
  return
}

// -----

func.func @slot_unstaged(%b: !attn_nv.smem<64x64xbf16, padded>, %i: index) {
  // expected-error @+1 {{'attn_nv.slot' op needs a staged (S×R×C) buffer, got '!attn_nv.smem<64x64xbf16, padded>'}}
  %0 = attn_nv.slot %b[%i] : !attn_nv.smem<64x64xbf16, padded> -> !attn_nv.smem<64x64xbf16, padded>
  return
}

// -----

func.func @slot_result_shape(%b: !attn_nv.smem<2x64x64xbf16, padded>, %i: index) {
  // expected-error @+1 {{'attn_nv.slot' op result must be '!attn_nv.smem<64x64xbf16, padded>', got '!attn_nv.smem<64x128xbf16, padded>'}}
  %0 = attn_nv.slot %b[%i] : !attn_nv.smem<2x64x64xbf16, padded> -> !attn_nv.smem<64x128xbf16, padded>
  return
}

// -----

func.func @slot_result_layout(%b: !attn_nv.smem<3x64x64xbf16, swizzle_128b>, %i: index) {
  // expected-error @+1 {{'attn_nv.slot' op result must be '!attn_nv.smem<64x64xbf16, swizzle_128b>', got '!attn_nv.smem<64x64xbf16, padded>'}}
  %0 = attn_nv.slot %b[%i] : !attn_nv.smem<3x64x64xbf16, swizzle_128b> -> !attn_nv.smem<64x64xbf16, padded>
  return
}

// -----

func.func @copy_source_rank(%src: memref<?x?x64xbf16>, %dst: !attn_nv.smem<64x64xbf16, padded>, %i: index) {
  // expected-error @+1 {{'attn_nv.copy_async' op copies tiles of a (B, H, N, D) memref, got rank 3}}
  attn_nv.copy_async %src[%i, %i, %i] bounds %i into %dst : memref<?x?x64xbf16>, !attn_nv.smem<64x64xbf16, padded>
  return
}

// -----

func.func @copy_strided_packed(%src: memref<?x?x?x64xbf16>, %dst: !attn_nv.smem<64x64xbf16, padded>, %i: index) {
  // expected-error @+1 {{'attn_nv.copy_async' op strided copies whole rows of one head: no 'rows_per_head', 'pages' or 'transposed'}}
  attn_nv.copy_async %src[%i, %i, %i] rows_per_head %i bounds %i into %dst strided : memref<?x?x?x64xbf16>, !attn_nv.smem<64x64xbf16, padded>
  return
}

// -----

func.func @copy_staged_dest(%src: memref<?x?x?x64xbf16>, %dst: !attn_nv.smem<2x64x64xbf16, padded>, %i: index) {
  // expected-error @+1 {{'attn_nv.copy_async' op copies into one tile, got '!attn_nv.smem<2x64x64xbf16, padded>'}}
  attn_nv.copy_async %src[%i, %i, %i] bounds %i into %dst : memref<?x?x?x64xbf16>, !attn_nv.smem<2x64x64xbf16, padded>
  return
}

// -----

func.func @copy_start_unpacked(%src: memref<?x?x?x64xbf16>, %dst: !attn_nv.smem<64x64xbf16, padded>, %i: index) {
  // expected-error @+1 {{'attn_nv.copy_async' op has a 'start' without 'rows_per_head' (start offsets the rows of packed heads)}}
  attn_nv.copy_async %src[%i, %i, %i] start %i bounds %i into %dst : memref<?x?x?x64xbf16>, !attn_nv.smem<64x64xbf16, padded>
  return
}

// -----

func.func @copy_element_type(%src: memref<?x?x?x64xf16>, %dst: !attn_nv.smem<64x64xbf16, padded>, %i: index) {
  // expected-error @+1 {{'attn_nv.copy_async' op source and destination element types differ ('f16' vs 'bf16')}}
  attn_nv.copy_async %src[%i, %i, %i] bounds %i into %dst : memref<?x?x?x64xf16>, !attn_nv.smem<64x64xbf16, padded>
  return
}

// -----

func.func @copy_columns(%src: memref<?x?x?x128xbf16>, %dst: !attn_nv.smem<64x64xbf16, swizzle_128b>, %i: index) {
  // expected-error @+1 {{'attn_nv.copy_async' op destination tile has 64 columns but the source rows have 128 elements}}
  attn_nv.copy_async %src[%i, %i, %i] bounds %i into %dst : memref<?x?x?x128xbf16>, !attn_nv.smem<64x64xbf16, swizzle_128b>
  return
}

// -----

func.func @copy_dynamic_columns(%src: memref<?x?x?x?xbf16>, %dst: !attn_nv.smem<64x64xbf16, padded>, %i: index) {
  // expected-error @+1 {{'attn_nv.copy_async' op destination tile has 64 columns but the source rows have ? elements}}
  attn_nv.copy_async %src[%i, %i, %i] bounds %i into %dst : memref<?x?x?x?xbf16>, !attn_nv.smem<64x64xbf16, padded>
  return
}

// -----

func.func @copy_inner_stride(%src: memref<?x?x?x64xbf16, strided<[?, ?, ?, 2]>>, %dst: !attn_nv.smem<64x64xbf16, padded>, %i: index) {
  // expected-error @+1 {{'attn_nv.copy_async' op source rows must be contiguous (unit innermost stride)}}
  attn_nv.copy_async %src[%i, %i, %i] bounds %i into %dst : memref<?x?x?x64xbf16, strided<[?, ?, ?, 2]>>, !attn_nv.smem<64x64xbf16, padded>
  return
}

// -----

func.func @copy_rows_per_head_stride(%src: memref<1x2x8x64xbf16, strided<[1024, 512, 64, 2]>>, %dst: !attn_nv.smem<64x64xbf16, padded>, %i: index) {
  // expected-error @+1 {{'attn_nv.copy_async' op source rows must be contiguous (unit innermost stride)}}
  attn_nv.copy_async %src[%i, %i, %i] rows_per_head %i bounds %i into %dst : memref<1x2x8x64xbf16, strided<[1024, 512, 64, 2]>>, !attn_nv.smem<64x64xbf16, padded>
  return
}

// -----

func.func @load_operand_swizzled(%s: !attn_nv.smem<64x64xbf16, swizzle_128b>) {
  // expected-error @+1 {{'attn_nv.load_operand' op 'source' must be one padded shared-memory tile, got '!attn_nv.smem<64x64xbf16, swizzle_128b>'}}
  %0 = attn_nv.load_operand %s : !attn_nv.smem<64x64xbf16, swizzle_128b> -> tensor<64x64xbf16, #attn_nv.operand_a<warps = 4>>
  return
}

// -----

func.func @load_operand_staged(%s: !attn_nv.smem<2x64x64xbf16, padded>) {
  // expected-error @+1 {{'attn_nv.load_operand' op 'source' must be one padded shared-memory tile, got '!attn_nv.smem<2x64x64xbf16, padded>'}}
  %0 = attn_nv.load_operand %s : !attn_nv.smem<2x64x64xbf16, padded> -> tensor<64x64xbf16, #attn_nv.operand_a<warps = 4>>
  return
}

// -----

func.func @load_operand_layout(%s: !attn_nv.smem<64x64xbf16, padded>) {
  // expected-error @+1 {{'attn_nv.load_operand' op 'result' must be a tile with layout #attn_nv.operand_a, got 'tensor<64x64xbf16, #attn_nv.acc<warps = 4>>'}}
  %0 = attn_nv.load_operand %s : !attn_nv.smem<64x64xbf16, padded> -> tensor<64x64xbf16, #attn_nv.acc<warps = 4>>
  return
}

// -----

func.func @load_operand_no_layout(%s: !attn_nv.smem<64x64xbf16, padded>) {
  // expected-error @+1 {{'attn_nv.load_operand' op 'result' must be a tile with layout #attn_nv.operand_a, got 'tensor<64x64xbf16>'}}
  %0 = attn_nv.load_operand %s : !attn_nv.smem<64x64xbf16, padded> -> tensor<64x64xbf16>
  return
}

// -----

func.func @load_operand_shape(%s: !attn_nv.smem<64x64xbf16, padded>) {
  // expected-error @+1 {{'attn_nv.load_operand' op result 'tensor<64x32xbf16, #attn_nv.operand_a<warps = 4>>' must have the shape and element type of '!attn_nv.smem<64x64xbf16, padded>'}}
  %0 = attn_nv.load_operand %s : !attn_nv.smem<64x64xbf16, padded> -> tensor<64x32xbf16, #attn_nv.operand_a<warps = 4>>
  return
}

// -----

func.func @load_operand_element_type(%s: !attn_nv.smem<64x64xbf16, padded>) {
  // expected-error @+1 {{'attn_nv.load_operand' op result 'tensor<64x64xf16, #attn_nv.operand_a<warps = 4>>' must have the shape and element type of '!attn_nv.smem<64x64xbf16, padded>'}}
  %0 = attn_nv.load_operand %s : !attn_nv.smem<64x64xbf16, padded> -> tensor<64x64xf16, #attn_nv.operand_a<warps = 4>>
  return
}

// -----

func.func @convert_rows_not_partial(%s: tensor<64xf32, #attn_nv.rows<warps = 4>>) {
  // expected-error @+1 {{'attn_nv.convert_layout' op converts f32 partial row sums to f32 rows of the same warps, got 'tensor<64xf32, #attn_nv.rows<warps = 4>>' -> 'tensor<64xf32, #attn_nv.rows<warps = 4>>'}}
  %0 = attn_nv.convert_layout %s : tensor<64xf32, #attn_nv.rows<warps = 4>> -> tensor<64xf32, #attn_nv.rows<warps = 4>>
  return
}

// -----

func.func @convert_rows_to_partial(%s: tensor<64xf32, #attn_nv.rows<warps = 4, partial = true>>) {
  // expected-error @+1 {{'attn_nv.convert_layout' op converts f32 partial row sums to f32 rows of the same warps, got 'tensor<64xf32, #attn_nv.rows<warps = 4, partial = true>>' -> 'tensor<64xf32, #attn_nv.rows<warps = 4, partial = true>>'}}
  %0 = attn_nv.convert_layout %s : tensor<64xf32, #attn_nv.rows<warps = 4, partial = true>> -> tensor<64xf32, #attn_nv.rows<warps = 4, partial = true>>
  return
}

// -----

func.func @convert_rows_to_acc(%s: tensor<64xf32, #attn_nv.rows<warps = 4, partial = true>>) {
  // expected-error @+1 {{'attn_nv.convert_layout' op converts f32 partial row sums to f32 rows of the same warps, got 'tensor<64xf32, #attn_nv.rows<warps = 4, partial = true>>' -> 'tensor<64x8xf32, #attn_nv.acc<warps = 4>>'}}
  %0 = attn_nv.convert_layout %s : tensor<64xf32, #attn_nv.rows<warps = 4, partial = true>> -> tensor<64x8xf32, #attn_nv.acc<warps = 4>>
  return
}

// -----

func.func @convert_rows_warps(%s: tensor<64xf32, #attn_nv.rows<warps = 2, partial = true>>) {
  // expected-error @+1 {{'attn_nv.convert_layout' op converts f32 partial row sums to f32 rows of the same warps, got 'tensor<64xf32, #attn_nv.rows<warps = 2, partial = true>>' -> 'tensor<64xf32, #attn_nv.rows<warps = 4>>'}}
  %0 = attn_nv.convert_layout %s : tensor<64xf32, #attn_nv.rows<warps = 2, partial = true>> -> tensor<64xf32, #attn_nv.rows<warps = 4>>
  return
}

// -----

func.func @convert_rows_count(%s: tensor<128xf32, #attn_nv.rows<warps = 4, partial = true>>) {
  // expected-error @+1 {{'attn_nv.convert_layout' op converts f32 partial row sums to f32 rows of the same warps, got 'tensor<128xf32, #attn_nv.rows<warps = 4, partial = true>>' -> 'tensor<64xf32, #attn_nv.rows<warps = 4>>'}}
  %0 = attn_nv.convert_layout %s : tensor<128xf32, #attn_nv.rows<warps = 4, partial = true>> -> tensor<64xf32, #attn_nv.rows<warps = 4>>
  return
}

// -----

func.func @convert_rows_element_type(%s: tensor<64xf16, #attn_nv.rows<warps = 4, partial = true>>) {
  // expected-error @+1 {{'attn_nv.convert_layout' op converts f32 partial row sums to f32 rows of the same warps, got 'tensor<64xf16, #attn_nv.rows<warps = 4, partial = true>>' -> 'tensor<64xf16, #attn_nv.rows<warps = 4>>'}}
  %0 = attn_nv.convert_layout %s : tensor<64xf16, #attn_nv.rows<warps = 4, partial = true>> -> tensor<64xf16, #attn_nv.rows<warps = 4>>
  return
}

// -----

func.func @convert_source_layout(%s: tensor<64x64xbf16, #attn_nv.operand_a<warps = 4>>) {
  // expected-error @+1 {{'attn_nv.convert_layout' op 'source' must be a tile with layout #attn_nv.acc, got 'tensor<64x64xbf16, #attn_nv.operand_a<warps = 4>>'}}
  %0 = attn_nv.convert_layout %s : tensor<64x64xbf16, #attn_nv.operand_a<warps = 4>> -> tensor<64x64xbf16, #attn_nv.operand_a<warps = 4>>
  return
}

// -----

func.func @convert_source_no_layout(%s: tensor<64x64xf32>) {
  // expected-error @+1 {{'attn_nv.convert_layout' op 'source' must be a tile with layout #attn_nv.acc, got 'tensor<64x64xf32>'}}
  %0 = attn_nv.convert_layout %s : tensor<64x64xf32> -> tensor<64x64xbf16, #attn_nv.operand_a<warps = 4>>
  return
}

// -----

func.func @convert_result_layout(%s: tensor<64x64xf32, #attn_nv.acc<warps = 4>>) {
  // expected-error @+1 {{'attn_nv.convert_layout' op 'result' must be a tile with layout #attn_nv.operand_a, got 'tensor<64x64xf32, #attn_nv.acc<warps = 4>>'}}
  %0 = attn_nv.convert_layout %s : tensor<64x64xf32, #attn_nv.acc<warps = 4>> -> tensor<64x64xf32, #attn_nv.acc<warps = 4>>
  return
}

// -----

func.func @convert_shape(%s: tensor<64x64xf32, #attn_nv.acc<warps = 4>>) {
  // expected-error @+1 {{'attn_nv.convert_layout' op source and result must have one shape and warp count}}
  %0 = attn_nv.convert_layout %s : tensor<64x64xf32, #attn_nv.acc<warps = 4>> -> tensor<64x32xbf16, #attn_nv.operand_a<warps = 4>>
  return
}

// -----

// A column-split accumulator is not an A operand of any product.
func.func @convert_col_groups(%s: tensor<64x128xf32, #attn_nv.acc<warps = 4, col_groups = 2>>) {
  // expected-error @+1 {{'attn_nv.convert_layout' op source and result must have one shape and warp count (and the source no column groups)}}
  %0 = attn_nv.convert_layout %s : tensor<64x128xf32, #attn_nv.acc<warps = 4, col_groups = 2>> -> tensor<64x64xbf16, #attn_nv.operand_a<warps = 4>>
  return
}

// -----

func.func @convert_warps(%s: tensor<64x64xf32, #attn_nv.acc<warps = 4>>) {
  // expected-error @+1 {{'attn_nv.convert_layout' op source and result must have one shape and warp count}}
  %0 = attn_nv.convert_layout %s : tensor<64x64xf32, #attn_nv.acc<warps = 4>> -> tensor<64x64xbf16, #attn_nv.operand_a<warps = 2>>
  return
}

// -----

func.func @convert_rounding(%s: tensor<64x64xf16, #attn_nv.acc<warps = 4>>) {
  // expected-error @+1 {{'attn_nv.convert_layout' op rounds only f32 to 16 bits, got 'f16' -> 'bf16'}}
  %0 = attn_nv.convert_layout %s : tensor<64x64xf16, #attn_nv.acc<warps = 4>> -> tensor<64x64xbf16, #attn_nv.operand_a<warps = 4>>
  return
}

// -----

func.func @mma_lhs_swizzled(%l: !attn_nv.smem<64x64xbf16, swizzle_128b>, %r: !attn_nv.smem<64x64xbf16, padded>, %a: tensor<64x64xf32, #attn_nv.acc<warps = 4>>) {
  // expected-error @+1 {{'attn_nv.mma' op 'lhs' must be one padded shared-memory tile or an #attn_nv.operand_a tile, got '!attn_nv.smem<64x64xbf16, swizzle_128b>'}}
  %0 = attn_nv.mma %l, %r, %a transpose_rhs : !attn_nv.smem<64x64xbf16, swizzle_128b>, !attn_nv.smem<64x64xbf16, padded>, tensor<64x64xf32, #attn_nv.acc<warps = 4>>
  return
}

// -----

func.func @mma_lhs_acc_layout(%l: tensor<64x64xf32, #attn_nv.acc<warps = 4>>, %r: !attn_nv.smem<64x64xbf16, padded>, %a: tensor<64x64xf32, #attn_nv.acc<warps = 4>>) {
  // expected-error @+1 {{'attn_nv.mma' op 'lhs' must be one padded shared-memory tile or an #attn_nv.operand_a tile, got 'tensor<64x64xf32, #attn_nv.acc<warps = 4>>'}}
  %0 = attn_nv.mma %l, %r, %a : tensor<64x64xf32, #attn_nv.acc<warps = 4>>, !attn_nv.smem<64x64xbf16, padded>, tensor<64x64xf32, #attn_nv.acc<warps = 4>>
  return
}

// -----

func.func @mma_rhs_swizzled(%l: tensor<64x64xbf16, #attn_nv.operand_a<warps = 4>>, %r: !attn_nv.smem<64x64xbf16, swizzle_128b>, %a: tensor<64x64xf32, #attn_nv.acc<warps = 4>>) {
  // expected-error @+1 {{'attn_nv.mma' op 'rhs' must be one padded shared-memory tile, got '!attn_nv.smem<64x64xbf16, swizzle_128b>'}}
  %0 = attn_nv.mma %l, %r, %a : tensor<64x64xbf16, #attn_nv.operand_a<warps = 4>>, !attn_nv.smem<64x64xbf16, swizzle_128b>, tensor<64x64xf32, #attn_nv.acc<warps = 4>>
  return
}

// -----

func.func @mma_rhs_staged(%l: tensor<64x64xbf16, #attn_nv.operand_a<warps = 4>>, %r: !attn_nv.smem<2x64x64xbf16, padded>, %a: tensor<64x64xf32, #attn_nv.acc<warps = 4>>) {
  // expected-error @+1 {{'attn_nv.mma' op 'rhs' must be one padded shared-memory tile, got '!attn_nv.smem<2x64x64xbf16, padded>'}}
  %0 = attn_nv.mma %l, %r, %a : tensor<64x64xbf16, #attn_nv.operand_a<warps = 4>>, !attn_nv.smem<2x64x64xbf16, padded>, tensor<64x64xf32, #attn_nv.acc<warps = 4>>
  return
}

// -----

func.func @mma_acc_layout(%l: tensor<64x64xbf16, #attn_nv.operand_a<warps = 4>>, %r: !attn_nv.smem<64x64xbf16, padded>, %a: tensor<64x64xf32>) {
  // expected-error @+1 {{'attn_nv.mma' op 'acc' must be a tile with layout #attn_nv.acc, got 'tensor<64x64xf32>'}}
  %0 = attn_nv.mma %l, %r, %a : tensor<64x64xbf16, #attn_nv.operand_a<warps = 4>>, !attn_nv.smem<64x64xbf16, padded>, tensor<64x64xf32>
  return
}

// -----

func.func @mma_acc_f32(%l: tensor<64x64xbf16, #attn_nv.operand_a<warps = 4>>, %r: !attn_nv.smem<64x64xbf16, padded>, %a: tensor<64x64xf16, #attn_nv.acc<warps = 4>>) {
  // expected-error @+1 {{'attn_nv.mma' op accumulates in f32, got 'tensor<64x64xf16, #attn_nv.acc<warps = 4>>'}}
  %0 = attn_nv.mma %l, %r, %a : tensor<64x64xbf16, #attn_nv.operand_a<warps = 4>>, !attn_nv.smem<64x64xbf16, padded>, tensor<64x64xf16, #attn_nv.acc<warps = 4>>
  return
}

// -----

// mma.sync's warps own rows only.
func.func @mma_col_groups(%l: tensor<64x64xbf16, #attn_nv.operand_a<warps = 4>>, %r: !attn_nv.smem<64x64xbf16, padded>, %a: tensor<64x64xf32, #attn_nv.acc<warps = 4, col_groups = 2>>) {
  // expected-error @+1 {{'attn_nv.mma' op splits columns over warpgroups on wgmma only, got 'tensor<64x64xf32, #attn_nv.acc<warps = 4, col_groups = 2>>'}}
  %0 = attn_nv.mma %l, %r, %a : tensor<64x64xbf16, #attn_nv.operand_a<warps = 4>>, !attn_nv.smem<64x64xbf16, padded>, tensor<64x64xf32, #attn_nv.acc<warps = 4, col_groups = 2>>
  return
}

// -----

func.func @mma_reduction(%l: tensor<64x64xbf16, #attn_nv.operand_a<warps = 4>>, %r: !attn_nv.smem<32x64xbf16, padded>, %a: tensor<64x64xf32, #attn_nv.acc<warps = 4>>) {
  // expected-error @+1 {{'attn_nv.mma' op shapes do not multiply: lhs 64x64, rhs 32x64, acc 64x64}}
  %0 = attn_nv.mma %l, %r, %a : tensor<64x64xbf16, #attn_nv.operand_a<warps = 4>>, !attn_nv.smem<32x64xbf16, padded>, tensor<64x64xf32, #attn_nv.acc<warps = 4>>
  return
}

// -----

func.func @mma_reduction_transposed(%l: tensor<64x64xbf16, #attn_nv.operand_a<warps = 4>>, %r: !attn_nv.smem<64x32xbf16, padded>, %a: tensor<64x64xf32, #attn_nv.acc<warps = 4>>) {
  // expected-error @+1 {{'attn_nv.mma' op shapes do not multiply: lhs 64x64, rhs 64x32 (transposed), acc 64x64}}
  %0 = attn_nv.mma %l, %r, %a transpose_rhs : tensor<64x64xbf16, #attn_nv.operand_a<warps = 4>>, !attn_nv.smem<64x32xbf16, padded>, tensor<64x64xf32, #attn_nv.acc<warps = 4>>
  return
}

// -----

func.func @mma_rows(%l: !attn_nv.smem<128x64xbf16, padded>, %r: !attn_nv.smem<64x64xbf16, padded>, %a: tensor<64x64xf32, #attn_nv.acc<warps = 4>>) {
  // expected-error @+1 {{'attn_nv.mma' op shapes do not multiply: lhs 128x64, rhs 64x64, acc 64x64}}
  %0 = attn_nv.mma %l, %r, %a : !attn_nv.smem<128x64xbf16, padded>, !attn_nv.smem<64x64xbf16, padded>, tensor<64x64xf32, #attn_nv.acc<warps = 4>>
  return
}

// -----

func.func @mma_columns(%l: tensor<64x64xbf16, #attn_nv.operand_a<warps = 4>>, %r: !attn_nv.smem<32x64xbf16, padded>, %a: tensor<64x64xf32, #attn_nv.acc<warps = 4>>) {
  // expected-error @+1 {{'attn_nv.mma' op shapes do not multiply: lhs 64x64, rhs 32x64 (transposed), acc 64x64}}
  %0 = attn_nv.mma %l, %r, %a transpose_rhs : tensor<64x64xbf16, #attn_nv.operand_a<warps = 4>>, !attn_nv.smem<32x64xbf16, padded>, tensor<64x64xf32, #attn_nv.acc<warps = 4>>
  return
}

// -----

func.func @mma_warps(%l: tensor<64x64xbf16, #attn_nv.operand_a<warps = 2>>, %r: !attn_nv.smem<64x64xbf16, padded>, %a: tensor<64x64xf32, #attn_nv.acc<warps = 4>>) {
  // expected-error @+1 {{'attn_nv.mma' op lhs is spread over 2 warps but acc over 4}}
  %0 = attn_nv.mma %l, %r, %a : tensor<64x64xbf16, #attn_nv.operand_a<warps = 2>>, !attn_nv.smem<64x64xbf16, padded>, tensor<64x64xf32, #attn_nv.acc<warps = 4>>
  return
}

// -----

func.func @mma_element_types(%l: tensor<64x64xbf16, #attn_nv.operand_a<warps = 4>>, %r: !attn_nv.smem<64x64xf16, padded>, %a: tensor<64x64xf32, #attn_nv.acc<warps = 4>>) {
  // expected-error @+1 {{'attn_nv.mma' op lhs and rhs must have one element type}}
  %0 = attn_nv.mma %l, %r, %a : tensor<64x64xbf16, #attn_nv.operand_a<warps = 4>>, !attn_nv.smem<64x64xf16, padded>, tensor<64x64xf32, #attn_nv.acc<warps = 4>>
  return
}

// -----

func.func @mma_element_types_smem(%l: !attn_nv.smem<64x64xf16, padded>, %r: !attn_nv.smem<64x64xbf16, padded>, %a: tensor<64x64xf32, #attn_nv.acc<warps = 4>>) {
  // expected-error @+1 {{'attn_nv.mma' op lhs and rhs must have one element type}}
  %0 = attn_nv.mma %l, %r, %a transpose_rhs : !attn_nv.smem<64x64xf16, padded>, !attn_nv.smem<64x64xbf16, padded>, tensor<64x64xf32, #attn_nv.acc<warps = 4>>
  return
}

// -----

func.func @wgmma_lhs_padded(%l: !attn_nv.smem<64x64xbf16, padded>, %r: !attn_nv.smem<64x64xbf16, swizzle_128b>, %a: tensor<64x64xf32, #attn_nv.acc<warps = 4>>) {
  // expected-error @+1 {{'attn_nv.wgmma' op 'lhs' must be one swizzle_128b shared-memory tile or an #attn_nv.operand_a tile, got '!attn_nv.smem<64x64xbf16, padded>'}}
  %0 = attn_nv.wgmma %l, %r, %a transpose_rhs : !attn_nv.smem<64x64xbf16, padded>, !attn_nv.smem<64x64xbf16, swizzle_128b>, tensor<64x64xf32, #attn_nv.acc<warps = 4>>
  return
}

// -----

func.func @wgmma_rhs_padded(%l: !attn_nv.smem<64x64xbf16, swizzle_128b>, %r: !attn_nv.smem<64x64xbf16, padded>, %a: tensor<64x64xf32, #attn_nv.acc<warps = 4>>) {
  // expected-error @+1 {{'attn_nv.wgmma' op 'rhs' must be one swizzle_128b shared-memory tile, got '!attn_nv.smem<64x64xbf16, padded>'}}
  %0 = attn_nv.wgmma %l, %r, %a transpose_rhs : !attn_nv.smem<64x64xbf16, swizzle_128b>, !attn_nv.smem<64x64xbf16, padded>, tensor<64x64xf32, #attn_nv.acc<warps = 4>>
  return
}

// -----

func.func @wgmma_acc_layout(%l: !attn_nv.smem<64x64xbf16, swizzle_128b>, %r: !attn_nv.smem<64x64xbf16, swizzle_128b>, %a: tensor<64xf32, #attn_nv.rows<warps = 4>>) {
  // expected-error @+1 {{'attn_nv.wgmma' op 'acc' must be a tile with layout #attn_nv.acc, got 'tensor<64xf32, #attn_nv.rows<warps = 4>>'}}
  %0 = attn_nv.wgmma %l, %r, %a transpose_rhs : !attn_nv.smem<64x64xbf16, swizzle_128b>, !attn_nv.smem<64x64xbf16, swizzle_128b>, tensor<64xf32, #attn_nv.rows<warps = 4>>
  return
}

// -----

func.func @wgmma_acc_f32(%l: !attn_nv.smem<64x64xbf16, swizzle_128b>, %r: !attn_nv.smem<64x64xbf16, swizzle_128b>, %a: tensor<64x64xbf16, #attn_nv.acc<warps = 4>>) {
  // expected-error @+1 {{'attn_nv.wgmma' op accumulates in f32, got 'tensor<64x64xbf16, #attn_nv.acc<warps = 4>>'}}
  %0 = attn_nv.wgmma %l, %r, %a transpose_rhs : !attn_nv.smem<64x64xbf16, swizzle_128b>, !attn_nv.smem<64x64xbf16, swizzle_128b>, tensor<64x64xbf16, #attn_nv.acc<warps = 4>>
  return
}

// -----

func.func @wgmma_shapes(%l: !attn_nv.smem<64x128xbf16, swizzle_128b>, %r: !attn_nv.smem<64x64xbf16, swizzle_128b>, %a: tensor<64x64xf32, #attn_nv.acc<warps = 4>>) {
  // expected-error @+1 {{'attn_nv.wgmma' op shapes do not multiply: lhs 64x128, rhs 64x64 (transposed), acc 64x64}}
  %0 = attn_nv.wgmma %l, %r, %a transpose_rhs : !attn_nv.smem<64x128xbf16, swizzle_128b>, !attn_nv.smem<64x64xbf16, swizzle_128b>, tensor<64x64xf32, #attn_nv.acc<warps = 4>>
  return
}

// -----

func.func @wgmma_shapes_mn_major(%l: tensor<64x64xbf16, #attn_nv.operand_a<warps = 4>>, %r: !attn_nv.smem<64x128xbf16, swizzle_128b>, %a: tensor<64x64xf32, #attn_nv.acc<warps = 4>>) {
  // expected-error @+1 {{'attn_nv.wgmma' op shapes do not multiply: lhs 64x64, rhs 64x128, acc 64x64}}
  %0 = attn_nv.wgmma %l, %r, %a : tensor<64x64xbf16, #attn_nv.operand_a<warps = 4>>, !attn_nv.smem<64x128xbf16, swizzle_128b>, tensor<64x64xf32, #attn_nv.acc<warps = 4>>
  return
}

// -----

func.func @wgmma_warps(%l: tensor<128x64xf16, #attn_nv.operand_a<warps = 8>>, %r: !attn_nv.smem<64x64xf16, swizzle_128b>, %a: tensor<128x64xf32, #attn_nv.acc<warps = 4>>) {
  // expected-error @+1 {{'attn_nv.wgmma' op lhs is spread over 8 warps but acc over 4}}
  %0 = attn_nv.wgmma %l, %r, %a : tensor<128x64xf16, #attn_nv.operand_a<warps = 8>>, !attn_nv.smem<64x64xf16, swizzle_128b>, tensor<128x64xf32, #attn_nv.acc<warps = 4>>
  return
}

// -----

func.func @wgmma_element_types(%l: !attn_nv.smem<64x64xf16, swizzle_128b>, %r: !attn_nv.smem<64x64xbf16, swizzle_128b>, %a: tensor<64x64xf32, #attn_nv.acc<warps = 4>>) {
  // expected-error @+1 {{'attn_nv.wgmma' op lhs and rhs must have one element type}}
  %0 = attn_nv.wgmma %l, %r, %a transpose_rhs : !attn_nv.smem<64x64xf16, swizzle_128b>, !attn_nv.smem<64x64xbf16, swizzle_128b>, tensor<64x64xf32, #attn_nv.acc<warps = 4>>
  return
}

// -----

func.func @wgmma_m_tiles(%l: !attn_nv.smem<128x64xbf16, swizzle_128b>, %r: !attn_nv.smem<64x64xbf16, swizzle_128b>, %a: tensor<128x64xf32, #attn_nv.acc<warps = 4>>) {
  // expected-error @+1 {{'attn_nv.wgmma' op wgmma gives each warp of a warpgroup 16 rows: needs rows = 16 x warps with warps a multiple of 4, got 128 rows over 4 warps}}
  %0 = attn_nv.wgmma %l, %r, %a transpose_rhs : !attn_nv.smem<128x64xbf16, swizzle_128b>, !attn_nv.smem<64x64xbf16, swizzle_128b>, tensor<128x64xf32, #attn_nv.acc<warps = 4>>
  return
}

// -----

func.func @wgmma_warpgroup(%l: !attn_nv.smem<32x64xbf16, swizzle_128b>, %r: !attn_nv.smem<64x64xbf16, swizzle_128b>, %a: tensor<32x64xf32, #attn_nv.acc<warps = 2>>) {
  // expected-error @+1 {{'attn_nv.wgmma' op wgmma gives each warp of a warpgroup 16 rows: needs rows = 16 x warps with warps a multiple of 4, got 32 rows over 2 warps}}
  %0 = attn_nv.wgmma %l, %r, %a transpose_rhs : !attn_nv.smem<32x64xbf16, swizzle_128b>, !attn_nv.smem<64x64xbf16, swizzle_128b>, tensor<32x64xf32, #attn_nv.acc<warps = 2>>
  return
}

// -----

func.func @wgmma_n(%l: !attn_nv.smem<64x64xbf16, swizzle_128b>, %r: !attn_nv.smem<64x320xbf16, swizzle_128b>, %a: tensor<64x320xf32, #attn_nv.acc<warps = 4>>) {
  // expected-error @+1 {{'attn_nv.wgmma' op wgmma.m64nNk16 needs N a multiple of 16 up to 256, got 320}}
  %0 = attn_nv.wgmma %l, %r, %a : !attn_nv.smem<64x64xbf16, swizzle_128b>, !attn_nv.smem<64x320xbf16, swizzle_128b>, tensor<64x320xf32, #attn_nv.acc<warps = 4>>
  return
}

// -----

func.func @wgmma_wait_pending(%a: tensor<64x64xf32, #attn_nv.acc<warps = 4>>) {
  // expected-error @+1 {{'attn_nv.wgmma_wait' op pending must be in [0, 7], got 8}}
  %0 = attn_nv.wgmma_wait %a {pending = 8} : tensor<64x64xf32, #attn_nv.acc<warps = 4>>
  return
}

// -----

func.func @wgmma_wait_negative_pending(%a: tensor<64x64xf32, #attn_nv.acc<warps = 4>>) {
  // expected-error @+1 {{'attn_nv.wgmma_wait' op pending must be in [0, 7], got -1}}
  %0 = attn_nv.wgmma_wait %a {pending = -1} : tensor<64x64xf32, #attn_nv.acc<warps = 4>>
  return
}

// -----

func.func @wgmma_wait_types(%a: tensor<64x64xf32, #attn_nv.acc<warps = 4>>) {
  // expected-error @+1 {{'attn_nv.wgmma_wait' op failed to verify that all of {values, results} have same type}}
  %0 = "attn_nv.wgmma_wait"(%a) {pending = 0 : i64} : (tensor<64x64xf32, #attn_nv.acc<warps = 4>>) -> tensor<64x64xf32>
  return
}

// -----

func.func @turn_zero_warpgroups() {
  // expected-error @+1 {{'attn_nv.warpgroup_turn' op orders 1 to 4 warpgroups, got 0}}
  attn_nv.warpgroup_turn warpgroups 0 {
  }
  return
}

// -----

func.func @turn_too_many_warpgroups() {
  // expected-error @+1 {{'attn_nv.warpgroup_turn' op orders 1 to 4 warpgroups, got 5}}
  attn_nv.warpgroup_turn warpgroups 5 {
  }
  return
}

// -----

func.func @turn_negative_warpgroups() {
  // expected-error @+1 {{'attn_nv.warpgroup_turn' op orders 1 to 4 warpgroups, got -1}}
  attn_nv.warpgroup_turn warpgroups -1 {
  }
  return
}

// -----

func.func @turn_yield_types(%a: tensor<64x64xf32, #attn_nv.acc<warps = 4>>) {
  // expected-error @+1 {{'attn_nv.warpgroup_turn' op body yields tensor<64x64xf32, #attn_nv.acc<warps = 4>> but the op returns i1}}
  %0 = attn_nv.warpgroup_turn warpgroups 2 -> i1 {
    attn_nv.yield %a : tensor<64x64xf32, #attn_nv.acc<warps = 4>>
  }
  return
}

// -----

func.func @turn_missing_yield() {
  // expected-error @+1 {{'attn_nv.warpgroup_turn' op body yields nothing but the op returns i1}}
  %0 = attn_nv.warpgroup_turn warpgroups 2 -> i1 {
  }
  return
}

// -----

func.func @turn_terminator() {
  // expected-error @+2 {{'attn_nv.warpgroup_turn' op expects regions to end with 'attn_nv.yield', found 'llvm.unreachable'}}
  // expected-note @+1 {{in custom textual format, the absence of terminator implies 'attn_nv.yield'}}
  attn_nv.warpgroup_turn warpgroups 2 {
    llvm.unreachable
  }
  return
}

// -----

func.func @turn_number_without_rotation(%i: index) {
  // expected-error @+1 {{'attn_nv.warpgroup_turn' op a numbered turn needs both turn and rotation}}
  "attn_nv.warpgroup_turn"(%i) ({
    attn_nv.yield
  }) {warpgroups = 2 : i64} : (index) -> ()
  return
}

// -----

func.func @turn_rotation_barriers(%i: index) {
  // expected-error @+1 {{'attn_nv.warpgroup_turn' op rotation 6 of 4 warpgroups needs more than the 15 named barriers after 0}}
  attn_nv.warpgroup_turn warpgroups 4 turn %i rotation 6 {
  }
  return
}

// -----

func.func @turn_rotation_zero(%i: index) {
  // expected-error @+1 {{'attn_nv.warpgroup_turn' op rotation 0 of 2 warpgroups}}
  attn_nv.warpgroup_turn warpgroups 2 turn %i rotation 0 {
  }
  return
}

// -----

func.func @yield_parent(%x: f32) {
  // expected-error @+1 {{'attn_nv.yield' op expects parent op to be one of 'attn_nv.warpgroup_turn, attn_nv.warp_specialize'}}
  attn_nv.yield %x : f32
}

// -----

func.func @warp_any_layout(%t: tensor<64x8xi1, #attn_nv.acc<warps = 4>>) {
  // expected-error @+1 {{'attn_nv.warp_any' op 'tile' must be a tile with layout #attn_nv.rows, got 'tensor<64x8xi1, #attn_nv.acc<warps = 4>>'}}
  %0 = attn_nv.warp_any %t : tensor<64x8xi1, #attn_nv.acc<warps = 4>>
  return
}

// -----

func.func @warp_any_element_type(%t: tensor<64xf32, #attn_nv.rows<warps = 4>>) {
  // expected-error @+1 {{'attn_nv.warp_any' op takes an i1 row tile, got 'tensor<64xf32, #attn_nv.rows<warps = 4>>'}}
  %0 = attn_nv.warp_any %t : tensor<64xf32, #attn_nv.rows<warps = 4>>
  return
}

// -----

// expected-error @+1 {{#attn_nv.acc distributes static tiles only}}
func.func @acc_dynamic_cols(%x: tensor<64x?xf32, #attn_nv.acc<warps = 4>>) {
  return
}

// -----

// expected-error @+1 {{#attn_nv.operand_a distributes static tiles only}}
func.func @operand_a_dynamic_cols(%x: tensor<64x?xbf16, #attn_nv.operand_a<warps = 4>>) {
  return
}

// -----

func.func @mma_pv_lhs_in_smem(%p: !attn_nv.smem<64x32xbf16, padded>, %v: !attn_nv.smem<32x64xbf16, padded>, %acc: tensor<64x64xf32, #attn_nv.acc<warps = 4>>) {
  // expected-error @+1 {{'attn_nv.mma' op a K×N rhs (P·V) takes its lhs from registers (#attn_nv.operand_a)}}
  %o = attn_nv.mma %p, %v, %acc : !attn_nv.smem<64x32xbf16, padded>, !attn_nv.smem<32x64xbf16, padded>, tensor<64x64xf32, #attn_nv.acc<warps = 4>>
  return
}

// -----

func.func @mma_pv_rows(%p: tensor<64x16xbf16, #attn_nv.operand_a<warps = 4>>, %v: !attn_nv.smem<24x64xbf16, padded>, %acc: tensor<64x64xf32, #attn_nv.acc<warps = 4>>) {
  // expected-error @+1 {{'attn_nv.mma' op shapes do not multiply}}
  %o = attn_nv.mma %p, %v, %acc : tensor<64x16xbf16, #attn_nv.operand_a<warps = 4>>, !attn_nv.smem<24x64xbf16, padded>, tensor<64x64xf32, #attn_nv.acc<warps = 4>>
  return
}

// -----

func.func @mma_pv_k_not_16(%p: tensor<64x24xbf16, #attn_nv.operand_a<warps = 4>>, %v: !attn_nv.smem<24x64xbf16, padded>, %acc: tensor<64x64xf32, #attn_nv.acc<warps = 4>>) {
  // expected-error @+1 {{'attn_nv.mma' op a K×N rhs is read in 16-row blocks: needs K a multiple of 16, got 24}}
  %o = attn_nv.mma %p, %v, %acc : tensor<64x24xbf16, #attn_nv.operand_a<warps = 4>>, !attn_nv.smem<24x64xbf16, padded>, tensor<64x64xf32, #attn_nv.acc<warps = 4>>
  return
}

// -----

func.func @tma_into_padded(%map: !llvm.ptr, %i: index) {
  %bars = attn_nv.alloc_barriers : !attn_nv.barriers<2>
  %k = attn_nv.alloc_shared : !attn_nv.smem<64x64xbf16, padded>
  // expected-error @+1 {{copies into one swizzle_128b tile (the layout of the tensor map's 128-byte swizzle)}}
  attn_nv.copy_tma %map[%i, %i, %i] into %k, %bars[%i] : !llvm.ptr, !attn_nv.smem<64x64xbf16, padded>, !attn_nv.barriers<2>
  return
}

// -----

func.func @tma_box_rows(%map: !llvm.ptr, %i: index) {
  %bars = attn_nv.alloc_barriers : !attn_nv.barriers<2>
  %k = attn_nv.alloc_shared : !attn_nv.smem<512x64xbf16, swizzle_128b>
  // expected-error @+1 {{a tile of at most 256 rows (one box per 128-byte block), got 512}}
  attn_nv.copy_tma %map[%i, %i, %i] into %k, %bars[%i] : !llvm.ptr, !attn_nv.smem<512x64xbf16, swizzle_128b>, !attn_nv.barriers<2>
  return
}

// -----

func.func @tma_map_type(%map: i64, %i: index) {
  %bars = attn_nv.alloc_barriers : !attn_nv.barriers<2>
  %k = attn_nv.alloc_shared : !attn_nv.smem<64x64xbf16, swizzle_128b>
  // expected-error @+1 {{operand #0 must be the generic address of a kernel's grid-constant tensor map}}
  attn_nv.copy_tma %map[%i, %i, %i] into %k, %bars[%i] : i64, !attn_nv.smem<64x64xbf16, swizzle_128b>, !attn_nv.barriers<2>
  return
}

// -----

func.func @barrier_offset() {
  // expected-error @+1 {{offset must be a non-negative multiple of 8 (an mbarrier is 8 bytes), got 12}}
  %bars = attn_nv.alloc_barriers {offset = 12 : i64} : !attn_nv.barriers<2>
  return
}

// -----

// expected-error @+1 {{!attn_nv.barriers needs a positive count, got 0}}
func.func @no_barriers(%b: !attn_nv.barriers<0>) {
  return
}

// -----

func.func @tma_empty_count(%map: !llvm.ptr, %i: index) {
  %bars = attn_nv.alloc_barriers : !attn_nv.barriers<3>
  %empty = attn_nv.alloc_barriers : !attn_nv.barriers<2>
  %k = attn_nv.alloc_shared : !attn_nv.smem<64x64xbf16, swizzle_128b>
  // expected-error @+1 {{empty barriers '!attn_nv.barriers<2>' must have one barrier per stage of '!attn_nv.barriers<3>'}}
  attn_nv.copy_tma %map[%i, %i, %i] into %k, %bars[%i] after %empty : !llvm.ptr, !attn_nv.smem<64x64xbf16, swizzle_128b>, !attn_nv.barriers<3>, !attn_nv.barriers<2>
  return
}

// -----

// transpose_lhs reads a K×M shared lhs: a register lhs is not one.
func.func @wgmma_transpose_lhs_in_registers(%l: tensor<64x64xbf16, #attn_nv.operand_a<warps = 4>>, %r: !attn_nv.smem<64x64xbf16, swizzle_128b>, %a: tensor<64x64xf32, #attn_nv.acc<warps = 4>>) {
  // expected-error @+1 {{'attn_nv.wgmma' op with transpose_lhs takes a K×M shared-memory lhs and a K×N rhs (no transpose_rhs)}}
  %0 = attn_nv.wgmma %l, %r, %a transpose_lhs : tensor<64x64xbf16, #attn_nv.operand_a<warps = 4>>, !attn_nv.smem<64x64xbf16, swizzle_128b>, tensor<64x64xf32, #attn_nv.acc<warps = 4>>
  return
}

// -----

func.func @init_no_arrivals() {
  %bars = attn_nv.alloc_barriers : !attn_nv.barriers<3>
  // expected-error @+1 {{arrivals must be in [1, 1048575], got 0}}
  attn_nv.init_barriers %bars arrivals 0 : !attn_nv.barriers<3>
  return
}

// -----

// ... with a K×N rhs: both transposed is not a product wgmma is given.
func.func @wgmma_transpose_both(%l: !attn_nv.smem<64x64xbf16, swizzle_128b>, %r: !attn_nv.smem<64x64xbf16, swizzle_128b>, %a: tensor<64x64xf32, #attn_nv.acc<warps = 4>>) {
  // expected-error @+1 {{'attn_nv.wgmma' op with transpose_lhs takes a K×M shared-memory lhs and a K×N rhs (no transpose_rhs)}}
  %0 = attn_nv.wgmma %l, %r, %a transpose_rhs transpose_lhs : !attn_nv.smem<64x64xbf16, swizzle_128b>, !attn_nv.smem<64x64xbf16, swizzle_128b>, tensor<64x64xf32, #attn_nv.acc<warps = 4>>
  return
}

// -----

func.func @init_too_many_arrivals() {
  %bars = attn_nv.alloc_barriers : !attn_nv.barriers<3>
  // expected-error @+1 {{arrivals must be in [1, 1048575], got 1048576}}
  attn_nv.init_barriers %bars arrivals 1048576 : !attn_nv.barriers<3>
  return
}

// -----

// Column groups are the split of the atomic backward's (dSᵀ)ᵀ K over the
// head dim: a product of another form does not split its columns.
func.func @wgmma_col_groups_not_transposed(%l: !attn_nv.smem<64x64xbf16, swizzle_128b>, %r: !attn_nv.smem<128x64xbf16, swizzle_128b>, %a: tensor<64x128xf32, #attn_nv.acc<warps = 8, col_groups = 2>>) {
  // expected-error @+1 {{'attn_nv.wgmma' op splits columns over warpgroups with transpose_lhs, one warpgroup and whole 64-column blocks a group only, got 64 columns over 4 warps a group}}
  %0 = attn_nv.wgmma %l, %r, %a transpose_rhs : !attn_nv.smem<64x64xbf16, swizzle_128b>, !attn_nv.smem<128x64xbf16, swizzle_128b>, tensor<64x128xf32, #attn_nv.acc<warps = 8, col_groups = 2>>
  return
}

// -----

// ... and each group takes whole 64-column swizzle blocks of B.
func.func @wgmma_col_groups_block(%l: !attn_nv.smem<128x64xbf16, swizzle_128b>, %r: !attn_nv.smem<128x64xbf16, swizzle_128b>, %a: tensor<64x64xf32, #attn_nv.acc<warps = 8, col_groups = 2>>) {
  // expected-error @+1 {{'attn_nv.wgmma' op splits columns over warpgroups with transpose_lhs, one warpgroup and whole 64-column blocks a group only, got 32 columns over 4 warps a group}}
  %0 = attn_nv.wgmma %l, %r, %a transpose_lhs : !attn_nv.smem<128x64xbf16, swizzle_128b>, !attn_nv.smem<128x64xbf16, swizzle_128b>, tensor<64x64xf32, #attn_nv.acc<warps = 8, col_groups = 2>>
  return
}

// -----

// ... and one warpgroup a group (all 64 rows of M each).
func.func @wgmma_col_groups_warpgroups(%l: !attn_nv.smem<128x128xbf16, swizzle_128b>, %r: !attn_nv.smem<128x128xbf16, swizzle_128b>, %a: tensor<128x128xf32, #attn_nv.acc<warps = 16, col_groups = 2>>) {
  // expected-error @+1 {{'attn_nv.wgmma' op splits columns over warpgroups with transpose_lhs, one warpgroup and whole 64-column blocks a group only, got 64 columns over 8 warps a group}}
  %0 = attn_nv.wgmma %l, %r, %a transpose_lhs : !attn_nv.smem<128x128xbf16, swizzle_128b>, !attn_nv.smem<128x128xbf16, swizzle_128b>, tensor<128x128xf32, #attn_nv.acc<warps = 16, col_groups = 2>>
  return
}

// -----

// A transposed lhs is K×M: its columns are the accumulator's rows.
func.func @wgmma_transpose_lhs_shape(%l: !attn_nv.smem<32x64xbf16, swizzle_128b>, %r: !attn_nv.smem<64x64xbf16, swizzle_128b>, %a: tensor<64x64xf32, #attn_nv.acc<warps = 4>>) {
  // expected-error @+1 {{'attn_nv.wgmma' op shapes do not multiply: lhs 32x64 (transposed), rhs 64x64, acc 64x64}}
  %0 = attn_nv.wgmma %l, %r, %a transpose_lhs : !attn_nv.smem<32x64xbf16, swizzle_128b>, !attn_nv.smem<64x64xbf16, swizzle_128b>, tensor<64x64xf32, #attn_nv.acc<warps = 4>>
  return
}

// -----

func.func @split_partial_warpgroup() {
  // expected-error @+1 {{consumer_threads must be a positive multiple of 128 (whole warpgroups), got 96}}
  attn_nv.warp_specialize consumers(96 threads, 232 registers) {
  } producer(40 registers) {
  }
  return
}

// -----

// store_shared writes an accumulator tile: rows are not one.
func.func @store_shared_rows(%t: tensor<64xf32, #attn_nv.rows<warps = 4>>, %d: !attn_nv.smem<64x64xbf16, swizzle_128b>) {
  // expected-error @+1 {{'attn_nv.store_shared' op 'tile' must be a tile with layout #attn_nv.acc, got}}
  attn_nv.store_shared %t, %d : tensor<64xf32, #attn_nv.rows<warps = 4>>, !attn_nv.smem<64x64xbf16, swizzle_128b>
  return
}

// -----

func.func @split_registers_step() {
  // expected-error @+1 {{producer registers must be a multiple of 8 in [24, 256] (setmaxnreg), got 20}}
  attn_nv.warp_specialize consumers(256 threads, 232 registers) {
  } producer(20 registers) {
  }
  return
}

// -----

func.func @split_register_file() {
  // 256 · 240 + 128 · 40 = 66560 > 65536.
  // expected-error @+1 {{the split takes 66560 registers; an SM has 65536}}
  attn_nv.warp_specialize consumers(256 threads, 240 registers) {
  } producer(40 registers) {
  }
  return
}

// -----

func.func @split_cta_barrier() {
  attn_nv.warp_specialize consumers(256 threads, 232 registers) {
    // expected-error @+1 {{inside attn_nv.warp_specialize would wait for threads that never reach it}}
    nvvm.barrier0
  } producer(40 registers) {
  }
  return
}

// -----

func.func @tma_single_thread_outside_producer(%map: !llvm.ptr, %i: index) {
  %bars = attn_nv.alloc_barriers : !attn_nv.barriers<2>
  %k = attn_nv.alloc_shared : !attn_nv.smem<64x64xbf16, swizzle_128b>
  // expected-error @+1 {{single_thread belongs in the producer region of attn_nv.warp_specialize}}
  attn_nv.copy_tma %map[%i, %i, %i] into %k, %bars[%i] {single_thread} : !llvm.ptr, !attn_nv.smem<64x64xbf16, swizzle_128b>, !attn_nv.barriers<2>
  return
}

// -----

func.func @tma_thread_zero_in_producer(%map: !llvm.ptr, %i: index) {
  %bars = attn_nv.alloc_barriers : !attn_nv.barriers<2>
  %k = attn_nv.alloc_shared : !attn_nv.smem<64x64xbf16, swizzle_128b>
  attn_nv.warp_specialize consumers(256 threads, 232 registers) {
  } producer(40 registers) {
    // expected-error @+1 {{in a warp_specialize producer must be single_thread (thread 0 is a consumer)}}
    attn_nv.copy_tma %map[%i, %i, %i] into %k, %bars[%i] : !llvm.ptr, !attn_nv.smem<64x64xbf16, swizzle_128b>, !attn_nv.barriers<2>
  }
  return
}

// -----

func.func @store_tma_padded(%map: !llvm.ptr, %i: index) {
  %o = attn_nv.alloc_shared : !attn_nv.smem<64x64xbf16, padded>
  // expected-error @+1 {{stores one 16-bit swizzle_128b tile (the layout of the tensor map's 128-byte swizzle)}}
  attn_nv.store_tma %o into %map[%i, %i, %i] : !attn_nv.smem<64x64xbf16, padded>, !llvm.ptr
  return
}

// -----

func.func @store_tma_f32(%map: !llvm.ptr, %i: index) {
  %o = attn_nv.alloc_shared : !attn_nv.smem<64x64xf32, swizzle_128b>
  // expected-error @+1 {{stores one 16-bit swizzle_128b tile}}
  attn_nv.store_tma %o into %map[%i, %i, %i] : !attn_nv.smem<64x64xf32, swizzle_128b>, !llvm.ptr
  return
}

// -----

func.func @store_tma_rows(%map: !llvm.ptr, %i: index) {
  %o = attn_nv.alloc_shared : !attn_nv.smem<40x64xbf16, swizzle_128b>
  // expected-error @+1 {{stores whole 16-row boxes (one a warp), got 40 rows}}
  attn_nv.store_tma %o into %map[%i, %i, %i] : !attn_nv.smem<40x64xbf16, swizzle_128b>, !llvm.ptr
  return
}

// -----

func.func @store_tma_in_producer(%map: !llvm.ptr, %i: index) {
  %o = attn_nv.alloc_shared : !attn_nv.smem<64x64xbf16, swizzle_128b>
  attn_nv.warp_specialize consumers(256 threads, 232 registers) {
  } producer(40 registers) {
    // expected-error @+1 {{stores the consumers' rows; it cannot be in the producer region of attn_nv.warp_specialize}}
    attn_nv.store_tma %o into %map[%i, %i, %i] : !attn_nv.smem<64x64xbf16, swizzle_128b>, !llvm.ptr
  }
  return
}

// -----

// ... into a 16-bit shared tile of its shape.
func.func @store_shared_shape(%t: tensor<64x64xf32, #attn_nv.acc<warps = 4>>, %d: !attn_nv.smem<64x128xbf16, swizzle_128b>) {
  // expected-error @+1 {{'attn_nv.store_shared' op writes a tile into a 2-D 16-bit shared tile of its shape, got}}
  attn_nv.store_shared %t, %d : tensor<64x64xf32, #attn_nv.acc<warps = 4>>, !attn_nv.smem<64x128xbf16, swizzle_128b>
  return
}

// -----

// copy_table_async copies into one f32 tile.
func.func @copy_table_staged(%src: memref<?x?xf32>, %i: index, %dst: !attn_nv.smem<2x64x64xf32, swizzle_128b>) {
  // expected-error @+1 {{'attn_nv.copy_table_async' op copies into one f32 tile, got '!attn_nv.smem<2x64x64xf32, swizzle_128b>'}}
  attn_nv.copy_table_async %src[%i, %i] bounds %i, %i into %dst : memref<?x?xf32>, !attn_nv.smem<2x64x64xf32, swizzle_128b>
  return
}

// -----

func.func @copy_table_bf16(%src: memref<?x?xf32>, %i: index, %dst: !attn_nv.smem<64x64xbf16, swizzle_128b>) {
  // expected-error @+1 {{'attn_nv.copy_table_async' op copies into one f32 tile, got '!attn_nv.smem<64x64xbf16, swizzle_128b>'}}
  attn_nv.copy_table_async %src[%i, %i] bounds %i, %i into %dst : memref<?x?xf32>, !attn_nv.smem<64x64xbf16, swizzle_128b>
  return
}

// -----

// load_shared reads an accumulator tile ...
func.func @load_shared_rows(%s: !attn_nv.smem<64x64xf32, swizzle_128b>) {
  // expected-error @+1 {{'attn_nv.load_shared' op 'result' must be a tile with layout #attn_nv.acc, got}}
  %0 = attn_nv.load_shared %s : !attn_nv.smem<64x64xf32, swizzle_128b> -> tensor<64xf32, #attn_nv.rows<warps = 4>>
  return
}

// -----

// ... of the shared tile's shape, in f32.
func.func @load_shared_shape(%s: !attn_nv.smem<64x128xf32, swizzle_128b>) {
  // expected-error @+1 {{'attn_nv.load_shared' op reads an f32 tile of its shape from one 2-D f32 shared tile, got}}
  %0 = attn_nv.load_shared %s : !attn_nv.smem<64x128xf32, swizzle_128b> -> tensor<64x64xf32, #attn_nv.acc<warps = 4>>
  return
}

// -----

// 8-bit A fragments hold four elements a register: 32-column k blocks.
// expected-error @+1 {{#attn_nv.operand_a of 8-bit elements needs columns in 32-column k blocks, got 48}}
func.func @operand_a_fp8_columns(%x: tensor<64x48xf8E4M3FN, #attn_nv.operand_a<warps = 4>>) {
  return
}

// -----

// expected-error @+1 {{!attn_nv.smem rows are copied in 16-byte pieces: columns must be a multiple of 16, got 40}}
func.func @smem_fp8_columns(%x: !attn_nv.smem<64x40xf8E4M3FN, swizzle_128b>) {
  return
}

// -----

// 8-bit wgmma reads both operands K-major: P·V's V must be staged as Vᵀ.
func.func @wgmma_fp8_mn_major(%p: tensor<64x128xf8E4M3FN, #attn_nv.operand_a<warps = 4>>, %v: !attn_nv.smem<128x64xf8E4M3FN, swizzle_128b>, %a: tensor<64x64xf32, #attn_nv.acc<warps = 4>>) {
  // expected-error @+1 {{'attn_nv.wgmma' op with 8-bit tiles takes a K-major lhs and a K-major (N×K, transpose_rhs) rhs}}
  %0 = attn_nv.wgmma %p, %v, %a : tensor<64x128xf8E4M3FN, #attn_nv.operand_a<warps = 4>>, !attn_nv.smem<128x64xf8E4M3FN, swizzle_128b>, tensor<64x64xf32, #attn_nv.acc<warps = 4>>
  return
}

// -----

func.func @wgmma_fp8_k_step(%l: !attn_nv.smem<64x48xf8E4M3FN, swizzle_128b>, %r: !attn_nv.smem<64x48xf8E4M3FN, swizzle_128b>, %a: tensor<64x64xf32, #attn_nv.acc<warps = 4>>) {
  // expected-error @+1 {{'attn_nv.wgmma' op wgmma reduces in steps of 32 elements (32 bytes): needs K a multiple of 32, got 48}}
  %0 = attn_nv.wgmma %l, %r, %a transpose_rhs : !attn_nv.smem<64x48xf8E4M3FN, swizzle_128b>, !attn_nv.smem<64x48xf8E4M3FN, swizzle_128b>, tensor<64x64xf32, #attn_nv.acc<warps = 4>>
  return
}

// -----

// mma.sync has no 8-bit form here: FP8 is mapped on wgmma only.
func.func @mma_fp8(%l: !attn_nv.smem<64x64xf8E4M3FN, padded>, %r: !attn_nv.smem<64x64xf8E4M3FN, padded>, %a: tensor<64x64xf32, #attn_nv.acc<warps = 4>>) {
  // expected-error @+1 {{'attn_nv.mma' op multiplies 16-bit tiles (or, on wgmma, f8E4M3FN ones), got '!attn_nv.smem<64x64xf8E4M3FN, padded>'}}
  %0 = attn_nv.mma %l, %r, %a transpose_rhs : !attn_nv.smem<64x64xf8E4M3FN, padded>, !attn_nv.smem<64x64xf8E4M3FN, padded>, tensor<64x64xf32, #attn_nv.acc<warps = 4>>
  return
}

// -----

func.func @copy_transposed_packed(%src: memref<?x?x?x64xf8E4M3FN, strided<[?, ?, ?, 1], offset: ?>>, %i: index) {
  %dst = attn_nv.alloc_shared : !attn_nv.smem<64x128xf8E4M3FN, swizzle_128b>
  // expected-error @+1 {{'attn_nv.copy_async' op transposed copies whole tiles of one head: no 'rows_per_head' or 'pages'}}
  attn_nv.copy_async %src[%i, %i, %i] rows_per_head %i bounds %i into %dst transposed : memref<?x?x?x64xf8E4M3FN, strided<[?, ?, ?, 1], offset: ?>>, !attn_nv.smem<64x128xf8E4M3FN, swizzle_128b>
  return
}

// -----

// A transposed tile holds the head dim as its rows.
func.func @copy_transposed_shape(%src: memref<?x?x?x64xf8E4M3FN, strided<[?, ?, ?, 1], offset: ?>>, %i: index) {
  %dst = attn_nv.alloc_shared : !attn_nv.smem<128x64xf8E4M3FN, swizzle_128b>
  // expected-error @+1 {{'attn_nv.copy_async' op destination tile has 128 rows but the source rows have 64 elements}}
  attn_nv.copy_async %src[%i, %i, %i] bounds %i into %dst transposed : memref<?x?x?x64xf8E4M3FN, strided<[?, ?, ?, 1], offset: ?>>, !attn_nv.smem<128x64xf8E4M3FN, swizzle_128b>
  return
}

// -----

// reduce_bulk stages an f32 accumulator in a padded f32 tile of its shape:
// a swizzled one is refused.
func.func @reduce_bulk_staging(%t: tensor<64x128xf32, #attn_nv.acc<warps = 8, col_groups = 2>>, %s: !attn_nv.smem<64x128xf32, swizzle_128b>, %d: memref<?x?x?x128xf32>, %i: index) {
  // expected-error @+1 {{'attn_nv.reduce_bulk' op stages an f32 accumulator tile in a padded f32 shared tile of its shape, got 'tensor<64x128xf32, #attn_nv.acc<warps = 8, col_groups = 2>>' in '!attn_nv.smem<64x128xf32, swizzle_128b>'}}
  attn_nv.reduce_bulk %t, %s into %d[%i, %i, %i] bounds %i : tensor<64x128xf32, #attn_nv.acc<warps = 8, col_groups = 2>>, !attn_nv.smem<64x128xf32, swizzle_128b>, memref<?x?x?x128xf32>
  return
}

// -----

// The destination is a (B, H, N, D) f32 memref with the tile's columns.
func.func @reduce_bulk_dest(%t: tensor<64x128xf32, #attn_nv.acc<warps = 8, col_groups = 2>>, %s: !attn_nv.smem<64x128xf32, padded>, %d: memref<?x?x?x64xf32>, %i: index) {
  // expected-error @+1 {{'attn_nv.reduce_bulk' op adds into a (B, H, N, 128) f32 memref, got 'memref<?x?x?x64xf32>'}}
  attn_nv.reduce_bulk %t, %s into %d[%i, %i, %i] bounds %i : tensor<64x128xf32, #attn_nv.acc<warps = 8, col_groups = 2>>, !attn_nv.smem<64x128xf32, padded>, memref<?x?x?x64xf32>
  return
}

// -----

// A work tile's grid has positive extents ...
func.func @work_tile_extent(%w: index, %n: index) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'attn_nv.work_tile' op heads must be positive, got 0}}
  %b, %h, %t = attn_nv.work_tile %w of (%n, %c0, %n)
  return
}

// -----

// ... and its index lies inside them.
func.func @work_tile_index() {
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c12 = arith.constant 12 : index
  // expected-error @+1 {{'attn_nv.work_tile' op index 12 is outside the grid's 12 work tiles}}
  %b, %h, %t = attn_nv.work_tile %c12 of (%c2, %c2, %c3)
  return
}

// -----

func.func @wait_stores_read_in_producer() {
  attn_nv.warp_specialize consumers(256 threads, 232 registers) {
  } producer(40 registers) {
    // expected-error @+1 {{waits for the consumers' stores; it cannot be in the producer region of attn_nv.warp_specialize}}
    attn_nv.wait_stores_read
  }
  return
}
