// Causal attention over bf16 tensors with a head dim of 128, in the
// (batch, seq, head, dim) layout of most training code: the strides say so.
// Batch, heads and sequence lengths are dynamic: one kernel serves them all.
//
//   attn-opt examples/attention.mlir --attn-to-ptx="ptx-file=attention.ptx"
//   attn-opt examples/attention.mlir --attn-to-host          (CPU, LLVM dialect)
//   attn-opt examples/attention.mlir --attn-configure --attn-tile --attn-decompose
//                                    (the tile program in generic tile ops)

!bnhd = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>

func.func @attn_fwd(%q: !bnhd, %k: !bnhd, %v: !bnhd, %o: !bnhd, %lse: !lse,
                    %scale: f32) attributes {llvm.emit_c_interface} {
  attn.sdpa %q, %k, %v into %o lse %lse scale %scale mask <causal>
      : !bnhd, !bnhd, !bnhd -> !bnhd, !lse
  return
}
