// Sliding-window causal attention (Mistral, Gemma): query i sees the keys
// i - window .. i. The window is a captured scalar, a kernel argument: a new
// size never recompiles. The mask_mod is affine in q_idx and kv_idx, so the
// tiling visits only the K/V tiles inside the window (both loop bounds
// narrowed per query tile) and masks only the tiles on its two edges.
//
//   attn-opt examples/variants/sliding_window.mlir --attn-to-ptx="ptx-file=w.ptx"
//   attn-opt examples/variants/sliding_window.mlir --attn-configure --attn-tile

!bhnd = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>

func.func @attn_fwd(%q: !bhnd, %k: !bhnd, %v: !bhnd, %o: !bhnd, %scale: f32,
                    %window: i64) {
  attn.sdpa %q, %k, %v into %o scale %scale mask <causal> positive_scale
      captures(%window : i64) mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index, %w: i64):
    %wi = arith.index_cast %w : i64 to index
    %lo = arith.subi %i, %wi : index
    %in = arith.cmpi sge, %j, %lo : index
    attn.yield %in : i1
  } : !bhnd, !bhnd, !bhnd -> !bhnd
  return
}
