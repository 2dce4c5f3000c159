// RUN: attn-opt %s --split-input-file --convert-attn-to-nvvm --verify-diagnostics

// Kernel parameters are memrefs and scalars: a tensor argument is rejected
// with a diagnostic, not mapped.
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>

// expected-error @+1 {{argument #4 of type 'tensor<64x64xbf16>' cannot be a kernel parameter (memrefs and scalars only)}}
func.func @tensor_arg(%Q: !t, %K: !t, %V: !t, %O: !t, %q: tensor<64x64xbf16>, %n: index) {
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %x = attn.load_tile %Q[%b, %h, %t] : !t -> tensor<64x64xbf16>
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %m0 = arith.constant dense<0xFF800000> : tensor<64xf32>
    %l0 = arith.constant dense<0.0> : tensor<64xf32>
    %a0 = arith.constant dense<0.0> : tensor<64x64xf32>
    %m, %l, %acc = attn.kv_loop %kv = %c0 to %n step %c64 iter_args(%mi = %m0, %li = %l0, %ai = %a0) : tensor<64xf32>, tensor<64x64xf32> {
      %k = attn.load_tile %K[%b, %h, %kv] : !t -> tensor<64x64xbf16>
      %v = attn.load_tile %V[%b, %h, %kv] : !t -> tensor<64x64xbf16>
      attn.yield %mi, %li, %ai : tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>
    }
  }
  return
}
