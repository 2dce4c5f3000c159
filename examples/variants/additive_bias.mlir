// An additive bias table (the bias variant written as a mod): score +=
// table[q_idx, kv_idx], one (Nq, Nk) f32 table for every batch and head.
// attn-nv-stage-tables reads its score tiles through shared memory, copied
// with K and V.
//
//   attn-opt examples/variants/additive_bias.mlir --attn-to-ptx="ptx-file=b.ptx"

!bhnd = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!table = memref<?x?xf32, strided<[?, ?], offset: ?>>

func.func @attn_fwd(%q: !bhnd, %k: !bhnd, %v: !bhnd, %o: !bhnd, %scale: f32,
                    %table: !table) {
  attn.sdpa %q, %k, %v into %o scale %scale mask <causal>
      captures(%table : !table) score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %t: !table):
    %bias = memref.load %t[%i, %j] : !table
    %y = arith.addf %s, %bias : f32
    attn.yield %y : f32
  } : !bhnd, !bhnd, !bhnd -> !bhnd
  return
}
