// RUN: attn-opt %s --convert-attn-nv-to-nvvm --allow-unregistered-dialect | FileCheck %s

// Every function with an NVIDIA #attn.config moves into one gpu.module (with
// the dynamic shared array, 1024-byte aligned) as a gpu.func kernel: per
// memref argument a pointer, its sizes and its strides (KernelABI.h), then
// the scalars; its launch as attributes. memref.dim of an argument is its
// size parameter; attn.tile_grid is the CTA grid (x = query tile, y = head,
// z = batch), x reversed with reverse_grid.

!bnhd = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>

// CHECK: module attributes {gpu.container_module}
// A host function stays where it is.
// CHECK: func.func @host(%{{.*}}: memref<?xf32>) -> index
// CHECK: memref.dim
// CHECK: return
// CHECK: gpu.module @attn_kernels {
// CHECK-NEXT: llvm.mlir.global external @attn_smem() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<0 x i8>

// The forward kernel's ABI: Q, K, V, O as (ptr, 4 sizes, 4 strides), the
// LSE as (ptr, 3 sizes, 3 strides), the scale. 4 warps: 128 threads.
// CHECK-LABEL: gpu.func @attn_fwd(
// CHECK-SAME: %[[Q:arg0]]: !llvm.ptr<1>, %[[QB:arg1]]: i64, %[[QH:arg2]]: i64, %[[QN:arg3]]: i64, %arg4: i64, %arg5: i64, %arg6: i64, %arg7: i64, %arg8: i64,
// CHECK-SAME: %arg9: !llvm.ptr<1>, %arg10: i64, %arg11: i64, %arg12: i64, %arg13: i64, %arg14: i64, %arg15: i64, %arg16: i64, %arg17: i64,
// CHECK-SAME: %arg18: !llvm.ptr<1>, {{(%arg[0-9]+: i64, ){7}%arg[0-9]+}}: i64,
// CHECK-SAME: %arg27: !llvm.ptr<1>, {{(%arg[0-9]+: i64, ){7}%arg[0-9]+}}: i64,
// CHECK-SAME: %arg36: !llvm.ptr<1>, %arg37: i64, %arg38: i64, %[[LN:arg39]]: i64, %arg40: i64, %arg41: i64, %arg42: i64,
// CHECK-SAME: %[[SCALE:arg43]]: f32)
// CHECK-SAME: kernel attributes {attn.block_m = 128 : i32,
// CHECK-SAME: attn.pack_gqa = 0 : i32, attn.shared_bytes = 49152 : i32, attn.threads = 128 : i32, known_block_size = array<i32: 128, 1, 1>, nvvm.minctasm = 2 : i32}
// CHECK-DAG: %[[NB:.*]] = arith.index_cast %[[QB]] : i64 to index
// CHECK-DAG: %[[NH:.*]] = arith.index_cast %[[QH]] : i64 to index
// CHECK-DAG: %[[NQ:.*]] = arith.index_cast %[[QN]] : i64 to index
// CHECK-DAG: %[[NL:.*]] = arith.index_cast %[[LN]] : i64 to index
// CHECK: %[[X:.*]] = nvvm.read.ptx.sreg.ctaid.x : i32
// CHECK: %[[T:.*]] = arith.index_castui %[[X]] : i32 to index
// CHECK: %[[Y:.*]] = nvvm.read.ptx.sreg.ctaid.y : i32
// CHECK: %[[H:.*]] = arith.index_castui %[[Y]] : i32 to index
// CHECK: %[[Z:.*]] = nvvm.read.ptx.sreg.ctaid.z : i32
// CHECK: %[[B:.*]] = arith.index_castui %[[Z]] : i32 to index
// CHECK-NOT: attn.tile_grid
// CHECK: "test.sink"(%[[B]], %[[H]], %[[T]], %[[NB]], %[[NH]], %[[NQ]], %[[NL]], %[[SCALE]])
// CHECK: gpu.return
func.func @attn_fwd(%q: !bnhd, %k: !bnhd, %v: !bnhd, %o: !bnhd, %lse: !lse, %scale: f32) attributes {attn.config = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 128, block_n = 64, warps = 4, min_ctas_per_sm = 2, stages = 2, q_in_registers = true, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>, attn.shared_bytes = 49152 : i32, llvm.emit_c_interface} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %nb = memref.dim %q, %c0 : !bnhd
  %nh = memref.dim %q, %c1 : !bnhd
  %nq = memref.dim %q, %c2 : !bnhd
  %nl = memref.dim %lse, %c2 : !lse
  attn.tile_grid (%b, %h, %t) in (%nb, %nh, %nq) {
    "test.sink"(%b, %h, %t, %nb, %nh, %nq, %nl, %scale) : (index, index, index, index, index, index, index, f32) -> ()
  }
  return
}

// reverse_grid: query tile gridDim.x - 1 - blockIdx.x (the longest causal
// tiles first). 8 warps: 256 threads; pack_gqa recorded; no
// attn.shared_bytes: 0. Scalars of other types pass as they are.
// CHECK-LABEL: gpu.func @reversed(%{{.*}}: index, %{{.*}}: i32)
// CHECK-SAME: kernel attributes {attn.block_m = 64 : i32,
// CHECK-SAME: attn.pack_gqa = 1 : i32, attn.shared_bytes = 0 : i32, attn.threads = 256 : i32, known_block_size = array<i32: 256, 1, 1>, nvvm.minctasm = 1 : i32}
// CHECK: %[[X:.*]] = nvvm.read.ptx.sreg.ctaid.x : i32
// CHECK: %[[BX:.*]] = arith.index_castui %[[X]] : i32 to index
// CHECK: %[[NX:.*]] = nvvm.read.ptx.sreg.nctaid.x : i32
// CHECK: %[[GX:.*]] = arith.index_castui %[[NX]] : i32 to index
// CHECK: %[[LAST:.*]] = arith.subi %[[GX]], %c1 : index
// CHECK: %[[T:.*]] = arith.subi %[[LAST]], %[[BX]] : index
// CHECK: nvvm.read.ptx.sreg.ctaid.y
// CHECK: nvvm.read.ptx.sreg.ctaid.z
// CHECK: "test.sink"(%{{.*}}, %{{.*}}, %[[T]])
func.func @reversed(%n: index, %i: i32) attributes {attn.config = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 64, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = true, pack_gqa = true, conditional_rescale = false>} {
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    "test.sink"(%b, %h, %t) : (index, index, index) -> ()
  }
  return
}

func.func @host(%m: memref<?xf32>) -> index attributes {attn.config = #attn.config<mapping = "host", chip = "", block_m = 64, block_n = 64, warps = 0, min_ctas_per_sm = 0, stages = 0, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>} {
  %c0 = arith.constant 0 : index
  %d = memref.dim %m, %c0 : memref<?xf32>
  return %d : index
}
