// RUN: attn-opt %s --convert-attn-to-linalg --mlir-print-local-scope | FileCheck %s

// The host mapping of the generic tile ops: attn.matmul, attn.map and
// attn.reduce become linalg.generic on tensors, tile loads tensor.generate
// (zeros past the bound), stores loops of memref.store inside the bound,
// the grid a loop over work items that threads share.

!t = memref<?x?x?x32xf32, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>

// (i, j, k) loops, the reduction innermost; each operand read as the
// transposes say; 16-bit operands are extended, products accumulated in f32.
// CHECK-LABEL: func.func @matmuls
// CHECK-SAME: (%[[A:.*]]: tensor<16x32xbf16>, %[[B:.*]]: tensor<8x32xbf16>, %[[BT:.*]]: tensor<32x8xbf16>, %[[AT:.*]]: tensor<32x16xbf16>, %[[C:.*]]: tensor<16x8xf32>)
// CHECK: %[[R0:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[A]], %[[BT]] : tensor<16x32xbf16>, tensor<32x8xbf16>) outs(%[[C]] : tensor<16x8xf32>)
// CHECK: ^bb0(%[[X:.*]]: bf16, %[[Y:.*]]: bf16, %[[ACC:.*]]: f32):
// CHECK:   %[[XF:.*]] = arith.extf %[[X]] : bf16 to f32
// CHECK:   %[[YF:.*]] = arith.extf %[[Y]] : bf16 to f32
// CHECK:   %[[P:.*]] = arith.mulf %[[XF]], %[[YF]] : f32
// CHECK:   %[[S:.*]] = arith.addf %[[ACC]], %[[P]] : f32
// CHECK:   linalg.yield %[[S]] : f32
// transpose_rhs (QKᵀ):
// CHECK: %[[R1:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[A]], %[[B]] :
// transpose_lhs (the backward's Pᵀ·dO):
// CHECK: %[[R2:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[AT]], %[[BT]] :
// both:
// CHECK: %[[R3:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[AT]], %[[B]] :
// CHECK: return %[[R0]], %[[R1]], %[[R2]], %[[R3]]
func.func @matmuls(%a: tensor<16x32xbf16>, %b: tensor<8x32xbf16>, %bt: tensor<32x8xbf16>, %at: tensor<32x16xbf16>, %c: tensor<16x8xf32>) -> (tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>) {
  %0 = attn.matmul %a, %bt, %c : tensor<16x32xbf16>, tensor<32x8xbf16>, tensor<16x8xf32>
  %1 = attn.matmul %a, %b, %c transpose_rhs : tensor<16x32xbf16>, tensor<8x32xbf16>, tensor<16x8xf32>
  %2 = attn.matmul %at, %bt, %c transpose_lhs : tensor<32x16xbf16>, tensor<32x8xbf16>, tensor<16x8xf32>
  %3 = attn.matmul %at, %b, %c transpose_lhs transpose_rhs : tensor<32x16xbf16>, tensor<8x32xbf16>, tensor<16x8xf32>
  return %0, %1, %2, %3 : tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>
}

// A map: its body once per element, the coordinates linalg.index plus the
// offsets; a row tile input is broadcast along the columns.
// CHECK-LABEL: func.func @map
// CHECK-SAME: (%[[S:.*]]: tensor<16x8xf32>, %[[M:.*]]: tensor<16xf32>, %[[ROW:.*]]: index, %[[COL:.*]]: index)
// CHECK: %[[INIT:.*]] = tensor.empty() : tensor<16x8xf32>
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[S]], %[[M]] : tensor<16x8xf32>, tensor<16xf32>) outs(%[[INIT]] : tensor<16x8xf32>)
// CHECK: ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %{{.*}}: f32):
// CHECK:   %[[I0:.*]] = linalg.index 0 : index
// CHECK:   %[[I:.*]] = arith.addi %[[ROW]], %[[I0]] : index
// CHECK:   %[[J0:.*]] = linalg.index 1 : index
// CHECK:   %[[J:.*]] = arith.addi %[[COL]], %[[J0]] : index
// CHECK:   %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK:   %[[HIDE:.*]] = arith.cmpi sgt, %[[J]], %[[I]] : index
// CHECK:   %[[D:.*]] = arith.subf %[[X]], %[[Y]] : f32
// CHECK:   %[[Z:.*]] = arith.select %[[HIDE]], %[[NINF]], %[[D]] : f32
// CHECK:   linalg.yield %[[Z]] : f32
func.func @map(%s: tensor<16x8xf32>, %m: tensor<16xf32>, %r: index, %c: index) -> tensor<16x8xf32> {
  %0 = attn.map(%s, %m : tensor<16x8xf32>, tensor<16xf32>) at [%r, %c] -> tensor<16x8xf32> {
  ^bb0(%i: index, %j: index, %x: f32, %y: f32):
    %ninf = arith.constant 0xFF800000 : f32
    %hidden = arith.cmpi sgt, %j, %i : index
    %d = arith.subf %x, %y : f32
    %z = arith.select %hidden, %ninf, %d : f32
    attn.yield %z : f32
  }
  return %0 : tensor<16x8xf32>
}

// A 1-D map without offsets reads no coordinate it does not use; it may
// change the element type.
// CHECK-LABEL: func.func @row_map
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%{{.*}}, %{{.*}} : tensor<16xf32>, tensor<16xf32>) outs(%{{.*}} : tensor<16xi1>)
// CHECK-NOT: arith.addi
// CHECK: arith.cmpf une
// CHECK: linalg.yield %{{.*}} : i1
func.func @row_map(%a: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<16xi1> {
  %0 = attn.map(%a, %b : tensor<16xf32>, tensor<16xf32>) -> tensor<16xi1> {
  ^bb0(%i: index, %x: f32, %y: f32):
    %ne = arith.cmpf une, %x, %y : f32
    attn.yield %ne : i1
  }
  return %0 : tensor<16xi1>
}

// Row reductions onto the initial row tile: maxNum (a NaN loses) or add.
// CHECK-LABEL: func.func @reduce
// CHECK-SAME: (%[[S:.*]]: tensor<16x8xf32>, %[[M:.*]]: tensor<16xf32>)
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%[[S]] : tensor<16x8xf32>) outs(%[[M]] : tensor<16xf32>)
// CHECK: ^bb0(%[[X:.*]]: f32, %[[R:.*]]: f32):
// CHECK:   arith.maxnumf %[[R]], %[[X]] : f32
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%[[S]] : tensor<16x8xf32>) outs(%[[M]] : tensor<16xf32>)
// CHECK: ^bb0(%[[X2:.*]]: f32, %[[R2:.*]]: f32):
// CHECK:   arith.addf %[[R2]], %[[X2]] : f32
func.func @reduce(%s: tensor<16x8xf32>, %m: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %0 = attn.reduce <max> %s, %m : tensor<16x8xf32>, tensor<16xf32>
  %1 = attn.reduce <add> %s, %m : tensor<16x8xf32>, tensor<16xf32>
  return %0, %1 : tensor<16xf32>, tensor<16xf32>
}

// Loads read rows inside the bound (zeros past it); with rows_per_head,
// packed row p is row p mod rows_per_head of head + p / rows_per_head.
// Stores write the rows inside the bound: min(R, bound - row) of them.
// CHECK-LABEL: func.func @load_store
// CHECK-SAME: (%[[Q:.*]]: memref<?x?x?x32xf32, {{.*}}>, %[[O:.*]]: memref<?x?x?x32xf32, {{.*}}>, %[[L:.*]]: memref<?x?x?xf32, {{.*}}>, %[[B:.*]]: index, %[[H:.*]]: index, %[[ROW:.*]]: index, %[[N:.*]]: index, %[[RPH:.*]]: index)
// CHECK: %[[TILE:.*]] = tensor.generate {
// CHECK: ^bb0(%[[I:.*]]: index, %[[J:.*]]: index):
// CHECK:   %[[P:.*]] = arith.addi %[[ROW]], %[[I]] : index
// CHECK:   %[[IN:.*]] = arith.cmpi slt, %[[P]], %[[N]] : index
// CHECK:   %[[V:.*]] = scf.if %[[IN]] -> (f32) {
// CHECK:     %[[SEQ:.*]] = arith.remui %[[P]], %[[RPH]] : index
// CHECK:     %[[DH:.*]] = arith.divui %[[P]], %[[RPH]] : index
// CHECK:     %[[HEAD:.*]] = arith.addi %[[H]], %[[DH]] : index
// CHECK:     %[[X:.*]] = memref.load %[[Q]][%[[B]], %[[HEAD]], %[[SEQ]], %[[J]]]
// CHECK:     scf.yield %[[X]] : f32
// CHECK:   } else {
// CHECK:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:     scf.yield %[[ZERO]] : f32
// CHECK:   tensor.yield %[[V]] : f32
// CHECK: } : tensor<16x32xf32>
// CHECK: %[[LEFT:.*]] = arith.subi %[[N]], %[[ROW]] : index
// CHECK: %[[COUNT:.*]] = arith.minsi %c16, %[[LEFT]] : index
// CHECK: scf.for %[[R:.*]] = %c0 to %[[COUNT]] step %c1 {
// CHECK:   %[[SROW:.*]] = arith.addi %[[ROW]], %[[R]] : index
// CHECK:   scf.for %[[C:.*]] = %c0 to %c32 step %c1 {
// CHECK:     %[[E:.*]] = tensor.extract %[[TILE]][%[[R]], %[[C]]] : tensor<16x32xf32>
// CHECK:     memref.store %[[E]], %[[O]][%[[B]], %[[H]], %[[SROW]], %[[C]]]
// A row tile (the LSE), packed:
// CHECK: %[[LEFT2:.*]] = arith.subi %[[N]], %[[ROW]] : index
// CHECK: %[[COUNT2:.*]] = arith.minsi %c16{{.*}}, %[[LEFT2]] : index
// CHECK: scf.for %[[R2:.*]] = %c0{{.*}} to %[[COUNT2]] step %c1{{.*}} {
// CHECK:   %[[P2:.*]] = arith.addi %[[ROW]], %[[R2]] : index
// CHECK:   %[[SEQ2:.*]] = arith.remui %[[P2]], %[[RPH]] : index
// CHECK:   %[[DH2:.*]] = arith.divui %[[P2]], %[[RPH]] : index
// CHECK:   %[[HEAD2:.*]] = arith.addi %[[H]], %[[DH2]] : index
// CHECK:   %[[E2:.*]] = tensor.extract %{{.*}}[%[[R2]]] : tensor<16xf32>
// CHECK:   memref.store %[[E2]], %[[L]][%[[B]], %[[HEAD2]], %[[SEQ2]]]
func.func @load_store(%Q: !t, %O: !t, %L: !lse, %b: index, %h: index, %row: index, %n: index, %rph: index) {
  %q = attn.load_tile %Q[%b, %h, %row] rows_per_head %rph bounds %n : !t -> tensor<16x32xf32>
  attn.store_tile %q, %O[%b, %h, %row] bounds %n : tensor<16x32xf32>, !t
  %l = arith.constant dense<1.0> : tensor<16xf32>
  attn.store_tile %l, %L[%b, %h, %row] rows_per_head %rph bounds %n : tensor<16xf32>, !lse
  return
}

// An accumulating store adds each element atomically (threads run items
// that add into the same rows at once), over the rows inside the bound.
// CHECK-LABEL: func.func @store_accumulate
// CHECK-SAME: (%[[T:.*]]: tensor<16x32xf32>, %[[O:.*]]: memref<?x?x?x32xf32, {{.*}}>, %[[B:.*]]: index, %[[H:.*]]: index, %[[ROW:.*]]: index, %[[N:.*]]: index)
// CHECK: %[[LEFT:.*]] = arith.subi %[[N]], %[[ROW]] : index
// CHECK: %[[COUNT:.*]] = arith.minsi %c16, %[[LEFT]] : index
// CHECK: scf.for %[[R:.*]] = %c0 to %[[COUNT]] step %c1 {
// CHECK:   %[[SROW:.*]] = arith.addi %[[ROW]], %[[R]] : index
// CHECK:   scf.for %[[C:.*]] = %c0 to %c32 step %c1 {
// CHECK:     %[[E:.*]] = tensor.extract %[[T]][%[[R]], %[[C]]] : tensor<16x32xf32>
// CHECK:     memref.atomic_rmw addf %[[E]], %[[O]][%[[B]], %[[H]], %[[SROW]], %[[C]]]
// CHECK-NOT: memref.store
func.func @store_accumulate(%t: tensor<16x32xf32>, %O: !t, %b: index, %h: index, %row: index, %n: index) {
  attn.store_tile %t, %O[%b, %h, %row] accumulate bounds %n : tensor<16x32xf32>, !t
  return
}

// With start (one sequence of a packed batch) packed row p is row start +
// p mod rows_per_head.
// CHECK-LABEL: func.func @load_from
// CHECK-SAME: (%[[Q:.*]]: memref<?x?x?x32xf32, {{.*}}>, %[[B:.*]]: index, %[[H:.*]]: index, %[[ROW:.*]]: index, %[[N:.*]]: index, %[[RPH:.*]]: index, %[[START:.*]]: index)
// CHECK: tensor.generate {
// CHECK: ^bb0(%[[I:.*]]: index, %[[J:.*]]: index):
// CHECK:   %[[P:.*]] = arith.addi %[[ROW]], %[[I]] : index
// CHECK:   scf.if
// CHECK:     %[[IN:.*]] = arith.remui %[[P]], %[[RPH]] : index
// CHECK:     %[[DH:.*]] = arith.divui %[[P]], %[[RPH]] : index
// CHECK:     %[[HEAD:.*]] = arith.addi %[[H]], %[[DH]] : index
// CHECK:     %[[SEQ:.*]] = arith.addi %[[START]], %[[IN]] : index
// CHECK:     memref.load %[[Q]][%[[B]], %[[HEAD]], %[[SEQ]], %[[J]]]
func.func @load_from(%Q: !t, %b: index, %h: index, %row: index, %n: index, %rph: index, %start: index) -> tensor<16x32xf32> {
  %q = attn.load_tile %Q[%b, %h, %row] rows_per_head %rph start %start bounds %n : !t -> tensor<16x32xf32>
  return %q : tensor<16x32xf32>
}

// The grid: work items (batch, head, query tile), the tiles of one head
// consecutive, taken from the shared counter of the grid while the call's
// phase is the grid's number; the function gains the two arguments.
// CHECK-LABEL: func.func @grid
// CHECK-SAME: (%[[NB:.*]]: index, %[[NH:.*]]: index, %[[NT:.*]]: index, %[[PHASE:.*]]: index, %[[COUNTERS:.*]]: memref<?xi64>)
// CHECK-SAME: attn.host_grids = 1 : i64
// CHECK: %[[G:.*]] = arith.constant 0 : index
// CHECK: %[[BH:.*]] = arith.muli %[[NB]], %[[NH]] : index
// CHECK: %[[ITEMS:.*]] = arith.muli %[[BH]], %[[NT]] : index
// CHECK: %[[MINE:.*]] = arith.cmpi eq, %[[PHASE]], %[[G]] : index
// CHECK: scf.if %[[MINE]] {
// CHECK:   scf.while : () -> index {
// CHECK:     %[[ONE:.*]] = arith.constant 1 : i64
// CHECK:     %[[TAKEN:.*]] = memref.atomic_rmw addi %[[ONE]], %[[COUNTERS]][%[[G]]] : (i64, memref<?xi64>) -> i64
// CHECK:     %[[ITEM:.*]] = arith.index_cast %[[TAKEN]] : i64 to index
// CHECK:     %[[MORE:.*]] = arith.cmpi slt, %[[ITEM]], %[[ITEMS]] : index
// CHECK:     scf.condition(%[[MORE]]) %[[ITEM]] : index
// CHECK:   } do {
// CHECK:   ^bb0(%[[I:.*]]: index):
// CHECK:     %[[T:.*]] = arith.remui %[[I]], %[[NT]] : index
// CHECK:     %[[BH2:.*]] = arith.divui %[[I]], %[[NT]] : index
// CHECK:     %[[H:.*]] = arith.remui %[[BH2]], %[[NH]] : index
// CHECK:     %[[B:.*]] = arith.divui %[[BH2]], %[[NH]] : index
// CHECK:     %[[X:.*]] = arith.addi %[[B]], %[[H]] : index
// CHECK:     arith.addi %[[X]], %[[T]] : index
// CHECK-NOT: attn.
func.func @grid(%nb: index, %nh: index, %nt: index) {
  attn.tile_grid (%b, %h, %t) in (%nb, %nh, %nt) {
    %x = arith.addi %b, %h : index
    %y = arith.addi %x, %t : index
  }
  return
}

// Two grids (the backward's): numbered in order, each run in its own phase
// from its own counter; one pair of arguments for both.
// CHECK-LABEL: func.func @two_grids
// CHECK-SAME: (%{{.*}}: index, %[[PHASE:.*]]: index, %[[COUNTERS:.*]]: memref<?xi64>)
// CHECK-SAME: attn.host_grids = 2 : i64
// CHECK: %[[G0:.*]] = arith.constant 0 : index
// CHECK: arith.cmpi eq, %[[PHASE]], %[[G0]] : index
// CHECK: memref.atomic_rmw addi %{{.*}}, %[[COUNTERS]][%[[G0]]]
// CHECK: %[[G1:.*]] = arith.constant 1 : index
// CHECK: arith.cmpi eq, %[[PHASE]], %[[G1]] : index
// CHECK: memref.atomic_rmw addi %{{.*}}, %[[COUNTERS]][%[[G1]]]
func.func @two_grids(%n: index) {
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
  }
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
  }
  return
}

// Row terms (B, H, N) load as a 1xR tile indexed by the column, and a 1xC
// input broadcasts along the rows: indexing map (d0, d1) -> (0, d1).
// CHECK-LABEL: func.func @column_tiles
// CHECK: tensor.generate
// CHECK: ^bb0(%{{.*}}: index, %[[J:.*]]: index):
// CHECK:   %[[N:.*]] = arith.addi %arg2, %[[J]] : index
// CHECK:   memref.load %arg0[%arg2, %arg2, %[[N]]]
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (0, d1)>, affine_map<(d0, d1) -> (d0, d1)>]
// CHECK:   arith.subf
func.func @column_tiles(%l: memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, %s: tensor<8x16xf32>, %i: index) -> tensor<8x16xf32> {
  %col = attn.load_tile %l[%i, %i, %i] bounds %i : memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>> -> tensor<1x16xf32>
  %m = attn.map(%s, %col : tensor<8x16xf32>, tensor<1x16xf32>) -> tensor<8x16xf32> {
  ^bb0(%a: index, %b: index, %x: f32, %y: f32):
    %z = arith.subf %x, %y : f32
    attn.yield %z : f32
  }
  return %m : tensor<8x16xf32>
}

// A paged source (pages of 16 rows): each row in the bound finds its page
// in row %b of the block table -- the column clamped to the table, the
// page number to the cache -- and its row in that page.
// CHECK-LABEL: func.func @load_paged
// CHECK-SAME: (%[[K:[^:]*]]: memref<?x?x16x32xf32{{.*}}, %[[BT:[^:]*]]: memref<?x?xi32{{.*}}, %[[B:[^:]*]]: index, %[[H:[^:]*]]: index, %[[ROW:[^:]*]]: index, %[[N:[^:]*]]: index)
// CHECK: tensor.generate
// CHECK: ^bb0(%[[R:.*]]: index, %[[D:.*]]: index):
// CHECK:   %[[J:.*]] = arith.addi %[[ROW]], %[[R]] : index
// CHECK:   %[[IN:.*]] = arith.cmpi slt, %[[J]], %[[N]] : index
// CHECK:   scf.if %[[IN]]
// CHECK:     %[[COLS:.*]] = memref.dim %[[BT]], %{{.*}}
// CHECK:     %[[COL:.*]] = arith.divui %[[J]], %[[P16:.*]] : index
// CHECK:     %[[LASTCOL:.*]] = arith.subi %[[COLS]], %{{.*}} : index
// CHECK:     %[[CCOL:.*]] = arith.minsi %[[COL]], %[[LASTCOL]] : index
// CHECK:     %[[INPAGE:.*]] = arith.remui %[[J]], %[[P16]] : index
// CHECK:     %[[E:.*]] = memref.load %[[BT]][%[[B]], %[[CCOL]]]
// CHECK:     %[[P:.*]] = arith.index_cast %[[E]] : i32 to index
// CHECK:     %[[PAGES:.*]] = memref.dim %[[K]], %{{.*}}
// CHECK:     %[[LAST:.*]] = arith.subi %[[PAGES]], %{{.*}} : index
// CHECK:     %[[LO:.*]] = arith.minsi %[[P]], %[[LAST]] : index
// CHECK:     %[[PAGE:.*]] = arith.maxsi %[[LO]], %{{.*}} : index
// CHECK:     memref.load %[[K]][%[[PAGE]], %[[H]], %[[INPAGE]], %[[D]]]
func.func @load_paged(%K: memref<?x?x16x32xf32, strided<[?, ?, ?, 1], offset: ?>>, %bt: memref<?x?xi32, strided<[?, ?], offset: ?>>, %b: index, %h: index, %row: index, %n: index) -> tensor<64x32xf32> {
  %k = attn.load_tile %K[%b, %h, %row] pages(%bt : memref<?x?xi32, strided<[?, ?], offset: ?>>) bounds %n : memref<?x?x16x32xf32, strided<[?, ?, ?, 1], offset: ?>> -> tensor<64x32xf32>
  return %k : tensor<64x32xf32>
}
