// RUN: attn-opt %s --split-input-file --attn-nv-assign-layouts | FileCheck %s

// attn-nv-assign-layouts turns the generic tile program into the NVIDIA one,
// nothing scheduled yet: tiles get layouts of the configuration's warps,
// loaded tiles go through shared memory (copied, waited for and made visible
// at once), and attn.matmul becomes a tensor-core product.

// mma.sync with q_in_registers: Q's A fragments are read once, before the
// loop; K and V are read from padded shared tiles.
#cfg = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 64, block_n = 64, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = true, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>

// CHECK-LABEL: func.func @mma_sync(
// Constants outside the grid get layouts too.
// CHECK-DAG: %[[ZS:.*]] = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #attn_nv.acc<warps = 4>>
// CHECK-DAG: %[[M0:.*]] = arith.constant dense<0xFF800000> : tensor<64xf32, #attn_nv.rows<warps = 4>>
// CHECK-DAG: %[[L0:.*]] = arith.constant dense<0.000000e+00> : tensor<64xf32, #attn_nv.rows<warps = 4>>
// CHECK: attn.tile_grid
// CHECK-COUNT-3: attn_nv.alloc_shared : !attn_nv.smem<64x64xbf16, padded>
// CHECK: attn_nv.copy_async %arg0[{{.*}}] bounds %arg4 into %[[QS:[^ ]*]] : {{.*}}, !attn_nv.smem<64x64xbf16, padded>
// CHECK-NEXT: nvvm.cp.async.commit.group
// CHECK-NEXT: nvvm.cp.async.wait.group 0
// CHECK-NEXT: nvvm.barrier0
// CHECK-NEXT: %[[QA:.*]] = attn_nv.load_operand %[[QS]] : !attn_nv.smem<64x64xbf16, padded> -> tensor<64x64xbf16, #attn_nv.operand_a<warps = 4>>
// CHECK: %[[R:.*]]:3 = scf.for %[[KV:.*]] = {{.*}} iter_args(%{{.*}} = %[[M0]], %{{.*}} = %[[L0]], %[[ACC:.*]] = %[[ZS]]) -> (tensor<64xf32, #attn_nv.rows<warps = 4>>, tensor<64xf32, #attn_nv.rows<warps = 4>>, tensor<64x64xf32, #attn_nv.acc<warps = 4>>)
// CHECK-NEXT: attn_nv.copy_async %arg1[{{.*}}, %[[KV]]] bounds %arg4 into %[[KS:[^ ]*]] :
// CHECK-NEXT: nvvm.cp.async.commit.group
// CHECK-NEXT: nvvm.cp.async.wait.group 0
// CHECK-NEXT: nvvm.barrier0
// CHECK-NEXT: attn_nv.copy_async %arg2[{{.*}}, %[[KV]]] bounds %arg4 into %[[VS:[^ ]*]] :
// CHECK-NEXT: nvvm.cp.async.commit.group
// CHECK-NEXT: nvvm.cp.async.wait.group 0
// CHECK-NEXT: nvvm.barrier0
// CHECK-NEXT: %[[S:.*]] = attn_nv.mma %[[QA]], %[[KS]], %[[ZS]] transpose_rhs : tensor<64x64xbf16, #attn_nv.operand_a<warps = 4>>, !attn_nv.smem<64x64xbf16, padded>, tensor<64x64xf32, #attn_nv.acc<warps = 4>>
// CHECK: %[[P:.*]] = attn.map(%[[S]], %{{.*}} : tensor<64x64xf32, #attn_nv.acc<warps = 4>>, tensor<64xf32, #attn_nv.rows<warps = 4>>) -> tensor<64x64xf32, #attn_nv.acc<warps = 4>>
// The map that only rounds P to bf16 is folded into the conversion, which
// rounds pairs.
// CHECK-NOT: arith.truncf
// CHECK: %[[PA:.*]] = attn_nv.convert_layout %[[P]] : tensor<64x64xf32, #attn_nv.acc<warps = 4>> -> tensor<64x64xbf16, #attn_nv.operand_a<warps = 4>>
// CHECK-NEXT: %[[PV:.*]] = attn_nv.mma %[[PA]], %[[VS]], %[[ACC]] : tensor<64x64xbf16, #attn_nv.operand_a<warps = 4>>, !attn_nv.smem<64x64xbf16, padded>, tensor<64x64xf32, #attn_nv.acc<warps = 4>>
// The next iteration's copies overwrite the buffers: every warp must be done.
// CHECK-NEXT: nvvm.barrier0
// CHECK-NEXT: scf.yield %{{.*}}, %{{.*}}, %[[PV]]
// CHECK: %[[O:.*]] = attn.map(%[[R]]#2, %[[R]]#1 : {{.*}}) -> tensor<64x64xbf16, #attn_nv.acc<warps = 4>>
// CHECK: attn.store_tile %[[O]], %arg3{{.*}} : tensor<64x64xbf16, #attn_nv.acc<warps = 4>>
// CHECK-NOT: attn.load_tile
// CHECK-NOT: attn.matmul
// CHECK: return
func.func @mma_sync(%Q: !t, %K: !t, %V: !t, %O: !t, %n: index) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %zs = arith.constant dense<0.0> : tensor<64x64xf32>
  %m0 = arith.constant dense<0xFF800000> : tensor<64xf32>
  %l0 = arith.constant dense<0.0> : tensor<64xf32>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %row = arith.muli %t, %c64 : index
    %q = attn.load_tile %Q[%b, %h, %row] bounds %n : !t -> tensor<64x64xbf16>
    %r:3 = scf.for %kv = %c0 to %n step %c64 iter_args(%m = %m0, %l = %l0, %acc = %zs)
        -> (tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>) {
      %k = attn.load_tile %K[%b, %h, %kv] bounds %n : !t -> tensor<64x64xbf16>
      %v = attn.load_tile %V[%b, %h, %kv] bounds %n : !t -> tensor<64x64xbf16>
      %s = attn.matmul %q, %k, %zs transpose_rhs : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32>
      %mx = attn.reduce <max> %s, %m : tensor<64x64xf32>, tensor<64xf32>
      %p = attn.map(%s, %mx : tensor<64x64xf32>, tensor<64xf32>) -> tensor<64x64xf32> {
      ^bb0(%i: index, %j: index, %x: f32, %y: f32):
        %d = arith.subf %x, %y : f32
        %e = math.exp2 %d : f32
        attn.yield %e : f32
      }
      %ps = attn.reduce <add> %p, %l0 : tensor<64x64xf32>, tensor<64xf32>
      %l1 = attn.map(%l, %ps : tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32> {
      ^bb0(%i: index, %x: f32, %y: f32):
        %a = arith.addf %x, %y : f32
        attn.yield %a : f32
      }
      %pb = attn.map(%p : tensor<64x64xf32>) -> tensor<64x64xbf16> {
      ^bb0(%i: index, %j: index, %x: f32):
        %y = arith.truncf %x : f32 to bf16
        attn.yield %y : bf16
      }
      %acc1 = attn.matmul %pb, %v, %acc : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32>
      scf.yield %mx, %l1, %acc1 : tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>
    }
    %o = attn.map(%r#2, %r#1 : tensor<64x64xf32>, tensor<64xf32>) -> tensor<64x64xbf16> {
    ^bb0(%i: index, %j: index, %x: f32, %y: f32):
      %d = arith.divf %x, %y : f32
      %e = arith.truncf %d : f32 to bf16
      attn.yield %e : bf16
    }
    attn.store_tile %o, %O[%b, %h, %row] bounds %n : tensor<64x64xbf16>, !t
  }
  return
}

// -----

// mma.sync without q_in_registers: the product reads Q from shared memory
// in every iteration.
#cfg = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 128, block_n = 32, warps = 4, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
!t = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>

// CHECK-LABEL: func.func @q_in_shared(
// CHECK: attn_nv.copy_async %arg0[{{.*}}] bounds %arg4 into %[[QS:[^ ]*]] : {{.*}}, !attn_nv.smem<128x128xbf16, padded>
// CHECK-NOT: attn_nv.load_operand
// CHECK: scf.for
// CHECK: attn_nv.mma %[[QS]], %{{.*}}, %{{.*}} transpose_rhs : !attn_nv.smem<128x128xbf16, padded>, !attn_nv.smem<32x128xbf16, padded>, tensor<128x32xf32, #attn_nv.acc<warps = 4>>
func.func @q_in_shared(%Q: !t, %K: !t, %V: !t, %O: !t, %n: index) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %zs = arith.constant dense<0.0> : tensor<128x32xf32>
  %z = arith.constant dense<0.0> : tensor<128x128xf32>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %q = attn.load_tile %Q[%b, %h, %t] bounds %n : !t -> tensor<128x128xbf16>
    %r = scf.for %kv = %c0 to %n step %c32 iter_args(%acc = %z) -> (tensor<128x128xf32>) {
      %k = attn.load_tile %K[%b, %h, %kv] bounds %n : !t -> tensor<32x128xbf16>
      %v = attn.load_tile %V[%b, %h, %kv] bounds %n : !t -> tensor<32x128xbf16>
      %s = attn.matmul %q, %k, %zs transpose_rhs : tensor<128x128xbf16>, tensor<32x128xbf16>, tensor<128x32xf32>
      %p = attn.map(%s : tensor<128x32xf32>) -> tensor<128x32xbf16> {
      ^bb0(%i: index, %j: index, %x: f32):
        %y = arith.truncf %x : f32 to bf16
        attn.yield %y : bf16
      }
      %acc1 = attn.matmul %p, %v, %acc : tensor<128x32xbf16>, tensor<32x128xbf16>, tensor<128x128xf32>
      scf.yield %acc1 : tensor<128x128xf32>
    }
    %o = attn.map(%r : tensor<128x128xf32>) -> tensor<128x128xbf16> {
    ^bb0(%i: index, %j: index, %x: f32):
      %y = arith.truncf %x : f32 to bf16
      attn.yield %y : bf16
    }
    attn.store_tile %o, %O[%b, %h, %t] bounds %n : tensor<128x128xbf16>, !t
  }
  return
}

// -----

// wgmma: 128-byte swizzled shared tiles, a proxy fence after each wait (the
// tensor cores read through the async proxy), and each product issued then
// waited for at once. A map that does more than round P stays; its result
// is converted.
#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 64, warps = 8, min_ctas_per_sm = 1, stages = 3, q_in_registers = false, schedule = "pv_in_flight", ordered_issue = true, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
!t = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>

// CHECK-LABEL: func.func @wgmma(
// CHECK: %[[ZS:.*]] = arith.constant dense<0.000000e+00> : tensor<128x64xf32, #attn_nv.acc<warps = 8>>
// CHECK: attn.tile_grid
// CHECK-DAG: attn_nv.alloc_shared : !attn_nv.smem<128x64xf16, swizzle_128b>
// CHECK-DAG: attn_nv.alloc_shared : !attn_nv.smem<64x64xf16, swizzle_128b>
// CHECK-DAG: attn_nv.alloc_shared : !attn_nv.smem<64x64xf16, swizzle_128b>
// CHECK: attn_nv.copy_async %arg0[{{.*}}] bounds %arg4 into %[[QS:[^ ]*]] :
// CHECK-NEXT: nvvm.cp.async.commit.group
// CHECK-NEXT: nvvm.cp.async.wait.group 0
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: nvvm.barrier0
// CHECK-NOT: attn_nv.load_operand
// CHECK: scf.for {{.*}} iter_args(%[[ACC:.*]] = %[[ZS]])
// CHECK-NEXT: attn_nv.copy_async %arg1{{.*}} into %[[KS:[^ ]*]] :
// CHECK-NEXT: nvvm.cp.async.commit.group
// CHECK-NEXT: nvvm.cp.async.wait.group 0
// CHECK-NEXT: nvvm.fence.proxy
// CHECK-NEXT: nvvm.barrier0
// CHECK-NEXT: attn_nv.copy_async %arg2{{.*}} into %[[VS:[^ ]*]] :
// CHECK-NEXT: nvvm.cp.async.commit.group
// CHECK-NEXT: nvvm.cp.async.wait.group 0
// CHECK-NEXT: nvvm.fence.proxy
// CHECK-NEXT: nvvm.barrier0
// CHECK-NEXT: %[[S0:.*]] = attn_nv.wgmma %[[QS]], %[[KS]], %[[ZS]] transpose_rhs : !attn_nv.smem<128x64xf16, swizzle_128b>, !attn_nv.smem<64x64xf16, swizzle_128b>, tensor<128x64xf32, #attn_nv.acc<warps = 8>>
// CHECK-NEXT: %[[S:.*]] = attn_nv.wgmma_wait %[[S0]] {pending = 0 : i64} : tensor<128x64xf32, #attn_nv.acc<warps = 8>>
// CHECK-NEXT: %[[P:.*]] = attn.map(%[[S]] : tensor<128x64xf32, #attn_nv.acc<warps = 8>>) -> tensor<128x64xf16, #attn_nv.acc<warps = 8>>
// CHECK: %[[PA:.*]] = attn_nv.convert_layout %[[P]] : tensor<128x64xf16, #attn_nv.acc<warps = 8>> -> tensor<128x64xf16, #attn_nv.operand_a<warps = 8>>
// CHECK-NEXT: %[[PV0:.*]] = attn_nv.wgmma %[[PA]], %[[VS]], %[[ACC]] : tensor<128x64xf16, #attn_nv.operand_a<warps = 8>>, !attn_nv.smem<64x64xf16, swizzle_128b>, tensor<128x64xf32, #attn_nv.acc<warps = 8>>
// CHECK-NEXT: %[[PV:.*]] = attn_nv.wgmma_wait %[[PV0]] {pending = 0 : i64}
// CHECK-NEXT: nvvm.barrier0
// CHECK-NEXT: scf.yield %[[PV]]
func.func @wgmma(%Q: !t, %K: !t, %V: !t, %O: !t, %n: index) attributes {attn.config = #cfg} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %zs = arith.constant dense<0.0> : tensor<128x64xf32>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %row = arith.muli %t, %c64 : index
    %q = attn.load_tile %Q[%b, %h, %row] bounds %n : !t -> tensor<128x64xf16>
    %r = scf.for %kv = %c0 to %n step %c64 iter_args(%acc = %zs) -> (tensor<128x64xf32>) {
      %k = attn.load_tile %K[%b, %h, %kv] bounds %n : !t -> tensor<64x64xf16>
      %v = attn.load_tile %V[%b, %h, %kv] bounds %n : !t -> tensor<64x64xf16>
      %s = attn.matmul %q, %k, %zs transpose_rhs : tensor<128x64xf16>, tensor<64x64xf16>, tensor<128x64xf32>
      %p = attn.map(%s : tensor<128x64xf32>) -> tensor<128x64xf16> {
      ^bb0(%i: index, %j: index, %x: f32):
        %e = math.exp2 %x : f32
        %y = arith.truncf %e : f32 to f16
        attn.yield %y : f16
      }
      %acc1 = attn.matmul %p, %v, %acc : tensor<128x64xf16>, tensor<64x64xf16>, tensor<128x64xf32>
      scf.yield %acc1 : tensor<128x64xf32>
    }
    %o = attn.map(%r : tensor<128x64xf32>) -> tensor<128x64xf16> {
    ^bb0(%i: index, %j: index, %x: f32):
      %y = arith.truncf %x : f32 to f16
      attn.yield %y : f16
    }
    attn.store_tile %o, %O[%b, %h, %row] bounds %n : tensor<128x64xf16>, !t
  }
  return
}

// -----

// A rounding map that something else reads too is kept for that reader; the
// conversion still takes the f32 tile.
#cfg = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 64, block_n = 64, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>

// CHECK-LABEL: func.func @rounding_kept(
// CHECK: %[[S:.*]] = attn_nv.mma
// CHECK: %[[PB:.*]] = attn.map(%[[S]] : tensor<64x64xf32, #attn_nv.acc<warps = 4>>) -> tensor<64x64xbf16, #attn_nv.acc<warps = 4>>
// CHECK: %[[PA:.*]] = attn_nv.convert_layout %[[S]] : tensor<64x64xf32, #attn_nv.acc<warps = 4>> -> tensor<64x64xbf16, #attn_nv.operand_a<warps = 4>>
// CHECK-NEXT: attn_nv.mma %[[PA]],
// CHECK: attn.store_tile %[[PB]]
func.func @rounding_kept(%Q: !t, %K: !t, %V: !t, %O: !t, %n: index) attributes {attn.config = #cfg} {
  %zs = arith.constant dense<0.0> : tensor<64x64xf32>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %q = attn.load_tile %Q[%b, %h, %t] bounds %n : !t -> tensor<64x64xbf16>
    %k = attn.load_tile %K[%b, %h, %t] bounds %n : !t -> tensor<64x64xbf16>
    %v = attn.load_tile %V[%b, %h, %t] bounds %n : !t -> tensor<64x64xbf16>
    %s = attn.matmul %q, %k, %zs transpose_rhs : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32>
    %pb = attn.map(%s : tensor<64x64xf32>) -> tensor<64x64xbf16> {
    ^bb0(%i: index, %j: index, %x: f32):
      %y = arith.truncf %x : f32 to bf16
      attn.yield %y : bf16
    }
    %o = attn.matmul %pb, %v, %zs : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32>
    attn.store_tile %pb, %O[%b, %h, %t] bounds %n : tensor<64x64xbf16>, !t
  }
  return
}

// -----

// The host mapping is left alone.
#cfg = #attn.config<mapping = "host", chip = "", block_m = 64, block_n = 64, warps = 0, min_ctas_per_sm = 0, stages = 0, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>

// CHECK-LABEL: func.func @host(
// CHECK: attn.load_tile
// CHECK: attn.matmul {{.*}} : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32>
// CHECK-NOT: attn_nv
func.func @host(%Q: !t, %K: !t, %n: index) attributes {attn.config = #cfg} {
  %zs = arith.constant dense<0.0> : tensor<64x64xf32>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %q = attn.load_tile %Q[%b, %h, %t] bounds %n : !t -> tensor<64x64xbf16>
    %k = attn.load_tile %K[%b, %h, %t] bounds %n : !t -> tensor<64x64xbf16>
    %s = attn.matmul %q, %k, %zs transpose_rhs : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32>
  }
  return
}

// -----

// The backward's loads: dO feeds a product (copied to shared memory) and a
// map (loaded again, into registers, #acc); row terms load as rows or, 1xR,
// as #attn_nv.cols, which a map broadcasts along its rows.
#cfg = #attn.config<mapping = "mma.sync", chip = "sm_80", block_m = 64, block_n = 64, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>

// CHECK-LABEL: func.func @backward_loads
// CHECK: %[[REGS:.*]] = attn.load_tile %arg0{{.*}} -> tensor<64x64xbf16, #attn_nv.acc<warps = 4>>
// CHECK: %[[BUF:.*]] = attn_nv.alloc_shared : !attn_nv.smem<64x64xbf16, padded>
// CHECK: attn_nv.copy_async %arg0{{.*}} into %[[BUF]]
// CHECK: %[[ROWS:.*]] = attn.load_tile %arg1{{.*}} -> tensor<64xf32, #attn_nv.rows<warps = 4>>
// CHECK: %[[COLS:.*]] = attn.load_tile %arg1{{.*}} -> tensor<1x64xf32, #attn_nv.cols<warps = 4>>
// CHECK: attn.map(%[[REGS]] : tensor<64x64xbf16, #attn_nv.acc<warps = 4>>)
// CHECK: attn_nv.mma %[[BUF]], %[[BUF]]
// CHECK: attn.map(%{{.*}}, %[[ROWS]], %[[COLS]] : tensor<64x64xf32, #attn_nv.acc<warps = 4>>, tensor<64xf32, #attn_nv.rows<warps = 4>>, tensor<1x64xf32, #attn_nv.cols<warps = 4>>)
func.func @backward_loads(%DO: !t, %L: !lse, %n: index) attributes {attn.config = #cfg} {
  %z = arith.constant dense<0.0> : tensor<64x64xf32>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %do = attn.load_tile %DO[%b, %h, %t] bounds %n : !t -> tensor<64x64xbf16>
    %rows = attn.load_tile %L[%b, %h, %t] bounds %n : !lse -> tensor<64xf32>
    %cols = attn.load_tile %L[%b, %h, %t] bounds %n : !lse -> tensor<1x64xf32>
    %sq = attn.map(%do : tensor<64x64xbf16>) -> tensor<64x64xf32> {
    ^bb0(%i: index, %j: index, %x: bf16):
      %e = arith.extf %x : bf16 to f32
      attn.yield %e : f32
    }
    %p = attn.matmul %do, %do, %z transpose_rhs : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32>
    %s = attn.map(%p, %rows, %cols : tensor<64x64xf32>, tensor<64xf32>, tensor<1x64xf32>) -> tensor<64x64xf32> {
    ^bb0(%i: index, %j: index, %x: f32, %r: f32, %c: f32):
      %y = arith.subf %x, %r : f32
      %w = arith.subf %y, %c : f32
      attn.yield %w : f32
    }
    %sum = attn.reduce <add> %s, %rows : tensor<64x64xf32>, tensor<64xf32>
    %sum2 = attn.reduce <add> %sq, %sum : tensor<64x64xf32>, tensor<64xf32>
    attn.store_tile %sum2, %L[%b, %h, %t] bounds %n : tensor<64xf32>, !lse
  }
  return
}

// -----

// In a backward kernel (attn_bwd_*) every wgmma advances its descriptors in
// the PTX (`advance_in_ptx`): its own tiles stay in shared memory through
// the loop, whose registers the accumulators fill. (The forward's above
// take none.)
#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 64, block_n = 64, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!o = memref<?x?x?x64xf32, strided<[?, ?, ?, 1], offset: ?>>

// CHECK-LABEL: func.func @attn_bwd_1(
// CHECK: attn_nv.wgmma %{{.*}}, %{{.*}}, %{{.*}} transpose_rhs advance_in_ptx :
// CHECK: attn_nv.wgmma %{{.*}}, %{{.*}}, %{{.*}} advance_in_ptx :
func.func @attn_bwd_1(%Q: !t, %K: !t, %O: !o, %n: index) attributes {attn.config = #cfg} {
  %zs = arith.constant dense<0.0> : tensor<64x64xf32>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %q = attn.load_tile %Q[%b, %h, %t] bounds %n : !t -> tensor<64x64xbf16>
    %k = attn.load_tile %K[%b, %h, %t] bounds %n : !t -> tensor<64x64xbf16>
    %s = attn.matmul %k, %q, %zs transpose_rhs : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32>
    %p = attn.map(%s : tensor<64x64xf32>) -> tensor<64x64xbf16> {
    ^bb0(%i: index, %j: index, %x: f32):
      %y = arith.truncf %x : f32 to bf16
      attn.yield %y : bf16
    }
    %dv = attn.matmul %p, %q, %zs : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32>
    attn.store_tile %dv, %O[%b, %h, %t] bounds %n : tensor<64x64xf32>, !o
  }
  return
}

// -----

// The atomic backward's (dSᵀ)ᵀ K on wgmma: dSᵀ (rounded by a map, folded
// into both products) is written once to a shared buffer of its own, between
// a barrier (every warp's read of the tile before is done) and the proxy
// fence and a barrier (wgmma reads what every thread wrote), and read
// transposed (MN-major A); the part is added with an accumulating store.
#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 64, block_n = 64, warps = 4, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
!a = memref<?x?x?x64xf32, strided<[?, ?, ?, 1], offset: ?>>

// CHECK-LABEL: func.func @transpose_lhs(
// CHECK: attn.tile_grid
// CHECK-NEXT: %[[DSS:.*]] = attn_nv.alloc_shared : !attn_nv.smem<64x64xbf16, swizzle_128b>
// CHECK: attn_nv.copy_async %arg1{{.*}} into %[[KS:[^ ]*]] :
// CHECK: %[[S:.*]] = attn_nv.wgmma_wait
// CHECK: attn_nv.convert_layout %[[S]] : tensor<64x64xf32, #attn_nv.acc<warps = 4>> -> tensor<64x64xbf16, #attn_nv.operand_a<warps = 4>>
// CHECK: attn_nv.wgmma_wait
// CHECK-NEXT: nvvm.barrier0
// CHECK-NEXT: attn_nv.store_shared %[[S]], %[[DSS]] : tensor<64x64xf32, #attn_nv.acc<warps = 4>>, !attn_nv.smem<64x64xbf16, swizzle_128b>
// CHECK-NEXT: nvvm.fence.proxy
// CHECK-NEXT: nvvm.barrier0
// CHECK-NEXT: %[[PART:.*]] = attn_nv.wgmma %[[DSS]], %[[KS]], %{{.*}} transpose_lhs : !attn_nv.smem<64x64xbf16, swizzle_128b>, !attn_nv.smem<64x64xbf16, swizzle_128b>, tensor<64x64xf32, #attn_nv.acc<warps = 4>>
// CHECK-NEXT: %[[DQ:.*]] = attn_nv.wgmma_wait %[[PART]]
// CHECK-NOT: attn.map
// CHECK: attn.store_tile %[[DQ]], %arg2[{{.*}}] accumulate bounds
func.func @transpose_lhs(%Q: !t, %K: !t, %DQ: !a, %n: index) attributes {attn.config = #cfg} {
  %zs = arith.constant dense<0.0> : tensor<64x64xf32>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %q = attn.load_tile %Q[%b, %h, %t] bounds %n : !t -> tensor<64x64xbf16>
    %k = attn.load_tile %K[%b, %h, %t] bounds %n : !t -> tensor<64x64xbf16>
    %s = attn.matmul %k, %q, %zs transpose_rhs : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32>
    %ds = attn.map(%s : tensor<64x64xf32>) -> tensor<64x64xbf16> {
    ^bb0(%i: index, %j: index, %x: f32):
      %y = arith.truncf %x : f32 to bf16
      attn.yield %y : bf16
    }
    %dk = attn.matmul %ds, %q, %zs : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32>
    %dq = attn.matmul %ds, %k, %zs transpose_lhs : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32>
    attn.store_tile %dq, %DQ[%b, %h, %t] accumulate bounds %n : tensor<64x64xf32>, !a
    attn.store_tile %dk, %DQ[%b, %h, %t] bounds %n : tensor<64x64xf32>, !a
  }
  return
}

// -----

// The same part with two warpgroups of 64 keys (block_m = 128, 8 warps):
// its 64 query rows are fewer than the warps hold, so the warpgroups split
// its head dim (col_groups = 2, FlashAttention-3's split of dQ), each one
// 64-column block; the 128 x 64 dSᵀ of both warpgroups goes through one
// shared buffer, which each reads whole.
#cfg = #attn.config<mapping = "wgmma", chip = "sm_90a", block_m = 128, block_n = 64, warps = 8, min_ctas_per_sm = 1, stages = 2, q_in_registers = false, schedule = "plain", ordered_issue = false, reverse_grid = false, pack_gqa = false, conditional_rescale = false>
!t = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!a = memref<?x?x?x128xf32, strided<[?, ?, ?, 1], offset: ?>>

// CHECK-LABEL: func.func @transpose_lhs_column_groups(
// CHECK: %[[DSS:.*]] = attn_nv.alloc_shared : !attn_nv.smem<128x64xbf16, swizzle_128b>
// CHECK: attn_nv.store_shared %{{.*}}, %[[DSS]] : tensor<128x64xf32, #attn_nv.acc<warps = 8>>, !attn_nv.smem<128x64xbf16, swizzle_128b>
// CHECK: %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<64x128xf32, #attn_nv.acc<warps = 8, col_groups = 2>>
// CHECK-NEXT: %[[PART:.*]] = attn_nv.wgmma %[[DSS]], %{{.*}}, %[[Z]] transpose_lhs : !attn_nv.smem<128x64xbf16, swizzle_128b>, !attn_nv.smem<128x128xbf16, swizzle_128b>, tensor<64x128xf32, #attn_nv.acc<warps = 8, col_groups = 2>>
// CHECK-NEXT: %[[DQ:.*]] = attn_nv.wgmma_wait %[[PART]] {pending = 0 : i64} : tensor<64x128xf32, #attn_nv.acc<warps = 8, col_groups = 2>>
// CHECK: attn.store_tile %[[DQ]], %arg2[{{.*}}] accumulate bounds %{{.*}} : tensor<64x128xf32, #attn_nv.acc<warps = 8, col_groups = 2>>
func.func @transpose_lhs_column_groups(%Q: !t, %K: !t, %DQ: !a, %n: index) attributes {attn.config = #cfg} {
  %zs = arith.constant dense<0.0> : tensor<128x64xf32>
  %zq = arith.constant dense<0.0> : tensor<64x128xf32>
  attn.tile_grid (%b, %h, %t) in (%n, %n, %n) {
    %k = attn.load_tile %K[%b, %h, %t] bounds %n : !t -> tensor<128x128xbf16>
    %q = attn.load_tile %Q[%b, %h, %t] bounds %n : !t -> tensor<64x128xbf16>
    %s = attn.matmul %k, %q, %zs transpose_rhs : tensor<128x128xbf16>, tensor<64x128xbf16>, tensor<128x64xf32>
    %ds = attn.map(%s : tensor<128x64xf32>) -> tensor<128x64xbf16> {
    ^bb0(%i: index, %j: index, %x: f32):
      %y = arith.truncf %x : f32 to bf16
      attn.yield %y : bf16
    }
    %dq = attn.matmul %ds, %k, %zq transpose_lhs : tensor<128x64xbf16>, tensor<128x128xbf16>, tensor<64x128xf32>
    attn.store_tile %dq, %DQ[%b, %h, %t] accumulate bounds %n : tensor<64x128xf32>, !a
  }
  return
}
