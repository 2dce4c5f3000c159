// RUN: attn-opt %s --split-input-file --attn-nv-pipeline-copies | FileCheck %s

// attn-nv-pipeline-copies turns the synchronous copies of the K/V loop into
// a pipeline over `stages` buffers, the loop counting tiles: the first
// tile's copies before the loop (only when there is a tile), each next
// tile's copies into the next stage during the current tile's math.

// Plain schedule (mma.sync, FlashAttention-2): the copies of tile j + 1
// start before the wait for tile j. Q's fragments are read once Q's group
// is done. Three stages: one barrier per tile.
#cfg = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 64, block_n = 64, warps = 4, min_ctas_per_sm = 1, stages = 3, q_in_registers = true, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
#acc = #attn_nv.acc<warps = 4>
#opa = #attn_nv.operand_a<warps = 4>
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!s = !attn_nv.smem<64x64xbf16, padded>

// CHECK-LABEL: func.func @plain(
// CHECK-SAME: %[[LO:[^:]*]]: index, %[[HI:[^:]*]]: index, %[[N:[^:]*]]: index)
// CHECK: attn.tile_grid (%[[B:.*]], %[[H:.*]], %{{.*}}) in
// CHECK: %[[QS:.*]] = attn_nv.alloc_shared : !attn_nv.smem<64x64xbf16, padded>
// CHECK: %[[KS:.*]] = attn_nv.alloc_shared : !attn_nv.smem<3x64x64xbf16, padded>
// CHECK: %[[VS:.*]] = attn_nv.alloc_shared : !attn_nv.smem<3x64x64xbf16, padded>
// CHECK: attn_nv.copy_async %arg0[{{.*}}] bounds %[[N]] into %[[QS]]
// CHECK-NOT: nvvm.cp.async.wait.group
// CHECK: nvvm.cp.async.commit.group
// CHECK-NEXT: %[[ANY:.*]] = arith.cmpi slt, %[[LO]], %[[HI]] : index
// CHECK-NEXT: scf.if %[[ANY]] {
// CHECK-NEXT:   %[[K0:.*]] = attn_nv.slot %[[KS]][%[[C0:.*]]] : !attn_nv.smem<3x64x64xbf16, padded> -> !attn_nv.smem<64x64xbf16, padded>
// CHECK-NEXT:   attn_nv.copy_async %arg1[%[[B]], %[[H]], %[[LO]]] bounds %[[N]] into %[[K0]]
// CHECK-NEXT:   %[[V0:.*]] = attn_nv.slot %[[VS]][%[[C0]]]
// CHECK-NEXT:   attn_nv.copy_async %arg2[%[[B]], %[[H]], %[[LO]]] bounds %[[N]] into %[[V0]]
// CHECK-NEXT: }
// CHECK-NEXT: nvvm.cp.async.commit.group
// Q is done when at most the first K/V group is in flight.
// CHECK-NEXT: nvvm.cp.async.wait.group 1
// CHECK-NEXT: nvvm.barrier0
// CHECK-NEXT: %[[QA:.*]] = attn_nv.load_operand %[[QS]]
// CHECK-NEXT: %[[SPAN:.*]] = arith.subi %[[HI]], %[[LO]] : index
// CHECK-NEXT: %[[TILES:.*]] = arith.ceildivsi %[[SPAN]], %c64 : index
// CHECK-NEXT: %[[ITERS:.*]] = arith.maxsi %[[TILES]], %[[C0]] : index
// CHECK-NEXT: scf.for %[[IT:.*]] = %[[C0]] to %[[ITERS]] step %[[C1:.*]] iter_args(
// CHECK-NEXT:   %[[OFF:.*]] = arith.muli %[[IT]], %c64 : index
// CHECK-NEXT:   %[[KV:.*]] = arith.addi %[[LO]], %[[OFF]] : index
// CHECK-NEXT:   %[[NEXT:.*]] = arith.addi %[[KV]], %c64 : index
// CHECK-NEXT:   %[[NEXTIT:.*]] = arith.addi %[[IT]], %[[C1]] : index
// CHECK-NEXT:   %[[MORE:.*]] = arith.cmpi slt, %[[NEXT]], %[[HI]] : index
// CHECK-NEXT:   scf.if %[[MORE]] {
// CHECK-NEXT:     %[[K1:.*]] = attn_nv.slot %[[KS]][%[[NEXTIT]]]
// The forward's loop copies keep hoisted per-chunk addresses (no `strided`).
// CHECK-NEXT:     attn_nv.copy_async %arg1[%[[B]], %[[H]], %[[NEXT]]] bounds %[[N]] into %[[K1]] :
// CHECK-NEXT:     %[[V1:.*]] = attn_nv.slot %[[VS]][%[[NEXTIT]]]
// CHECK-NEXT:     attn_nv.copy_async %arg2[%[[B]], %[[H]], %[[NEXT]]] bounds %[[N]] into %[[V1]]
// CHECK-NEXT:   }
// CHECK-NEXT:   nvvm.cp.async.commit.group
// CHECK-NEXT:   nvvm.cp.async.wait.group 1
// CHECK-NEXT:   nvvm.barrier0
// The products read this iteration's stage.
// CHECK-DAG:    %[[K:.*]] = attn_nv.slot %[[KS]][%[[IT]]]
// CHECK-DAG:    %[[V:.*]] = attn_nv.slot %[[VS]][%[[IT]]]
// CHECK:        attn_nv.mma %[[QA]], %[[K]], %{{.*}} transpose_rhs
// CHECK:        %[[O:.*]] = attn_nv.mma %{{.*}}, %[[V]], %{{.*}} :
// CHECK-NEXT:   scf.yield %[[O]]
// CHECK-NOT: attn_nv.copy_async
// CHECK: return
func.func @plain(%Q: !t, %K: !t, %V: !t, %lo: index, %hi: index, %n: index) attributes {attn.config = #cfg} {
  %c64 = arith.constant 64 : index
  %zs = arith.constant dense<0.0> : tensor<64x64xf32, #acc>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %qs = attn_nv.alloc_shared : !s
    %ks = attn_nv.alloc_shared : !s
    %vs = attn_nv.alloc_shared : !s
    attn_nv.copy_async %Q[%b, %h, %t] bounds %n into %qs : !t, !s
    nvvm.cp.async.commit.group
    nvvm.cp.async.wait.group 0
    nvvm.barrier0
    %qa = attn_nv.load_operand %qs : !s -> tensor<64x64xbf16, #opa>
    %r = scf.for %kv = %lo to %hi step %c64 iter_args(%acc = %zs) -> (tensor<64x64xf32, #acc>) {
      attn_nv.copy_async %K[%b, %h, %kv] bounds %n into %ks : !t, !s
      nvvm.cp.async.commit.group
      nvvm.cp.async.wait.group 0
      nvvm.barrier0
      attn_nv.copy_async %V[%b, %h, %kv] bounds %n into %vs : !t, !s
      nvvm.cp.async.commit.group
      nvvm.cp.async.wait.group 0
      nvvm.barrier0
      %s = attn_nv.mma %qa, %ks, %zs transpose_rhs : tensor<64x64xbf16, #opa>, !s, tensor<64x64xf32, #acc>
      %pa = attn_nv.convert_layout %s : tensor<64x64xf32, #acc> -> tensor<64x64xbf16, #opa>
      %o = attn_nv.mma %pa, %vs, %acc : tensor<64x64xbf16, #opa>, !s, tensor<64x64xf32, #acc>
      nvvm.barrier0
      scf.yield %o : tensor<64x64xf32, #acc>
    }
  }
  return
}

// -----

// Two stages, wgmma with the plain schedule: the stage a prefetch
// overwrites was read in the iteration before, whose products all retired
// before this iteration's barrier; the copies follow that barrier (behind
// QKᵀ), so no second barrier ends the tile. wgmma: a proxy fence after
// each wait.
#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 64, block_n = 64, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
#acc = #attn_nv.acc<warps = 4>
!t = memref<?x?x?x256xbf16, strided<[?, ?, ?, 1], offset: ?>>
!s = !attn_nv.smem<64x256xbf16, swizzle_128b>

// CHECK-LABEL: func.func @two_stages(
// CHECK: %[[QS:.*]] = attn_nv.alloc_shared : !attn_nv.smem<64x256xbf16, swizzle_128b>
// CHECK: %[[KS:.*]] = attn_nv.alloc_shared : !attn_nv.smem<2x64x256xbf16, swizzle_128b>
// CHECK: scf.if
// CHECK: nvvm.cp.async.commit.group
// CHECK-NEXT: nvvm.cp.async.wait.group 1
// CHECK-NEXT: nvvm.fence.proxy
// CHECK-NEXT: nvvm.barrier0
// CHECK: scf.for %[[IT:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(
// CHECK:      nvvm.cp.async.wait.group 0
// CHECK-NEXT: nvvm.fence.proxy
// CHECK-NEXT: nvvm.barrier0
// CHECK-NEXT: %[[K:.*]] = attn_nv.slot %[[KS]][%[[IT]]] : !attn_nv.smem<2x64x256xbf16, swizzle_128b> -> !attn_nv.smem<64x256xbf16, swizzle_128b>
// CHECK-NEXT: %[[S0:.*]] = attn_nv.wgmma %[[QS]], %[[K]], %{{.*}} transpose_rhs
// CHECK-NEXT: arith.cmpi slt
// CHECK-NEXT: scf.if
// CHECK:      nvvm.cp.async.commit.group
// CHECK-NEXT: %[[S:.*]] = attn_nv.wgmma_wait %[[S0]]
// CHECK-NEXT: scf.yield %[[S]]
func.func @two_stages(%Q: !t, %K: !t, %lo: index, %hi: index, %n: index) attributes {attn.config = #cfg} {
  %c64 = arith.constant 64 : index
  %zs = arith.constant dense<0.0> : tensor<64x64xf32, #acc>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %qs = attn_nv.alloc_shared : !s
    %ks = attn_nv.alloc_shared : !s
    attn_nv.copy_async %Q[%b, %h, %t] bounds %n into %qs : !t, !s
    nvvm.cp.async.commit.group
    nvvm.cp.async.wait.group 0
    nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
    nvvm.barrier0
    %r = scf.for %kv = %lo to %hi step %c64 iter_args(%acc = %zs) -> (tensor<64x64xf32, #acc>) {
      attn_nv.copy_async %K[%b, %h, %kv] bounds %n into %ks : !t, !s
      nvvm.cp.async.commit.group
      nvvm.cp.async.wait.group 0
      nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
      nvvm.barrier0
      %s0 = attn_nv.wgmma %qs, %ks, %zs transpose_rhs : !s, !s, tensor<64x64xf32, #acc>
      %s = attn_nv.wgmma_wait %s0 {pending = 0 : i64} : tensor<64x64xf32, #acc>
      nvvm.barrier0
      scf.yield %s : tensor<64x64xf32, #acc>
    }
  }
  return
}

// -----

// Three stages, wgmma with the plain schedule (a paged decode kernel,
// TilePolicy): nothing is in flight past an iteration, so the copies run
// two tiles ahead. The prologue issues tiles 0 and 1 (a group each, each
// only when there is that tile), Q is done with two groups pending; the
// header waits for tile it with one group (tile it + 1) pending, and tile
// it + 2 goes into stage it + 2, whose last reader (iteration it - 1)
// finished before this iteration's barrier: no barrier ends the tile.
#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 64, block_n = 64, warps = 4, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
#acc = #attn_nv.acc<warps = 4>
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!s = !attn_nv.smem<64x64xbf16, swizzle_128b>

// CHECK-LABEL: func.func @two_tiles_ahead(
// CHECK-SAME: %[[LO:[^:]*]]: index, %[[HI:[^:]*]]: index, %[[N:[^:]*]]: index)
// CHECK: %[[QS:.*]] = attn_nv.alloc_shared : !attn_nv.smem<64x64xbf16, swizzle_128b>
// CHECK: %[[KS:.*]] = attn_nv.alloc_shared : !attn_nv.smem<3x64x64xbf16, swizzle_128b>
// CHECK: nvvm.cp.async.commit.group
// CHECK-NEXT: %[[ANY0:.*]] = arith.cmpi slt, %[[LO]], %[[HI]]
// CHECK-NEXT: scf.if %[[ANY0]] {
// CHECK-NEXT:   %[[K0:.*]] = attn_nv.slot %[[KS]][%{{.*}}]
// CHECK-NEXT:   attn_nv.copy_async %{{.*}}[%{{.*}}, %{{.*}}, %[[LO]]] bounds %[[N]] into %[[K0]]
// CHECK-NEXT: }
// CHECK-NEXT: nvvm.cp.async.commit.group
// CHECK-NEXT: %[[AT1:.*]] = arith.addi %[[LO]], %{{.*}}
// CHECK-NEXT: %[[S1:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[ANY1:.*]] = arith.cmpi slt, %[[AT1]], %[[HI]]
// CHECK-NEXT: scf.if %[[ANY1]] {
// CHECK-NEXT:   %[[K1:.*]] = attn_nv.slot %[[KS]][%[[S1]]]
// CHECK-NEXT:   attn_nv.copy_async %{{.*}}[%{{.*}}, %{{.*}}, %[[AT1]]] bounds %[[N]] into %[[K1]]
// CHECK-NEXT: }
// CHECK-NEXT: nvvm.cp.async.commit.group
// CHECK-NEXT: nvvm.cp.async.wait.group 2
// CHECK-NEXT: nvvm.fence.proxy
// CHECK-NEXT: nvvm.barrier0
// CHECK: scf.for %[[IT:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(
// CHECK-NEXT:   arith.muli %[[IT]]
// CHECK-NEXT:   %[[KV:.*]] = arith.addi %[[LO]]
// CHECK-NEXT:   %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT:   %[[AHEAD:.*]] = arith.muli %{{.*}}, %[[TWO]]
// CHECK-NEXT:   %[[NEXT:.*]] = arith.addi %[[KV]], %[[AHEAD]]
// CHECK-NEXT:   %[[NEXTIT:.*]] = arith.addi %[[IT]], %[[TWO]]
// CHECK-NEXT:   nvvm.cp.async.wait.group 1
// CHECK-NEXT:   nvvm.fence.proxy
// CHECK-NEXT:   nvvm.barrier0
// CHECK-NEXT:   %[[K:.*]] = attn_nv.slot %[[KS]][%[[IT]]]
// CHECK-NEXT:   %[[S0:.*]] = attn_nv.wgmma %[[QS]], %[[K]], %{{.*}} transpose_rhs
// CHECK-NEXT:   %[[MORE:.*]] = arith.cmpi slt, %[[NEXT]], %[[HI]]
// CHECK-NEXT:   scf.if %[[MORE]] {
// CHECK-NEXT:     %[[KN:.*]] = attn_nv.slot %[[KS]][%[[NEXTIT]]]
// CHECK-NEXT:     attn_nv.copy_async %{{.*}}[%{{.*}}, %{{.*}}, %[[NEXT]]] bounds %[[N]] into %[[KN]]
// CHECK-NEXT:   }
// CHECK-NEXT:   nvvm.cp.async.commit.group
// CHECK-NEXT:   %[[S:.*]] = attn_nv.wgmma_wait %[[S0]]
// CHECK-NEXT:   scf.yield %[[S]]
func.func @two_tiles_ahead(%Q: !t, %K: !t, %lo: index, %hi: index, %n: index) attributes {attn.config = #cfg} {
  %c64 = arith.constant 64 : index
  %zs = arith.constant dense<0.0> : tensor<64x64xf32, #acc>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %qs = attn_nv.alloc_shared : !s
    %ks = attn_nv.alloc_shared : !s
    attn_nv.copy_async %Q[%b, %h, %t] bounds %n into %qs : !t, !s
    nvvm.cp.async.commit.group
    nvvm.cp.async.wait.group 0
    nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
    nvvm.barrier0
    %r = scf.for %kv = %lo to %hi step %c64 iter_args(%acc = %zs) -> (tensor<64x64xf32, #acc>) {
      attn_nv.copy_async %K[%b, %h, %kv] bounds %n into %ks : !t, !s
      nvvm.cp.async.commit.group
      nvvm.cp.async.wait.group 0
      nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
      nvvm.barrier0
      %s0 = attn_nv.wgmma %qs, %ks, %zs transpose_rhs : !s, !s, tensor<64x64xf32, #acc>
      %s = attn_nv.wgmma_wait %s0 {pending = 0 : i64} : tensor<64x64xf32, #acc>
      nvvm.barrier0
      scf.yield %s : tensor<64x64xf32, #acc>
    }
  }
  return
}

// -----

// A captured table's tile (attn-nv-stage-tables) is staged and copied with
// K: the first tile's in the prologue's group, the next tile's behind QKᵀ
// into the next stage; its reads take this iteration's stage.
#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 64, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "pv_in_flight", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
#acc = #attn_nv.acc<warps = 8>
!t = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!table = memref<?x?xf32, strided<[?, ?], offset: ?>>
!q = !attn_nv.smem<128x128xbf16, swizzle_128b>
!k = !attn_nv.smem<64x128xbf16, swizzle_128b>
!b = !attn_nv.smem<128x64xf32, swizzle_128b>

// CHECK-LABEL: func.func @table(
// CHECK-SAME: %[[BIAS:[^:]*]]: memref<?x?xf32, strided<[?, ?], offset: ?>>, %[[LO:[^:]*]]: index, %[[HI:[^:]*]]: index, %[[N:[^:]*]]: index)
// CHECK-DAG: %[[BS:.*]] = attn_nv.alloc_shared : !attn_nv.smem<3x128x64xf32, swizzle_128b>
// CHECK-DAG: %[[KS:.*]] = attn_nv.alloc_shared : !attn_nv.smem<3x64x128xbf16, swizzle_128b>
// CHECK: scf.if %{{.*}} {
// CHECK-NEXT:   %[[K0:.*]] = attn_nv.slot %[[KS]][%[[C0:.*]]] :
// CHECK-NEXT:   attn_nv.copy_async %arg1[%{{.*}}, %{{.*}}, %[[LO]]] bounds %[[N]] into %[[K0]]
// CHECK-NEXT:   %[[B0:.*]] = attn_nv.slot %[[BS]][%[[C0]]] :
// CHECK-NEXT:   attn_nv.copy_table_async %[[BIAS]][%[[ROW:.*]], %[[LO]]] bounds %[[N]], %[[N]] into %[[B0]]
// CHECK-NEXT: }
// CHECK-NEXT: nvvm.cp.async.commit.group
// CHECK:      scf.for %[[IT:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(
// CHECK:        %[[NEXT:.*]] = arith.addi %[[KV:.*]], %c64
// CHECK:        %[[NEXTIT:.*]] = arith.addi %[[IT]], %{{.*}}
// CHECK-NEXT:   nvvm.cp.async.wait.group 0
// CHECK-NEXT:   nvvm.fence.proxy
// CHECK-NEXT:   nvvm.barrier0
// CHECK-DAG:    %[[K:.*]] = attn_nv.slot %[[KS]][%[[IT]]]
// CHECK-DAG:    %[[B:.*]] = attn_nv.slot %[[BS]][%[[IT]]]
// CHECK:        attn_nv.wgmma %{{.*}}, %[[K]]
// CHECK-NEXT:   %[[MORE:.*]] = arith.cmpi slt, %[[NEXT]], %[[HI]]
// CHECK-NEXT:   scf.if %[[MORE]] {
// CHECK-NEXT:     %[[K1:.*]] = attn_nv.slot %[[KS]][%[[NEXTIT]]]
// CHECK-NEXT:     attn_nv.copy_async %arg1[%{{.*}}, %{{.*}}, %[[NEXT]]] bounds %[[N]] into %[[K1]]
// CHECK-NEXT:     %[[B1:.*]] = attn_nv.slot %[[BS]][%[[NEXTIT]]]
// CHECK-NEXT:     attn_nv.copy_table_async %[[BIAS]][%[[ROW]], %[[NEXT]]] bounds %[[N]], %[[N]] into %[[B1]]
// CHECK-NEXT:   }
// CHECK-NEXT:   nvvm.cp.async.commit.group
// CHECK-NEXT:   attn_nv.wgmma_wait
// CHECK-NEXT:   attn_nv.load_shared %[[B]]
func.func @table(%Q: !t, %K: !t, %bias: !table, %lo: index, %hi: index, %n: index) attributes {attn.config = #cfg} {
  %c64 = arith.constant 64 : index
  %zs = arith.constant dense<0.0> : tensor<128x64xf32, #acc>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %bs = attn_nv.alloc_shared : !b
    %qs = attn_nv.alloc_shared : !q
    %ks = attn_nv.alloc_shared : !k
    attn_nv.copy_async %Q[%b, %h, %t] bounds %n into %qs : !t, !q
    nvvm.cp.async.commit.group
    nvvm.cp.async.wait.group 0
    nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
    nvvm.barrier0
    %r = scf.for %kv = %lo to %hi step %c64 iter_args(%acc = %zs) -> (tensor<128x64xf32, #acc>) {
      attn_nv.copy_async %K[%b, %h, %kv] bounds %n into %ks : !t, !k
      nvvm.cp.async.commit.group
      nvvm.cp.async.wait.group 0
      nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
      nvvm.barrier0
      attn_nv.copy_table_async %bias[%t, %kv] bounds %n, %n into %bs : !table, !b
      nvvm.cp.async.commit.group
      nvvm.cp.async.wait.group 0
      nvvm.barrier0
      %s0 = attn_nv.wgmma %qs, %ks, %zs transpose_rhs : !q, !k, tensor<128x64xf32, #acc>
      %s = attn_nv.wgmma_wait %s0 {pending = 0 : i64} : tensor<128x64xf32, #acc>
      %g = attn_nv.load_shared %bs : !b -> tensor<128x64xf32, #acc>
      %y = arith.addf %s, %g : tensor<128x64xf32, #acc>
      nvvm.barrier0
      scf.yield %y : tensor<128x64xf32, #acc>
    }
  }
  return
}

// -----

// Pipelined wgmma schedule: the copies of tile j + 1 are issued right
// behind the first product of tile j (QKᵀ), after the barrier that follows
// the wait for tile j (so a product reading a stage may stay in flight into
// the next iteration, and the copies' address arithmetic overlaps QKᵀ); Q
// is waited for with the first tile. Three stages: no barrier ends the tile.
#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "pv_in_flight", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
#acc = #attn_nv.acc<warps = 8>
!t = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!s = !attn_nv.smem<128x128xbf16, swizzle_128b>

// CHECK-LABEL: func.func @pipelined(
// CHECK-SAME: %[[LO:[^:]*]]: index, %[[HI:[^:]*]]: index, %[[N:[^:]*]]: index)
// CHECK: %[[KS:.*]] = attn_nv.alloc_shared : !attn_nv.smem<3x128x128xbf16, swizzle_128b>
// CHECK: attn_nv.copy_async %arg0
// CHECK-NEXT: arith.constant 0 : index
// CHECK-NEXT: arith.constant 1 : index
// CHECK-NEXT: nvvm.cp.async.commit.group
// CHECK-NEXT: %[[ANY:.*]] = arith.cmpi slt, %[[LO]], %[[HI]]
// CHECK-NEXT: scf.if %[[ANY]] {
// CHECK:      }
// CHECK-NEXT: nvvm.cp.async.commit.group
// CHECK-NOT:  nvvm.cp.async.wait.group
// CHECK:      scf.for %[[IT:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(
// CHECK-NEXT:   %[[OFF:.*]] = arith.muli %[[IT]], %c128
// CHECK-NEXT:   %[[KV:.*]] = arith.addi %[[LO]], %[[OFF]]
// CHECK-NEXT:   %[[NEXT:.*]] = arith.addi %[[KV]], %c128
// CHECK-NEXT:   %[[NEXTIT:.*]] = arith.addi %[[IT]], %{{.*}}
// CHECK-NEXT:   nvvm.cp.async.wait.group 0
// CHECK-NEXT:   nvvm.fence.proxy
// CHECK-NEXT:   nvvm.barrier0
// CHECK-NEXT:   %[[K:.*]] = attn_nv.slot %[[KS]][%[[IT]]]
// The loop's uses of the key position now read kv = lo + it · step.
// CHECK-NEXT:   arith.addi %[[KV]], %c128
// CHECK-NEXT:   attn_nv.wgmma %{{.*}}, %[[K]]
// CHECK-NEXT:   %[[MORE:.*]] = arith.cmpi slt, %[[NEXT]], %[[HI]]
// CHECK-NEXT:   scf.if %[[MORE]] {
// CHECK-NEXT:     %[[K1:.*]] = attn_nv.slot %[[KS]][%[[NEXTIT]]]
// CHECK-NEXT:     attn_nv.copy_async %arg1[%{{.*}}, %{{.*}}, %[[NEXT]]] bounds %[[N]] into %[[K1]]
// CHECK-NEXT:   }
// CHECK-NEXT:   nvvm.cp.async.commit.group
// CHECK-NEXT:   %[[S:.*]] = attn_nv.wgmma_wait
// CHECK-NEXT:   scf.yield %[[S]]
func.func @pipelined(%Q: !t, %K: !t, %lo: index, %hi: index, %n: index) attributes {attn.config = #cfg} {
  %c128 = arith.constant 128 : index
  %zs = arith.constant dense<0.0> : tensor<128x128xf32, #acc>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %qs = attn_nv.alloc_shared : !s
    %ks = attn_nv.alloc_shared : !s
    attn_nv.copy_async %Q[%b, %h, %t] bounds %n into %qs : !t, !s
    nvvm.cp.async.commit.group
    nvvm.cp.async.wait.group 0
    nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
    nvvm.barrier0
    %r = scf.for %kv = %lo to %hi step %c128 iter_args(%acc = %zs) -> (tensor<128x128xf32, #acc>) {
      attn_nv.copy_async %K[%b, %h, %kv] bounds %n into %ks : !t, !s
      nvvm.cp.async.commit.group
      nvvm.cp.async.wait.group 0
      nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
      nvvm.barrier0
      %end = arith.addi %kv, %c128 : index
      %s0 = attn_nv.wgmma %qs, %ks, %zs transpose_rhs : !s, !s, tensor<128x128xf32, #acc>
      %s = attn_nv.wgmma_wait %s0 {pending = 0 : i64} : tensor<128x128xf32, #acc>
      nvvm.barrier0
      scf.yield %s : tensor<128x128xf32, #acc>
    }
  }
  return
}

// -----

// Nothing is copied in a loop: nothing to pipeline, the synchronous copies
// stay.
#cfg = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 64, block_n = 64, warps = 4, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!s = !attn_nv.smem<64x64xbf16, padded>

// CHECK-LABEL: func.func @no_loop(
// CHECK: attn_nv.alloc_shared : !attn_nv.smem<64x64xbf16, padded>
// CHECK-NEXT: attn_nv.copy_async
// CHECK-NEXT: nvvm.cp.async.commit.group
// CHECK-NEXT: nvvm.cp.async.wait.group 0
// CHECK-NEXT: nvvm.barrier0
// CHECK-NOT: attn_nv.slot
func.func @no_loop(%Q: !t, %n: index) attributes {attn.config = #cfg} {
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %qs = attn_nv.alloc_shared : !s
    attn_nv.copy_async %Q[%b, %h, %t] bounds %n into %qs : !t, !s
    nvvm.cp.async.commit.group
    nvvm.cp.async.wait.group 0
    nvvm.barrier0
  }
  return
}

// -----

// Two stages, mma.sync: the copies of tile j + 1 are issued before this
// iteration's barrier, while slower warps may still read their stage (that
// of tile j - 1), so a second barrier ends each tile.
#cfg = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 64, block_n = 64, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
#acc = #attn_nv.acc<warps = 4>
#opa = #attn_nv.operand_a<warps = 4>
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!s = !attn_nv.smem<64x64xbf16, padded>

// CHECK-LABEL: func.func @two_stages_mma(
// CHECK: scf.for
// CHECK:      scf.if
// CHECK:      nvvm.cp.async.commit.group
// CHECK-NEXT: nvvm.cp.async.wait.group 1
// CHECK-NEXT: nvvm.barrier0
// CHECK:      attn_nv.mma
// CHECK-NEXT: nvvm.barrier0
// CHECK-NEXT: scf.yield
func.func @two_stages_mma(%Q: !t, %K: !t, %lo: index, %hi: index, %n: index) attributes {attn.config = #cfg} {
  %c64 = arith.constant 64 : index
  %zs = arith.constant dense<0.0> : tensor<64x64xf32, #acc>
  %qa = arith.constant dense<0.0> : tensor<64x64xbf16, #opa>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %qs = attn_nv.alloc_shared : !s
    %ks = attn_nv.alloc_shared : !s
    attn_nv.copy_async %Q[%b, %h, %t] bounds %n into %qs : !t, !s
    nvvm.cp.async.commit.group
    nvvm.cp.async.wait.group 0
    nvvm.barrier0
    %r = scf.for %kv = %lo to %hi step %c64 iter_args(%acc = %zs) -> (tensor<64x64xf32, #acc>) {
      attn_nv.copy_async %K[%b, %h, %kv] bounds %n into %ks : !t, !s
      nvvm.cp.async.commit.group
      nvvm.cp.async.wait.group 0
      nvvm.barrier0
      %s = attn_nv.mma %qa, %ks, %acc transpose_rhs : tensor<64x64xbf16, #opa>, !s, tensor<64x64xf32, #acc>
      nvvm.barrier0
      scf.yield %s : tensor<64x64xf32, #acc>
    }
  }
  return
}

// -----

// A backward kernel (attn_bwd_*): its loop's copies are `strided`, their
// addresses derived in the loop (its registers are what binds it); the
// prologue's copy, before the loop, is not.
#cfg = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 64, block_n = 64, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
#acc = #attn_nv.acc<warps = 4>
#opa = #attn_nv.operand_a<warps = 4>
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!s = !attn_nv.smem<64x64xbf16, padded>

// CHECK-LABEL: func.func @attn_bwd_1(
// CHECK:      attn_nv.copy_async %arg0[{{.*}} into %{{[^ ]*}} :
// CHECK:      scf.if
// CHECK:        attn_nv.copy_async %arg1[{{.*}} into %{{[^ ]*}} :
// CHECK:      scf.for
// CHECK:        scf.if
// CHECK-NEXT:     attn_nv.slot
// CHECK-NEXT:     attn_nv.copy_async %arg1[{{.*}} into %{{[^ ]*}} strided :
func.func @attn_bwd_1(%Q: !t, %K: !t, %lo: index, %hi: index, %n: index) attributes {attn.config = #cfg} {
  %c64 = arith.constant 64 : index
  %zs = arith.constant dense<0.0> : tensor<64x64xf32, #acc>
  %qa = arith.constant dense<0.0> : tensor<64x64xbf16, #opa>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %qs = attn_nv.alloc_shared : !s
    %ks = attn_nv.alloc_shared : !s
    attn_nv.copy_async %Q[%b, %h, %t] bounds %n into %qs : !t, !s
    nvvm.cp.async.commit.group
    nvvm.cp.async.wait.group 0
    nvvm.barrier0
    %r = scf.for %kv = %lo to %hi step %c64 iter_args(%acc = %zs) -> (tensor<64x64xf32, #acc>) {
      attn_nv.copy_async %K[%b, %h, %kv] bounds %n into %ks : !t, !s
      nvvm.cp.async.commit.group
      nvvm.cp.async.wait.group 0
      nvvm.barrier0
      %s = attn_nv.mma %qa, %ks, %acc transpose_rhs : tensor<64x64xbf16, #opa>, !s, tensor<64x64xf32, #acc>
      nvvm.barrier0
      scf.yield %s : tensor<64x64xf32, #acc>
    }
  }
  return
}

// -----

// A position that follows from the induction variable (the backward's loop
// over (head, query tile) pairs): the prologue and the prefetch recompute it
// for their iteration -- here with wgmma, whose prefetch sits behind the
// first product, after the body has moved into the new loop.
#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 64, block_n = 64, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
#acc = #attn_nv.acc<warps = 4>
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!s = !attn_nv.smem<64x64xbf16, swizzle_128b>

// CHECK-LABEL: func.func @derived_position(
// CHECK-SAME: %[[TILES:[^:]*]]: index, %[[PAIRS:[^:]*]]: index, %[[N:[^:]*]]: index)
// The prologue: pair 0, head 0 / tiles, row (0 mod tiles) · 64.
// CHECK: scf.if
// CHECK:   %[[H0:.*]] = arith.divui %c0{{.*}}, %[[TILES]] : index
// CHECK:   %[[T0:.*]] = arith.remui %c0{{.*}}, %[[TILES]] : index
// CHECK:   %[[R0:.*]] = arith.muli %[[T0]], %{{.*}} : index
// CHECK:   attn_nv.copy_async %{{.*}}[%{{.*}}, %[[H0]], %[[R0]]]
// CHECK: scf.for %[[IT:.*]] = %{{.*}} to %{{.*}} step
// CHECK:   %[[CUR:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK:   %[[NEXT:.*]] = arith.addi %[[CUR]], %{{.*}} : index
// CHECK:   attn_nv.wgmma
// CHECK:   scf.if
// CHECK:     %[[HN:.*]] = arith.divui %[[NEXT]], %[[TILES]] : index
// CHECK:     %[[TN:.*]] = arith.remui %[[NEXT]], %[[TILES]] : index
// CHECK:     %[[RN:.*]] = arith.muli %[[TN]], %{{.*}} : index
// CHECK:     attn_nv.copy_async %{{.*}}[%{{.*}}, %[[HN]], %[[RN]]]
func.func @derived_position(%Q: !t, %K: !t, %tiles: index, %pairs: index, %n: index) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %zs = arith.constant dense<0.0> : tensor<64x64xf32, #acc>
  attn.tile_grid (%b, %g, %t) in (%n, %n, %n) {
    %ks = attn_nv.alloc_shared : !s
    %qs = attn_nv.alloc_shared : !s
    attn_nv.copy_async %K[%b, %g, %t] bounds %n into %ks : !t, !s
    nvvm.cp.async.commit.group
    nvvm.cp.async.wait.group 0
    nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
    nvvm.barrier0
    %r = scf.for %it = %c0 to %pairs step %c1 iter_args(%acc = %zs) -> (tensor<64x64xf32, #acc>) {
      %h = arith.divui %it, %tiles : index
      %ti = arith.remui %it, %tiles : index
      %row = arith.muli %ti, %c64 : index
      attn_nv.copy_async %Q[%b, %h, %row] bounds %n into %qs : !t, !s
      nvvm.cp.async.commit.group
      nvvm.cp.async.wait.group 0
      nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
      nvvm.barrier0
      %s0 = attn_nv.wgmma %ks, %qs, %zs transpose_rhs : !s, !s, tensor<64x64xf32, #acc>
      %s = attn_nv.wgmma_wait %s0 {pending = 0 : i64} : tensor<64x64xf32, #acc>
      nvvm.barrier0
      scf.yield %s : tensor<64x64xf32, #acc>
    }
  }
  return
}

// -----

// A shared buffer the loop writes itself (the atomic backward's dSᵀ, read
// by wgmma as an MN-major A): the barrier before its store_shared and the
// proxy fence and barrier after it are not the copies' -- they stay, while
// the copies' own wait, fence and barriers go. (Until issue 12's bwdatomic
// they went too: wgmma read dSᵀ with no proxy fence after the threads'
// writes.)
#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 64, block_n = 64, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
#acc = #attn_nv.acc<warps = 4>
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!s = !attn_nv.smem<64x64xbf16, swizzle_128b>

// CHECK-LABEL: func.func @shared_store(
// CHECK: scf.for
// CHECK:      nvvm.cp.async.wait.group 0
// CHECK-NEXT: nvvm.fence.proxy
// CHECK-NEXT: nvvm.barrier0
// CHECK-NOT:  nvvm.cp.async.wait.group
// CHECK:      %[[S:.*]] = attn_nv.wgmma_wait
// CHECK-NEXT: nvvm.barrier0
// CHECK-NEXT: attn_nv.store_shared %[[S]], %[[DS:.*]] :
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: nvvm.barrier0
// CHECK-NEXT: %[[P:.*]] = attn_nv.wgmma %[[DS]], %{{.*}}, %{{.*}} transpose_lhs
// CHECK-NEXT: %[[R:.*]] = attn_nv.wgmma_wait %[[P]]
// CHECK-NEXT: scf.yield %[[R]]
func.func @shared_store(%Q: !t, %K: !t, %lo: index, %hi: index, %n: index) attributes {attn.config = #cfg} {
  %c64 = arith.constant 64 : index
  %zs = arith.constant dense<0.0> : tensor<64x64xf32, #acc>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %ds = attn_nv.alloc_shared : !s
    %qs = attn_nv.alloc_shared : !s
    %ks = attn_nv.alloc_shared : !s
    attn_nv.copy_async %Q[%b, %h, %t] bounds %n into %qs : !t, !s
    nvvm.cp.async.commit.group
    nvvm.cp.async.wait.group 0
    nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
    nvvm.barrier0
    %r = scf.for %kv = %lo to %hi step %c64 iter_args(%acc = %zs) -> (tensor<64x64xf32, #acc>) {
      attn_nv.copy_async %K[%b, %h, %kv] bounds %n into %ks : !t, !s
      nvvm.cp.async.commit.group
      nvvm.cp.async.wait.group 0
      nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
      nvvm.barrier0
      %s0 = attn_nv.wgmma %qs, %ks, %zs transpose_rhs : !s, !s, tensor<64x64xf32, #acc>
      %s = attn_nv.wgmma_wait %s0 {pending = 0 : i64} : tensor<64x64xf32, #acc>
      nvvm.barrier0
      attn_nv.store_shared %s, %ds : tensor<64x64xf32, #acc>, !s
      nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
      nvvm.barrier0
      %p0 = attn_nv.wgmma %ds, %ks, %acc transpose_lhs : !s, !s, tensor<64x64xf32, #acc>
      %p = attn_nv.wgmma_wait %p0 {pending = 0 : i64} : tensor<64x64xf32, #acc>
      nvvm.barrier0
      scf.yield %p : tensor<64x64xf32, #acc>
    }
  }
  return
}

// -----

// tma: the loop's K/V copies become bulk tensor copies from the tensor maps
// appended to the function (K's, V's, O's, which attn-nv-store-output-tma
// may use, and Q's), each staged buffer with a full
// and an empty barrier per stage, initialised once (the empty ones for one
// arrival per warp, 8) before the first tile, then a CTA barrier; no
// cp.async groups for K/V (Q, bounded here by something other than its
// rows, keeps its own, waited for once before the loop with the fence and
// a CTA barrier; see @tma_query); each copy into a stage waits for
// its release (after %empty); the header waits on tile it's full barriers
// only (no CTA barrier per tile); the prefetch of tile it + 1 uses barrier
// use it + 1; each warp releases K's stage after the wait of the product
// reading it, V's after the wait of the product reading V.
// CHECK-LABEL: func.func @tma(
// CHECK-SAME: %[[LO:[^:]*]]: index, %[[HI:[^:]*]]: index, %[[N:[^:]*]]: index, %[[KMAP:[^:]*]]: !llvm.ptr, %[[VMAP:[^:]*]]: !llvm.ptr, %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr)
// CHECK: %[[KS:.*]] = attn_nv.alloc_shared : !attn_nv.smem<3x128x128xbf16, swizzle_128b>
// CHECK-NEXT: %[[KB:.*]] = attn_nv.alloc_barriers : !attn_nv.barriers<3>
// CHECK-NEXT: %[[KE:.*]] = attn_nv.alloc_barriers : !attn_nv.barriers<3>
// CHECK-NEXT: %[[VS:.*]] = attn_nv.alloc_shared : !attn_nv.smem<3x128x128xbf16, swizzle_128b>
// CHECK-NEXT: %[[VB:.*]] = attn_nv.alloc_barriers : !attn_nv.barriers<3>
// CHECK-NEXT: %[[VE:.*]] = attn_nv.alloc_barriers : !attn_nv.barriers<3>
// CHECK-NEXT: attn_nv.copy_async %arg0
// CHECK: nvvm.cp.async.commit.group
// CHECK-NEXT: attn_nv.init_barriers %[[KB]] :
// CHECK-NEXT: attn_nv.init_barriers %[[VB]] :
// CHECK-NEXT: attn_nv.init_barriers %[[KE]] arrivals 8
// CHECK-NEXT: attn_nv.init_barriers %[[VE]] arrivals 8
// CHECK-NEXT: nvvm.barrier0
// CHECK-NEXT: %[[ANY:.*]] = arith.cmpi slt, %[[LO]], %[[HI]]
// CHECK-NEXT: scf.if %[[ANY]] {
// CHECK-NEXT:   %[[K0:.*]] = attn_nv.slot %[[KS]][%[[C0:.*]]]
// CHECK-NEXT:   attn_nv.copy_tma %[[KMAP]][%{{.*}}, %{{.*}}, %[[LO]]] into %[[K0]], %[[KB]][%[[C0]]] after %[[KE]]
// CHECK-NEXT:   %[[V0:.*]] = attn_nv.slot %[[VS]][%[[C0]]]
// CHECK-NEXT:   attn_nv.copy_tma %[[VMAP]][%{{.*}}, %{{.*}}, %[[LO]]] into %[[V0]], %[[VB]][%[[C0]]] after %[[VE]]
// CHECK-NEXT: }
// CHECK-NEXT: nvvm.cp.async.wait.group 0
// CHECK-NEXT: nvvm.fence.proxy
// CHECK-NEXT: nvvm.barrier0
// CHECK-NOT: nvvm.cp.async.commit.group
// CHECK:      scf.for %[[IT:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(
// CHECK-NEXT:   arith.muli %[[IT]], %c128
// CHECK-NEXT:   arith.addi %[[LO]]
// CHECK-NEXT:   %[[NEXT:.*]] = arith.addi
// CHECK-NEXT:   %[[NEXTIT:.*]] = arith.addi %[[IT]]
// CHECK-NEXT:   attn_nv.wait_barrier %[[KB]][%[[IT]]]
// CHECK-NEXT:   attn_nv.wait_barrier %[[VB]][%[[IT]]]
// CHECK-NEXT:   %[[K:.*]] = attn_nv.slot %[[KS]][%[[IT]]]
// CHECK-NEXT:   %[[V:.*]] = attn_nv.slot %[[VS]][%[[IT]]]
// CHECK-NEXT:   attn_nv.wgmma %{{.*}}, %[[K]]
// CHECK-NEXT:   %[[MORE:.*]] = arith.cmpi slt, %[[NEXT]], %[[HI]]
// CHECK-NEXT:   scf.if %[[MORE]] {
// CHECK-NEXT:     %[[K1:.*]] = attn_nv.slot %[[KS]][%[[NEXTIT]]]
// CHECK-NEXT:     attn_nv.copy_tma %[[KMAP]][%{{.*}}, %{{.*}}, %[[NEXT]]] into %[[K1]], %[[KB]][%[[NEXTIT]]] after %[[KE]]
// CHECK-NEXT:     %[[V1:.*]] = attn_nv.slot %[[VS]][%[[NEXTIT]]]
// CHECK-NEXT:     attn_nv.copy_tma %[[VMAP]][%{{.*}}, %{{.*}}, %[[NEXT]]] into %[[V1]], %[[VB]][%[[NEXTIT]]] after %[[VE]]
// CHECK-NEXT:   }
// CHECK-NEXT:   attn_nv.wgmma_wait
// CHECK-NEXT:   attn_nv.arrive_barrier %[[KE]][%[[IT]]]
// CHECK-NEXT:   attn_nv.wgmma %{{.*}}, %[[V]]
// CHECK-NEXT:   attn_nv.wgmma_wait
// CHECK-NEXT:   attn_nv.arrive_barrier %[[VE]][%[[IT]]]
// CHECK-NEXT:   scf.yield
// CHECK-NOT: cp.async.commit
// CHECK-NOT: nvvm.barrier0
#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "pv_in_flight", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = true>
#acc = #attn_nv.acc<warps = 8>
!t = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!s = !attn_nv.smem<128x128xbf16, swizzle_128b>

func.func @tma(%Q: !t, %K: !t, %V: !t, %lo: index, %hi: index, %n: index) attributes {attn.config = #cfg} {
  %c2 = arith.constant 2 : index
  %c128 = arith.constant 128 : index
  %zs = arith.constant dense<0.0> : tensor<128x128xf32, #acc>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %nk = memref.dim %K, %c2 : !t
    %nv = memref.dim %V, %c2 : !t
    %qs = attn_nv.alloc_shared : !s
    %ks = attn_nv.alloc_shared : !s
    %vs = attn_nv.alloc_shared : !s
    attn_nv.copy_async %Q[%b, %h, %t] bounds %n into %qs : !t, !s
    nvvm.cp.async.commit.group
    nvvm.cp.async.wait.group 0
    nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
    nvvm.barrier0
    %r = scf.for %kv = %lo to %hi step %c128 iter_args(%acc = %zs) -> (tensor<128x128xf32, #acc>) {
      attn_nv.copy_async %K[%b, %h, %kv] bounds %nk into %ks : !t, !s
      nvvm.cp.async.commit.group
      nvvm.cp.async.wait.group 0
      nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
      nvvm.barrier0
      attn_nv.copy_async %V[%b, %h, %kv] bounds %nv into %vs : !t, !s
      nvvm.cp.async.commit.group
      nvvm.cp.async.wait.group 0
      nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
      nvvm.barrier0
      %s0 = attn_nv.wgmma %qs, %ks, %zs transpose_rhs : !s, !s, tensor<128x128xf32, #acc>
      %s = attn_nv.wgmma_wait %s0 {pending = 0 : i64} : tensor<128x128xf32, #acc>
      %o0 = attn_nv.wgmma %qs, %vs, %acc : !s, !s, tensor<128x128xf32, #acc>
      %o = attn_nv.wgmma_wait %o0 {pending = 0 : i64} : tensor<128x128xf32, #acc>
      nvvm.barrier0
      scf.yield %o : tensor<128x128xf32, #acc>
    }
  }
  return
}

// -----

// tma with a stage read by two products (the backward reads Q and dO, and
// the dQ grid K, twice a step): one arrival on its empty barrier per use,
// after the wait of its last reader; every warp arrives once, as the
// barriers' arrival count (8 warps) expects.
// CHECK-LABEL: func.func @tma_two_readers(
// CHECK: attn_nv.alloc_shared : !attn_nv.smem<3x128x128xbf16, swizzle_128b>
// CHECK-NEXT: attn_nv.alloc_barriers : !attn_nv.barriers<3>
// CHECK-NEXT: %[[KE:.*]] = attn_nv.alloc_barriers : !attn_nv.barriers<3>
// CHECK-NEXT: attn_nv.alloc_shared : !attn_nv.smem<3x128x128xbf16, swizzle_128b>
// CHECK-NEXT: attn_nv.alloc_barriers : !attn_nv.barriers<3>
// CHECK-NEXT: %[[VE:.*]] = attn_nv.alloc_barriers : !attn_nv.barriers<3>
// CHECK:      scf.for %[[IT:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(
// CHECK:        attn_nv.wgmma %{{[0-9]+}}, %[[K:[0-9]+]], %{{.*}} transpose_rhs
// CHECK-NOT:    arrive_barrier
// CHECK:        attn_nv.wgmma_wait
// CHECK-NEXT:   attn_nv.wgmma %{{[0-9]+}}, %{{[0-9]+}}, %{{.*}} :
// CHECK-NEXT:   attn_nv.wgmma_wait
// CHECK-NEXT:   attn_nv.arrive_barrier %[[VE]][%[[IT]]]
// CHECK-NEXT:   attn_nv.wgmma %{{[0-9]+}}, %[[K]], %{{.*}} :
// CHECK-NEXT:   attn_nv.wgmma_wait
// CHECK-NEXT:   attn_nv.arrive_barrier %[[KE]][%[[IT]]]
// CHECK-NEXT:   scf.yield
#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = true>
#acc = #attn_nv.acc<warps = 8>
!t = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!s = !attn_nv.smem<128x128xbf16, swizzle_128b>

func.func @tma_two_readers(%Q: !t, %K: !t, %V: !t, %lo: index, %hi: index, %n: index) attributes {attn.config = #cfg} {
  %c2 = arith.constant 2 : index
  %c128 = arith.constant 128 : index
  %zs = arith.constant dense<0.0> : tensor<128x128xf32, #acc>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %nk = memref.dim %K, %c2 : !t
    %nv = memref.dim %V, %c2 : !t
    %qs = attn_nv.alloc_shared : !s
    %ks = attn_nv.alloc_shared : !s
    %vs = attn_nv.alloc_shared : !s
    attn_nv.copy_async %Q[%b, %h, %t] bounds %n into %qs : !t, !s
    nvvm.cp.async.commit.group
    nvvm.cp.async.wait.group 0
    nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
    nvvm.barrier0
    %r = scf.for %kv = %lo to %hi step %c128 iter_args(%acc = %zs) -> (tensor<128x128xf32, #acc>) {
      attn_nv.copy_async %K[%b, %h, %kv] bounds %nk into %ks : !t, !s
      nvvm.cp.async.commit.group
      nvvm.cp.async.wait.group 0
      nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
      nvvm.barrier0
      attn_nv.copy_async %V[%b, %h, %kv] bounds %nv into %vs : !t, !s
      nvvm.cp.async.commit.group
      nvvm.cp.async.wait.group 0
      nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
      nvvm.barrier0
      %s0 = attn_nv.wgmma %qs, %ks, %zs transpose_rhs : !s, !s, tensor<128x128xf32, #acc>
      %s = attn_nv.wgmma_wait %s0 {pending = 0 : i64} : tensor<128x128xf32, #acc>
      %o0 = attn_nv.wgmma %qs, %vs, %acc : !s, !s, tensor<128x128xf32, #acc>
      %o = attn_nv.wgmma_wait %o0 {pending = 0 : i64} : tensor<128x128xf32, #acc>
      %d0 = attn_nv.wgmma %qs, %ks, %o : !s, !s, tensor<128x128xf32, #acc>
      %d = attn_nv.wgmma_wait %d0 {pending = 0 : i64} : tensor<128x128xf32, #acc>
      nvvm.barrier0
      scf.yield %d : tensor<128x128xf32, #acc>
    }
  }
  return
}

// -----

// tma with Q's tile bounded by Q's rows: Q's copy is a bulk copy through its
// map (the fourth) on a barrier of its own, allocated after the stages'
// barriers, initialised with them and issued before the CTA barrier; every
// thread waits for it once after tile 0's copies. No cp.async, fence or
// second CTA barrier is left.
// CHECK-LABEL: func.func @tma_query(
// CHECK-SAME: %[[QMAP:[^:]*]]: !llvm.ptr)
// CHECK: attn.tile_grid (%[[B:.*]], %[[H:.*]], %[[T:.*]]) in
// CHECK: %[[QS:.*]] = attn_nv.alloc_shared : !attn_nv.smem<128x128xbf16, swizzle_128b>
// CHECK: attn_nv.alloc_shared : !attn_nv.smem<3x128x128xbf16, swizzle_128b>
// CHECK: attn_nv.alloc_shared : !attn_nv.smem<3x128x128xbf16, swizzle_128b>
// CHECK-NEXT: attn_nv.alloc_barriers : !attn_nv.barriers<3>
// CHECK-NEXT: %[[VE:.*]] = attn_nv.alloc_barriers : !attn_nv.barriers<3>
// CHECK-NEXT: %[[QB:.*]] = attn_nv.alloc_barriers : !attn_nv.barriers<1>
// CHECK-NOT: attn_nv.copy_async
// CHECK: attn_nv.init_barriers %[[VE]] arrivals 8
// CHECK-NEXT: attn_nv.init_barriers %[[QB]] :
// CHECK-NEXT: attn_nv.copy_tma %[[QMAP]][%[[B]], %[[H]], %[[T]]] into %[[QS]], %[[QB]][%[[C0:.*]]] :
// CHECK-NEXT: nvvm.barrier0
// CHECK: scf.if
// CHECK: }
// CHECK-NEXT: attn_nv.wait_barrier %[[QB]][%[[C0]]]
// CHECK-NOT: nvvm.cp.async
// CHECK-NOT: nvvm.fence.proxy
// CHECK-NOT: nvvm.barrier0
#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "pv_in_flight", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = true>
#acc = #attn_nv.acc<warps = 8>
!t = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!s = !attn_nv.smem<128x128xbf16, swizzle_128b>

func.func @tma_query(%Q: !t, %K: !t, %V: !t, %lo: index, %hi: index, %n: index) attributes {attn.config = #cfg} {
  %c2 = arith.constant 2 : index
  %c128 = arith.constant 128 : index
  %zs = arith.constant dense<0.0> : tensor<128x128xf32, #acc>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %nq = memref.dim %Q, %c2 : !t
    %nk = memref.dim %K, %c2 : !t
    %nv = memref.dim %V, %c2 : !t
    %qs = attn_nv.alloc_shared : !s
    %ks = attn_nv.alloc_shared : !s
    %vs = attn_nv.alloc_shared : !s
    attn_nv.copy_async %Q[%b, %h, %t] bounds %nq into %qs : !t, !s
    nvvm.cp.async.commit.group
    nvvm.cp.async.wait.group 0
    nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
    nvvm.barrier0
    %r = scf.for %kv = %lo to %hi step %c128 iter_args(%acc = %zs) -> (tensor<128x128xf32, #acc>) {
      attn_nv.copy_async %K[%b, %h, %kv] bounds %nk into %ks : !t, !s
      nvvm.cp.async.commit.group
      nvvm.cp.async.wait.group 0
      nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
      nvvm.barrier0
      attn_nv.copy_async %V[%b, %h, %kv] bounds %nv into %vs : !t, !s
      nvvm.cp.async.commit.group
      nvvm.cp.async.wait.group 0
      nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
      nvvm.barrier0
      %s0 = attn_nv.wgmma %qs, %ks, %zs transpose_rhs : !s, !s, tensor<128x128xf32, #acc>
      %s = attn_nv.wgmma_wait %s0 {pending = 0 : i64} : tensor<128x128xf32, #acc>
      %o0 = attn_nv.wgmma %qs, %vs, %acc : !s, !s, tensor<128x128xf32, #acc>
      %o = attn_nv.wgmma_wait %o0 {pending = 0 : i64} : tensor<128x128xf32, #acc>
      nvvm.barrier0
      scf.yield %o : tensor<128x128xf32, #acc>
    }
  }
  return
}

// -----

// tma over a packed batch (KernelABI.h's ragged maps): the copies at batch
// 0 bounded by their sequence's end %end take coordinates (end, head,
// row + N - end), N each tensor's rows, computed before the loop.
// CHECK-LABEL: func.func @tma_ragged(
// CHECK-SAME: %[[END:[^:]*]]: index, %[[LO:[^:]*]]: index, %[[HI:[^:]*]]: index, %[[N:[^:]*]]: index, %[[KMAP:[^:]*]]: !llvm.ptr, %[[VMAP:[^:]*]]: !llvm.ptr, %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr)
// CHECK: %[[KROWS:.*]] = memref.dim %arg1
// CHECK: %[[VROWS:.*]] = memref.dim %arg2
// CHECK: scf.if
// CHECK-NEXT:   %[[K0:.*]] = attn_nv.slot
// CHECK-NEXT:   %[[KS:.*]] = arith.addi %[[LO]], %[[KROWS]]
// CHECK-NEXT:   %[[KR:.*]] = arith.subi %[[KS]], %[[END]]
// CHECK-NEXT:   attn_nv.copy_tma %[[KMAP]][%[[END]], %{{.*}}, %[[KR]]] into %[[K0]]
// CHECK-NEXT:   %[[V0:.*]] = attn_nv.slot
// CHECK-NEXT:   %[[VS:.*]] = arith.addi %[[LO]], %[[VROWS]]
// CHECK-NEXT:   %[[VR:.*]] = arith.subi %[[VS]], %[[END]]
// CHECK-NEXT:   attn_nv.copy_tma %[[VMAP]][%[[END]], %{{.*}}, %[[VR]]] into %[[V0]]
// CHECK: scf.for
// CHECK:     attn_nv.copy_tma %[[KMAP]][%[[END]],
// CHECK:     attn_nv.copy_tma %[[VMAP]][%[[END]],
#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "pv_in_flight", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = true>
#acc = #attn_nv.acc<warps = 8>
!t = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!s = !attn_nv.smem<128x128xbf16, swizzle_128b>

func.func @tma_ragged(%Q: !t, %K: !t, %V: !t, %end: index, %lo: index, %hi: index, %n: index) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %zs = arith.constant dense<0.0> : tensor<128x128xf32, #acc>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %qs = attn_nv.alloc_shared : !s
    %ks = attn_nv.alloc_shared : !s
    %vs = attn_nv.alloc_shared : !s
    attn_nv.copy_async %Q[%c0, %h, %t] bounds %end into %qs : !t, !s
    nvvm.cp.async.commit.group
    nvvm.cp.async.wait.group 0
    nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
    nvvm.barrier0
    %r = scf.for %kv = %lo to %hi step %c128 iter_args(%acc = %zs) -> (tensor<128x128xf32, #acc>) {
      attn_nv.copy_async %K[%c0, %h, %kv] bounds %end into %ks : !t, !s
      nvvm.cp.async.commit.group
      nvvm.cp.async.wait.group 0
      nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
      nvvm.barrier0
      attn_nv.copy_async %V[%c0, %h, %kv] bounds %end into %vs : !t, !s
      nvvm.cp.async.commit.group
      nvvm.cp.async.wait.group 0
      nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
      nvvm.barrier0
      %s0 = attn_nv.wgmma %qs, %ks, %zs transpose_rhs : !s, !s, tensor<128x128xf32, #acc>
      %s = attn_nv.wgmma_wait %s0 {pending = 0 : i64} : tensor<128x128xf32, #acc>
      %o0 = attn_nv.wgmma %qs, %vs, %acc : !s, !s, tensor<128x128xf32, #acc>
      %o = attn_nv.wgmma_wait %o0 {pending = 0 : i64} : tensor<128x128xf32, #acc>
      nvvm.barrier0
      scf.yield %o : tensor<128x128xf32, #acc>
    }
  }
  return
}

// -----

// tma with barrier_per_tile (two CTAs an SM): full barriers only, no empty
// ones and no releases; each iteration waits on tile it's full barriers,
// then one CTA barrier (after cp.async's no-op wait and the proxy fence)
// orders the refill of a stage after its last reads, as with cp.async.
// CHECK-LABEL: func.func @tma_barrier_per_tile(
// CHECK: %[[KS:.*]] = attn_nv.alloc_shared : !attn_nv.smem<3x128x128xbf16, swizzle_128b>
// CHECK-NEXT: %[[KB:.*]] = attn_nv.alloc_barriers : !attn_nv.barriers<3>
// CHECK-NEXT: %[[VS:.*]] = attn_nv.alloc_shared : !attn_nv.smem<3x128x128xbf16, swizzle_128b>
// CHECK-NEXT: %[[VB:.*]] = attn_nv.alloc_barriers : !attn_nv.barriers<3>
// CHECK-NEXT: attn_nv.copy_async %arg0
// CHECK: attn_nv.init_barriers %[[KB]] :
// CHECK-NEXT: attn_nv.init_barriers %[[VB]] :
// CHECK-NEXT: nvvm.barrier0
// CHECK-NOT: arrivals
// CHECK:      scf.for %[[IT:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(
// CHECK:        attn_nv.wait_barrier %[[KB]][%[[IT]]]
// CHECK-NEXT:   attn_nv.wait_barrier %[[VB]][%[[IT]]]
// CHECK-NEXT:   nvvm.cp.async.wait.group 0
// CHECK-NEXT:   nvvm.fence.proxy
// CHECK-NEXT:   nvvm.barrier0
// CHECK:        attn_nv.copy_tma %{{.*}} into %{{.*}}, %[[KB]][%{{.*}}] : !llvm.ptr, !attn_nv.smem<128x128xbf16, swizzle_128b>, !attn_nv.barriers<3>{{$}}
// CHECK-NOT:    arrive_barrier
// CHECK:        scf.yield
#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 128, warps = 8, min_ctas_per_sm = 2, stages = 3, q_in_registers = false, schedule = "pv_in_flight", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = true, barrier_per_tile = true>
#acc = #attn_nv.acc<warps = 8>
!t = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!s = !attn_nv.smem<128x128xbf16, swizzle_128b>

func.func @tma_barrier_per_tile(%Q: !t, %K: !t, %V: !t, %lo: index, %hi: index, %n: index) attributes {attn.config = #cfg} {
  %c2 = arith.constant 2 : index
  %c128 = arith.constant 128 : index
  %zs = arith.constant dense<0.0> : tensor<128x128xf32, #acc>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %nk = memref.dim %K, %c2 : !t
    %nv = memref.dim %V, %c2 : !t
    %qs = attn_nv.alloc_shared : !s
    %ks = attn_nv.alloc_shared : !s
    %vs = attn_nv.alloc_shared : !s
    attn_nv.copy_async %Q[%b, %h, %t] bounds %n into %qs : !t, !s
    nvvm.cp.async.commit.group
    nvvm.cp.async.wait.group 0
    nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
    nvvm.barrier0
    %r = scf.for %kv = %lo to %hi step %c128 iter_args(%acc = %zs) -> (tensor<128x128xf32, #acc>) {
      attn_nv.copy_async %K[%b, %h, %kv] bounds %nk into %ks : !t, !s
      nvvm.cp.async.commit.group
      nvvm.cp.async.wait.group 0
      nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
      nvvm.barrier0
      attn_nv.copy_async %V[%b, %h, %kv] bounds %nv into %vs : !t, !s
      nvvm.cp.async.commit.group
      nvvm.cp.async.wait.group 0
      nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
      nvvm.barrier0
      %s0 = attn_nv.wgmma %qs, %ks, %zs transpose_rhs : !s, !s, tensor<128x128xf32, #acc>
      %s = attn_nv.wgmma_wait %s0 {pending = 0 : i64} : tensor<128x128xf32, #acc>
      %o0 = attn_nv.wgmma %qs, %vs, %acc : !s, !s, tensor<128x128xf32, #acc>
      %o = attn_nv.wgmma_wait %o0 {pending = 0 : i64} : tensor<128x128xf32, #acc>
      nvvm.barrier0
      scf.yield %o : tensor<128x128xf32, #acc>
    }
  }
  return
}

// -----

// tma with barrier_per_tile and a captured table's tile: K's tiles are TMA
// copies on full barriers, the table's stay cp.async (no barriers of their
// own), their group committed after each issue; the loop's cp.async wait
// before the CTA barrier is the table tile's, and its refill follows that
// barrier behind QKᵀ, as in the cp.async kernel.
// CHECK-LABEL: func.func @tma_barrier_per_tile_table(
// CHECK-SAME: %[[BIAS:[^:]*]]: memref<?x?xf32, strided<[?, ?], offset: ?>>, %[[LO:[^:]*]]: index, %[[HI:[^:]*]]: index, %[[N:[^:]*]]: index,
// CHECK: %[[BS:.*]] = attn_nv.alloc_shared : !attn_nv.smem<3x128x64xf32, swizzle_128b>
// CHECK: %[[KS:.*]] = attn_nv.alloc_shared : !attn_nv.smem<3x64x128xbf16, swizzle_128b>
// CHECK-NEXT: %[[KB:.*]] = attn_nv.alloc_barriers : !attn_nv.barriers<3>
// CHECK-NOT: attn_nv.alloc_barriers
// CHECK: attn_nv.init_barriers %[[KB]] :
// CHECK-NOT: attn_nv.init_barriers
// CHECK: scf.if %{{.*}} {
// CHECK:   attn_nv.copy_tma
// CHECK:   attn_nv.copy_table_async %[[BIAS]][%{{.*}}, %[[LO]]] bounds %[[N]], %[[N]] into
// CHECK-NEXT: }
// CHECK-NEXT: nvvm.cp.async.commit.group
// CHECK:      scf.for %[[IT:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(
// CHECK:        attn_nv.wait_barrier %[[KB]][%[[IT]]]
// CHECK-NEXT:   nvvm.cp.async.wait.group 0
// CHECK-NEXT:   nvvm.fence.proxy
// CHECK-NEXT:   nvvm.barrier0
// CHECK-DAG:    %[[B:.*]] = attn_nv.slot %[[BS]][%[[IT]]]
// CHECK:        attn_nv.wgmma
// CHECK:        scf.if %{{.*}} {
// CHECK:          attn_nv.copy_tma
// CHECK:          attn_nv.copy_table_async %[[BIAS]]
// CHECK-NEXT:   }
// CHECK-NEXT:   nvvm.cp.async.commit.group
// CHECK-NEXT:   attn_nv.wgmma_wait
// CHECK-NEXT:   attn_nv.load_shared %[[B]]
// CHECK-NOT:    arrive_barrier
// CHECK:        scf.yield
#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 64, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "pv_in_flight", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false, tma = true, barrier_per_tile = true>
#acc = #attn_nv.acc<warps = 8>
!t = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!table = memref<?x?xf32, strided<[?, ?], offset: ?>>
!q = !attn_nv.smem<128x128xbf16, swizzle_128b>
!k = !attn_nv.smem<64x128xbf16, swizzle_128b>
!b = !attn_nv.smem<128x64xf32, swizzle_128b>

func.func @tma_barrier_per_tile_table(%Q: !t, %K: !t, %bias: !table, %lo: index, %hi: index, %n: index) attributes {attn.config = #cfg} {
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %zs = arith.constant dense<0.0> : tensor<128x64xf32, #acc>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %nk = memref.dim %K, %c2 : !t
    %bs = attn_nv.alloc_shared : !b
    %qs = attn_nv.alloc_shared : !q
    %ks = attn_nv.alloc_shared : !k
    attn_nv.copy_async %Q[%b, %h, %t] bounds %n into %qs : !t, !q
    nvvm.cp.async.commit.group
    nvvm.cp.async.wait.group 0
    nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
    nvvm.barrier0
    %r = scf.for %kv = %lo to %hi step %c64 iter_args(%acc = %zs) -> (tensor<128x64xf32, #acc>) {
      attn_nv.copy_async %K[%b, %h, %kv] bounds %nk into %ks : !t, !k
      nvvm.cp.async.commit.group
      nvvm.cp.async.wait.group 0
      nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
      nvvm.barrier0
      attn_nv.copy_table_async %bias[%t, %kv] bounds %n, %n into %bs : !table, !b
      nvvm.cp.async.commit.group
      nvvm.cp.async.wait.group 0
      nvvm.barrier0
      %s0 = attn_nv.wgmma %qs, %ks, %zs transpose_rhs : !q, !k, tensor<128x64xf32, #acc>
      %s = attn_nv.wgmma_wait %s0 {pending = 0 : i64} : tensor<128x64xf32, #acc>
      %g = attn_nv.load_shared %bs : !b -> tensor<128x64xf32, #acc>
      %y = arith.addf %s, %g : tensor<128x64xf32, #acc>
      nvvm.barrier0
      scf.yield %y : tensor<128x64xf32, #acc>
    }
  }
  return
}
