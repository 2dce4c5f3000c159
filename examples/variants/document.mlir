// Document masking for packed sequences: query i sees key j only within its
// document. The ids never decrease along the sequence (attn.non_decreasing
// says so), so each query tile visits only the keys of its documents: the
// K/V loop is bounded by two binary searches over the captured ids, and
// tiles inside one document run without per-element masking.
//
//   attn-opt examples/variants/document.mlir --attn-to-ptx="ptx-file=d.ptx"

!bhnd = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!ids = memref<?xi32, strided<[?], offset: ?>>

func.func @attn_fwd(%q: !bhnd, %k: !bhnd, %v: !bhnd, %o: !bhnd, %scale: f32,
                    %docs: !ids) {
  attn.sdpa %q, %k, %v into %o scale %scale mask <causal>
      captures(%docs : !ids) mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index, %d: !ids):
    %x = memref.load %d[%i] {attn.non_decreasing} : !ids
    %y = memref.load %d[%j] {attn.non_decreasing} : !ids
    %same = arith.cmpi eq, %x, %y : i32
    attn.yield %same : i1
  } : !bhnd, !bhnd, !bhnd -> !bhnd
  return
}
