// RUN: attn-opt %s --canonicalize | FileCheck %s

// The cp.async copies write their shared destination: with no result and
// no use they are not dead (regression: declaring only their global reads,
// they were erased -- by attn-nv-persistent's region DCE, Q's copy of the
// persistent warp-specialised kernel).
// CHECK-LABEL: func.func @copies_are_not_dead
// CHECK-NEXT: attn_nv.copy_async
// CHECK-NEXT: attn_nv.copy_table_async
// CHECK-NEXT: return
func.func @copies_are_not_dead(%Q: memref<?x?x?x64xbf16>, %bias: memref<?x?xf32>, %q: !attn_nv.smem<64x64xbf16, padded>, %t: !attn_nv.smem<64x64xf32, swizzle_128b>, %i: index) {
  attn_nv.copy_async %Q[%i, %i, %i] bounds %i into %q : memref<?x?x?x64xbf16>, !attn_nv.smem<64x64xbf16, padded>
  attn_nv.copy_table_async %bias[%i, %i] bounds %i, %i into %t : memref<?x?xf32>, !attn_nv.smem<64x64xf32, swizzle_128b>
  return
}

// A TMA store writes global memory through its map: not dead either
// (regression: declaring only its shared read, attn-nv-warp-specialize's
// clean-up of the consumers' region erased the output's store).
// CHECK-LABEL: func.func @tma_store_is_not_dead
// CHECK-NEXT: attn_nv.alloc_shared
// CHECK-NEXT: attn_nv.store_tma
// CHECK-NEXT: return
func.func @tma_store_is_not_dead(%map: !llvm.ptr, %i: index) {
  %o = attn_nv.alloc_shared : !attn_nv.smem<64x64xbf16, swizzle_128b>
  attn_nv.store_tma %o into %map[%i, %i, %i] : !attn_nv.smem<64x64xbf16, swizzle_128b>, !llvm.ptr
  return
}
