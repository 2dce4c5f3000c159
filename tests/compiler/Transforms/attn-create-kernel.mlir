// RUN: attn-opt %s --split-input-file --attn-create-kernel="head-dim=96 dtype=f16 mask=causal_bottom_right" | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-create-kernel="head-dim=64 positive-scale=false" | FileCheck %s --check-prefix=ANYSCALE
// RUN: attn-opt %s --split-input-file --attn-create-kernel | FileCheck %s --check-prefix=NONE
// RUN: attn-opt %s --split-input-file --attn-create-kernel="head-dim=64 mask=causal variants=softcap backward=1" | FileCheck %s --check-prefix=BACKWARD
// RUN: attn-opt %s --split-input-file --attn-create-kernel="head-dim=64 mask=causal_bottom_right variants=window varlen=1" | FileCheck %s --check-prefix=VARLEN
// RUN: not attn-opt %s --split-input-file --attn-create-kernel="head-dim=64 varlen=1 backward=1" 2>&1 | FileCheck %s --check-prefix=VARLENBWD
// RUN: attn-opt %s --split-input-file --attn-create-kernel="head-dim=64 mask=causal_bottom_right varlen=1 page-size=16" | FileCheck %s --check-prefix=PAGED
// RUN: not attn-opt %s --split-input-file --attn-create-kernel="head-dim=64 varlen=1 page-size=24" 2>&1 | FileCheck %s --check-prefix=PAGESIZE
// RUN: attn-opt %s --split-input-file --attn-create-kernel="head-dim=64 mask=causal_bottom_right variants=window varlen=1 split=1" | FileCheck %s --check-prefix=SPLIT
// RUN: not attn-opt %s --split-input-file --attn-create-kernel="head-dim=64 split=1 backward=1" 2>&1 | FileCheck %s --check-prefix=SPLITBWD
// RUN: not attn-opt %s --split-input-file --attn-create-kernel="head-dim=64 dtype=f64" 2>&1 | FileCheck %s --check-prefix=DTYPE
// RUN: not attn-opt %s --split-input-file --attn-create-kernel="head-dim=64 mask=sliding" 2>&1 | FileCheck %s --check-prefix=MASK
// RUN: not attn-opt %s --split-input-file --attn-create-kernel="head-dim=-3" 2>&1 | FileCheck %s --check-prefix=HEADDIM
// RUN: not attn-opt %s --split-input-file --attn-create-kernel="head-dim=-65" 2>&1 | FileCheck %s --check-prefix=HEADDIM65

// The kernel ABI: Q, K, V, O (B, H, N, D; dynamic sizes and strides, unit
// innermost stride), the LSE (B, H, N) and the scale.
// The backward kernel: Q, K, V, O, dO, the LSE, dQ, dK, dV, the row terms'
// workspace, the scale, then the variants' captures; one sdpa_backward with
// the forward's mods.
// BACKWARD-LABEL: func.func @attn_bwd
// BACKWARD-SAME: (%arg0: memref<?x?x?x64xbf16, {{.*}}>, %arg1: memref<?x?x?x64xbf16, {{.*}}>, %arg2: memref<?x?x?x64xbf16, {{.*}}>, %arg3: memref<?x?x?x64xbf16, {{.*}}>, %arg4: memref<?x?x?x64xbf16, {{.*}}>, %arg5: memref<?x?x?xf32, {{.*}}>, %arg6: memref<?x?x?x64xbf16, {{.*}}>, %arg7: memref<?x?x?x64xbf16, {{.*}}>, %arg8: memref<?x?x?x64xbf16, {{.*}}>, %arg9: memref<?x?x?xf32, {{.*}}>, %arg10: f32, %arg11: f32)
// BACKWARD: attn.sdpa_backward %arg0, %arg1, %arg2, %arg3, %arg4, %arg5 into %arg6, %arg7, %arg8 delta %arg9 scale %arg10 mask <causal> positive_scale captures(%arg11, %{{.*}} : f32, index) score_mod {
// BACKWARD: math.tanh

// A variable-length kernel: kVarlenArgs (the offsets, then the longest
// query count) after the scale, before the variants' captures; the
// diagonal's shift is built from the tensors' lengths, which attn-tile
// reads per sequence.
// VARLEN-LABEL: func.func @attn_fwd
// VARLEN-SAME: %arg5: f32, %arg6: memref<?xi32, strided<[?], offset: ?>>, %arg7: memref<?xi32, strided<[?], offset: ?>>, %arg8: i64, %arg9: i64, %arg10: i64)
// VARLEN: %[[MAX:.*]] = arith.index_cast %arg8 : i64 to index
// VARLEN: %[[SHIFT:.*]] = arith.subi
// VARLEN: attn.sdpa %arg0, %arg1, %arg2 into %arg3 lse %arg4 scale %arg5 varlen(%arg6, %arg7, %[[MAX]] : {{.*}}) mask <causal_bottom_right> positive_scale captures(%arg9, %arg10, %[[SHIFT]] : i64, i64, index)
// VARLENBWD: the backward pass of a variable-length batch is not supported

// A paged kernel: K and V (num_pages, Hkv, 16, D) with the page size
// compiled in, then kPagedArgs after the scale (query offsets, the longest
// query count, the block table, the key counts).
// PAGED-LABEL: func.func @attn_fwd
// PAGED-SAME: %arg1: memref<?x?x16x64xbf16, strided<[?, ?, ?, 1], offset: ?>>, %arg2: memref<?x?x16x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
// PAGED-SAME: %arg5: f32, %arg6: memref<?xi32, strided<[?], offset: ?>>, %arg7: i64, %arg8: memref<?x?xi32, strided<[?, ?], offset: ?>>, %arg9: memref<?xi32, strided<[?], offset: ?>>)
// PAGED: %[[MAX:.*]] = arith.index_cast %arg7 : i64 to index
// PAGED: attn.sdpa %arg0, %arg1, %arg2 into %arg3 lse %arg4 scale %arg5 varlen(%arg6, %[[MAX]] : memref<?xi32, strided<[?], offset: ?>>) paged(%arg8, %arg9 : memref<?x?xi32, strided<[?, ?], offset: ?>>, memref<?xi32, strided<[?], offset: ?>>) mask <causal_bottom_right> positive_scale :
// PAGESIZE: error: page-size must be 0 or a multiple of 16 in [16, 256] (forward only), got 24

// Split-KV: kSplitArgs (the count, the f32 partial outputs with the head
// dim, their LSEs) after the varlen arguments, before the captures.
// SPLIT-LABEL: func.func @attn_fwd
// SPLIT-SAME: %arg8: i64, %arg9: i64, %arg10: memref<?x?x?x64xf32, strided<[?, ?, ?, 1], offset: ?>>, %arg11: memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, %arg12: i64, %arg13: i64)
// SPLIT: %[[N:.*]] = arith.index_cast %arg9 : i64 to index
// SPLIT: attn.sdpa %arg0, %arg1, %arg2 into %arg3 lse %arg4 scale %arg5 varlen(%arg6, %arg7, %{{.*}} : {{.*}}) split(%[[N]], %arg10, %arg11 : {{.*}}) mask <causal_bottom_right> positive_scale captures(%arg12, %arg13, %{{.*}} : i64, i64, index)
// SPLITBWD: split-KV is a forward-pass decomposition; the backward pass has none

// CHECK-LABEL: func.func @attn_fwd
// CHECK-SAME: (%arg0: memref<?x?x?x96xf16, strided<[?, ?, ?, 1], offset: ?>>, %arg1: memref<?x?x?x96xf16, strided<[?, ?, ?, 1], offset: ?>>, %arg2: memref<?x?x?x96xf16, strided<[?, ?, ?, 1], offset: ?>>, %arg3: memref<?x?x?x96xf16, strided<[?, ?, ?, 1], offset: ?>>
// CHECK-SAME: %arg4: memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, %arg5: f32)
// CHECK-SAME: attributes {llvm.emit_c_interface}
// The runtime calls this kernel with a scale > 0 unless told otherwise.
// CHECK-NEXT: attn.sdpa %arg0, %arg1, %arg2 into %arg3 lse %arg4 scale %arg5 mask <causal_bottom_right> positive_scale :
// CHECK-NEXT: return
// ANYSCALE-LABEL: func.func @attn_fwd
// ANYSCALE-SAME: memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
// ANYSCALE: attn.sdpa %arg0, %arg1, %arg2 into %arg3 lse %arg4 scale %arg5 :
// Without a head dim the module is kept as it is.
// NONE: module {
// NONE-NEXT: }
// DTYPE: error: dtype must be bf16, f16, f32 or e4m3, got 'f64'
// MASK: error: mask must be none, causal or causal_bottom_right, got 'sliding'
// The number, not the byte an int64 streamed as a char gives ('A' for -65;
// issue 14).
// HEADDIM: error: head-dim must be positive, got -3{{$}}
// HEADDIM65: error: head-dim must be positive, got -65{{$}}
module {
}

// -----

// A module that already holds a function is kept as it is.
// CHECK-LABEL: func.func @mine()
// CHECK-NOT: attn_fwd
// ANYSCALE-LABEL: func.func @mine()
// ANYSCALE-NOT: attn_fwd
// NONE-LABEL: func.func @mine()
// NONE-NOT: attn_fwd
module {
  func.func @mine() {
    return
  }
}
