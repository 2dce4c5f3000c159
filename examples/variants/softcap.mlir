// Logit soft-capping (Gemma 2, Grok): each scaled score s becomes
// cap · tanh(s / cap) before the softmax. The score_mod sees the real scaled
// score (the softmax's log2(e) folding comes after it); the cap is a kernel
// argument.
//
//   attn-opt examples/variants/softcap.mlir --attn-to-ptx="ptx-file=s.ptx"

!bhnd = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>

func.func @attn_fwd(%q: !bhnd, %k: !bhnd, %v: !bhnd, %o: !bhnd, %scale: f32,
                    %softcap: f32) {
  attn.sdpa %q, %k, %v into %o scale %scale mask <causal>
      captures(%softcap : f32) score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %cap: f32):
    %x = arith.divf %s, %cap : f32
    %t = math.tanh %x : f32
    %y = arith.mulf %t, %cap : f32
    attn.yield %y : f32
  } : !bhnd, !bhnd, !bhnd -> !bhnd
  return
}
