//===- Passes.td - generic attn transformations ------------*- tablegen -*-===//
//
// Target-independent passes: they decide the configuration, the tiling and
// the mathematics of the online softmax, so the CPU and the NVIDIA paths
// share them.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TRANSFORMS_PASSES
#define ATTN_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

def AttnCreateKernel : Pass<"attn-create-kernel", "ModuleOp"> {
  let summary = "Adds the canonical attention kernel function for a configuration";
  let description = [{
    The runtime and `attn-opt --attn-to-ptx="head-dim=..."` compile a kernel
    from a configuration rather than from a file. This pass builds, into an
    empty module, the function that the runtime launches, with the
    arguments of the kernel ABI (attn/Compiler/KernelABI.h): `@attn_fwd`
    taking Q, K, V, O (B, H, N, D memrefs with dynamic sizes and strides;
    K and V may have fewer heads), LSE and the scale, whose body is one
    `attn.sdpa`. With `backward`, `@attn_bwd` instead: Q, K, V, O, dO, LSE,
    dQ, dK, dV and the row-terms workspace, then the scale (and, not
    `deterministic`, dQ's f32 accumulator), whose body is one
    `attn.sdpa_backward`. It does nothing when `head-dim` is 0 or the module
    already holds a function.
  }];
  let options = [
    Option<"headDim", "head-dim", "int64_t", "0", "Head dim D (= Dv); 0: keep the input">,
    Option<"dtype", "dtype", "std::string", "\"bf16\"",
           "Element type: bf16, f16, f32 or e4m3 (FP8: bf16 O, descale factors)">,
    Option<"mask", "mask", "std::string", "\"none\"",
           "Mask: none, causal or causal_bottom_right">,
    Option<"variants", "variants", "std::string", "\"\"",
           "Named variants, comma-separated: window, prefix_lm, document, "
           "alibi, bias, softcap (their parameters become kernel arguments)">,
    Option<"positiveScale", "positive-scale", "bool", "true",
           "The kernel is called with a scale > 0 (the runtime picks the "
           "kernel without this for other scales)">,
    Option<"backward", "backward", "bool", "false",
           "Build the backward kernel (dQ, dK, dV) instead of the forward">,
    Option<"varlen", "varlen", "bool", "false",
           "A variable-length (packed) batch: cu_seqlens arguments "
           "(KernelABI.h's kVarlenArgs) after the scale">,
    Option<"pageSize", "page-size", "int64_t", "0",
           "K and V in a paged cache of this page size, with varlen "
           "queries (KernelABI.h's kPagedArgs after the scale); 0: "
           "contiguous K and V">,
    Option<"split", "split", "bool", "false",
           "Split-KV: the keys divided over num_splits programs and merged "
           "(KernelABI.h's kSplitArgs after the varlen or paged ones)">,
    Option<"deterministic", "deterministic", "bool", "true",
           "With backward: dQ without atomics, bit-identical from run to "
           "run; false: dQ added over the K/V tiles into an f32 "
           "accumulator (KernelABI.h's kAtomicBackwardArgs after the scale)">,
  ];
  let dependentDialects = ["::mlir::attn::AttnDialect", "::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect", "::mlir::arith::ArithDialect"];
}

def AttnConfigure : Pass<"attn-configure", "ModuleOp"> {
  let summary = "Decides the kernel configuration once and records it as #attn.config";
  let description = [{
    Every choice that shapes a kernel's code (mapping, tiles, warps, stages,
    the schedule of the K/V loop) is made here, by the MLIR-free tile policy
    that the runtime uses for its cache keys too, and attached to each
    function holding an `attn.sdpa` as `attn.config`. Later passes only read
    it, so no choice is made twice or differently. Options left at 0 or
    `auto` take the policy's default for the sdpa's head dim, element type
    and mask; a configuration that cannot compile (wgmma on sm_80, tiles a
    mapping cannot split) is a diagnostic here.
  }];
  let options = [
    Option<"target", "target", "std::string", "\"nvidia\"", "nvidia or host">,
    Option<"chip", "chip", "std::string", "\"sm_90a\"", "Target SM (NVIDIA)">,
    Option<"tensorCore", "tensor-core", "std::string", "\"auto\"",
           "Tensor-core instructions: auto (wgmma on sm_90a where the tiles "
           "allow it), mma.sync or wgmma">,
    Option<"blockM", "block-m", "int64_t", "0", "Query rows per tile (0: default)">,
    Option<"blockN", "block-n", "int64_t", "0", "Keys per K/V tile (0: default)">,
    Option<"warps", "warps", "int64_t", "0", "Warps per CTA (0: default)">,
    Option<"stages", "stages", "int64_t", "0", "K/V shared-memory stages (0: as many as fit)">,
    Option<"packGqa", "pack-gqa", "bool", "false",
           "Pack the query heads of each K/V head into one query tile">,
    Option<"tma", "tma", "bool", "false",
           "Load K/V tiles with TMA and mbarriers where the kernel allows it "
           "(sm_90a wgmma forward over contiguous K/V)">,
    Option<"warpSpecialize", "warp-specialize", "bool", "false",
           "With tma, a producer warpgroup issues the K/V copies "
           "(attn-nv-warp-specialize)">,
    Option<"persistent", "persistent", "bool", "false",
           "With warp-specialize, a forward CTA loops over the grid's work "
           "tiles (attn-nv-persist; the launch has min(tiles, SMs) CTAs)">,
    Option<"qStages", "q-stages", "int64_t", "0",
           "With persistent: Q's shared buffers, 1 or 2 (0: two where two "
           "K/V stages fit beside them)">,
    Option<"shortWorkTiles", "short-work-tiles", "bool", "false",
           "With persistent: each work tile visits a few K/V tiles, so a "
           "causal grid keeps the query tile its fastest index (grid_group_"
           "ctas = 0) instead of sorting across heads">,
    Option<"pagedDecode", "paged-decode", "bool", "false",
           "A paged kernel that decodes (each K/V head's queries fit one "
           "64-row tile): tiles left at 0 take the runtime's decode tiles "
           "(TilePolicy.h's pagedDecodeTiles) instead of the defaults">,
  ];
  let dependentDialects = ["::mlir::attn::AttnDialect"];
}

def AttnTile : Pass<"attn-tile"> {
  let summary = "Tiles attn.sdpa into a grid of query tiles and a loop over K/V tiles";
  let description = [{
    Tiling is what lets attention run in on-chip memory: each instance of
    `attn.tile_grid` owns `block_m` query rows of one (batch, head) and walks
    the keys `block_n` at a time in an `scf.for` that carries the
    online-softmax state (m, l, acc), one `attn.online_attention` per step.
    The N×N score matrix is never formed. The built-in mask becomes the
    library's mask_mod (one mechanism, Mask.h), and the mask_mod's structure
    bounds the loop on both sides per query tile: tiles above a causal
    diagonal or left of a sliding window, and keys outside a query tile's
    documents, are skipped rather than computed and masked. The mods travel
    with each step. With grouped-query attention the K/V tiles come from
    head h / (H / Hkv). Tile sizes come from the function's `attn.config`
    (attn-configure).
  }];
  let dependentDialects = ["::mlir::attn::AttnDialect", "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

def AttnDecompose : Pass<"attn-decompose"> {
  let summary = "Expands attention steps into generic tile ops (matmul, map, reduce)";
  let description = [{
    The one definition of the mask, the online softmax and the epilogue:
    `attn.online_attention` becomes QKᵀ (`attn.matmul`), the scale and the
    mask (`attn.map`s over each element's coordinates, the score_mod and
    mask_mod inlined into them; the mask only on tiles that can hold a
    hidden key, under an `scf.if`), the running max
    and sum (`attn.reduce`) and P·V (`attn.matmul`); `attn.finalize` becomes
    `attn.map`s. Both mappings lower these generic ops, so the mathematics is
    written once. Scores are taken to base 2 (the scale times log2(e) is one
    multiplier, every exponential an exp2); with `positive_scale` the row
    max is taken before scaling, so each probability is one fused
    multiply-add and one exp2.
  }];
  let dependentDialects = ["::mlir::attn::AttnDialect", "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect", "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

#endif // ATTN_TRANSFORMS_PASSES
