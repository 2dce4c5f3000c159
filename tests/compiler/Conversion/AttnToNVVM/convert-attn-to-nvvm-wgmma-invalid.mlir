// RUN: attn-opt %s --split-input-file --convert-attn-to-nvvm="tensor-core=wgmma" --verify-diagnostics
// RUN: not attn-opt %s --split-input-file --convert-attn-to-nvvm="tensor-core=wgmma chip=sm_80" 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not attn-opt %s --split-input-file --convert-attn-to-nvvm="tensor-core=wgmma warps=4" 2>&1 | FileCheck %s --check-prefix=WARPS
// RUN: not attn-opt %s --split-input-file --convert-attn-to-nvvm="tensor-core=tcgen05" 2>&1 | FileCheck %s --check-prefix=NAME

// tensor-core=wgmma is refused, with the reason, where the wgmma mapping
// cannot run the tiles; auto would take mma.sync there instead.
// CHIP: error: 'attn.tile_grid' op tensor-core=wgmma needs sm_90a, got sm_80
// WARPS: error: 'attn.tile_grid' op tensor-core=wgmma needs warps = block-m / 16
// NAME: error: 'attn.tile_grid' op tensor-core must be auto, mma.sync or wgmma, got 'tcgen05'

// Swizzled tiles are 64-column blocks.
func.func @head_dim_96(%Q: memref<?x?x?x96xbf16, strided<[?, ?, ?, 1], offset: ?>>, %K: memref<?x?x?x96xbf16, strided<[?, ?, ?, 1], offset: ?>>, %V: memref<?x?x?x96xbf16, strided<[?, ?, ?, 1], offset: ?>>, %n: index) {
  // expected-error @+1 {{tensor-core=wgmma needs a head dim that is a multiple of 64}}
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %x = attn.load_tile %Q[%b, %h, %t] : memref<?x?x?x96xbf16, strided<[?, ?, ?, 1], offset: ?>> -> tensor<128x96xbf16>
    %c0 = arith.constant 0 : index
    %m0 = arith.constant dense<0xFF800000> : tensor<128xf32>
    %l0 = arith.constant dense<0.0> : tensor<128xf32>
    %a0 = arith.constant dense<0.0> : tensor<128x96xf32>
    %m, %l, %acc = attn.kv_loop %kv = %c0 to %n step %n iter_args(%mi = %m0, %li = %l0, %ai = %a0) : tensor<128xf32>, tensor<128x96xf32> {
      %k = attn.load_tile %K[%b, %h, %kv] : memref<?x?x?x96xbf16, strided<[?, ?, ?, 1], offset: ?>> -> tensor<64x96xbf16>
      %v = attn.load_tile %V[%b, %h, %kv] : memref<?x?x?x96xbf16, strided<[?, ?, ?, 1], offset: ?>> -> tensor<64x96xbf16>
      attn.yield %mi, %li, %ai : tensor<128xf32>, tensor<128xf32>, tensor<128x96xf32>
    }
  }
  return
}

// -----

// A warpgroup owns 64 rows.
func.func @block_m_96(%Q: memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>, %K: memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>, %V: memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>, %n: index) {
  // expected-error @+1 {{tensor-core=wgmma needs block-m a multiple of 64 up to 256}}
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %x = attn.load_tile %Q[%b, %h, %t] : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>> -> tensor<96x64xbf16>
    %c0 = arith.constant 0 : index
    %m0 = arith.constant dense<0xFF800000> : tensor<96xf32>
    %l0 = arith.constant dense<0.0> : tensor<96xf32>
    %a0 = arith.constant dense<0.0> : tensor<96x64xf32>
    %m, %l, %acc = attn.kv_loop %kv = %c0 to %n step %n iter_args(%mi = %m0, %li = %l0, %ai = %a0) : tensor<96xf32>, tensor<96x64xf32> {
      %k = attn.load_tile %K[%b, %h, %kv] : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>> -> tensor<64x64xbf16>
      %v = attn.load_tile %V[%b, %h, %kv] : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>> -> tensor<64x64xbf16>
      attn.yield %mi, %li, %ai : tensor<96xf32>, tensor<96xf32>, tensor<96x64xf32>
    }
  }
  return
}

// -----

// One wgmma covers at most 256 columns of S.
func.func @block_n_512(%Q: memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>, %K: memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>, %V: memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>, %n: index) {
  // expected-error @+1 {{tensor-core=wgmma needs block-n up to 256}}
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %x = attn.load_tile %Q[%b, %h, %t] : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>> -> tensor<64x64xbf16>
    %c0 = arith.constant 0 : index
    %m0 = arith.constant dense<0xFF800000> : tensor<64xf32>
    %l0 = arith.constant dense<0.0> : tensor<64xf32>
    %a0 = arith.constant dense<0.0> : tensor<64x64xf32>
    %m, %l, %acc = attn.kv_loop %kv = %c0 to %n step %n iter_args(%mi = %m0, %li = %l0, %ai = %a0) : tensor<64xf32>, tensor<64x64xf32> {
      %k = attn.load_tile %K[%b, %h, %kv] : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>> -> tensor<512x64xbf16>
      %v = attn.load_tile %V[%b, %h, %kv] : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>> -> tensor<512x64xbf16>
      attn.yield %mi, %li, %ai : tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>
    }
  }
  return
}

// -----

// Accepted: 128x64 tiles, 8 warps (refused with warps=4 above).
func.func @fits(%Q: memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>, %K: memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>, %V: memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>, %n: index) {
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %x = attn.load_tile %Q[%b, %h, %t] : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>> -> tensor<128x64xbf16>
    %c0 = arith.constant 0 : index
    %m0 = arith.constant dense<0xFF800000> : tensor<128xf32>
    %l0 = arith.constant dense<0.0> : tensor<128xf32>
    %a0 = arith.constant dense<0.0> : tensor<128x64xf32>
    %m, %l, %acc = attn.kv_loop %kv = %c0 to %n step %n iter_args(%mi = %m0, %li = %l0, %ai = %a0) : tensor<128xf32>, tensor<128x64xf32> {
      %k = attn.load_tile %K[%b, %h, %kv] : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>> -> tensor<64x64xbf16>
      %v = attn.load_tile %V[%b, %h, %kv] : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>> -> tensor<64x64xbf16>
      attn.yield %mi, %li, %ai : tensor<128xf32>, tensor<128xf32>, tensor<128x64xf32>
    }
  }
  return
}
