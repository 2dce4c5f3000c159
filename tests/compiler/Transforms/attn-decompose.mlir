// RUN: attn-opt %s --split-input-file --attn-decompose | FileCheck %s

// attn-decompose writes the online softmax once, in generic tile ops. With
// c = scale · log2(e):
//   positive scale: T = mask(S),     m' = max(m, c · rowmax T), P = 2^(c·T − b)
//   any scale:      T = mask(c · S), m' = rowmax(T, m),         P = 2^(T − b)
// b = m' unless m' = −inf; alpha = 2^(m − b); l' = alpha · l + rowsum P;
// acc' = alpha · acc + round(P) · V.

// CHECK-LABEL: func.func @positive_scale(
// CHECK-SAME: %[[Q:[^:]*]]: tensor<64x64xbf16>, %[[K:[^:]*]]: tensor<32x64xbf16>, %[[V:[^:]*]]: tensor<32x64xbf16>, %[[M:[^:]*]]: tensor<64xf32>, %[[L:[^:]*]]: tensor<64xf32>, %[[ACC:[^:]*]]: tensor<64x64xf32>, %[[ROW:[^:]*]]: index, %[[COL:[^:]*]]: index, %[[NQ:[^:]*]]: index, %[[NK:[^:]*]]: index, %[[SCALE:[^:]*]]: f32)
// CHECK: %[[LOG2E:.*]] = arith.constant 1.44269502 : f32
// CHECK: %[[C:.*]] = arith.mulf %[[SCALE]], %[[LOG2E]] : f32
// CHECK: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<64x32xf32>
// CHECK: %[[S:.*]] = attn.matmul %[[Q]], %[[K]], %[[ZERO]] transpose_rhs
// The scores are not scaled before the max.
// CHECK-NOT: attn.map
// Only a tile reaching past the last key needs the mask.
// CHECK: %[[END:.*]] = arith.addi %[[COL]], %c32
// CHECK: %[[PAST:.*]] = arith.cmpi sgt, %[[END]], %[[NK]]
// CHECK: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[T:.*]] = scf.if %[[PAST]] -> (tensor<64x32xf32>) {
// CHECK:   %[[MASKED:.*]] = attn.map(%[[S]] : tensor<64x32xf32>) at [%[[ROW]], %[[COL]]] -> tensor<64x32xf32> {
// CHECK:   ^bb0(%[[I:.*]]: index, %[[J:.*]]: index, %[[X:.*]]: f32):
// CHECK:     %[[HIDDEN:.*]] = arith.cmpi sge, %[[J]], %[[NK]] : index
// CHECK:     %[[Y:.*]] = arith.select %[[HIDDEN]], %[[NEGINF]], %[[X]] : f32
// CHECK:     attn.yield %[[Y]] : f32
// CHECK:   scf.yield %[[MASKED]]
// CHECK: } else {
// CHECK:   scf.yield %[[S]]
// The row max of the unscaled scores, then scaled.
// CHECK: %[[NEGINFS:.*]] = arith.constant dense<0xFF800000> : tensor<64xf32>
// CHECK: %[[RMAX:.*]] = attn.reduce <max> %[[T]], %[[NEGINFS]]
// CHECK: %[[NEWMAX:.*]] = attn.map(%[[RMAX]], %[[M]] : tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32> {
// CHECK:   ^bb0(%{{.*}}: index, %[[A:.*]]: f32, %[[B:.*]]: f32):
// CHECK-NEXT: %[[SC:.*]] = arith.mulf %[[A]], %[[C]] : f32
// CHECK-NEXT: %[[MX:.*]] = arith.maxnumf %[[SC]], %[[B]] : f32
// CHECK-NEXT: attn.yield %[[MX]]
// The exponent base: 0 while no key has been seen.
// CHECK: %[[BASE:.*]] = attn.map(%[[NEWMAX]] : tensor<64xf32>) -> tensor<64xf32> {
// CHECK:   arith.cmpf oeq, %{{.*}}, %[[NEGINF]] : f32
// CHECK:   arith.select
// CHECK: %[[ALPHA:.*]] = attn.map(%[[M]], %[[BASE]] : tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32> {
// CHECK:   %[[D:.*]] = arith.subf
// CHECK-NEXT: math.exp2 %[[D]]
// One fused multiply-add and one exp2 per probability.
// CHECK: %[[P:.*]] = attn.map(%[[T]], %[[BASE]] : tensor<64x32xf32>, tensor<64xf32>) -> tensor<64x32xf32> {
// CHECK:   ^bb0(%{{.*}}: index, %{{.*}}: index, %[[PX:.*]]: f32, %[[PB:.*]]: f32):
// CHECK-NEXT: %[[CX:.*]] = arith.mulf %[[PX]], %[[C]] fastmath<contract> : f32
// CHECK-NEXT: %[[E:.*]] = arith.subf %[[CX]], %[[PB]] fastmath<contract> : f32
// CHECK-NEXT: %[[EXP:.*]] = math.exp2 %[[E]] : f32
// CHECK-NEXT: attn.yield %[[EXP]]
// CHECK: %[[ZEROS:.*]] = arith.constant dense<0.000000e+00> : tensor<64xf32>
// CHECK: %[[RSUM:.*]] = attn.reduce <add> %[[P]], %[[ZEROS]]
// CHECK: %[[NEWSUM:.*]] = attn.map(%[[L]], %[[ALPHA]], %[[RSUM]] : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32> {
// CHECK:   ^bb0(%{{.*}}: index, %[[SL:.*]]: f32, %[[SA:.*]]: f32, %[[SR:.*]]: f32):
// CHECK-NEXT: %[[AL:.*]] = arith.mulf %[[SA]], %[[SL]] : f32
// CHECK-NEXT: arith.addf %[[AL]], %[[SR]] : f32
// P is rounded to V's element type for the product.
// CHECK: %[[ROUNDED:.*]] = attn.map(%[[P]] : tensor<64x32xf32>) -> tensor<64x32xbf16> {
// CHECK:   arith.truncf %{{.*}} : f32 to bf16
// CHECK: %[[RESCALED:.*]] = attn.map(%[[ACC]], %[[ALPHA]] : tensor<64x64xf32>, tensor<64xf32>) -> tensor<64x64xf32> {
// CHECK:   arith.mulf
// CHECK: %[[NEWACC:.*]] = attn.matmul %[[ROUNDED]], %[[V]], %[[RESCALED]] : tensor<64x32xbf16>, tensor<32x64xbf16>, tensor<64x64xf32>
// CHECK: return %[[NEWMAX]], %[[NEWSUM]], %[[NEWACC]]
func.func @positive_scale(%q: tensor<64x64xbf16>, %k: tensor<32x64xbf16>, %v: tensor<32x64xbf16>,
                          %m: tensor<64xf32>, %l: tensor<64xf32>, %acc: tensor<64x64xf32>,
                          %row: index, %col: index, %nq: index, %nk: index, %scale: f32)
    -> (tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>) {
  %m1, %l1, %a1 = attn.online_attention %q, %k, %v, %m, %l, %acc at [%row, %col] bounds [%nq, %nk] scale %scale positive_scale
      : tensor<64x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<64xf32>, tensor<64x64xf32>
  return %m1, %l1, %a1 : tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>
}

// -----

// Any scale (it may be negative): the scores are scaled first and the max is
// taken over the scaled scores, starting from m. f32 tiles: P is not
// rounded. The causal mask hides keys past the diagonal too.
// CHECK-LABEL: func.func @general_scale(
// CHECK-SAME: %[[Q:[^:]*]]: tensor<64x64xf32>, %[[K:[^:]*]]: tensor<32x64xf32>, %[[V:[^:]*]]: tensor<32x64xf32>, %[[M:[^:]*]]: tensor<64xf32>, %[[L:[^:]*]]: tensor<64xf32>, %[[ACC:[^:]*]]: tensor<64x64xf32>, %[[ROW:[^:]*]]: index, %[[COL:[^:]*]]: index, %[[NQ:[^:]*]]: index, %[[NK:[^:]*]]: index, %[[SCALE:[^:]*]]: f32)
// CHECK: %[[SHIFT:.*]] = arith.constant 0 : index
// CHECK: %[[C:.*]] = arith.mulf %[[SCALE]], %{{.*}} : f32
// CHECK: %[[S:.*]] = attn.matmul %[[Q]], %[[K]], %{{.*}} transpose_rhs
// CHECK: %[[CS:.*]] = attn.map(%[[S]] : tensor<64x32xf32>) -> tensor<64x32xf32> {
// CHECK:   arith.mulf %{{.*}}, %[[C]] : f32
// The causal mask becomes the library's mask_mod (key j seen when j <= i +
// shift, shift = 0). A tile needs the mask past the last key or where the
// mod's structure does not see all of it: f = i + shift - j is smallest at
// the first query and the last key.
// CHECK: %[[END:.*]] = arith.addi %[[COL]], %c32
// CHECK: %[[PAST:.*]] = arith.cmpi sgt, %[[END]], %[[NK]]
// CHECK: %[[LAST:.*]] = arith.subi %[[END]], %c1
// CHECK: %[[FIRST:.*]] = arith.addi %[[SHIFT]], %[[ROW]]
// CHECK: %[[NEGLAST:.*]] = arith.muli %[[LAST]], %c-1
// CHECK: %[[F:.*]] = arith.addi %[[FIRST]], %[[NEGLAST]]
// CHECK: %[[ALL:.*]] = arith.cmpi sge, %[[F]], %{{.*}}
// CHECK: %[[SEEN:.*]] = arith.andi %true, %[[ALL]]
// CHECK: %[[NOTALL:.*]] = arith.xori %[[SEEN]], %{{.*}}
// CHECK: %[[NEEDS:.*]] = arith.ori %[[PAST]], %[[NOTALL]]
// CHECK: %[[T:.*]] = scf.if %[[NEEDS]] -> (tensor<64x32xf32>) {
// CHECK:   attn.map(%[[CS]] : tensor<64x32xf32>) at [%[[ROW]], %[[COL]]] -> tensor<64x32xf32> {
// CHECK:   ^bb0(%[[I:.*]]: index, %[[J:.*]]: index, %[[X:.*]]: f32):
// CHECK-NEXT: %[[H1:.*]] = arith.cmpi sge, %[[J]], %[[NK]] : index
// The mod, inlined: its yield negated.
// CHECK:      %[[DIAG:.*]] = arith.addi %[[I]], %[[SHIFT]] : index
// CHECK-NEXT: %[[SEES:.*]] = arith.cmpi sle, %[[J]], %[[DIAG]] : index
// CHECK-NEXT: %[[Y:.*]] = arith.andi %{{.*}}, %[[SEES]] : i1
// CHECK:      %[[H2:.*]] = arith.xori %[[Y]], %{{.*}} : i1
// CHECK-NEXT: %[[H:.*]] = arith.ori %[[H1]], %[[H2]] : i1
// CHECK-NEXT: arith.select %[[H]], %{{.*}}, %[[X]] : f32
// CHECK: } else {
// CHECK:   scf.yield %[[CS]]
// CHECK: %[[NEWMAX:.*]] = attn.reduce <max> %[[T]], %[[M]]
// CHECK: %[[BASE:.*]] = attn.map(%[[NEWMAX]] : tensor<64xf32>)
// CHECK: %[[ALPHA:.*]] = attn.map(%[[M]], %[[BASE]]
// CHECK: %[[P:.*]] = attn.map(%[[T]], %[[BASE]] : tensor<64x32xf32>, tensor<64xf32>) -> tensor<64x32xf32> {
// CHECK:   ^bb0(%{{.*}}: index, %{{.*}}: index, %[[PX:.*]]: f32, %[[PB:.*]]: f32):
// CHECK-NEXT: %[[E:.*]] = arith.subf %[[PX]], %[[PB]] fastmath<contract> : f32
// CHECK-NEXT: math.exp2 %[[E]] : f32
// CHECK: attn.reduce <add> %[[P]]
// CHECK: %[[RESCALED:.*]] = attn.map(%[[ACC]], %[[ALPHA]]
// CHECK-NOT: arith.truncf
// CHECK: attn.matmul %[[P]], %[[V]], %[[RESCALED]] : tensor<64x32xf32>, tensor<32x64xf32>, tensor<64x64xf32>
func.func @general_scale(%q: tensor<64x64xf32>, %k: tensor<32x64xf32>, %v: tensor<32x64xf32>,
                         %m: tensor<64xf32>, %l: tensor<64xf32>, %acc: tensor<64x64xf32>,
                         %row: index, %col: index, %nq: index, %nk: index, %scale: f32)
    -> (tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>) {
  %m1, %l1, %a1 = attn.online_attention %q, %k, %v, %m, %l, %acc at [%row, %col] bounds [%nq, %nk] scale %scale mask <causal>
      : tensor<64x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>, tensor<64xf32>, tensor<64x64xf32>
  return %m1, %l1, %a1 : tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>
}

// -----

// A packed tile (rows_per_head) may hold query 0 of a head in any row: the
// tile test assumes the first query is 0, and each score's query is its
// packed row modulo the rows per head. Bottom-right: the diagonal is shifted
// by Nk − Nq.
// CHECK-LABEL: func.func @packed_rows(
// CHECK-SAME: %[[ROW:[^:]*]]: index, %[[COL:[^:]*]]: index, %[[NQ:[^:]*]]: index, %[[NK:[^:]*]]: index, %[[SCALE:[^:]*]]: f32, %[[RPH:[^:]*]]: index)
// CHECK: %[[SHIFT:.*]] = arith.subi %[[NK]], %[[NQ]]
// CHECK: %[[END:.*]] = arith.addi %[[COL]], %c32
// CHECK: %[[ZERO:.*]] = arith.constant 0 : index
// CHECK: %[[LAST:.*]] = arith.subi %[[END]], %c1
// CHECK: %[[FIRST:.*]] = arith.addi %[[SHIFT]], %[[ZERO]]
// CHECK: %[[NEGLAST:.*]] = arith.muli %[[LAST]], %c-1
// CHECK: arith.addi %[[FIRST]], %[[NEGLAST]]
// CHECK: scf.if
// CHECK:   attn.map(%{{.*}} : tensor<64x32xf32>) at [%[[ROW]], %[[COL]]] -> tensor<64x32xf32> {
// CHECK:   ^bb0(%[[I:.*]]: index, %[[J:.*]]: index, %[[X:.*]]: f32):
// CHECK-NEXT: arith.cmpi sge, %[[J]], %[[NK]] : index
// CHECK-NEXT: %[[QUERY:.*]] = arith.remui %[[I]], %[[RPH]] : index
// CHECK:      %[[DIAG:.*]] = arith.addi %[[QUERY]], %[[SHIFT]] : index
// CHECK-NEXT: arith.cmpi sle, %[[J]], %[[DIAG]] : index
func.func @packed_rows(%q: tensor<64x64xf16>, %k: tensor<32x64xf16>, %v: tensor<32x64xf16>,
                       %m: tensor<64xf32>, %l: tensor<64xf32>, %acc: tensor<64x64xf32>,
                       %row: index, %col: index, %nq: index, %nk: index, %scale: f32, %rph: index)
    -> (tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>) {
  %m1, %l1, %a1 = attn.online_attention %q, %k, %v, %m, %l, %acc at [%row, %col] rows_per_head %rph bounds [%nq, %nk] scale %scale mask <causal_bottom_right> positive_scale
      : tensor<64x64xf16>, tensor<32x64xf16>, tensor<32x64xf16>, tensor<64xf32>, tensor<64x64xf32>
  return %m1, %l1, %a1 : tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>
}

// -----

// The epilogue: O = acc · (1 / l), rounded to the output type, and
// LSE = ln 2 · (m + log2 l); a row with l = 0 gets O = 0 and LSE = −inf.
// CHECK-LABEL: func.func @finalize(
// CHECK-SAME: %[[ACC:[^:]*]]: tensor<64x128xf32>, %[[M:[^:]*]]: tensor<64xf32>, %[[L:[^:]*]]: tensor<64xf32>)
// CHECK: %[[INV:.*]] = attn.map(%[[L]] : tensor<64xf32>) -> tensor<64xf32> {
// CHECK:   ^bb0(%{{.*}}: index, %[[X:.*]]: f32):
// CHECK:   %[[EMPTY:.*]] = arith.cmpf oeq, %[[X]], %[[ZERO:.*]] : f32
// CHECK:   %[[R:.*]] = arith.divf %{{.*}}, %[[X]] : f32
// CHECK:   arith.select %[[EMPTY]], %[[ZERO]], %[[R]] : f32
// CHECK: %[[O:.*]] = attn.map(%[[ACC]], %[[INV]] : tensor<64x128xf32>, tensor<64xf32>) -> tensor<64x128xf16> {
// CHECK:   %[[Y:.*]] = arith.mulf
// CHECK-NEXT: %[[T:.*]] = arith.truncf %[[Y]] : f32 to f16
// CHECK-NEXT: attn.yield %[[T]] : f16
// CHECK: %[[LSE:.*]] = attn.map(%[[M]], %[[L]] : tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32> {
// CHECK:   ^bb0(%{{.*}}: index, %[[MM:.*]]: f32, %[[LL:.*]]: f32):
// CHECK:   %[[NONE:.*]] = arith.cmpf oeq, %[[LL]]
// CHECK:   %[[LOG:.*]] = math.log2 %[[LL]] : f32
// CHECK:   %[[LN2:.*]] = arith.constant 0.693147182 : f32
// CHECK:   %[[SUM:.*]] = arith.addf %[[MM]], %[[LOG]] : f32
// CHECK:   %[[NAT:.*]] = arith.mulf %[[SUM]], %[[LN2]] : f32
// CHECK:   %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK:   arith.select %[[NONE]], %[[NEGINF]], %[[NAT]] : f32
// CHECK: return %[[O]], %[[LSE]]
func.func @finalize(%acc: tensor<64x128xf32>, %m: tensor<64xf32>, %l: tensor<64xf32>) -> (tensor<64x128xf16>, tensor<64xf32>) {
  %o, %lse = attn.finalize %acc, %m, %l : tensor<64x128xf32>, tensor<64xf32> -> tensor<64x128xf16>
  return %o, %lse : tensor<64x128xf16>, tensor<64xf32>
}

// -----

// An f32 output is not rounded.
// CHECK-LABEL: func.func @finalize_f32(
// CHECK: attn.map({{.*}}) -> tensor<64x64xf32> {
// CHECK:   %[[Y:.*]] = arith.mulf
// CHECK-NEXT: attn.yield %[[Y]] : f32
// CHECK-NOT: arith.truncf
// CHECK: return
func.func @finalize_f32(%acc: tensor<64x64xf32>, %m: tensor<64xf32>, %l: tensor<64xf32>) -> (tensor<64x64xf32>, tensor<64xf32>) {
  %o, %lse = attn.finalize %acc, %m, %l : tensor<64x64xf32>, tensor<64xf32> -> tensor<64x64xf32>
  return %o, %lse : tensor<64x64xf32>, tensor<64xf32>
}

// -----

// Inside the tile program: the step and the epilogue are replaced where
// they are, the loop carrying the decomposed state.
// CHECK-LABEL: func.func @in_loop(
// CHECK: scf.for {{.*}} iter_args(%[[M:.*]] = %{{.*}}, %[[L:.*]] = %{{.*}}, %[[A:.*]] = %{{.*}})
// CHECK:   %[[S:.*]] = attn.matmul
// CHECK:   %[[NEWMAX:.*]] = attn.map(%{{.*}}, %[[M]] :
// CHECK:   %[[NEWSUM:.*]] = attn.map(%[[L]],
// CHECK:   %[[NEWACC:.*]] = attn.matmul
// CHECK:   scf.yield %[[NEWMAX]], %[[NEWSUM]], %[[NEWACC]]
// CHECK-NOT: attn.online_attention
// CHECK-NOT: attn.finalize
// CHECK: return
func.func @in_loop(%q: tensor<64x64xbf16>, %k: tensor<32x64xbf16>, %v: tensor<32x64xbf16>, %nq: index, %nk: index, %scale: f32)
    -> (tensor<64x64xbf16>, tensor<64xf32>) {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %m0 = arith.constant dense<0xFF800000> : tensor<64xf32>
  %l0 = arith.constant dense<0.0> : tensor<64xf32>
  %a0 = arith.constant dense<0.0> : tensor<64x64xf32>
  %r:3 = scf.for %kv = %c0 to %nk step %c32 iter_args(%m = %m0, %l = %l0, %acc = %a0)
      -> (tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>) {
    %m1, %l1, %a1 = attn.online_attention %q, %k, %v, %m, %l, %acc at [%c0, %kv] bounds [%nq, %nk] scale %scale positive_scale
        : tensor<64x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<64xf32>, tensor<64x64xf32>
    scf.yield %m1, %l1, %a1 : tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>
  }
  %o, %lse = attn.finalize %r#2, %r#0, %r#1 : tensor<64x64xf32>, tensor<64xf32> -> tensor<64x64xbf16>
  return %o, %lse : tensor<64x64xbf16>, tensor<64xf32>
}

// -----

// The backward step, keys-major (the dK/dV loop): Sᵀ = K Qᵀ, the soft-cap
// score_mod in base 2, the mask on tiles past either bound, P = 2^(T − lse2)
// with the row terms broadcast along the rows (1x16), dPᵀ = V dOᵀ, and
// dS = P (dP − delta) times the derivative the compiler formed from the
// region: (1/c)(1 − tanh²)·c. P and dS are rounded to bf16.
// CHECK-LABEL: func.func @score_grad_keys_major
// CHECK: %[[S:.*]] = attn.matmul %arg1, %arg0, %{{.*}} transpose_rhs : tensor<32x64xbf16>, tensor<16x64xbf16>, tensor<32x16xf32>
// CHECK: %[[T:.*]] = attn.map(%[[S]] : tensor<32x16xf32>) at [%arg7, %arg6]
// CHECK:   math.tanh
// CHECK: %[[PASTKEYS:.*]] = arith.cmpi sgt, %{{.*}}, %arg9 : index
// CHECK: %[[PASTQUERIES:.*]] = arith.cmpi sgt, %{{.*}}, %arg8 : index
// CHECK: %[[NEEDS:.*]] = arith.ori %[[PASTKEYS]], %[[PASTQUERIES]] : i1
// CHECK: %[[MASKED:.*]] = scf.if %[[NEEDS]]
// CHECK: %[[LSE2:.*]] = attn.map(%arg4 : tensor<1x16xf32>) -> tensor<1x16xf32>
// CHECK:   arith.cmpf oeq
// CHECK:   arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK: %[[P:.*]] = attn.map(%[[MASKED]], %[[LSE2]] : tensor<32x16xf32>, tensor<1x16xf32>) -> tensor<32x16xf32>
// CHECK:   math.exp2
// CHECK: %[[DP:.*]] = attn.matmul %arg2, %arg3, %{{.*}} transpose_rhs : tensor<32x64xbf16>, tensor<16x64xbf16>, tensor<32x16xf32>
// CHECK: %[[DS:.*]] = attn.map(%[[P]], %[[DP]], %arg5, %[[S]] : tensor<32x16xf32>, tensor<32x16xf32>, tensor<1x16xf32>, tensor<32x16xf32>) at [%arg7, %arg6]
// CHECK: ^bb0(%{{.*}}: index, %{{.*}}: index, %[[PE:.*]]: f32, %[[DPE:.*]]: f32, %[[DE:.*]]: f32, %[[SE:.*]]: f32):
// CHECK:   %[[DIFF:.*]] = arith.subf %[[DPE]], %[[DE]]
// CHECK:   %[[G:.*]] = arith.mulf %[[PE]], %[[DIFF]]
// CHECK:   %[[TANH:.*]] = math.tanh
// CHECK:   %[[SQ:.*]] = arith.mulf %[[TANH]], %[[TANH]]
// CHECK:   %[[ONEMINUS:.*]] = arith.subf %{{.*}}, %[[SQ]]
// CHECK:   %[[DER:.*]] = arith.mulf %{{.*}}, %[[ONEMINUS]]
// CHECK:   %[[DERC:.*]] = arith.mulf %[[DER]], %arg11
// CHECK:   %[[R:.*]] = arith.mulf %[[G]], %[[DERC]]
// CHECK:   attn.yield %[[R]]
// CHECK: attn.map(%[[P]] : tensor<32x16xf32>) -> tensor<32x16xbf16>
// CHECK: attn.map(%[[DS]] : tensor<32x16xf32>) -> tensor<32x16xbf16>
func.func @score_grad_keys_major(%q: tensor<16x64xbf16>, %k: tensor<32x64xbf16>, %v: tensor<32x64xbf16>, %do: tensor<16x64xbf16>, %lse: tensor<1x16xf32>, %delta: tensor<1x16xf32>, %row: index, %kv: index, %nq: index, %nk: index, %s: f32, %cap: f32) -> (tensor<32x16xbf16>, tensor<32x16xbf16>) {
  %p, %ds = attn.score_grad %q, %k, %v, %do, %lse, %delta at [%row, %kv] bounds [%nq, %nk] scale %s keys_major batch %row head %row captures(%cap : f32) score_mod {
  ^bb0(%x: f32, %b: index, %h: index, %i: index, %j: index, %c: f32):
    %y = arith.divf %x, %c : f32
    %t = math.tanh %y : f32
    %z = arith.mulf %t, %c : f32
    attn.yield %z : f32
  } : tensor<16x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<16x64xbf16>, tensor<1x16xf32> -> tensor<32x16xbf16>
  return %p, %ds : tensor<32x16xbf16>, tensor<32x16xbf16>
}

// -----

// A mask_mod that reads a capture (sorted document ids): its tile test --
// are all of the tile's (query, key) pairs seen? -- loads the ids at the
// tile's corners, so it is built before the product, to be in flight during
// it; the scf.if uses it after.
// CHECK-LABEL: func.func @tile_test_loads_first(
// CHECK-COUNT-4: memref.load %arg11[
// CHECK: %[[NEEDS:.*]] = arith.ori
// CHECK-NOT: memref.load
// CHECK: attn.matmul
// CHECK: scf.if %[[NEEDS]]
func.func @tile_test_loads_first(%q: tensor<64x64xbf16>, %k: tensor<32x64xbf16>, %v: tensor<32x64xbf16>,
                                 %m: tensor<64xf32>, %l: tensor<64xf32>, %acc: tensor<64x64xf32>,
                                 %row: index, %col: index, %nq: index, %nk: index, %scale: f32,
                                 %docs: memref<?xi32>, %batch: index, %head: index)
    -> (tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>) {
  %m1, %l1, %a1 = attn.online_attention %q, %k, %v, %m, %l, %acc at [%row, %col] bounds [%nq, %nk] scale %scale batch %batch head %head captures(%docs : memref<?xi32>) mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index, %d: memref<?xi32>):
    %di = memref.load %d[%i] {attn.non_decreasing} : memref<?xi32>
    %dj = memref.load %d[%j] {attn.non_decreasing} : memref<?xi32>
    %same = arith.cmpi eq, %di, %dj : i32
    attn.yield %same : i1
  } : tensor<64x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<64xf32>, tensor<64x64xf32>
  return %m1, %l1, %a1 : tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>
}

// -----

// A score_mod that loads at (q_idx, kv_idx) (a bias table) beside a causal
// mask_mod that loads nothing: the table is gathered into a tile before the
// product (in flight during it), with the positions clamped into the table;
// the score map reads that tile instead of loading (ALiBi's slope at the
// head alone stays in the map); the mask map compares unclamped positions.
// CHECK-LABEL: func.func @score_mod_loads_first(
// CHECK: %[[BIAS:.*]] = attn.map at [%arg6, %arg7] -> tensor<64x32xf32> {
// CHECK-NEXT: ^bb0(%[[I:.*]]: index, %[[J:.*]]: index):
// CHECK-NEXT:   %[[CI:.*]] = arith.minsi %[[I]],
// CHECK-NEXT:   %[[CJ:.*]] = arith.minsi %[[J]],
// CHECK-NEXT:   %[[B:.*]] = memref.load %arg11[%[[CI]], %[[CJ]]]
// CHECK-NEXT:   attn.yield %[[B]] : f32
// CHECK: %[[S:.*]] = attn.matmul
// CHECK: attn.map(%[[S]], %[[BIAS]] : tensor<64x32xf32>, tensor<64x32xf32>) at [%arg6, %arg7]
// CHECK-NEXT: ^bb0(%{{.*}}: index, %{{.*}}: index, %[[X:.*]]: f32, %[[BE:.*]]: f32):
// CHECK:   memref.load %arg12[
// CHECK-NOT: memref.load
// CHECK:   arith.addf %{{.*}}, %[[BE]] : f32
// CHECK: scf.if
// CHECK: attn.map
// CHECK-NOT: arith.minsi
// CHECK: arith.cmpi sle
func.func @score_mod_loads_first(%q: tensor<64x64xbf16>, %k: tensor<32x64xbf16>, %v: tensor<32x64xbf16>,
                                 %m: tensor<64xf32>, %l: tensor<64xf32>, %acc: tensor<64x64xf32>,
                                 %row: index, %col: index, %nq: index, %nk: index, %scale: f32,
                                 %bias: memref<?x?xf32>, %slopes: memref<?xf32>, %batch: index, %head: index)
    -> (tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>) {
  %m1, %l1, %a1 = attn.online_attention %q, %k, %v, %m, %l, %acc at [%row, %col] bounds [%nq, %nk] scale %scale batch %batch head %head captures(%bias, %slopes : memref<?x?xf32>, memref<?xf32>) score_mod {
  ^bb0(%x: f32, %b: index, %h: index, %i: index, %j: index, %t: memref<?x?xf32>, %s: memref<?xf32>):
    %slope = memref.load %s[%h] : memref<?xf32>
    %y = arith.mulf %x, %slope : f32
    %tb = memref.load %t[%i, %j] : memref<?x?xf32>
    %z = arith.addf %y, %tb : f32
    attn.yield %z : f32
  } mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index, %t: memref<?x?xf32>, %s: memref<?xf32>):
    %seen = arith.cmpi sle, %j, %i : index
    attn.yield %seen : i1
  } : tensor<64x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<64xf32>, tensor<64x64xf32>
  return %m1, %l1, %a1 : tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>
}
