//===- Passes.td - NVIDIA schedule passes ------------------*- tablegen -*-===//
//
// The NVIDIA half of the pipeline before lowering: tiles get layouts, tiles
// the tensor cores read from memory go through shared memory, and the
// schedule (stages, prefetch, products in flight, issue order) is written
// into the IR one pass at a time. Each reads the kernel's #attn.config and
// applies what it says; a schedule the IR does not fit is a diagnostic,
// never a silently slower kernel.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_NVIDIA_PASSES
#define ATTN_NVIDIA_PASSES

include "mlir/Pass/PassBase.td"

def AttnNVSplitKernels : Pass<"attn-nv-split-kernels", "ModuleOp"> {
  let summary = "Gives each tile grid of a kernel function a kernel of its own";
  let description = [{
    A CTA grid is one launch, and a function may hold several grids that
    must run one after the other (the backward pass: the query tiles' grid
    writes the row terms the K/V tiles' grid reads). A function with an
    NVIDIA #attn.config and N > 1 grids becomes N functions `<name>_<i>`
    (KernelABI.h's kernelName), each with the arguments of the original and
    grid i only; their order is the launch order. A grid's `attn.grid`
    ("keys": over K/V tiles) moves to its function for the launch. The CPU
    path keeps the grids in one function, where they run in order.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def AttnNVAssignLayouts : Pass<"attn-nv-assign-layouts", "ModuleOp"> {
  let summary = "Gives every tile a register layout or a shared-memory buffer";
  let description = [{
    The step from the generic tile program to the NVIDIA tile program, with
    nothing scheduled yet: every 2-D tile becomes an `#attn_nv.acc` tile and
    every row tile an `#attn_nv.rows` tile of the configuration's warps;
    `attn.matmul` becomes `attn_nv.mma` (mma.sync) or `attn_nv.wgmma` plus
    an immediate wait; tiles loaded to feed a product are copied into a
    shared-memory buffer (`attn_nv.copy_async`, then wait, fence and barrier
    right away) and the product reads them there; a tile a map reads is
    loaded into registers in its layout, by a load of its own (1×C tiles:
    `#attn_nv.cols`); a register lhs
    (P) is converted to `#attn_nv.operand_a`, absorbing its rounding to 16
    bits. With `q_in_registers` Q's fragments are read once before the loop.
    In the backward's kernels every wgmma is `advance_in_ptx`: their own
    tiles stay in shared memory through the loop, and LICM would otherwise
    keep a descriptor per k step in registers across it (spills).
  }];
  let dependentDialects = ["::mlir::attn::nv::AttnNVDialect", "::mlir::NVVM::NVVMDialect",
                           "::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect"];
}

def AttnNVStageTables : Pass<"attn-nv-stage-tables", "ModuleOp"> {
  let summary = "Reads a captured 2-D table's score tile through shared memory";
  let description = [{
    A score_mod that adds `table[q_idx, kv_idx]` (the additive bias
    variant, or a user's mod reading a captured [Nq, Nk] table) is, after
    attn-decompose, an `attn.map` whose body reads one element of the table
    per score at the element's own coordinates. Lowered as it stands, each
    thread gathers its accumulator elements from global memory: pairs of
    columns 8 rows apart, a load instruction per pair, the values held in
    registers from their issue to their use. This pass recognises such a
    map in the K/V loop (no inputs; the body only clamps the two
    coordinates for memory safety, `attn.bounds_clamp`, and loads a 2-D f32
    capture at them) and replaces it by the table's tile: a shared-memory
    buffer filled by `attn_nv.copy_table_async` (coalesced cp.async, which
    attn-nv-pipeline-copies multi-buffers and issues one tile ahead with
    the K/V copies), read by `attn_nv.load_shared` right before the first
    use, each thread its own elements (Layouts.h). Elements past the
    queries or keys are zero-filled instead of clamped: their scores are
    dropped or masked. On wgmma the buffer is `swizzle_pairs`, whose XOR
    key puts a half-warp's four rows of 8-byte pairs in distinct bank
    groups (with `swizzle_128b`'s, two rows shared one).

    Anything else keeps the per-element gather: a table at positions that
    are not the tile's own (a bucketed relative position, a per-head
    table), other element types, TMA kernels without `barrier_per_tile`
    (their stages are released by per-warp mbarriers, which these copies
    do not join; with a CTA barrier per tile they are ordered by it, as
    cp.async's are), or a table whose stages
    would not fit in the chip's shared memory beside the K/V stages
    (TilePolicy accounts for them where it knows of the table: the bias
    variant). With `report-fallbacks` each such map gets a remark saying
    why.
  }];
  let options = [
    Option<"reportFallbacks", "report-fallbacks", "bool", "false",
           "Emit a remark on each table read that keeps the per-element "
           "gather, with the reason">,
  ];
  let dependentDialects = ["::mlir::attn::nv::AttnNVDialect", "::mlir::NVVM::NVVMDialect",
                           "::mlir::arith::ArithDialect"];
}

def AttnNVDeferRowSums : Pass<"attn-nv-defer-row-sums", "ModuleOp"> {
  let summary = "Keeps row sums as per-thread partial sums until they are needed";
  let description = [{
    A full row sum costs two shuffles per row (a row is spread over a quad),
    but the online softmax's running sum is only scaled and added to until
    the epilogue. Values built linearly from `attn.reduce <add>` results
    (and loop-carried from a zero start) get the partial rows layout,
    `#attn_nv.rows<..., partial = true>`; an `attn_nv.convert_layout` adds
    each quad up where something non-linear reads them (the epilogue's
    1 / l and log l). The IR says which values are partial, so every op
    still means what it says.
  }];
  let dependentDialects = ["::mlir::attn::nv::AttnNVDialect", "::mlir::arith::ArithDialect"];
}

def AttnNVPipelineCopies : Pass<"attn-nv-pipeline-copies", "ModuleOp"> {
  let summary = "Multi-buffers the K/V copies and issues each tile's one iteration ahead";
  let description = [{
    Turns the synchronous copies of the K/V loop into a pipeline with the
    configuration's `stages` buffers: the first tile's copies before the
    loop (only when there is a tile), each next tile's copies into the next
    stage during the current tile's math, one barrier per tile where three
    stages make the second one unnecessary. With mma.sync the copies of
    tile j + 1 start before the wait for tile j (FlashAttention-2). With
    wgmma they start after the barrier that follows the wait, right behind
    the tile's first product (QKᵀ): a pipelined schedule's product may then
    stay in flight into the next iteration, and the copies' address
    arithmetic runs while the tensor cores work instead of delaying QKᵀ
    (measured on the H200: +2-15% at D = 128 and 256). With two stages and
    the plain wgmma schedule no second barrier is needed: every product of
    the stage being refilled retired before this iteration's barrier.
    With `tma` the copies are bulk tensor copies completing on "full"
    mbarriers, and a stage is released by "empty" mbarriers (each warp
    arrives after the wait that retires its last read of the stage; the
    copy into it waits for that) instead of a CTA barrier per tile, which
    made every warp wait for the slowest one each tile -- unless the config
    says `barrier_per_tile` (two CTAs an SM, where the other CTA covers the
    barrier's wait and the empty barriers measured 3-8% slower). A
    captured table's tile (attn-nv-stage-tables) stays a cp.async copy:
    with TMA it is staged only under `barrier_per_tile`, its group
    committed after each issue and waited for before that barrier.
    In a backward kernel the cp.async copies it issues in the loop are
    `strided` (their addresses derived in the loop, not hoisted out of
    it): the backward's loops are bound by registers, the forward's are
    not, and ran slower so.
  }];
  let dependentDialects = ["::mlir::attn::nv::AttnNVDialect", "::mlir::NVVM::NVVMDialect",
                           "::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect"];
}

def AttnNVPipelineWgmma : Pass<"attn-nv-pipeline-wgmma", "ModuleOp"> {
  let summary = "Keeps wgmma products in flight across K/V iterations";
  let description = [{
    wgmma runs asynchronously; waiting for each product right away leaves
    the tensor cores idle while the softmax runs. Per the configuration's
    `schedule`:
    * `pv_in_flight`: the P·V of tile j is not waited for in iteration j;
      the wait for tile j + 1's QKᵀ retires it too (groups retire in order),
      and one wait after the loop ends the last. Tile 0 is peeled before the
      loop so that every value reaching that last wait comes from a wgmma
      (a constant there made ptxas serialize the whole pipeline);
    * `softmax_overlaps_pv`: iteration j issues QKᵀ of tile j, then P·V of
      tile j − 1 (P and the rescale factor carried in registers), and runs
      the softmax of tile j while that P·V runs (FlashAttention-3's
      intra-warpgroup overlap);
    * `plain`: nothing.
  }];
  let dependentDialects = ["::mlir::attn::nv::AttnNVDialect", "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
}

def AttnNVOrderWarpgroups : Pass<"attn-nv-order-warpgroups", "ModuleOp"> {
  let summary = "Has the warpgroups issue their QKᵀ in turn";
  let description = [{
    With `ordered_issue`, each wgmma whose operands are both in shared
    memory (QKᵀ) is wrapped in `attn_nv.warpgroup_turn`: warpgroup g issues
    only after g − 1 has, so the tensor cores finish one warpgroup's product
    before the next one's and each warpgroup's softmax overlaps another's
    product (+5–9% at D = 128 on an H200). With `tma` (no CTA barrier per
    tile, so warpgroup 0 may run up to `stages` - 1 tiles ahead) the turn
    is numbered by K's stage use and rotates over `stages` sets of named
    barriers, so that no barrier sees two turns of one warpgroup at once.
  }];
  let dependentDialects = ["::mlir::attn::nv::AttnNVDialect"];
}

def AttnNVSkipRescale : Pass<"attn-nv-skip-rescale", "ModuleOp"> {
  let summary = "Skips an accumulator rescale when no row max of the warp moved";
  let description = [{
    With `conditional_rescale`, a map that multiplies an accumulator feeding
    a product by row factors (acc · alpha) runs only when some factor of the
    warp's rows differs from 1 (`attn_nv.warp_any`, a warp-uniform branch);
    x · 1 = x exactly, so the result is unchanged. It costs a vote and a
    branch per tile but saves the registers of the multiplies' operands,
    which is what lets register-bound mma.sync kernels (masked, two m tiles,
    D = 128) fit without spilling.
  }];
  let dependentDialects = ["::mlir::attn::nv::AttnNVDialect", "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def AttnNVStoreOutputTma : Pass<"attn-nv-store-output-tma", "ModuleOp"> {
  let summary = "Stores a TMA kernel's output tile through shared memory by the copy engine";
  let description = [{
    In a wgmma kernel with `tma`, the output's `attn.store_tile` (a 16-bit
    accumulator of O, bounded by O's rows, not packed) becomes
    `attn_nv.store_shared` into Q's buffer -- dead by then: every QKᵀ that
    read it fed the output -- and `attn_nv.store_tma` through O's tensor
    map (KernelABI.h's kTensorMaps), each warp storing its own 16 rows.

    Why: from registers each warp instruction stores 4 bytes a lane, eight
    rows of 16 bytes (half a sector each), and a CTA cannot exit before
    those stores drain; in the short batch (B 64, H 16, N 256, D 128) the
    stores and that wait were 28 % of the warps' stall samples on the
    H200. The bulk stores write whole lines, and a warp waits only until
    they have read shared memory. Rows past N are not written (the map ends
    there). Anything else (the LSE, packed or accumulating stores, a Q
    buffer of another shape) keeps its st.global; with `report-fallbacks`
    each store of O kept so gets a remark saying why.
  }];
  let options = [
    Option<"reportFallbacks", "report-fallbacks", "bool", "false",
           "Emit a remark on each store of O in a TMA kernel that stays a "
           "store from registers, with the reason">,
  ];
  let dependentDialects = ["::mlir::attn::nv::AttnNVDialect"];
}

def AttnNVBulkReductions : Pass<"attn-nv-bulk-reductions", "ModuleOp"> {
  let summary = "Adds accumulating stores by the copy engine: bulk reductions of shared rows";
  let description = [{
    In a wgmma kernel, an accumulating `attn.store_tile` of an f32
    accumulator into plain rows (the atomic backward's dQ part) becomes
    `attn_nv.reduce_bulk` through a padded f32 staging buffer of its own:
    each warp writes its values there and its lanes add its rows with
    `cp.reduce.async.bulk ... .add.f32`, one a row segment.

    Why: from registers every thread issued one `red.global.add.v2.f32` a
    pair of columns (16 a step in the two-warpgroup K/V kernel at D = 128).
    On the H200 they were 15 % of that kernel's stall samples (the
    load/store queue full), and the proxy fence after the next step's
    cp.async copies (MEMBAR.ALL.CTA) waited for them to complete, another
    7 %. The copy engine reads whole rows and adds them in the L2, and a
    warp waits only until it has read them.

    Not in the attn-to-ptx pipeline: on the H200 it measured 0.85-0.96 x
    the register form at D = 128 (docs/BENCHMARKS.md version 31; each
    step waits for its reads, and the staging's addresses spill).
  }];
  let dependentDialects = ["::mlir::attn::nv::AttnNVDialect"];
}

def AttnNVWarpSpecialize : Pass<"attn-nv-warp-specialize", "ModuleOp"> {
  let summary = "Gives the TMA copies of the K/V loop a producer warpgroup";
  let description = [{
    With `warp_specialize` (and `tma`): the K/V loop and what follows it
    become the consumers' region of `attn_nv.warp_specialize`, without
    their copies, and a producer warpgroup (the last, so the consumers'
    thread ids, layouts and stores stay as they were) runs the copies of
    tiles 1 ... n - 1 in a loop of its own: each waits for its stage's
    release, then announces and issues the tile (`copy_tma {single_thread}`).

    Why: without it thread 0 of consumer warpgroup 0 issues each prefetch
    inside the consumers' loop, after waiting for the stage's release, so
    warpgroup 0 stalls whenever warpgroup 1 has not yet released the stage;
    a producer waits there instead, and `setmaxnreg` moves the producer's
    registers to the consumers (40 / 232 a thread). Tile 0's copy stays in
    the prologue (overlapping Q's cp.async), which every thread runs, the
    producer included: its CTA barriers count all threads, and Q's copy is
    spread over all of them. The producer's tile count is the consumers'
    loop bound (one value), so causal and window ranges agree and with no
    tile nobody waits.
  }];
  let dependentDialects = ["::mlir::attn::nv::AttnNVDialect", "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
}

def AttnNVPersist : Pass<"attn-nv-persist", "ModuleOp"> {
  let summary = "Makes a warp-specialized CTA loop over the grid's work tiles";
  let description = [{
    With `persistent` (and `warp_specialize`): the launch has min(tiles,
    SMs) CTAs and each runs work tiles in rounds of G = gridDim.x, taking
    w = r·G + blockIdx.x in even rounds and r·G + G - 1 - blockIdx.x in odd
    ones (`attn_nv.work_tile`: the order a one-CTA-a-tile launch would
    start them in, longest first for causal grids, whose long and short
    tiles the mirrored rounds pair). Both sides of
    `attn_nv.warp_specialize` loop over the same work tiles. The producer
    issues, per work tile, K/V tile 0, then Q (after the consumers released
    Q's buffer, which the output's TMA store reuses: a one-stage "empty"
    barrier of one arrival per consumer warp), then tiles 1 ... n - 1. The
    consumers wait for Q, run the K/V loop and the epilogue, and release
    Q's buffer. With `q_stages = 2` Q's buffer and barriers get a stage
    dim (work tile k reads slot k) and the producer copies Q before tile 0:
    Q's copy then waits for the store of work tile k - 2, not k - 1, and
    the consumers release k - 1's buffer early in work tile k (after its
    first K/V stage release), not waiting for the store right after it. The
    stage uses (barrier phases, slots, warpgroup turns) of
    the K/V tiles are numbered on across work tiles: each side carries the
    tiles it has passed. The work tile's values are computed again on both
    sides from `attn_nv.work_tile`; they may read memory the kernel never
    writes (a document mask's ids and key search), and a producer that
    searches so gets more registers (RegisterSplit.h).

    Why: a CTA's fixed costs -- its launch, the barriers' initialization,
    the wait for Q and the first K/V tile, the epilogue's stores -- are
    ~5 us at D = 128 against ~1.55 us a K/V tile on the H200
    (docs/BENCHMARKS.md version 29), which decides short sequences, sliding
    windows and document masks. Persistent, the next work tile's first K/V
    tile is loaded while this one's epilogue runs, and a CTA's setup is paid
    once; with two Q buffers the next work tile's Q is loaded while this one
    computes.
  }];
  let dependentDialects = ["::mlir::attn::nv::AttnNVDialect", "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect", "::mlir::NVVM::NVVMDialect"];
}

def AttnNVAllocateShared : Pass<"attn-nv-allocate-shared", "ModuleOp"> {
  let summary = "Places each shared-memory buffer of a kernel";
  let description = [{
    Assigns every `attn_nv.alloc_shared` of a kernel its byte offset, one
    buffer after the other, each on a 1024-byte boundary when it is
    swizzled (the swizzle follows address bits), and records the kernel's
    dynamic shared memory in `attn.shared_bytes` for the launch.
  }];
  let dependentDialects = ["::mlir::attn::nv::AttnNVDialect"];
}

def AttnNVGridConstants : Pass<"attn-nv-grid-constants", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Makes a kernel's tensor maps grid-constant by-value parameters";
  let description = [{
    After `convert-gpu-to-nvvm`: the last `attn.tensor_maps` parameters of
    each kernel (KernelABI.h's kTensorMaps, pointers) become by-value
    parameters of 128 bytes with `nvvm.grid_constant`, which NVPTX emits as
    `.param .align 64 .b8 name[128]` whose generic address (cvta.param) the
    bulk tensor copies read the map at. The gpu.func lowering drops
    `llvm.byval`, and the NVVM verifier accepts `nvvm.grid_constant` only on
    an LLVM kernel, hence this step after it.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect", "::mlir::NVVM::NVVMDialect"];
}

#endif // ATTN_NVIDIA_PASSES
