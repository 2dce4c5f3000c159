// RUN: attn-opt %s -split-input-file | attn-opt -split-input-file | FileCheck %s
// RUN: attn-opt %s -split-input-file --mlir-print-op-generic | attn-opt -split-input-file | FileCheck %s

// Round trip of every op, attribute and type of the attn_nv dialect, in
// custom and generic form.

// CHECK-LABEL: func.func @layouts
// CHECK-SAME: tensor<128x64xf32, #attn_nv.acc<warps = 8>>
// CHECK-SAME: tensor<128xf32, #attn_nv.rows<warps = 8>>
// CHECK-SAME: tensor<128xf32, #attn_nv.rows<warps = 8, partial = true>>
// CHECK-SAME: tensor<128x64xbf16, #attn_nv.operand_a<warps = 8>>
// CHECK-SAME: tensor<64x72xf16, #attn_nv.operand_a<warps = 4>>
// CHECK-SAME: tensor<64x8xf32, #attn_nv.acc<warps = 2>>
// CHECK-SAME: tensor<32xi1, #attn_nv.rows<warps = 1>>
func.func @layouts(%a: tensor<128x64xf32, #attn_nv.acc<warps = 8>>,
                   %r: tensor<128xf32, #attn_nv.rows<warps = 8>>,
                   %p: tensor<128xf32, #attn_nv.rows<warps = 8, partial = true>>,
                   %o: tensor<128x64xbf16, #attn_nv.operand_a<warps = 8>>,
                   %o2: tensor<64x72xf16, #attn_nv.operand_a<warps = 4>>,
                   %a2: tensor<64x8xf32, #attn_nv.acc<warps = 2>>,
                   %b: tensor<32xi1, #attn_nv.rows<warps = 1>>) {
  return
}

// col_groups: the warps split the columns into groups (1, the default, is
// not printed).
// CHECK-LABEL: func.func @acc_col_groups
// CHECK-SAME: tensor<64x128xf32, #attn_nv.acc<warps = 8, col_groups = 2>>
// CHECK-SAME: tensor<64x64xf32, #attn_nv.acc<warps = 4>>)
func.func @acc_col_groups(%a: tensor<64x128xf32, #attn_nv.acc<warps = 8, col_groups = 2>>,
                          %b: tensor<64x64xf32, #attn_nv.acc<warps = 4, col_groups = 1>>) {
  return
}

// partial = false is the default and is not printed.
// CHECK-LABEL: func.func @rows_default
// CHECK-SAME: tensor<64xf32, #attn_nv.rows<warps = 4>>)
func.func @rows_default(%r: tensor<64xf32, #attn_nv.rows<warps = 4, partial = false>>) {
  return
}

// CHECK-LABEL: func.func @smem_types
// CHECK-SAME: !attn_nv.smem<3x128x128xbf16, swizzle_128b>
// CHECK-SAME: !attn_nv.smem<128x64xf16, swizzle_128b>
// CHECK-SAME: !attn_nv.smem<2x64x72xbf16, padded>
// CHECK-SAME: !attn_nv.smem<64x8xf16, padded>
// CHECK-SAME: !attn_nv.smem<3x128x96xbf16, swizzle_128b>
func.func @smem_types(%a: !attn_nv.smem<3x128x128xbf16, swizzle_128b>,
                      %b: !attn_nv.smem<128x64xf16, swizzle_128b>,
                      %c: !attn_nv.smem<2x64x72xbf16, padded>,
                      %d: !attn_nv.smem<64x8xf16, padded>,
                      %e: !attn_nv.smem<3x128x96xbf16, swizzle_128b>) {
  return
}

// The layout keyword may also be written as a string.
// CHECK-LABEL: func.func @smem_string_layout
// CHECK-SAME: !attn_nv.smem<64x64xbf16, padded>
func.func @smem_string_layout(%a: !attn_nv.smem<64x64xbf16, "padded">) {
  return
}

// -----

// The mma.sync path: shared buffers, cp.async copies, ldmatrix of Q, the
// two products and the conversions between them.
// Operands whose ODS constraint is AttnNV_AnySmem print their type without
// the dialect prefix (`: <64x64xbf16, padded>`, not `qualified(type(...))`),
// so the checks accept both spellings.
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
#acc = #attn_nv.acc<warps = 4>
#a = #attn_nv.operand_a<warps = 4>

// CHECK-LABEL: func.func @mma_sync
func.func @mma_sync(%Q: !t, %K: !t, %b: index, %h: index, %row: index,
                    %n: index, %rph: index, %i: index,
                    %zero: tensor<64x64xf32, #acc>,
                    %lp: tensor<64xf32, #attn_nv.rows<warps = 4, partial = true>>)
    -> (tensor<64x64xf32, #acc>, tensor<64x64xf32, #acc>, tensor<64xf32, #attn_nv.rows<warps = 4>>) {
  // CHECK: %[[QS:.*]] = attn_nv.alloc_shared {offset = 0 : i64} : {{(!attn_nv.smem)?}}<64x64xbf16, padded>
  %qs = attn_nv.alloc_shared {offset = 0} : !attn_nv.smem<64x64xbf16, padded>
  // CHECK: %[[KB:.*]] = attn_nv.alloc_shared : {{(!attn_nv.smem)?}}<2x64x64xbf16, padded>
  %kbuf = attn_nv.alloc_shared : !attn_nv.smem<2x64x64xbf16, padded>
  // CHECK: attn_nv.copy_async %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] rows_per_head %{{.*}} bounds %{{.*}} into %[[QS]] : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>, {{(!attn_nv.smem)?}}<64x64xbf16, padded>
  attn_nv.copy_async %Q[%b, %h, %row] rows_per_head %rph bounds %n into %qs : !t, !attn_nv.smem<64x64xbf16, padded>
  // CHECK: %[[K:.*]] = attn_nv.slot %[[KB]][%{{.*}}] : {{(!attn_nv.smem)?}}<2x64x64xbf16, padded> -> {{(!attn_nv.smem)?}}<64x64xbf16, padded>
  %k = attn_nv.slot %kbuf[%i] : !attn_nv.smem<2x64x64xbf16, padded> -> !attn_nv.smem<64x64xbf16, padded>
  // CHECK: attn_nv.copy_async %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] bounds %{{.*}} into %[[K]] : memref<{{.*}}>, {{(!attn_nv.smem)?}}<64x64xbf16, padded>
  attn_nv.copy_async %K[%b, %h, %i] bounds %n into %k : !t, !attn_nv.smem<64x64xbf16, padded>
  // CHECK: attn_nv.copy_async %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] bounds %{{.*}} into %[[K]] strided : memref<{{.*}}>, {{(!attn_nv.smem)?}}<64x64xbf16, padded>
  attn_nv.copy_async %K[%b, %h, %i] bounds %n into %k strided : !t, !attn_nv.smem<64x64xbf16, padded>
  // CHECK: %[[QA:.*]] = attn_nv.load_operand %[[QS]] : {{(!attn_nv.smem)?}}<64x64xbf16, padded> -> tensor<64x64xbf16, #attn_nv.operand_a<warps = 4>>
  %qa = attn_nv.load_operand %qs : !attn_nv.smem<64x64xbf16, padded> -> tensor<64x64xbf16, #a>
  // CHECK: %[[S:.*]] = attn_nv.mma %[[QA]], %[[K]], %{{.*}} transpose_rhs : tensor<64x64xbf16, #attn_nv.operand_a<warps = 4>>, {{(!attn_nv.smem)?}}<64x64xbf16, padded>, tensor<64x64xf32, #attn_nv.acc<warps = 4>>
  %s = attn_nv.mma %qa, %k, %zero transpose_rhs : tensor<64x64xbf16, #a>, !attn_nv.smem<64x64xbf16, padded>, tensor<64x64xf32, #acc>
  // Q straight from shared memory.
  // CHECK: attn_nv.mma %[[QS]], %[[K]], %{{.*}} transpose_rhs : {{(!attn_nv.smem)?}}<64x64xbf16, padded>, {{(!attn_nv.smem)?}}<64x64xbf16, padded>, tensor<64x64xf32, #attn_nv.acc<warps = 4>>
  %s2 = attn_nv.mma %qs, %k, %zero transpose_rhs : !attn_nv.smem<64x64xbf16, padded>, !attn_nv.smem<64x64xbf16, padded>, tensor<64x64xf32, #acc>
  // CHECK: %[[P:.*]] = attn_nv.convert_layout %[[S]] : tensor<64x64xf32, #attn_nv.acc<warps = 4>> -> tensor<64x64xbf16, #attn_nv.operand_a<warps = 4>>
  %p = attn_nv.convert_layout %s : tensor<64x64xf32, #acc> -> tensor<64x64xbf16, #a>
  // P·V: V is K×N, no transpose.
  // CHECK: attn_nv.mma %[[P]], %[[K]], %[[S]] : tensor<64x64xbf16, #attn_nv.operand_a<warps = 4>>, {{(!attn_nv.smem)?}}<64x64xbf16, padded>, tensor<64x64xf32, #attn_nv.acc<warps = 4>>{{$}}
  %o = attn_nv.mma %p, %k, %s : tensor<64x64xbf16, #a>, !attn_nv.smem<64x64xbf16, padded>, tensor<64x64xf32, #acc>
  // CHECK: attn_nv.convert_layout %{{.*}} : tensor<64xf32, #attn_nv.rows<warps = 4, partial = true>> -> tensor<64xf32, #attn_nv.rows<warps = 4>>
  %l = attn_nv.convert_layout %lp : tensor<64xf32, #attn_nv.rows<warps = 4, partial = true>> -> tensor<64xf32, #attn_nv.rows<warps = 4>>
  return %o, %s2, %l : tensor<64x64xf32, #acc>, tensor<64x64xf32, #acc>, tensor<64xf32, #attn_nv.rows<warps = 4>>
}

// -----

// Conversions that keep the element type, and an f16 rounding.
// CHECK-LABEL: func.func @convert_layout
func.func @convert_layout(%a: tensor<128x64xf32, #attn_nv.acc<warps = 8>>,
                          %h: tensor<64x32xf16, #attn_nv.acc<warps = 4>>) {
  // CHECK: attn_nv.convert_layout %{{.*}} : tensor<128x64xf32, #attn_nv.acc<warps = 8>> -> tensor<128x64xf16, #attn_nv.operand_a<warps = 8>>
  %0 = attn_nv.convert_layout %a : tensor<128x64xf32, #attn_nv.acc<warps = 8>> -> tensor<128x64xf16, #attn_nv.operand_a<warps = 8>>
  // CHECK: attn_nv.convert_layout %{{.*}} : tensor<64x32xf16, #attn_nv.acc<warps = 4>> -> tensor<64x32xf16, #attn_nv.operand_a<warps = 4>>
  %1 = attn_nv.convert_layout %h : tensor<64x32xf16, #attn_nv.acc<warps = 4>> -> tensor<64x32xf16, #attn_nv.operand_a<warps = 4>>
  return
}

// -----

// The wgmma path: staged swizzled buffers, products from shared memory and
// from registers, waits, the warpgroup turn, the warp vote.
#acc = #attn_nv.acc<warps = 8>
#a = #attn_nv.operand_a<warps = 8>
!tile = !attn_nv.smem<128x128xbf16, swizzle_128b>

// CHECK-LABEL: func.func @wgmma
func.func @wgmma(%K: memref<?x?x?x128xbf16>, %b: index, %h: index, %n: index,
                 %i: index, %zero: tensor<128x128xf32, #acc>,
                 %changed: tensor<128xi1, #attn_nv.rows<warps = 8>>)
    -> (tensor<128x128xf32, #acc>, i1) {
  // CHECK: %[[Q:.*]] = attn_nv.alloc_shared {offset = 1024 : i64} : {{(!attn_nv.smem)?}}<128x128xbf16, swizzle_128b>
  %q = attn_nv.alloc_shared {offset = 1024} : !tile
  // CHECK: %[[KB:.*]] = attn_nv.alloc_shared {offset = 33792 : i64} : {{(!attn_nv.smem)?}}<3x128x128xbf16, swizzle_128b>
  %kbuf = attn_nv.alloc_shared {offset = 33792} : !attn_nv.smem<3x128x128xbf16, swizzle_128b>
  // CHECK: %[[K:.*]] = attn_nv.slot %[[KB]][%{{.*}}] : {{(!attn_nv.smem)?}}<3x128x128xbf16, swizzle_128b> -> {{(!attn_nv.smem)?}}<128x128xbf16, swizzle_128b>
  %k = attn_nv.slot %kbuf[%i] : !attn_nv.smem<3x128x128xbf16, swizzle_128b> -> !tile
  // CHECK: attn_nv.copy_async %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] bounds %{{.*}} into %[[K]] : memref<?x?x?x128xbf16>, {{(!attn_nv.smem)?}}<128x128xbf16, swizzle_128b>
  attn_nv.copy_async %K[%b, %h, %i] bounds %n into %k : memref<?x?x?x128xbf16>, !tile
  // CHECK: %[[S0:.*]] = attn_nv.warpgroup_turn warpgroups 2 -> tensor<128x128xf32, #attn_nv.acc<warps = 8>> {
  // CHECK-NEXT: %[[W:.*]] = attn_nv.wgmma %[[Q]], %[[K]], %{{.*}} transpose_rhs : {{(!attn_nv.smem)?}}<128x128xbf16, swizzle_128b>, {{(!attn_nv.smem)?}}<128x128xbf16, swizzle_128b>, tensor<128x128xf32, #attn_nv.acc<warps = 8>>
  // CHECK-NEXT: attn_nv.yield %[[W]] : tensor<128x128xf32, #attn_nv.acc<warps = 8>>
  // CHECK-NEXT: }
  %s0 = attn_nv.warpgroup_turn warpgroups 2 -> tensor<128x128xf32, #acc> {
    %w = attn_nv.wgmma %q, %k, %zero transpose_rhs : !tile, !tile, tensor<128x128xf32, #acc>
    attn_nv.yield %w : tensor<128x128xf32, #acc>
  }
  // CHECK: %[[S:.*]] = attn_nv.wgmma_wait %[[S0]] {pending = 0 : i64} : tensor<128x128xf32, #attn_nv.acc<warps = 8>>
  %s = attn_nv.wgmma_wait %s0 {pending = 0} : tensor<128x128xf32, #acc>
  // CHECK: %[[P:.*]] = attn_nv.convert_layout %[[S]] : tensor<128x128xf32, #attn_nv.acc<warps = 8>> -> tensor<128x128xbf16, #attn_nv.operand_a<warps = 8>>
  %p = attn_nv.convert_layout %s : tensor<128x128xf32, #acc> -> tensor<128x128xbf16, #a>
  // P from registers, V K×N (MN-major).
  // CHECK: %[[O0:.*]] = attn_nv.wgmma %[[P]], %[[K]], %[[S]] : tensor<128x128xbf16, #attn_nv.operand_a<warps = 8>>, {{(!attn_nv.smem)?}}<128x128xbf16, swizzle_128b>, tensor<128x128xf32, #attn_nv.acc<warps = 8>>{{$}}
  %o0 = attn_nv.wgmma %p, %k, %s : tensor<128x128xbf16, #a>, !tile, tensor<128x128xf32, #acc>
  // Descriptors advanced in the PTX (the backward's kernels).
  // CHECK: attn_nv.wgmma %[[P]], %[[K]], %[[S]] advance_in_ptx : tensor<128x128xbf16, #attn_nv.operand_a<warps = 8>>
  %o1 = attn_nv.wgmma %p, %k, %s advance_in_ptx : tensor<128x128xbf16, #a>, !tile, tensor<128x128xf32, #acc>
  // Several values, one group left in flight.
  // CHECK: %{{.*}}:2 = attn_nv.wgmma_wait %[[O0]], %[[P]] {pending = 1 : i64} : tensor<128x128xf32, #attn_nv.acc<warps = 8>>, tensor<128x128xbf16, #attn_nv.operand_a<warps = 8>>
  %o, %p1 = attn_nv.wgmma_wait %o0, %p {pending = 1} : tensor<128x128xf32, #acc>, tensor<128x128xbf16, #a>
  // CHECK: attn_nv.wgmma_wait %{{.*}}, %{{.*}}, %{{.*}} {pending = 7 : i64} : tensor<128x128xf32, #attn_nv.acc<warps = 8>>, tensor<128x128xf32, #attn_nv.acc<warps = 8>>, tensor<128x128xbf16, #attn_nv.operand_a<warps = 8>>
  %w:3 = attn_nv.wgmma_wait %o, %s, %p1 {pending = 7} : tensor<128x128xf32, #acc>, tensor<128x128xf32, #acc>, tensor<128x128xbf16, #a>
  // A turn without results (the implicit terminator is elided).
  // CHECK: attn_nv.warpgroup_turn warpgroups 4 {
  // CHECK-NEXT: attn_nv.wgmma
  // CHECK-NEXT: }
  attn_nv.warpgroup_turn warpgroups 4 {
    %x = attn_nv.wgmma %q, %k, %zero transpose_rhs : !tile, !tile, tensor<128x128xf32, #acc>
  }
  // A numbered turn: barrier set it mod 3.
  // CHECK: attn_nv.warpgroup_turn warpgroups 2 turn %{{.*}} rotation 3 -> tensor<128x128xf32, #attn_nv.acc<warps = 8>> {
  %r = attn_nv.warpgroup_turn warpgroups 2 turn %i rotation 3 -> tensor<128x128xf32, #acc> {
    %x = attn_nv.wgmma %q, %k, %zero transpose_rhs : !tile, !tile, tensor<128x128xf32, #acc>
    attn_nv.yield %x : tensor<128x128xf32, #acc>
  }
  // A turn with two results and an attribute dictionary.
  // CHECK: %{{.*}}:2 = attn_nv.warpgroup_turn warpgroups 1 -> tensor<128x128xf32, #attn_nv.acc<warps = 8>>, i1 {
  // CHECK: attn_nv.yield %{{.*}}, %{{.*}} : tensor<128x128xf32, #attn_nv.acc<warps = 8>>, i1
  // CHECK-NEXT: } {tag}
  %t:2 = attn_nv.warpgroup_turn warpgroups 1 -> tensor<128x128xf32, #acc>, i1 {
    %c = arith.constant true
    attn_nv.yield %w#0, %c : tensor<128x128xf32, #acc>, i1
  } {tag}
  // CHECK: attn_nv.warp_any %{{.*}} : tensor<128xi1, #attn_nv.rows<warps = 8>>
  %any = attn_nv.warp_any %changed : tensor<128xi1, #attn_nv.rows<warps = 8>>
  return %t#0, %any : tensor<128x128xf32, #acc>, i1
}

// -----

// mma.sync with an f16 rhs of 72 columns (padded, not a multiple of 16),
// a reduction of 8 mod 16, and 2 m tiles per warp.
#acc = #attn_nv.acc<warps = 2>
// CHECK-LABEL: func.func @mma_shapes
func.func @mma_shapes(%l: !attn_nv.smem<64x72xf16, padded>, %r: !attn_nv.smem<40x72xf16, padded>,
                      %acc: tensor<64x40xf32, #acc>) -> tensor<64x40xf32, #acc> {
  // CHECK: attn_nv.mma %{{.*}}, %{{.*}}, %{{.*}} transpose_rhs : !attn_nv.smem<64x72xf16, padded>, !attn_nv.smem<40x72xf16, padded>, tensor<64x40xf32, #attn_nv.acc<warps = 2>>
  %0 = attn_nv.mma %l, %r, %acc transpose_rhs : !attn_nv.smem<64x72xf16, padded>, !attn_nv.smem<40x72xf16, padded>, tensor<64x40xf32, #acc>
  return %0 : tensor<64x40xf32, #acc>
}

// -----

// mbarriers and bulk tensor copies (TMA).
// CHECK-LABEL: func.func @tma
// CHECK: %[[BARS:.*]] = attn_nv.alloc_barriers {offset = 98304 : i64} : !attn_nv.barriers<3>
// CHECK: attn_nv.init_barriers %[[BARS]] : !attn_nv.barriers<3>
// CHECK: attn_nv.copy_tma %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] into %{{.*}}, %[[BARS]][%{{.*}}] : !llvm.ptr, !attn_nv.smem<128x128xbf16, swizzle_128b>, !attn_nv.barriers<3>
// CHECK: attn_nv.wait_barrier %[[BARS]][%{{.*}}] : !attn_nv.barriers<3>
// Stage release: barriers counting one arrival per warp, a copy that waits
// for the release, a warp's arrival.
// CHECK: attn_nv.init_barriers %[[EMPTY:.*]] arrivals 8 : !attn_nv.barriers<3>
// CHECK: attn_nv.copy_tma %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] into %{{.*}}, %[[BARS]][%{{.*}}] after %[[EMPTY]] : !llvm.ptr, !attn_nv.smem<128x128xbf16, swizzle_128b>, !attn_nv.barriers<3>, !attn_nv.barriers<3>
// CHECK: attn_nv.arrive_barrier %[[EMPTY]][%{{.*}}] : !attn_nv.barriers<3>
func.func @tma(%map: !llvm.ptr, %b: index, %h: index, %row: index, %it: index) {
  %bars = attn_nv.alloc_barriers {offset = 98304 : i64} : !attn_nv.barriers<3>
  %k = attn_nv.alloc_shared : !attn_nv.smem<128x128xbf16, swizzle_128b>
  attn_nv.init_barriers %bars : !attn_nv.barriers<3>
  attn_nv.copy_tma %map[%b, %h, %row] into %k, %bars[%it] : !llvm.ptr, !attn_nv.smem<128x128xbf16, swizzle_128b>, !attn_nv.barriers<3>
  attn_nv.wait_barrier %bars[%it] : !attn_nv.barriers<3>
  %empty = attn_nv.alloc_barriers {offset = 98328 : i64} : !attn_nv.barriers<3>
  attn_nv.init_barriers %empty arrivals 8 : !attn_nv.barriers<3>
  attn_nv.copy_tma %map[%b, %h, %row] into %k, %bars[%it] after %empty : !llvm.ptr, !attn_nv.smem<128x128xbf16, swizzle_128b>, !attn_nv.barriers<3>, !attn_nv.barriers<3>
  attn_nv.arrive_barrier %empty[%it] : !attn_nv.barriers<3>
  return
}

// The output by TMA: each warp's rows of a shared tile to O's map.
// CHECK-LABEL: func.func @store_tma
// CHECK: attn_nv.store_tma %{{.*}} into %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] : !attn_nv.smem<128x128xbf16, swizzle_128b>, !llvm.ptr
func.func @store_tma(%map: !llvm.ptr, %b: index, %h: index, %row: index) {
  %o = attn_nv.alloc_shared : !attn_nv.smem<128x128xbf16, swizzle_128b>
  attn_nv.store_tma %o into %map[%b, %h, %row] : !attn_nv.smem<128x128xbf16, swizzle_128b>, !llvm.ptr
  return
}

// Without waiting for the stores' reads, then waiting for them apart.
// CHECK-LABEL: func.func @store_tma_no_wait
// CHECK: attn_nv.store_tma %{{.*}} into %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] no_wait : !attn_nv.smem<128x128xbf16, swizzle_128b>, !llvm.ptr
// CHECK-NEXT: attn_nv.wait_stores_read
func.func @store_tma_no_wait(%map: !llvm.ptr, %b: index, %h: index, %row: index) {
  %o = attn_nv.alloc_shared : !attn_nv.smem<128x128xbf16, swizzle_128b>
  attn_nv.store_tma %o into %map[%b, %h, %row] no_wait : !attn_nv.smem<128x128xbf16, swizzle_128b>, !llvm.ptr
  attn_nv.wait_stores_read
  return
}

// -----

// dQ's part added by bulk reductions through a padded f32 staging tile.
// CHECK-LABEL: func.func @reduce_bulk
// CHECK: attn_nv.reduce_bulk %{{.*}}, %{{.*}} into %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] bounds %{{.*}} : tensor<64x128xf32, #attn_nv.acc<warps = 8, col_groups = 2>>, !attn_nv.smem<64x128xf32, padded>, memref<?x?x?x128xf32>
func.func @reduce_bulk(%t: tensor<64x128xf32, #attn_nv.acc<warps = 8, col_groups = 2>>, %d: memref<?x?x?x128xf32>, %b: index, %h: index, %row: index, %n: index) {
  %s = attn_nv.alloc_shared : !attn_nv.smem<64x128xf32, padded>
  attn_nv.reduce_bulk %t, %s into %d[%b, %h, %row] bounds %n : tensor<64x128xf32, #attn_nv.acc<warps = 8, col_groups = 2>>, !attn_nv.smem<64x128xf32, padded>, memref<?x?x?x128xf32>
  return
}

// -----

// A producer warpgroup: the consumers' region, then the producer's, whose
// copies are single_thread.
// CHECK-LABEL: func.func @warp_specialize
// CHECK: attn_nv.warp_specialize consumers(256 threads, 232 registers) {
// CHECK-NEXT: attn_nv.wait_barrier
// CHECK-NEXT: } producer(40 registers) {
// CHECK-NEXT: attn_nv.copy_tma %{{.*}} after %{{.*}} {single_thread} :
// CHECK-NEXT: }
func.func @warp_specialize(%map: !llvm.ptr, %b: index, %h: index, %row: index, %it: index) {
  %bars = attn_nv.alloc_barriers : !attn_nv.barriers<3>
  %empty = attn_nv.alloc_barriers : !attn_nv.barriers<3>
  %k = attn_nv.alloc_shared : !attn_nv.smem<128x128xbf16, swizzle_128b>
  attn_nv.warp_specialize consumers(256 threads, 232 registers) {
    attn_nv.wait_barrier %bars[%it] : !attn_nv.barriers<3>
  } producer(40 registers) {
    attn_nv.copy_tma %map[%b, %h, %row] into %k, %bars[%it] after %empty {single_thread} : !llvm.ptr, !attn_nv.smem<128x128xbf16, swizzle_128b>, !attn_nv.barriers<3>, !attn_nv.barriers<3>
  }
  return
}

// -----

// The atomic backward's pieces: dSᵀ written to shared memory, then read
// transposed (MN-major A).
// CHECK-LABEL: func.func @transposed_lhs
// CHECK: attn_nv.store_shared %{{.*}}, %[[B:.*]] : tensor<64x64xf32, #attn_nv.acc<warps = 4>>, {{(!attn_nv.smem)?}}<64x64xbf16, swizzle_128b>
// CHECK: attn_nv.wgmma %[[B]], %{{.*}}, %{{.*}} transpose_lhs : {{(!attn_nv.smem)?}}<64x64xbf16, swizzle_128b>, {{(!attn_nv.smem)?}}<64x128xbf16, swizzle_128b>, tensor<64x128xf32, #attn_nv.acc<warps = 4>>
func.func @transposed_lhs(%ds: tensor<64x64xf32, #attn_nv.acc<warps = 4>>, %k: !attn_nv.smem<64x128xbf16, swizzle_128b>, %zero: tensor<64x128xf32, #attn_nv.acc<warps = 4>>) {
  %b = attn_nv.alloc_shared : !attn_nv.smem<64x64xbf16, swizzle_128b>
  attn_nv.store_shared %ds, %b : tensor<64x64xf32, #attn_nv.acc<warps = 4>>, !attn_nv.smem<64x64xbf16, swizzle_128b>
  %w = attn_nv.wgmma %b, %k, %zero transpose_lhs : !attn_nv.smem<64x64xbf16, swizzle_128b>, !attn_nv.smem<64x128xbf16, swizzle_128b>, tensor<64x128xf32, #attn_nv.acc<warps = 4>>
  return
}

// -----

// A table staged in shared memory and read by the maps (attn-nv-stage-tables).
// CHECK-LABEL: func.func @staged_table
func.func @staged_table(%t: memref<?x?xf32, strided<[?, ?], offset: ?>>, %r: index, %c: index, %n: index) -> tensor<128x64xf32, #attn_nv.acc<warps = 8>> {
  // CHECK: %[[S:.*]] = attn_nv.alloc_shared : {{(!attn_nv.smem)?}}<128x64xf32, swizzle_128b>
  %s = attn_nv.alloc_shared : !attn_nv.smem<128x64xf32, swizzle_128b>
  // CHECK: attn_nv.copy_table_async %{{.*}}[%{{.*}}, %{{.*}}] bounds %{{.*}}, %{{.*}} into %[[S]] : memref<?x?xf32, strided<[?, ?], offset: ?>>, {{(!attn_nv.smem)?}}<128x64xf32, swizzle_128b>
  attn_nv.copy_table_async %t[%r, %c] bounds %n, %n into %s : memref<?x?xf32, strided<[?, ?], offset: ?>>, !attn_nv.smem<128x64xf32, swizzle_128b>
  // CHECK: attn_nv.load_shared %[[S]] : {{(!attn_nv.smem)?}}<128x64xf32, swizzle_128b> -> tensor<128x64xf32, #attn_nv.acc<warps = 8>>
  %v = attn_nv.load_shared %s : !attn_nv.smem<128x64xf32, swizzle_128b> -> tensor<128x64xf32, #attn_nv.acc<warps = 8>>
  return %v : tensor<128x64xf32, #attn_nv.acc<warps = 8>>
}

// CHECK-LABEL: func.func @work_tile
// CHECK: %{{.*}}, %{{.*}}, %{{.*}} = attn_nv.work_tile %{{.*}} of (%{{.*}}, %{{.*}}, %{{.*}})
func.func @work_tile(%w: index, %b: index, %h: index, %t: index) -> (index, index, index) {
  %0, %1, %2 = attn_nv.work_tile %w of (%b, %h, %t)
  return %0, %1, %2 : index, index, index
}
