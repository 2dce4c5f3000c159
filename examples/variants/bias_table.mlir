// A user-written score_mod reading a captured table: a relative-position
// bias (T5-style) bucketed by |q_idx - kv_idx|, one row of buckets per
// head: score += table[h, min(|i - j|, buckets - 1)].
//
//   attn-opt examples/variants/bias_table.mlir --attn-to-ptx="ptx-file=b.ptx"

!bhnd = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!table = memref<?x?xf32, strided<[?, ?], offset: ?>>

func.func @attn_fwd(%q: !bhnd, %k: !bhnd, %v: !bhnd, %o: !bhnd, %scale: f32,
                    %table: !table) {
  attn.sdpa %q, %k, %v into %o scale %scale
      captures(%table : !table) score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %t: !table):
    %c1 = arith.constant 1 : index
    %buckets = memref.dim %t, %c1 : !table
    %last = arith.subi %buckets, %c1 : index
    %d = arith.subi %i, %j : index
    %n = arith.subi %j, %i : index
    %abs = arith.maxsi %d, %n : index
    %bucket = arith.minsi %abs, %last : index
    %bias = memref.load %t[%h, %bucket] : !table
    %y = arith.addf %s, %bias : f32
    attn.yield %y : f32
  } : !bhnd, !bhnd, !bhnd -> !bhnd
  return
}
