//===- Passes.td - generic attn transformations ------------*- tablegen -*-===//
//
// Target-independent passes: they decide the tiling and the mathematics of the
// online softmax, so the CPU and the NVIDIA paths share them.
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
    empty module, the function that the runtime launches: `@attn_fwd` taking
    Q, K, V, O (B, H, N, D memrefs with dynamic sizes and strides) and LSE,
    whose body is one `attn.sdpa`. It does nothing when `head-dim` is 0 or the
    module already holds a function.
  }];
  let options = [
    Option<"headDim", "head-dim", "int64_t", "0", "Head dim D (= Dv); 0: keep the input">,
    Option<"dtype", "dtype", "std::string", "\"bf16\"", "Element type: bf16, f16 or f32">,
    Option<"mask", "mask", "std::string", "\"none\"",
           "Mask: none, causal or causal_bottom_right">,
  ];
  let dependentDialects = ["::mlir::attn::AttnDialect", "::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect"];
}

def AttnTile : Pass<"attn-tile"> {
  let summary = "Tiles attn.sdpa into a grid of query tiles and a loop over K/V tiles";
  let description = [{
    Tiling is what lets attention run in on-chip memory: each instance of
    `attn.tile_grid` owns `block-m` query rows of one (batch, head) and walks the
    keys `block-n` at a time in an `attn.kv_loop` that carries the online-softmax
    state (m, l, acc). The N×N score matrix is never formed. With a causal mask
    the loop's upper bound stops at the diagonal, so tiles wholly above it are
    skipped rather than computed and masked. Tile sizes of 0 select defaults per
    head dim, measured for the tensor-core mapping named by `tensor-core`
    (`mma.sync`: 4 warps with 16-row slices; `wgmma`: 64-row warpgroups).
  }];
  let options = [
    Option<"blockM", "block-m", "int64_t", "0", "Query rows per tile (0: default per head dim)">,
    Option<"blockN", "block-n", "int64_t", "0", "Keys per K/V tile (0: default per head dim)">,
    Option<"tensorCore", "tensor-core", "std::string", "\"mma.sync\"",
           "Mapping whose default tile sizes apply: mma.sync or wgmma">,
  ];
  let dependentDialects = ["::mlir::attn::AttnDialect", "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect", "::mlir::tensor::TensorDialect"];
}

def AttnExpandOnlineSoftmax : Pass<"attn-expand-online-softmax"> {
  let summary = "Expands attn.online_attention into QKᵀ, mask, online softmax and P·V";
  let description = [{
    Fuses the three stages of attention into one loop body: `attn.qk` with the
    softmax scale and log2(e) folded into one multiplier (so the exponentials
    are exp2), `attn.mask` for the causal mask and the sequence bounds,
    `attn.online_softmax` for the running max and sum, and `attn.pv` for the
    rescaled accumulation of P·V.
  }];
  let dependentDialects = ["::mlir::attn::AttnDialect", "::mlir::arith::ArithDialect"];
}

#endif // ATTN_TRANSFORMS_PASSES
