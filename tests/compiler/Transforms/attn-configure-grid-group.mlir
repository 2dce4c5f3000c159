// RUN: attn-opt %s --attn-configure | FileCheck %s
// RUN: attn-opt %s --attn-configure="target=host" | FileCheck %s --check-prefix=HOST

// A score_mod reading a table per score alike for every (batch, head) (an
// (N, N) bias: indices from q_idx and kv_idx alone) groups the grid's
// (batch, head) pairs query tile by query tile (grid_group_ctas); any other
// capture leaves the query tile the fastest grid index (the attribute at
// its default, not printed). Never on the host, which has no grid.

!d128 = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!table = memref<?x?xf32, strided<[?, ?], offset: ?>>
!bqk = memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>
!slopes = memref<?xf32, strided<[?], offset: ?>>
!ids = memref<?xi32, strided<[?], offset: ?>>

// CHECK-LABEL: func.func @bias(
// CHECK-SAME: reverse_grid = true,
// CHECK-SAME: grid_group_ctas = 256>
// HOST-LABEL: func.func @bias(
// HOST-NOT: grid_group_ctas
// HOST-SAME: mapping = "host"
func.func @bias(%q: !d128, %k: !d128, %v: !d128, %o: !d128, %t: !table) {
  attn.sdpa %q, %k, %v into %o mask <causal> captures(%t : !table) score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %m: !table):
    %x = memref.load %m[%i, %j] : !table
    %y = arith.addf %s, %x : f32
    attn.yield %y : f32
  } : !d128, !d128, !d128 -> !d128
  return
}

// The indices through arithmetic (a shifted diagonal) still count.
// CHECK-LABEL: func.func @bias_shifted(
// CHECK-SAME: grid_group_ctas = 256>
func.func @bias_shifted(%q: !d128, %k: !d128, %v: !d128, %o: !d128, %t: !table) {
  attn.sdpa %q, %k, %v into %o captures(%t : !table) score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %m: !table):
    %c1 = arith.constant 1 : index
    %i1 = arith.addi %i, %c1 : index
    %x = memref.load %m[%i1, %j] : !table
    %y = arith.addf %s, %x : f32
    attn.yield %y : f32
  } : !d128, !d128, !d128 -> !d128
  return
}

// One table per batch: its pairs read different rows.
// CHECK-LABEL: func.func @bias_per_batch(
// CHECK-NOT: grid_group_ctas
// CHECK: return
func.func @bias_per_batch(%q: !d128, %k: !d128, %v: !d128, %o: !d128, %t: !bqk) {
  attn.sdpa %q, %k, %v into %o captures(%t : !bqk) score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %m: !bqk):
    %x = memref.load %m[%b, %i, %j] : !bqk
    %y = arith.addf %s, %x : f32
    attn.yield %y : f32
  } : !d128, !d128, !d128 -> !d128
  return
}

// T5's buckets: a row per head.
// CHECK-LABEL: func.func @buckets_per_head(
// CHECK-NOT: grid_group_ctas
// CHECK: return
func.func @buckets_per_head(%q: !d128, %k: !d128, %v: !d128, %o: !d128, %t: !table) {
  attn.sdpa %q, %k, %v into %o captures(%t : !table) score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %m: !table):
    %d = arith.subi %i, %j : index
    %x = memref.load %m[%h, %d] : !table
    %y = arith.addf %s, %x : f32
    attn.yield %y : f32
  } : !d128, !d128, !d128 -> !d128
  return
}

// ALiBi's slope per head: no table per score.
// CHECK-LABEL: func.func @alibi(
// CHECK-NOT: grid_group_ctas
// CHECK: return
func.func @alibi(%q: !d128, %k: !d128, %v: !d128, %o: !d128, %sl: !slopes) {
  attn.sdpa %q, %k, %v into %o mask <causal> captures(%sl : !slopes) score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %m: !slopes):
    %slope = memref.load %m[%h] : !slopes
    %d = arith.subi %j, %i : index
    %di = arith.index_cast %d : index to i32
    %df = arith.sitofp %di : i32 to f32
    %x = arith.mulf %slope, %df : f32
    %y = arith.addf %s, %x : f32
    attn.yield %y : f32
  } : !d128, !d128, !d128 -> !d128
  return
}

// Document ids: one position per load.
// CHECK-LABEL: func.func @document(
// CHECK-NOT: grid_group_ctas
// CHECK: return
func.func @document(%q: !d128, %k: !d128, %v: !d128, %o: !d128, %qd: !ids, %kd: !ids) {
  attn.sdpa %q, %k, %v into %o captures(%qd, %kd : !ids, !ids) mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index, %mq: !ids, %mk: !ids):
    %a = memref.load %mq[%i] : !ids
    %c = memref.load %mk[%j] : !ids
    %e = arith.cmpi eq, %a, %c : i32
    attn.yield %e : i1
  } : !d128, !d128, !d128 -> !d128
  return
}

// Document ids that never decrease (the named document mask's loads):
// each query tile's keys are a run found in data, so its work varies by
// tile; every (batch, head) of a query tile is launched together (one
// group of all pairs), reversed as causal grids are.
// CHECK-LABEL: func.func @document_runs(
// CHECK-SAME: reverse_grid = true,
// CHECK-SAME: grid_group_ctas = 1073741824>
// HOST-LABEL: func.func @document_runs(
// HOST-NOT: grid_group_ctas
// HOST-SAME: mapping = "host"
func.func @document_runs(%q: !d128, %k: !d128, %v: !d128, %o: !d128, %qd: !ids, %kd: !ids) {
  attn.sdpa %q, %k, %v into %o mask <causal> captures(%qd, %kd : !ids, !ids) mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index, %mq: !ids, %mk: !ids):
    %a = memref.load %mq[%i] {attn.non_decreasing} : !ids
    %c = memref.load %mk[%j] {attn.non_decreasing} : !ids
    %e = arith.cmpi eq, %a, %c : i32
    attn.yield %e : i1
  } : !d128, !d128, !d128 -> !d128
  return
}

// A non-decreasing load that forms no run (compared with a constant): the
// keys do not come from a search of the ids; the query tile stays fastest.
// CHECK-LABEL: func.func @sorted_ids_no_run(
// CHECK-NOT: grid_group_ctas
// CHECK: return
func.func @sorted_ids_no_run(%q: !d128, %k: !d128, %v: !d128, %o: !d128, %kd: !ids) {
  attn.sdpa %q, %k, %v into %o captures(%kd : !ids) mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index, %mk: !ids):
    %c = memref.load %mk[%j] {attn.non_decreasing} : !ids
    %z = arith.constant 3 : i32
    %e = arith.cmpi slt, %c, %z : i32
    attn.yield %e : i1
  } : !d128, !d128, !d128 -> !d128
  return
}
