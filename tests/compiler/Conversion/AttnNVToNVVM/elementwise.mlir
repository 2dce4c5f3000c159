// RUN: attn-opt %s --convert-attn-nv-to-nvvm | FileCheck %s

// attn.map runs its body once per value a thread holds (Layouts.h), a splat
// tile constant is its scalar once per value, attn_nv.convert_layout packs
// accumulator pairs into A-operand registers or adds up a quad's partial
// row sums. Tiles enter and leave through loop-carried values, which the
// structural conversion turns into the values each thread holds.

#cfg = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 64, block_n = 32, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
!acc = tensor<64x32xf32, #attn_nv.acc<warps = 4>>
!rows = tensor<64xf32, #attn_nv.rows<warps = 4>>
!acc2 = tensor<128x16xf32, #attn_nv.acc<warps = 4>>
!rows2 = tensor<128xf32, #attn_nv.rows<warps = 4>>

// A 64x32 accumulator over 4 warps: one 16-row m tile per warp, four
// 8-column blocks, 4 values each: 16 values a thread; its rows tile: 2.
// CHECK-LABEL: gpu.func @acc_values
// CHECK: scf.for {{.*}} -> ({{(f32, ){17}(f32)}})
// CHECK-COUNT-16: arith.mulf
// CHECK-NOT: arith.mulf
// CHECK: scf.yield
func.func @acc_values(%n: index) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %s0 = arith.constant dense<1.0> : !acc
  %r0 = arith.constant dense<2.0> : !rows
  %res:2 = scf.for %it = %c0 to %n step %c1 iter_args(%s = %s0, %r = %r0) -> (!acc, !rows) {
    %y = attn.map(%s : !acc) -> !acc {
    ^bb0(%i: index, %j: index, %a: f32):
      %z = arith.mulf %a, %a : f32
      attn.yield %z : f32
    }
    scf.yield %y, %r : !acc, !rows
  }
  return
}

// A row tile broadcast along the columns: each value reads the row value of
// its row. 128x16 over 4 warps: two m tiles of two 8-column blocks (16
// values), rows g, g + 8, 16 + g, 24 + g (4 row values); value i of m tile
// i / 8 is in row slot 2·(i / 8) + (i % 4) / 2.
// CHECK-LABEL: gpu.func @row_broadcast
// CHECK: scf.for %{{.*}} iter_args(%[[V0:arg[0-9]+]] = %{{[[:alnum:]_]+}}, %[[V1:arg[0-9]+]] = %{{[[:alnum:]_]+}}, %[[V2:arg[0-9]+]] = %{{[[:alnum:]_]+}}, %[[V3:arg[0-9]+]] = %{{[[:alnum:]_]+}}, %[[V4:arg[0-9]+]] = %{{[[:alnum:]_]+}}, %[[V5:arg[0-9]+]] = %{{[[:alnum:]_]+}}, %[[V6:arg[0-9]+]] = %{{[[:alnum:]_]+}}, %[[V7:arg[0-9]+]] = %{{[[:alnum:]_]+}}, %[[V8:arg[0-9]+]] = %{{[[:alnum:]_]+}}, %[[V9:arg[0-9]+]] = %{{[[:alnum:]_]+}}, %[[V10:arg[0-9]+]] = %{{[[:alnum:]_]+}}, %[[V11:arg[0-9]+]] = %{{[[:alnum:]_]+}}, %[[V12:arg[0-9]+]] = %{{[[:alnum:]_]+}}, %[[V13:arg[0-9]+]] = %{{[[:alnum:]_]+}}, %[[V14:arg[0-9]+]] = %{{[[:alnum:]_]+}}, %[[V15:arg[0-9]+]] = %{{[[:alnum:]_]+}}, %[[R0:arg[0-9]+]] = %{{[[:alnum:]_]+}}, %[[R1:arg[0-9]+]] = %{{[[:alnum:]_]+}}, %[[R2:arg[0-9]+]] = %{{[[:alnum:]_]+}}, %[[R3:arg[0-9]+]] = %{{[[:alnum:]_]+}}) -> ({{(f32, ){19}(f32)}})
// CHECK-NOT: nvvm.read.ptx.sreg.tid.x
// CHECK: %[[D0:.*]] = arith.subf %[[V0]], %[[R0]] : f32
// CHECK: %[[D1:.*]] = arith.subf %[[V1]], %[[R0]] : f32
// CHECK: %[[D2:.*]] = arith.subf %[[V2]], %[[R1]] : f32
// CHECK: %[[D3:.*]] = arith.subf %[[V3]], %[[R1]] : f32
// CHECK: %[[D4:.*]] = arith.subf %[[V4]], %[[R0]] : f32
// CHECK: %[[D5:.*]] = arith.subf %[[V5]], %[[R0]] : f32
// CHECK: %[[D6:.*]] = arith.subf %[[V6]], %[[R1]] : f32
// CHECK: %[[D7:.*]] = arith.subf %[[V7]], %[[R1]] : f32
// CHECK: %[[D8:.*]] = arith.subf %[[V8]], %[[R2]] : f32
// CHECK: %[[D9:.*]] = arith.subf %[[V9]], %[[R2]] : f32
// CHECK: %[[D10:.*]] = arith.subf %[[V10]], %[[R3]] : f32
// CHECK: %[[D11:.*]] = arith.subf %[[V11]], %[[R3]] : f32
// CHECK: %[[D12:.*]] = arith.subf %[[V12]], %[[R2]] : f32
// CHECK: %[[D13:.*]] = arith.subf %[[V13]], %[[R2]] : f32
// CHECK: %[[D14:.*]] = arith.subf %[[V14]], %[[R3]] : f32
// CHECK: %[[D15:.*]] = arith.subf %[[V15]], %[[R3]] : f32
// CHECK-NOT: arith.subf
// CHECK: scf.yield %[[D0]], %[[D1]], %[[D2]], %[[D3]], %[[D4]], %[[D5]], %[[D6]], %[[D7]], %[[D8]], %[[D9]], %[[D10]], %[[D11]], %[[D12]], %[[D13]], %[[D14]], %[[D15]], %[[R0]], %[[R1]], %[[R2]], %[[R3]] :
func.func @row_broadcast(%n: index) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %s0 = arith.constant dense<1.0> : !acc2
  %r0 = arith.constant dense<2.0> : !rows2
  %res:2 = scf.for %it = %c0 to %n step %c1 iter_args(%s = %s0, %r = %r0) -> (!acc2, !rows2) {
    %y = attn.map(%s, %r : !acc2, !rows2) -> !acc2 {
    ^bb0(%i: index, %j: index, %a: f32, %b: f32):
      %z = arith.subf %a, %b : f32
      attn.yield %z : f32
    }
    scf.yield %y, %r : !acc2, !rows2
  }
  return
}

// Coordinates: the thread's base (row 16·warp + lane / 4, column
// 2·(lane % 4)) plus the map's offsets, plus each value's constant offset:
// (0, 0), (0, 1), (8, 0), (8, 1) in the first 8-column block, then 8
// columns on per block.
// CHECK-LABEL: gpu.func @coordinates
// CHECK-SAME: (%{{.*}}: index, %[[ROW:.*]]: index, %[[COL:.*]]: index)
// CHECK: scf.for
// CHECK: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK: %[[WARP:.*]] = arith.divui %[[TID]], %c32_i32
// CHECK: %[[LANE:.*]] = arith.remui %[[TID]], %c32_i32
// CHECK: %[[G:.*]] = arith.divui %[[LANE]], %c4_i32
// CHECK: %[[WROW:.*]] = arith.muli %[[WARP]], %c16_i32
// CHECK: %[[R32:.*]] = arith.addi %[[WROW]], %[[G]] : i32
// CHECK: %[[T:.*]] = arith.remui %[[LANE]], %c4_i32
// CHECK: %[[C32:.*]] = arith.muli %[[T]], %c2_i32
// CHECK: %[[R:.*]] = arith.index_castui %[[R32]] : i32 to index
// CHECK: %[[C:.*]] = arith.index_castui %[[C32]] : i32 to index
// CHECK: %[[BR:.*]] = arith.addi %[[R]], %[[ROW]] : index
// CHECK: %[[BC:.*]] = arith.addi %[[C]], %[[COL]] : index
// CHECK: %[[I0:.*]] = arith.addi %[[BR]], %c0{{.*}} : index
// CHECK: %[[J0:.*]] = arith.addi %[[BC]], %c0{{.*}} : index
// CHECK: arith.cmpi sgt, %[[J0]], %[[I0]] : index
// CHECK: %[[I1:.*]] = arith.addi %[[BR]], %c0{{.*}} : index
// CHECK: %[[J1:.*]] = arith.addi %[[BC]], %c1{{.*}} : index
// CHECK: arith.cmpi sgt, %[[J1]], %[[I1]] : index
// CHECK: %[[I2:.*]] = arith.addi %[[BR]], %c8{{.*}} : index
// CHECK: %[[J2:.*]] = arith.addi %[[BC]], %c0{{.*}} : index
// CHECK: arith.cmpi sgt, %[[J2]], %[[I2]] : index
// CHECK: %[[I3:.*]] = arith.addi %[[BR]], %c8{{.*}} : index
// CHECK: %[[J3:.*]] = arith.addi %[[BC]], %c1{{.*}} : index
// CHECK: arith.cmpi sgt, %[[J3]], %[[I3]] : index
// CHECK: %[[I4:.*]] = arith.addi %[[BR]], %c0{{.*}} : index
// CHECK: %[[J4:.*]] = arith.addi %[[BC]], %c8{{.*}} : index
// CHECK: arith.cmpi sgt, %[[J4]], %[[I4]] : index
// CHECK: %[[J13:.*]] = arith.addi %[[BC]], %c25{{.*}} : index
// CHECK: arith.cmpi sgt, %[[J13]], %{{.*}} : index
// CHECK: arith.addi %[[BR]], %c8{{.*}} : index
// CHECK: arith.addi %[[BC]], %c24{{.*}} : index
// CHECK: arith.cmpi
// CHECK: %[[I15:.*]] = arith.addi %[[BR]], %c8{{.*}} : index
// CHECK: %[[J15:.*]] = arith.addi %[[BC]], %c25{{.*}} : index
// CHECK: arith.cmpi sgt, %[[J15]], %[[I15]] : index
// CHECK-NOT: arith.cmpi
// CHECK: scf.yield
func.func @coordinates(%n: index, %row: index, %col: index) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ninf = arith.constant 0xFF800000 : f32
  %s0 = arith.constant dense<0.0> : !acc
  %res = scf.for %it = %c0 to %n step %c1 iter_args(%s = %s0) -> (!acc) {
    %y = attn.map(%s : !acc) at [%row, %col] -> !acc {
    ^bb0(%i: index, %j: index, %a: f32):
      %hidden = arith.cmpi sgt, %j, %i : index
      %z = arith.select %hidden, %ninf, %a : f32
      attn.yield %z : f32
    }
    scf.yield %y : !acc
  }
  return
}

// An integer derived from the coordinates by subtracting and casting is the
// thread's base plus each value's constant (AffineCoords.h): it converts to
// float once, and each value adds its constant, (0, 0) none, (0, 1) +1,
// (8, 0) -8, (8, 1) -7 (ALiBi's j - i, once per thread instead of a
// quarter-rate sitofp per score).
// CHECK-LABEL: gpu.func @distance_to_float
// CHECK: scf.for
// CHECK: %[[BR:.*]] = arith.addi %{{.*}}, %arg1 : index
// CHECK: %[[BC:.*]] = arith.addi %{{.*}}, %arg2 : index
// CHECK: %[[D:.*]] = arith.subi %[[BC]], %[[BR]] : index
// CHECK: %[[D32:.*]] = arith.index_cast %[[D]] : index to i32
// CHECK: %[[F:.*]] = arith.sitofp %[[D32]] : i32 to f32
// CHECK: arith.addf %{{.*}}, %[[F]] : f32
// CHECK: %[[C1:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[F1:.*]] = arith.addf %[[F]], %[[C1]] : f32
// CHECK: arith.addf %{{.*}}, %[[F1]] : f32
// CHECK: %[[C8:.*]] = arith.constant -8.000000e+00 : f32
// CHECK: %[[F2:.*]] = arith.addf %[[F]], %[[C8]] : f32
// CHECK: %[[C7:.*]] = arith.constant -7.000000e+00 : f32
// CHECK: %[[F3:.*]] = arith.addf %[[F]], %[[C7]] : f32
// CHECK-NOT: arith.sitofp
// CHECK: scf.yield
func.func @distance_to_float(%n: index, %row: index, %col: index) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %s0 = arith.constant dense<0.0> : !acc
  %res = scf.for %it = %c0 to %n step %c1 iter_args(%s = %s0) -> (!acc) {
    %y = attn.map(%s : !acc) at [%row, %col] -> !acc {
    ^bb0(%i: index, %j: index, %a: f32):
      %d = arith.subi %j, %i : index
      %di = arith.index_cast %d : index to i32
      %df = arith.sitofp %di : i32 to f32
      %z = arith.addf %a, %df : f32
      attn.yield %z : f32
    }
    scf.yield %y : !acc
  }
  return
}

// A map whose integer is not the coordinates' (a loaded value, a product)
// keeps its sitofp per value.
// CHECK-LABEL: gpu.func @product_to_float
// CHECK: scf.for
// CHECK-COUNT-16: arith.sitofp
// CHECK-NOT: arith.sitofp
// CHECK: scf.yield
func.func @product_to_float(%n: index, %row: index, %col: index) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %s0 = arith.constant dense<0.0> : !acc
  %res = scf.for %it = %c0 to %n step %c1 iter_args(%s = %s0) -> (!acc) {
    %y = attn.map(%s : !acc) at [%row, %col] -> !acc {
    ^bb0(%i: index, %j: index, %a: f32):
      %d = arith.muli %j, %i : index
      %di = arith.index_cast %d : index to i32
      %df = arith.sitofp %di : i32 to f32
      %z = arith.addf %a, %df : f32
      attn.yield %z : f32
    }
    scf.yield %y : !acc
  }
  return
}

// A 1-D map over rows: value i is row 16·(i / 2) + 8·(i % 2) of the
// thread's base; two m tiles per warp give 4 values, the warp's base 32·warp.
// CHECK-LABEL: gpu.func @row_coordinates
// CHECK: scf.for {{.*}} -> (f32, f32, f32, f32)
// CHECK: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK: %[[WARP:.*]] = arith.divui %[[TID]], %c32_i32
// CHECK: arith.muli %[[WARP]], %c32_i32
// CHECK: %[[R:.*]] = arith.index_castui %{{.*}} : i32 to index
// CHECK: arith.addi %[[R]], %c0{{.*}} : index
// CHECK: arith.index_cast
// CHECK: arith.addi %[[R]], %c8{{.*}} : index
// CHECK: arith.index_cast
// CHECK: arith.addi %[[R]], %c16{{.*}} : index
// CHECK: arith.index_cast
// CHECK: arith.addi %[[R]], %c24{{.*}} : index
// CHECK: arith.index_cast
// CHECK-NOT: arith.index_cast
// CHECK: scf.yield
func.func @row_coordinates(%n: index) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r0 = arith.constant dense<0.0> : !rows2
  %res = scf.for %it = %c0 to %n step %c1 iter_args(%r = %r0) -> (!rows2) {
    %y = attn.map(%r : !rows2) -> !rows2 {
    ^bb0(%i: index, %a: f32):
      %ii = arith.index_cast %i : index to i32
      %f = arith.sitofp %ii : i32 to f32
      %z = arith.addf %a, %f : f32
      attn.yield %z : f32
    }
    scf.yield %y : !rows2
  }
  return
}

// A map may change the element type (a rows tile of i1 here); splat tile
// constants become one scalar, used for every value.
// CHECK-LABEL: gpu.func @splat_and_i1
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[FALSE:.*]] = arith.constant false
// CHECK: scf.for {{.*}} iter_args(%{{[[:alnum:]_]+}} = %[[NINF]], %{{[[:alnum:]_]+}} = %[[NINF]], %{{[[:alnum:]_]+}} = %[[FALSE]], %{{[[:alnum:]_]+}} = %[[FALSE]]) -> (f32, f32, i1, i1)
// CHECK: arith.cmpf une, %{{.*}}, %[[ZERO]] : f32
// CHECK: arith.cmpf une, %{{.*}}, %[[ZERO]] : f32
// CHECK-NOT: arith.cmpf
// CHECK: scf.yield %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : f32, f32, i1, i1
func.func @splat_and_i1(%n: index) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ninf = arith.constant dense<0xFF800000> : !rows
  %zero = arith.constant dense<0.0> : !rows
  %f = arith.constant dense<false> : tensor<64xi1, #attn_nv.rows<warps = 4>>
  %res:2 = scf.for %it = %c0 to %n step %c1 iter_args(%r = %ninf, %b = %f) -> (!rows, tensor<64xi1, #attn_nv.rows<warps = 4>>) {
    %y = attn.map(%r, %zero : !rows, !rows) -> tensor<64xi1, #attn_nv.rows<warps = 4>> {
    ^bb0(%i: index, %a: f32, %z: f32):
      %ne = arith.cmpf une, %a, %z : f32
      attn.yield %ne : i1
    }
    scf.yield %r, %y : !rows, tensor<64xi1, #attn_nv.rows<warps = 4>>
  }
  return
}

// Accumulator -> A operand: blocks 2k and 2k + 1 of an m tile form k block
// k, whose four registers are the pairs (v0, v1), (v2, v3) of block 2k and
// (v0, v1), (v2, v3) of block 2k + 1, rounded to bf16 in one conversion and
// held as i32 (f16: as vector<2xf16>). 64x32 -> 2 k blocks: 8 registers.
// CHECK-LABEL: gpu.func @to_operand_a
// CHECK: scf.for %{{.*}} iter_args(%[[V0:arg[0-9]+]] = %{{[[:alnum:]_]+}}, %[[V1:arg[0-9]+]] = %{{[[:alnum:]_]+}}, %[[V2:arg[0-9]+]] = %{{[[:alnum:]_]+}}, %[[V3:arg[0-9]+]] = %{{[[:alnum:]_]+}}, %[[V4:arg[0-9]+]] = %{{[[:alnum:]_]+}}, %[[V5:arg[0-9]+]] = %{{[[:alnum:]_]+}}, %[[V6:arg[0-9]+]] = %{{[[:alnum:]_]+}}, %[[V7:arg[0-9]+]] = %{{[[:alnum:]_]+}}, %{{.*}}) -> ({{(f32, ){16}(i32, ){8}(vector<2xf16>, ){7}(vector<2xf16>)}})
// CHECK: %[[P0:.*]] = llvm.mlir.poison : vector<2xf32>
// CHECK: %[[P1:.*]] = llvm.insertelement %[[V0]], %[[P0]][%c0_i32{{.*}} : i32] : vector<2xf32>
// CHECK: %[[P2:.*]] = llvm.insertelement %[[V1]], %[[P1]][%c1_i32{{.*}} : i32] : vector<2xf32>
// CHECK: %[[P3:.*]] = llvm.fptrunc %[[P2]] : vector<2xf32> to vector<2xbf16>
// CHECK: %[[A0:.*]] = llvm.bitcast %[[P3]] : vector<2xbf16> to i32
// CHECK: llvm.insertelement %[[V2]]
// CHECK: llvm.insertelement %[[V3]]
// CHECK: %[[A1:.*]] = llvm.bitcast %{{.*}} : vector<2xbf16> to i32
// CHECK: llvm.insertelement %[[V4]]
// CHECK: llvm.insertelement %[[V5]]
// CHECK: %[[A2:.*]] = llvm.bitcast %{{.*}} : vector<2xbf16> to i32
// CHECK: llvm.insertelement %[[V6]]
// CHECK: llvm.insertelement %[[V7]]
// CHECK: %[[A3:.*]] = llvm.bitcast %{{.*}} : vector<2xbf16> to i32
// CHECK-COUNT-4: llvm.bitcast %{{.*}} : vector<2xbf16> to i32
// CHECK-NOT: llvm.bitcast
// CHECK-COUNT-8: llvm.fptrunc %{{.*}} : vector<2xf32> to vector<2xf16>
// CHECK-NOT: llvm.bitcast
// CHECK: scf.yield {{.*}}, %[[A0]], %[[A1]], %[[A2]], %[[A3]],
func.func @to_operand_a(%n: index) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %s0 = arith.constant dense<0.0> : !acc
  %a0 = attn_nv.convert_layout %s0 : !acc -> tensor<64x32xbf16, #attn_nv.operand_a<warps = 4>>
  %h0 = attn_nv.convert_layout %s0 : !acc -> tensor<64x32xf16, #attn_nv.operand_a<warps = 4>>
  %res:3 = scf.for %it = %c0 to %n step %c1 iter_args(%s = %s0, %a = %a0, %h = %h0) -> (!acc, tensor<64x32xbf16, #attn_nv.operand_a<warps = 4>>, tensor<64x32xf16, #attn_nv.operand_a<warps = 4>>) {
    %y = attn_nv.convert_layout %s : !acc -> tensor<64x32xbf16, #attn_nv.operand_a<warps = 4>>
    %z = attn_nv.convert_layout %s : !acc -> tensor<64x32xf16, #attn_nv.operand_a<warps = 4>>
    scf.yield %s, %y, %z : !acc, tensor<64x32xbf16, #attn_nv.operand_a<warps = 4>>, tensor<64x32xf16, #attn_nv.operand_a<warps = 4>>
  }
  return
}

// A 16-bit accumulator is packed without rounding.
// CHECK-LABEL: gpu.func @to_operand_a_bf16
// CHECK: scf.for
// CHECK-NOT: llvm.fptrunc
// CHECK: llvm.insertelement %{{.*}} : vector<2xbf16>
// CHECK: llvm.insertelement %{{.*}} : vector<2xbf16>
// CHECK: llvm.bitcast %{{.*}} : vector<2xbf16> to i32
func.func @to_operand_a_bf16(%n: index) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %s0 = arith.constant dense<0.0> : tensor<64x16xbf16, #attn_nv.acc<warps = 4>>
  %a0 = attn_nv.convert_layout %s0 : tensor<64x16xbf16, #attn_nv.acc<warps = 4>> -> tensor<64x16xbf16, #attn_nv.operand_a<warps = 4>>
  %res:2 = scf.for %it = %c0 to %n step %c1 iter_args(%s = %s0, %a = %a0) -> (tensor<64x16xbf16, #attn_nv.acc<warps = 4>>, tensor<64x16xbf16, #attn_nv.operand_a<warps = 4>>) {
    %y = attn_nv.convert_layout %s : tensor<64x16xbf16, #attn_nv.acc<warps = 4>> -> tensor<64x16xbf16, #attn_nv.operand_a<warps = 4>>
    scf.yield %s, %y : tensor<64x16xbf16, #attn_nv.acc<warps = 4>>, tensor<64x16xbf16, #attn_nv.operand_a<warps = 4>>
  }
  return
}

// Partial row sums -> rows: each value adds its quad's four with two
// butterfly shuffles (lane masks 1 and 2).
// CHECK-LABEL: gpu.func @partial_to_rows
// CHECK: scf.for %{{.*}} iter_args(%[[P0:arg[0-9]+]] = %{{[[:alnum:]_]+}}, %[[P1:arg[0-9]+]] = %{{[[:alnum:]_]+}}) -> (f32, f32)
// CHECK: %[[S0:.*]] = nvvm.shfl.sync bfly %c-1_i32{{.*}}, %[[P0]], %c1_i32{{.*}}, %c31_i32{{.*}} : f32 -> f32
// CHECK: %[[Q0:.*]] = arith.addf %[[P0]], %[[S0]] : f32
// CHECK: %[[S1:.*]] = nvvm.shfl.sync bfly %c-1_i32{{.*}}, %[[Q0]], %c2_i32{{.*}}, %c31_i32{{.*}} : f32 -> f32
// CHECK: %[[Q1:.*]] = arith.addf %[[Q0]], %[[S1]] : f32
// CHECK: %[[S2:.*]] = nvvm.shfl.sync bfly %c-1_i32{{.*}}, %[[P1]], %c1_i32{{.*}}, %c31_i32{{.*}} : f32 -> f32
// CHECK: %[[Q2:.*]] = arith.addf %[[P1]], %[[S2]] : f32
// CHECK: %[[S3:.*]] = nvvm.shfl.sync bfly %c-1_i32{{.*}}, %[[Q2]], %c2_i32{{.*}}, %c31_i32{{.*}} : f32 -> f32
// CHECK: %[[Q3:.*]] = arith.addf %[[Q2]], %[[S3]] : f32
// CHECK-NOT: nvvm.shfl.sync
// CHECK: scf.yield %[[Q1]], %[[Q3]] : f32, f32
func.func @partial_to_rows(%n: index) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %p0 = arith.constant dense<0.0> : tensor<64xf32, #attn_nv.rows<warps = 4, partial = true>>
  %res = scf.for %it = %c0 to %n step %c1 iter_args(%p = %p0) -> (tensor<64xf32, #attn_nv.rows<warps = 4, partial = true>>) {
    %r = attn_nv.convert_layout %p : tensor<64xf32, #attn_nv.rows<warps = 4, partial = true>> -> !rows
    %back = attn.map(%r : !rows) -> tensor<64xf32, #attn_nv.rows<warps = 4, partial = true>> {
    ^bb0(%i: index, %a: f32):
      attn.yield %a : f32
    }
    scf.yield %back : tensor<64xf32, #attn_nv.rows<warps = 4, partial = true>>
  }
  return
}

// A #attn_nv.cols tile holds two adjacent columns of every 64 a lane, as it
// was loaded (global-access.mlir): a map over cols tiles alone runs on those
// two values; a map that broadcasts it over an acc tile takes the column of
// each of its values from lane 4·(block mod 8) + lane mod 4 by
// shfl.sync.idx (immediate lane and c = 0x31f, the lane's low bits kept),
// once per column and where the map is, inside the loop: 16 columns of a
// 64x64 tile, each for the two rows of its values.
!colsrc = memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>
!cols64 = tensor<1x64xf32, #attn_nv.cols<warps = 4>>
!acc64 = tensor<64x64xf32, #attn_nv.acc<warps = 4>>
// CHECK-LABEL: gpu.func @cols_broadcast
// CHECK-COUNT-2: llvm.load
// CHECK-NOT: llvm.load
// CHECK-COUNT-2: arith.mulf
// CHECK-NOT: arith.mulf
// CHECK-NOT: nvvm.shfl.sync
// CHECK: scf.for
// CHECK: %[[KEEP:.*]] = arith.constant 799 : i32
// CHECK: nvvm.shfl.sync idx %{{.*}}, %{{.*}}, %c0_i32{{.*}}, %[[KEEP]] : f32 -> f32
// CHECK-NEXT: arith.subf
// CHECK-COUNT-15: nvvm.shfl.sync idx
// CHECK-NOT: nvvm.shfl.sync
// CHECK: scf.yield
func.func @cols_broadcast(%L: !colsrc, %b: index, %h: index, %row: index, %bound: index, %n: index) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %t = attn.load_tile %L[%b, %h, %row] bounds %bound : !colsrc -> !cols64
  %sq = attn.map(%t : !cols64) -> !cols64 {
  ^bb0(%i: index, %j: index, %x: f32):
    %y = arith.mulf %x, %x : f32
    attn.yield %y : f32
  }
  %s0 = arith.constant dense<1.0> : !acc64
  %res = scf.for %it = %c0 to %n step %c1 iter_args(%s = %s0) -> (!acc64) {
    %y = attn.map(%s, %sq : !acc64, !cols64) -> !acc64 {
    ^bb0(%i: index, %j: index, %a: f32, %d: f32):
      %z = arith.subf %a, %d : f32
      attn.yield %z : f32
    }
    scf.yield %y : !acc64
  }
  return
}
