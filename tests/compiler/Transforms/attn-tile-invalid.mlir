// RUN: attn-opt %s --split-input-file --verify-diagnostics --attn-tile

// Tile sizes are decided by attn-configure, never by attn-tile.
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>

func.func @unconfigured(%q: !t, %k: !t, %v: !t, %o: !t) {
  // expected-error @+1 {{'attn.sdpa' op has no attn.config on its function: run attn-configure first}}
  attn.sdpa %q, %k, %v into %o : !t, !t, !t -> !t
  return
}

// -----

// Packed GQA heads in a variable-length batch, with a mask_mod that reads
// a capture: the padding rows of a packed tile belong to no head, so the
// mod could index past the capture.
#cfg = #attn.config<mapping = "host", chip = "", block_m = 64, block_n = 32, warps = 0, min_ctas_per_sm = 0, stages = 0, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = true, conditional_rescale = false>
!p = memref<1x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!cu = memref<?xi32, strided<[?], offset: ?>>
!w = memref<?xi32>

func.func @varlen_pack_gqa_reading_mod(%q: !p, %k: !p, %o: !p, %cq: !cu, %ck: !cu, %n: index, %w: !w) attributes {attn.config = #cfg} {
  // expected-error @+1 {{'attn.sdpa' op cannot pack query heads (pack_gqa) with a score_mod or mask_mod that reads a capture}}
  attn.sdpa %q, %k, %k into %o varlen(%cq, %ck, %n : !cu, !cu) captures(%w : !w) mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index, %t: !w):
    %x = memref.load %t[%h] : !w
    %c0 = arith.constant 0 : i32
    %seen = arith.cmpi sge, %x, %c0 : i32
    attn.yield %seen : i1
  } : !p, !p, !p -> !p
  return
}
