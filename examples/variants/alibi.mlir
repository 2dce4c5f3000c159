// ALiBi (BLOOM, MPT): score += slope[h] · (kv_idx - q_idx), the slopes a
// captured (H) tensor read with an ordinary load.
//
//   attn-opt examples/variants/alibi.mlir --attn-to-ptx="ptx-file=a.ptx"

!bhnd = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!slopes = memref<?xf32, strided<[?], offset: ?>>

func.func @attn_fwd(%q: !bhnd, %k: !bhnd, %v: !bhnd, %o: !bhnd, %scale: f32,
                    %slopes: !slopes) {
  attn.sdpa %q, %k, %v into %o scale %scale mask <causal>
      captures(%slopes : !slopes) score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %m: !slopes):
    %slope = memref.load %m[%h] : !slopes
    %d = arith.subi %j, %i : index
    %di = arith.index_cast %d : index to i32
    %df = arith.sitofp %di : i32 to f32
    %bias = arith.mulf %slope, %df : f32
    %y = arith.addf %s, %bias : f32
    attn.yield %y : f32
  } : !bhnd, !bhnd, !bhnd -> !bhnd
  return
}
