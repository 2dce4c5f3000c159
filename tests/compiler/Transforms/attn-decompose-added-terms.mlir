// RUN: attn-opt %s --split-input-file --attn-decompose | FileCheck %s

// A score_mod that adds terms free of the score, s + g1 + ... + gk, has
// the base-2 scores c · S + Σ log2(e) · g (c = scale · log2(e)): the
// product by c fused with the first addition (contract), no multiply by the
// scale nor by log2(e) after the sum. A term x · y with x free of the
// positions (ALiBi's slope) takes log2(e) on x, before the map where the
// tile has one head (built from the tile's batch and head). The mod's own
// ops that computed the sum are left dead (canonicalization drops them).

// CHECK-LABEL: func.func @alibi(
// CHECK: %[[LOG2E:.*]] = arith.constant 1.44269502 : f32
// CHECK: %[[C:.*]] = arith.mulf %arg10, %[[LOG2E]] : f32
// CHECK: %[[S:.*]] = attn.matmul
// CHECK: %[[L2E:.*]] = arith.constant 1.44269502 : f32
// CHECK-NEXT: %[[SLOPE:.*]] = memref.load %arg11[%arg13]
// CHECK-NEXT: %[[A:.*]] = arith.mulf %[[SLOPE]], %[[L2E]] : f32
// CHECK-NEXT: attn.map(%[[S]] : tensor<64x32xf32>) at [%arg6, %arg7]
// CHECK-NEXT: ^bb0(%[[I:.*]]: index, %[[J:.*]]: index, %[[X:.*]]: f32):
// CHECK-NEXT:   %[[DEADSLOPE:.*]] = memref.load %arg11[%arg13]
// CHECK-NEXT:   %[[D:.*]] = arith.subi %[[J]], %[[I]] : index
// CHECK-NEXT:   %[[DI:.*]] = arith.index_cast %[[D]] : index to i32
// CHECK-NEXT:   %[[DF:.*]] = arith.sitofp %[[DI]] : i32 to f32
// CHECK-NEXT:   %[[DEAD:.*]] = arith.mulf %[[DEADSLOPE]], %[[DF]] : f32
// CHECK-NEXT:   arith.addf %[[X]], %[[DEAD]] : f32
// CHECK-NEXT:   %[[CS:.*]] = arith.mulf %[[X]], %[[C]] fastmath<contract> : f32
// CHECK-NEXT:   %[[AD:.*]] = arith.mulf %[[A]], %[[DF]] : f32
// CHECK-NEXT:   %[[T:.*]] = arith.addf %[[CS]], %[[AD]] fastmath<contract> : f32
// CHECK-NEXT:   attn.yield %[[T]] : f32
func.func @alibi(%q: tensor<64x64xbf16>, %k: tensor<32x64xbf16>, %v: tensor<32x64xbf16>,
                 %m: tensor<64xf32>, %l: tensor<64xf32>, %acc: tensor<64x64xf32>,
                 %row: index, %col: index, %nq: index, %nk: index, %scale: f32,
                 %slopes: memref<?xf32>, %batch: index, %head: index)
    -> (tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>) {
  %m1, %l1, %a1 = attn.online_attention %q, %k, %v, %m, %l, %acc at [%row, %col] bounds [%nq, %nk] scale %scale batch %batch head %head captures(%slopes : memref<?xf32>) score_mod {
  ^bb0(%x: f32, %b: index, %h: index, %i: index, %j: index, %s: memref<?xf32>):
    %slope = memref.load %s[%h] : memref<?xf32>
    %d = arith.subi %j, %i : index
    %di = arith.index_cast %d : index to i32
    %df = arith.sitofp %di : i32 to f32
    %bias = arith.mulf %slope, %df : f32
    %y = arith.addf %x, %bias : f32
    attn.yield %y : f32
  } : tensor<64x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<64xf32>, tensor<64x64xf32>
  return %m1, %l1, %a1 : tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>
}

// -----

// Two terms, the score in the middle of the chain: (t + s) + slope · d. The
// bias table's entry (gathered before the product) has no factor free of
// the positions: log2(e) multiplies it.
// CHECK-LABEL: func.func @bias_and_alibi(
// CHECK: %[[C:.*]] = arith.mulf %arg10, %{{.*}} : f32
// CHECK: %[[TABLE:.*]] = attn.map at [%arg6, %arg7] -> tensor<64x32xf32>
// CHECK: %[[S:.*]] = attn.matmul
// CHECK: %[[LOG2E:.*]] = arith.constant 1.44269502 : f32
// CHECK-NEXT: %[[SLOPE:.*]] = memref.load %arg12[%arg14]
// CHECK-NEXT: %[[A:.*]] = arith.mulf %[[SLOPE]], %[[LOG2E]] : f32
// CHECK-NEXT: attn.map(%[[S]], %[[TABLE]] : tensor<64x32xf32>, tensor<64x32xf32>) at [%arg6, %arg7]
// CHECK-NEXT: ^bb0(%{{.*}}: index, %{{.*}}: index, %[[X:.*]]: f32, %[[TB:.*]]: f32):
// CHECK-NOT: memref.load %arg11
// CHECK:   %[[CS:.*]] = arith.mulf %[[X]], %[[C]] fastmath<contract> : f32
// CHECK-NEXT:   %[[AD:.*]] = arith.mulf %[[A]], %{{.*}} : f32
// CHECK-NEXT:   %[[T1:.*]] = arith.addf %[[CS]], %[[AD]] fastmath<contract> : f32
// CHECK-NEXT:   %[[G:.*]] = arith.mulf %[[TB]], %[[LOG2E]] : f32
// CHECK-NEXT:   %[[T2:.*]] = arith.addf %[[T1]], %[[G]] fastmath<contract> : f32
// CHECK-NEXT:   attn.yield %[[T2]] : f32
func.func @bias_and_alibi(%q: tensor<64x64xbf16>, %k: tensor<32x64xbf16>, %v: tensor<32x64xbf16>,
                          %m: tensor<64xf32>, %l: tensor<64xf32>, %acc: tensor<64x64xf32>,
                          %row: index, %col: index, %nq: index, %nk: index, %scale: f32,
                          %bias: memref<?x?xf32>, %slopes: memref<?xf32>, %batch: index, %head: index)
    -> (tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>) {
  %m1, %l1, %a1 = attn.online_attention %q, %k, %v, %m, %l, %acc at [%row, %col] bounds [%nq, %nk] scale %scale batch %batch head %head captures(%bias, %slopes : memref<?x?xf32>, memref<?xf32>) score_mod {
  ^bb0(%x: f32, %b: index, %h: index, %i: index, %j: index, %t: memref<?x?xf32>, %s: memref<?xf32>):
    %tb = memref.load %t[%i, %j] : memref<?x?xf32>
    %y = arith.addf %tb, %x : f32
    %slope = memref.load %s[%h] : memref<?xf32>
    %d = arith.subi %j, %i : index
    %di = arith.index_cast %d : index to i32
    %df = arith.sitofp %di : i32 to f32
    %ab = arith.mulf %df, %slope : f32
    %z = arith.addf %y, %ab : f32
    attn.yield %z : f32
  } : tensor<64x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<64xf32>, tensor<64x64xf32>
  return %m1, %l1, %a1 : tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>
}

// -----

// Not a sum of terms free of the score (the score is scaled by a
// capture): log2(e) · score_mod(scale · S), as for any score_mod.
// CHECK-LABEL: func.func @scaled_score(
// CHECK: attn.map(%{{.*}} : tensor<64x32xf32>) at [%arg6, %arg7]
// CHECK-NEXT: ^bb0(%{{.*}}: index, %{{.*}}: index, %[[X:.*]]: f32):
// CHECK-NEXT:   %[[SC:.*]] = arith.mulf %[[X]], %arg10 fastmath<reassoc> : f32
// CHECK-NEXT:   %[[Y:.*]] = arith.mulf %[[SC]], %arg11 : f32
// CHECK-NEXT:   %[[Z:.*]] = arith.addf %[[Y]], %arg11 : f32
// CHECK-NEXT:   %[[T:.*]] = arith.mulf %[[Z]], %{{.*}} fastmath<reassoc> : f32
// CHECK-NEXT:   attn.yield %[[T]] : f32
func.func @scaled_score(%q: tensor<64x64xbf16>, %k: tensor<32x64xbf16>, %v: tensor<32x64xbf16>,
                        %m: tensor<64xf32>, %l: tensor<64xf32>, %acc: tensor<64x64xf32>,
                        %row: index, %col: index, %nq: index, %nk: index, %scale: f32,
                        %gain: f32, %batch: index, %head: index)
    -> (tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>) {
  %m1, %l1, %a1 = attn.online_attention %q, %k, %v, %m, %l, %acc at [%row, %col] bounds [%nq, %nk] scale %scale batch %batch head %head captures(%gain : f32) score_mod {
  ^bb0(%x: f32, %b: index, %h: index, %i: index, %j: index, %g: f32):
    %y = arith.mulf %x, %g : f32
    %z = arith.addf %y, %g : f32
    attn.yield %z : f32
  } : tensor<64x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<64xf32>, tensor<64x64xf32>
  return %m1, %l1, %a1 : tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>
}
