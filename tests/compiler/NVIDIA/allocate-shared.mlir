// RUN: attn-opt %s --split-input-file --attn-nv-allocate-shared | FileCheck %s

// Each shared-memory buffer of a kernel gets its byte offset, one after the
// other; swizzled tiles start on a 1024-byte boundary (the swizzle follows
// address bits), and the kernel records its dynamic shared memory, with
// 1024 bytes of slack to align the base at run time when anything is
// swizzled.

// Padded mma.sync tiles: 64 rows of 64 · 2 + 16 bytes = 9216 bytes a tile.
// CHECK-LABEL: func.func @padded(
// CHECK-SAME: attn.shared_bytes = 64512 : i32
// CHECK: attn_nv.alloc_shared {offset = 0 : i64} : !attn_nv.smem<64x64xbf16, padded>
// CHECK: attn_nv.alloc_shared {offset = 9216 : i64} : !attn_nv.smem<3x64x64xbf16, padded>
// CHECK: attn_nv.alloc_shared {offset = 36864 : i64} : !attn_nv.smem<3x64x64xbf16, padded>
func.func @padded(%n: index) {
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %q = attn_nv.alloc_shared : !attn_nv.smem<64x64xbf16, padded>
    %k = attn_nv.alloc_shared : !attn_nv.smem<3x64x64xbf16, padded>
    %v = attn_nv.alloc_shared : !attn_nv.smem<3x64x64xbf16, padded>
  }
  return
}

// -----

// Swizzled wgmma tiles: 128-byte rows, 64-column blocks.
// CHECK-LABEL: func.func @swizzled(
// CHECK-SAME: attn.shared_bytes = 66560 : i32
// CHECK: attn_nv.alloc_shared {offset = 0 : i64} : !attn_nv.smem<128x64xbf16, swizzle_128b>
// CHECK: attn_nv.alloc_shared {offset = 16384 : i64} : !attn_nv.smem<3x64x64xbf16, swizzle_128b>
// CHECK: attn_nv.alloc_shared {offset = 40960 : i64} : !attn_nv.smem<3x64x64xbf16, swizzle_128b>
func.func @swizzled(%n: index) {
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %q = attn_nv.alloc_shared : !attn_nv.smem<128x64xbf16, swizzle_128b>
    %k = attn_nv.alloc_shared : !attn_nv.smem<3x64x64xbf16, swizzle_128b>
    %v = attn_nv.alloc_shared : !attn_nv.smem<3x64x64xbf16, swizzle_128b>
  }
  return
}

// -----

// A swizzled tile after a padded one (32 · 144 = 4608 bytes) starts at the
// next multiple of 1024; a padded one after it at the next multiple of 16.
// 55296 bytes, and the slack to align a swizzled base.
// CHECK-LABEL: func.func @mixed(
// CHECK-SAME: attn.shared_bytes = 56320 : i32
// CHECK: attn_nv.alloc_shared {offset = 0 : i64} : !attn_nv.smem<32x64xbf16, padded>
// CHECK: attn_nv.alloc_shared {offset = 5120 : i64} : !attn_nv.smem<64x192xbf16, swizzle_128b>
// CHECK: attn_nv.alloc_shared {offset = 29696 : i64} : !attn_nv.smem<2x32x192xbf16, padded>
func.func @mixed(%n: index) {
  %p = attn_nv.alloc_shared : !attn_nv.smem<32x64xbf16, padded>
  %s = attn_nv.alloc_shared : !attn_nv.smem<64x192xbf16, swizzle_128b>
  %k = attn_nv.alloc_shared : !attn_nv.smem<2x32x192xbf16, padded>
  return
}

// -----

// Offsets are per kernel; a function without buffers gets no attribute.
// CHECK-LABEL: func.func @first(
// CHECK-SAME: attn.shared_bytes = 2304 : i32
// CHECK: attn_nv.alloc_shared {offset = 0 : i64} : !attn_nv.smem<16x64xf16, padded>
// CHECK-LABEL: func.func @second(
// CHECK-SAME: attn.shared_bytes = 2304 : i32
// CHECK: attn_nv.alloc_shared {offset = 0 : i64} : !attn_nv.smem<16x64xf16, padded>
// CHECK-LABEL: func.func @none(
// CHECK-NOT: attn.shared_bytes
// CHECK: return
func.func @first() {
  %a = attn_nv.alloc_shared : !attn_nv.smem<16x64xf16, padded>
  return
}
func.func @second() {
  %a = attn_nv.alloc_shared : !attn_nv.smem<16x64xf16, padded>
  return
}
func.func @none() {
  return
}

// -----

// mbarriers (tma) take 8 bytes each, 8-byte aligned, in program order with
// the tiles: K's 3 after K's stages (16384 + 24576), V's stages on the next
// 1024-byte boundary, V's barriers after them.
// CHECK-LABEL: func.func @barriers(
// CHECK-SAME: attn.shared_bytes = 67608 : i32
// CHECK: attn_nv.alloc_shared {offset = 0 : i64} : !attn_nv.smem<128x64xbf16, swizzle_128b>
// CHECK: attn_nv.alloc_shared {offset = 16384 : i64} : !attn_nv.smem<3x64x64xbf16, swizzle_128b>
// CHECK: attn_nv.alloc_barriers {offset = 40960 : i64} : !attn_nv.barriers<3>
// CHECK: attn_nv.alloc_shared {offset = 41984 : i64} : !attn_nv.smem<3x64x64xbf16, swizzle_128b>
// CHECK: attn_nv.alloc_barriers {offset = 66560 : i64} : !attn_nv.barriers<3>
func.func @barriers(%n: index) {
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %q = attn_nv.alloc_shared : !attn_nv.smem<128x64xbf16, swizzle_128b>
    %k = attn_nv.alloc_shared : !attn_nv.smem<3x64x64xbf16, swizzle_128b>
    %kb = attn_nv.alloc_barriers : !attn_nv.barriers<3>
    %v = attn_nv.alloc_shared : !attn_nv.smem<3x64x64xbf16, swizzle_128b>
    %vb = attn_nv.alloc_barriers : !attn_nv.barriers<3>
  }
  return
}
