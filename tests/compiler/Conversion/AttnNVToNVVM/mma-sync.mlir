// RUN: attn-opt %s --convert-attn-nv-to-nvvm | FileCheck %s
// RUN: attn-opt %s --convert-attn-nv-to-nvvm | FileCheck %s --check-prefix=LDM
// RUN: attn-opt %s --convert-attn-nv-to-nvvm | FileCheck %s --check-prefix=MMA
// RUN: attn-opt %s --convert-attn-nv-to-nvvm | FileCheck %s --check-prefix=ORDER

// attn_nv.mma on mma.sync.m16n8k16 (bf16/f16, f32 accumulation): operands in
// padded shared memory are read with ldmatrix before the mma that uses
// them; one mma per (m tile, 8-column block, 16-deep k block). The LDM and
// MMA prefixes count the ldmatrix and mma.sync of each function.

#cfg = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 64, block_n = 32, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = true, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
!qa = tensor<64x64xbf16, #attn_nv.operand_a<warps = 4>>
!s = tensor<64x32xf32, #attn_nv.acc<warps = 4>>

// Q (64x64) read once into A fragments (q_in_registers): per warp one m
// tile of 4 k blocks, an ldmatrix.x4 each (16 registers), at this warp's 16
// rows (16 x 144 bytes a warp) and 32 bytes per k block. Then QKᵀ against
// K (32 keys x 64): k blocks outermost, two at a time: per pair and 8-key
// block j one ldmatrix.x4 of K (the B fragments of both k blocks) feeds two
// mmas: 8 ldmatrix, 16 mma.
// CHECK-LABEL: gpu.func @qk_registers
// CHECK: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK: %[[WARP:.*]] = arith.divui %[[TID]], %c32_i32
// CHECK: %[[WROWS:.*]] = arith.muli %[[WARP]], %c2304_i32 : i32
// CHECK: %[[LANEOFF:.*]] = arith.addi %{{.*}}, %[[WROWS]] : i32
// CHECK: %[[Q0OFF:.*]] = arith.addi %c0_i32, %[[LANEOFF]] : i32
// CHECK: %[[Q0OFF2:.*]] = arith.addi %[[Q0OFF]], %c0_i32{{.*}} : i32
// CHECK: %[[Q0PTR:.*]] = llvm.getelementptr %{{.*}}[%[[Q0OFF2]]]
// CHECK: %[[Q0:.*]] = nvvm.ldmatrix %[[Q0PTR]] {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, num = 4 : i32, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>} : (!llvm.ptr<3>) -> !llvm.struct<(i32, i32, i32, i32)>
// CHECK: %[[A0:.*]] = llvm.extractvalue %[[Q0]][0]
// CHECK: %[[A1:.*]] = llvm.extractvalue %[[Q0]][1]
// CHECK: %[[A2:.*]] = llvm.extractvalue %[[Q0]][2]
// CHECK: %[[A3:.*]] = llvm.extractvalue %[[Q0]][3]
// CHECK: arith.addi %{{.*}}, %c32_i32
// CHECK: %[[Q1:.*]] = nvvm.ldmatrix
// CHECK: %[[A4:.*]] = llvm.extractvalue %[[Q1]][0]
// CHECK: %[[A7:.*]] = llvm.extractvalue %[[Q1]][3]
// CHECK: arith.addi %{{.*}}, %c64_i32
// CHECK: arith.addi %{{.*}}, %c96_i32
// CHECK: scf.for
// K: lane l reads row l % 8, 16-byte column block l / 8, from byte 9216.
// CHECK: %[[KLANE:.*]] = arith.addi %{{.*}}, %{{.*}} : i32
// CHECK: %[[KBASE:.*]] = arith.addi %c9216_i32, %[[KLANE]] : i32
// CHECK: %[[K0OFF:.*]] = arith.addi %[[KBASE]], %c0_i32{{.*}} : i32
// CHECK: %[[K0PTR:.*]] = llvm.getelementptr %{{.*}}[%[[K0OFF]]]
// CHECK: %[[K0:.*]] = nvvm.ldmatrix %[[K0PTR]] {{.*}}layout = #nvvm.mma_layout<row>, num = 4 : i32
// CHECK: %[[B0:.*]] = llvm.extractvalue %[[K0]][0]
// CHECK: %[[B1:.*]] = llvm.extractvalue %[[K0]][1]
// CHECK: %[[B2:.*]] = llvm.extractvalue %[[K0]][2]
// CHECK: %[[B3:.*]] = llvm.extractvalue %[[K0]][3]
// CHECK: %[[D0:.*]] = nvvm.mma.sync A[%[[A0]], %[[A1]], %[[A2]], %[[A3]]] B[%[[B0]], %[[B1]]] C[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK: %[[C0:.*]] = llvm.extractvalue %[[D0]][0]
// CHECK: %[[C3:.*]] = llvm.extractvalue %[[D0]][3]
// CHECK: nvvm.mma.sync A[%[[A4]], %{{.*}}, %{{.*}}, %[[A7]]] B[%[[B2]], %[[B3]]] C[%[[C0]], %{{.*}}, %{{.*}}, %[[C3]]]
// The next 8 keys: 8 rows of 144 bytes on.
// CHECK: arith.addi %[[KBASE]], %c1152_i32 : i32
// CHECK: nvvm.ldmatrix
// LDM-LABEL: gpu.func @qk_registers
// LDM-COUNT-4: nvvm.ldmatrix {{.*}}layout = #nvvm.mma_layout<row>, num = 4 : i32
// LDM: scf.for
// LDM-COUNT-8: nvvm.ldmatrix {{.*}}layout = #nvvm.mma_layout<row>, num = 4 : i32
// LDM-NOT: nvvm.ldmatrix
// LDM: gpu.return
// MMA-LABEL: gpu.func @qk_registers
// MMA-COUNT-16: nvvm.mma.sync
// MMA-NOT: nvvm.mma.sync
// MMA: gpu.return
func.func @qk_registers(%n: index) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %q = attn_nv.alloc_shared {offset = 0} : !attn_nv.smem<64x64xbf16, padded>
  %k = attn_nv.alloc_shared {offset = 9216} : !attn_nv.smem<32x64xbf16, padded>
  %qa = attn_nv.load_operand %q : !attn_nv.smem<64x64xbf16, padded> -> !qa
  %zero = arith.constant dense<0.0> : !s
  %r = scf.for %it = %c0 to %n step %c1 iter_args(%acc = %zero) -> (!s) {
    %s = attn_nv.mma %qa, %k, %acc transpose_rhs : !qa, !attn_nv.smem<32x64xbf16, padded>, !s
    scf.yield %s : !s
  }
  return
}

// Q from shared memory (128 rows over 4 warps: two m tiles a warp, 32 rows
// of 144 bytes): read per k block pair, before the K fragments, which feed
// the mmas of both m tiles: per pair 4 ldmatrix of Q and 4 of K; 2 x 4 x 4
// = 32 mma. The fragments are double-buffered: the second pair's Q and K are
// read before the first pair's mma (ORDER): all 8 reads of the first pair,
// then the second pair's Q (m tile 1, k block 3 at 16 x 144 + 96 = 2400
// bytes) and its first K block (64 bytes on), then per 8-key step 4 mma and
// the second pair's next K block (8 rows of 144 bytes on: 1216).
// CHECK-LABEL: gpu.func @qk_shared
// CHECK: arith.muli %{{.*}}, %c4608_i32 : i32
// CHECK: scf.for
// LDM-LABEL: gpu.func @qk_shared
// LDM: scf.for
// LDM-COUNT-16: nvvm.ldmatrix {{.*}}layout = #nvvm.mma_layout<row>, num = 4 : i32
// LDM-NOT: nvvm.ldmatrix
// LDM: gpu.return
// MMA-LABEL: gpu.func @qk_shared
// MMA: scf.for
// MMA-COUNT-32: nvvm.mma.sync
// MMA-NOT: nvvm.mma.sync
// MMA: gpu.return
// ORDER-LABEL: gpu.func @qk_shared
// ORDER: scf.for
// ORDER: %[[KBASE:.*]] = arith.addi %c18432_i32, %{{.*}} : i32
// ORDER-NOT: nvvm.mma.sync
// ORDER: arith.addi %[[KBASE]], %c3456_i32 : i32
// ORDER-NOT: nvvm.mma.sync
// ORDER: arith.addi %{{.*}}, %c2400_i32 : i32
// ORDER-NOT: nvvm.mma.sync
// ORDER: arith.addi %[[KBASE]], %c64_i32{{.*}} : i32
// ORDER-NOT: nvvm.mma.sync
// ORDER: nvvm.ldmatrix
// ORDER-COUNT-4: nvvm.mma.sync
// ORDER-NOT: nvvm.mma.sync
// ORDER: arith.addi %[[KBASE]], %c1216_i32 : i32
// ORDER-NOT: nvvm.mma.sync
// ORDER: nvvm.ldmatrix
// ORDER: nvvm.mma.sync
func.func @qk_shared(%n: index) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %q = attn_nv.alloc_shared {offset = 0} : !attn_nv.smem<128x64xbf16, padded>
  %k = attn_nv.alloc_shared {offset = 18432} : !attn_nv.smem<32x64xbf16, padded>
  %zero = arith.constant dense<0.0> : tensor<128x32xf32, #attn_nv.acc<warps = 4>>
  %r = scf.for %it = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<128x32xf32, #attn_nv.acc<warps = 4>>) {
    %s = attn_nv.mma %q, %k, %acc transpose_rhs : !attn_nv.smem<128x64xbf16, padded>, !attn_nv.smem<32x64xbf16, padded>, tensor<128x32xf32, #attn_nv.acc<warps = 4>>
    scf.yield %s : tensor<128x32xf32, #attn_nv.acc<warps = 4>>
  }
  return
}

// A head dim of 48: three k blocks, the last pair is one, read with
// ldmatrix.x2. 16 keys: 2 blocks of 8; 1 x 2 x 3 = 6 mma.
// LDM-LABEL: gpu.func @qk_odd_k_blocks
// LDM: scf.for
// LDM-COUNT-2: nvvm.ldmatrix {{.*}}num = 4 : i32{{.*}} -> !llvm.struct<(i32, i32, i32, i32)>
// LDM-COUNT-2: nvvm.ldmatrix {{.*}}num = 2 : i32{{.*}} -> !llvm.struct<(i32, i32)>
// LDM-NOT: nvvm.ldmatrix
// LDM: gpu.return
// MMA-LABEL: gpu.func @qk_odd_k_blocks
// MMA-COUNT-6: nvvm.mma.sync
// MMA-NOT: nvvm.mma.sync
// MMA: gpu.return
func.func @qk_odd_k_blocks(%n: index) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant dense<0.0> : tensor<64x48xf32, #attn_nv.acc<warps = 4>>
  %qa = attn_nv.convert_layout %zero : tensor<64x48xf32, #attn_nv.acc<warps = 4>> -> tensor<64x48xbf16, #attn_nv.operand_a<warps = 4>>
  %k = attn_nv.alloc_shared {offset = 0} : !attn_nv.smem<16x48xbf16, padded>
  %szero = arith.constant dense<0.0> : tensor<64x16xf32, #attn_nv.acc<warps = 4>>
  %r = scf.for %it = %c0 to %n step %c1 iter_args(%acc = %szero) -> (tensor<64x16xf32, #attn_nv.acc<warps = 4>>) {
    %s = attn_nv.mma %qa, %k, %acc transpose_rhs : tensor<64x48xbf16, #attn_nv.operand_a<warps = 4>>, !attn_nv.smem<16x48xbf16, padded>, tensor<64x16xf32, #attn_nv.acc<warps = 4>>
    scf.yield %s : tensor<64x16xf32, #attn_nv.acc<warps = 4>>
  }
  return
}

// P·V: P (64x32) in registers as A fragments, V (32 keys x 64) read with
// ldmatrix.trans (layout col): per 16-key block and 16-column pair one
// ldmatrix.x4 gives the B fragments of two 8-column blocks: 2 x 4 = 8
// ldmatrix, 16 mma, accumulating onto the loop's acc.
// CHECK-LABEL: gpu.func @pv
// CHECK: scf.for %{{.*}} iter_args(%[[ACC0:arg[0-9]+]] = %{{[[:alnum:]_]+}}, %[[ACC1:arg[0-9]+]] = %{{[[:alnum:]_]+}}, %[[ACC2:arg[0-9]+]] = %{{[[:alnum:]_]+}}, %[[ACC3:arg[0-9]+]] = %{{[[:alnum:]_]+}}, {{.*}}, %[[P0:arg[0-9]+]] = %{{[[:alnum:]_]+}}, %[[P1:arg[0-9]+]] = %{{[[:alnum:]_]+}}, %[[P2:arg[0-9]+]] = %{{[[:alnum:]_]+}}, %[[P3:arg[0-9]+]] = %{{[[:alnum:]_]+}}, %{{[[:alnum:]_]+}} = %{{[[:alnum:]_]+}}, %{{[[:alnum:]_]+}} = %{{[[:alnum:]_]+}}, %{{[[:alnum:]_]+}} = %{{[[:alnum:]_]+}}, %{{[[:alnum:]_]+}} = %{{[[:alnum:]_]+}}) -> ({{(f32, ){32}(i32, ){7}(i32)}})
// CHECK: %[[V0:.*]] = nvvm.ldmatrix %{{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<col>, num = 4 : i32, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>}
// CHECK: %[[B0:.*]] = llvm.extractvalue %[[V0]][0]
// CHECK: %[[B1:.*]] = llvm.extractvalue %[[V0]][1]
// CHECK: %[[B2:.*]] = llvm.extractvalue %[[V0]][2]
// CHECK: %[[B3:.*]] = llvm.extractvalue %[[V0]][3]
// CHECK: nvvm.mma.sync A[%[[P0]], %[[P1]], %[[P2]], %[[P3]]] B[%[[B0]], %[[B1]]] C[%[[ACC0]], %[[ACC1]], %[[ACC2]], %[[ACC3]]]
// CHECK: nvvm.mma.sync A[%[[P0]], %[[P1]], %[[P2]], %[[P3]]] B[%[[B2]], %[[B3]]]
// LDM-LABEL: gpu.func @pv
// LDM: scf.for
// LDM-COUNT-8: nvvm.ldmatrix {{.*}}layout = #nvvm.mma_layout<col>, num = 4 : i32
// LDM-NOT: nvvm.ldmatrix
// LDM: gpu.return
// MMA-LABEL: gpu.func @pv
// MMA: scf.for
// MMA-COUNT-16: nvvm.mma.sync
// MMA-NOT: nvvm.mma.sync
// MMA: gpu.return
func.func @pv(%n: index) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %v = attn_nv.alloc_shared {offset = 0} : !attn_nv.smem<32x64xbf16, padded>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32, #attn_nv.acc<warps = 4>>
  %pz = arith.constant dense<0.0> : !s
  %p0 = attn_nv.convert_layout %pz : !s -> tensor<64x32xbf16, #attn_nv.operand_a<warps = 4>>
  %r:2 = scf.for %it = %c0 to %n step %c1 iter_args(%acc = %zero, %p = %p0) -> (tensor<64x64xf32, #attn_nv.acc<warps = 4>>, tensor<64x32xbf16, #attn_nv.operand_a<warps = 4>>) {
    %o = attn_nv.mma %p, %v, %acc : tensor<64x32xbf16, #attn_nv.operand_a<warps = 4>>, !attn_nv.smem<32x64xbf16, padded>, tensor<64x64xf32, #attn_nv.acc<warps = 4>>
    scf.yield %o, %p : tensor<64x64xf32, #attn_nv.acc<warps = 4>>, tensor<64x32xbf16, #attn_nv.operand_a<warps = 4>>
  }
  return
}

// f16: the fragments are vector<2xf16> (ldmatrix results bitcast), from
// which the mma's types follow. V of 16 rows of 16 f16 (48-byte rows): one
// ldmatrix.trans, 2 mma.
// CHECK-LABEL: gpu.func @pv_f16
// CHECK: scf.for {{.*}} -> ({{(f32, ){8}(vector<2xf16>, ){3}(vector<2xf16>)}})
// CHECK: %[[V:.*]] = nvvm.ldmatrix {{.*}}layout = #nvvm.mma_layout<col>
// CHECK: %[[R0:.*]] = llvm.extractvalue %[[V]][0] : !llvm.struct<(i32, i32, i32, i32)>
// CHECK: %[[H0:.*]] = llvm.bitcast %[[R0]] : i32 to vector<2xf16>
// CHECK: %[[R1:.*]] = llvm.extractvalue %[[V]][1]
// CHECK: %[[H1:.*]] = llvm.bitcast %[[R1]] : i32 to vector<2xf16>
// CHECK: nvvm.mma.sync A[{{.*}}] B[%[[H0]], %[[H1]]] C[{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK: nvvm.mma.sync
// CHECK-NOT: nvvm.mma.sync
// CHECK: scf.yield
func.func @pv_f16(%n: index) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %v = attn_nv.alloc_shared {offset = 0} : !attn_nv.smem<16x16xf16, padded>
  %zero = arith.constant dense<0.0> : tensor<64x16xf32, #attn_nv.acc<warps = 4>>
  %p0 = attn_nv.convert_layout %zero : tensor<64x16xf32, #attn_nv.acc<warps = 4>> -> tensor<64x16xf16, #attn_nv.operand_a<warps = 4>>
  %r:2 = scf.for %it = %c0 to %n step %c1 iter_args(%acc = %zero, %p = %p0) -> (tensor<64x16xf32, #attn_nv.acc<warps = 4>>, tensor<64x16xf16, #attn_nv.operand_a<warps = 4>>) {
    %o = attn_nv.mma %p, %v, %acc : tensor<64x16xf16, #attn_nv.operand_a<warps = 4>>, !attn_nv.smem<16x16xf16, padded>, tensor<64x16xf32, #attn_nv.acc<warps = 4>>
    scf.yield %o, %p : tensor<64x16xf32, #attn_nv.acc<warps = 4>>, tensor<64x16xf16, #attn_nv.operand_a<warps = 4>>
  }
  return
}
