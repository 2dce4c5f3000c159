// RUN: attn-opt %s --split-input-file --verify-diagnostics --attn-tile

// Tile sizes are decided by attn-configure, never by attn-tile.
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>

func.func @unconfigured(%q: !t, %k: !t, %v: !t, %o: !t) {
  // expected-error @+1 {{'attn.sdpa' op has no attn.config on its function: run attn-configure first}}
  attn.sdpa %q, %k, %v into %o : !t, !t, !t -> !t
  return
}

// -----

// Packed GQA heads and a variable-length batch do not combine (yet).
#cfg = #attn.config<mapping = "host", chip = "", block_m = 64, block_n = 32, warps = 0, min_ctas_per_sm = 0, stages = 0, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = true, conditional_rescale = false>
!p = memref<1x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!cu = memref<?xi32, strided<[?], offset: ?>>

func.func @varlen_pack_gqa(%q: !p, %k: !p, %o: !p, %cq: !cu, %ck: !cu, %n: index) attributes {attn.config = #cfg} {
  // expected-error @+1 {{'attn.sdpa' op cannot pack query heads (pack_gqa) in a variable-length batch}}
  attn.sdpa %q, %k, %k into %o varlen(%cq, %ck, %n : !cu, !cu) : !p, !p, !p -> !p
  return
}

// -----

// Nor do packed GQA heads and a paged K/V cache.
#cfg = #attn.config<mapping = "host", chip = "", block_m = 64, block_n = 32, warps = 0, min_ctas_per_sm = 0, stages = 0, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = true, conditional_rescale = false>
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!kv = memref<?x?x16x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!cu = memref<?xi32, strided<[?], offset: ?>>
!bt = memref<?x?xi32, strided<[?, ?], offset: ?>>

func.func @paged_pack_gqa(%q: !t, %kv: !kv, %bt: !bt, %used: !cu) attributes {attn.config = #cfg} {
  // expected-error @+1 {{'attn.sdpa' op cannot pack query heads (pack_gqa) over a paged K/V cache}}
  attn.sdpa %q, %kv, %kv into %q paged(%bt, %used : !bt, !cu) : !t, !kv, !kv -> !t
  return
}
