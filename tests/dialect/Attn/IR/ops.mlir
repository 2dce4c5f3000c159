// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s

!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>

// CHECK-LABEL: func.func @sdpa
func.func @sdpa(%q: !t, %k: !t, %v: !t, %o: !t, %lse: !lse, %s: f32) {
  // CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} into %{{.*}} lse %{{.*}} scale %{{.*}} mask <causal>
  attn.sdpa %q, %k, %v into %o lse %lse scale %s mask <causal> : !t, !t, !t -> !t, !lse
  // CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} into %{{.*}} :
  attn.sdpa %q, %k, %v into %o : !t, !t, !t -> !t
  // CHECK: mask <causal_bottom_right>
  attn.sdpa %q, %k, %v into %o mask <causal_bottom_right> : !t, !t, !t -> !t
  return
}

// CHECK-LABEL: func.func @tiles
func.func @tiles(%Q: !t, %K: !t, %V: !t, %O: !t, %LSE: !lse, %B: index,
                 %H: index, %T: index, %nq: index, %nk: index, %s: f32) {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %m0 = arith.constant dense<0xFF800000> : tensor<16xf32>
  %l0 = arith.constant dense<0.0> : tensor<16xf32>
  %a0 = arith.constant dense<0.0> : tensor<16x64xf32>
  // CHECK: attn.tile_grid (%[[B:.*]], %[[H:.*]], %[[T:.*]]) in (%{{.*}}, %{{.*}}, %{{.*}}) {
  attn.tile_grid (%b, %h, %t) in (%B, %H, %T) {
    // CHECK: attn.load_tile %{{.*}}[%[[B]], %[[H]], %[[T]]] : memref<{{.*}}> -> tensor<16x64xbf16>
    %q = attn.load_tile %Q[%b, %h, %t] : !t -> tensor<16x64xbf16>
    // CHECK: attn.kv_loop %[[KV:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) : tensor<16xf32>, tensor<16x64xf32> {
    %m, %l, %acc = attn.kv_loop %kv = %c0 to %nk step %c32
        iter_args(%mi = %m0, %li = %l0, %ai = %a0) : tensor<16xf32>, tensor<16x64xf32> {
      %k = attn.load_tile %K[%b, %h, %kv] : !t -> tensor<32x64xbf16>
      %v = attn.load_tile %V[%b, %h, %kv] : !t -> tensor<32x64xbf16>
      // CHECK: attn.online_attention {{.*}} at [%[[T]], %[[KV]]] bounds [{{.*}}] scale %{{.*}} mask <causal>
      %m1, %l1, %a1 = attn.online_attention %q, %k, %v, %mi, %li, %ai
          at [%t, %kv] bounds [%nq, %nk] scale %s mask <causal>
          : tensor<16x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<16xf32>, tensor<16x64xf32>
      // CHECK: attn.qk {{.*}} : tensor<16x64xbf16>, tensor<32x64xbf16> -> tensor<16x32xf32>
      %sc = attn.qk %q, %k scale %s : tensor<16x64xbf16>, tensor<32x64xbf16> -> tensor<16x32xf32>
      // CHECK: attn.mask {{.*}} mask <causal_bottom_right> : tensor<16x32xf32>
      %sm = attn.mask %sc at [%t, %kv] bounds [%nq, %nk] mask <causal_bottom_right> : tensor<16x32xf32>
      // CHECK: attn.mask {{.*}} bounds [{{.*}}] : tensor<16x32xf32>
      %sn = attn.mask %sc at [%t, %kv] bounds [%nq, %nk] : tensor<16x32xf32>
      // CHECK: attn.online_softmax {{.*}} : tensor<16x32xf32>, tensor<16xf32> -> tensor<16x32xbf16>
      %p, %m2, %l2, %alpha = attn.online_softmax %sm, %m1, %l1 : tensor<16x32xf32>, tensor<16xf32> -> tensor<16x32xbf16>
      // CHECK: attn.pv {{.*}} : tensor<16x32xbf16>, tensor<32x64xbf16>, tensor<16x64xf32>, tensor<16xf32>
      %a2 = attn.pv %p, %v, %a1, %alpha : tensor<16x32xbf16>, tensor<32x64xbf16>, tensor<16x64xf32>, tensor<16xf32>
      // CHECK: attn.yield %{{.*}}, %{{.*}}, %{{.*}} : tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>
      attn.yield %m2, %l2, %a2 : tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>
    }
    // CHECK: attn.finalize {{.*}} : tensor<16x64xf32>, tensor<16xf32> -> tensor<16x64xbf16>
    %out, %lse = attn.finalize %acc, %m, %l : tensor<16x64xf32>, tensor<16xf32> -> tensor<16x64xbf16>
    // CHECK: attn.store_tile %{{.*}}, %{{.*}}[%[[B]], %[[H]], %[[T]]] : tensor<16x64xbf16>, memref<{{.*}}>
    attn.store_tile %out, %O[%b, %h, %t] : tensor<16x64xbf16>, !t
    // CHECK: attn.store_tile %{{.*}}, %{{.*}}[%[[B]], %[[H]], %[[T]]] : tensor<16xf32>, memref<{{.*}}>
    attn.store_tile %lse, %LSE[%b, %h, %t] : tensor<16xf32>, !lse
  }
  return
}
