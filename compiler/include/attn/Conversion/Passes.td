//===- Passes.td - attn conversions to targets -------------*- tablegen -*-===//
//
// Mappings of the tile-level attn IR onto a target. The tiling and online
// softmax are decided before these run; only the mapping differs per target.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_PASSES
#define ATTN_CONVERSION_PASSES

include "mlir/Pass/PassBase.td"

def ConvertAttnToLinalg : Pass<"convert-attn-to-linalg"> {
  let summary = "Lowers tile-level attn ops to scf, linalg and tensor ops for the host";
  let description = [{
    The host (CPU) mapping: `attn.tile_grid` and `attn.kv_loop` become `scf.for`
    loops and each tile op becomes `linalg`/`tensor` ops on tensors, which the
    upstream bufferization and LLVM lowering take to machine code. It runs the
    very IR the NVIDIA path maps onto tensor cores, so CI can check the tiling
    and the online softmax numerically on a machine without a GPU.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
                           "::mlir::math::MathDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect",
                           "::mlir::bufferization::BufferizationDialect"];
}

def ConvertAttnToNVVM : Pass<"convert-attn-to-nvvm", "ModuleOp"> {
  let summary = "Maps tile-level attn IR onto NVIDIA tensor cores (mma.sync or wgmma)";
  let description = [{
    The NVIDIA mapping (sm_80 and newer): each function holding an
    `attn.tile_grid` becomes a `gpu.func` kernel in a `gpu.module`. A CTA runs
    one query tile; its warps own 16-row slices. QKᵀ and P·V use
    `mma.sync.m16n8k16` with bf16/f16 inputs and f32 accumulation; K and V tiles
    are copied to shared memory with `cp.async`, two or three stages deep (three
    drop a barrier per tile; automatic: three where two CTAs still fit), into rows
    padded by 16 bytes so that `ldmatrix` is free of bank conflicts; P stays in
    registers between the two products; exp2 is `ex2.approx`. Each memref
    argument becomes (pointer, sizes, strides) kernel parameters, in order.

    On sm_90a (Hopper) the products use `wgmma.mma_async` instead, because
    mma.sync reaches only about half of Hopper's tensor-core throughput: each
    warpgroup (4 warps) owns 64 query rows; Q and K/V tiles sit in shared
    memory in the 128-byte-swizzled layout that wgmma reads through matrix
    descriptors (QKᵀ with both operands in shared memory, P·V with P from
    registers, V read transposed). The accumulator layout per warp is that of
    mma.sync, so the mask and softmax code is shared. Warpgroups issue their
    QKᵀ in turn (named barriers), so one's softmax overlaps the next one's
    product; with three stages the K/V loop is software-pipelined so that a
    P·V runs on while the next tile's work starts. `tensor-core=auto`
    takes wgmma on sm_90a when the tiles allow it (head dim a multiple of 64,
    block-m a multiple of 64, one 16-row slice per warp).
  }];
  let options = [
    Option<"chip", "chip", "std::string", "\"sm_90a\"", "Target SM (sm_80 ... sm_90a)">,
    Option<"warps", "warps", "int64_t", "0",
           "Warps per CTA (0: 4 for mma.sync, block-m / 16 for wgmma)">,
    Option<"tensorCore", "tensor-core", "std::string", "\"auto\"",
           "Tensor-core instructions: auto, mma.sync or wgmma (sm_90a)">,
    Option<"stages", "stages", "int64_t", "0", "Shared-memory stages for K and V (2, 3; 0: automatic)">,
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect", "::mlir::NVVM::NVVMDialect",
                           "::mlir::LLVM::LLVMDialect", "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def AttnEmitPTX : Pass<"attn-emit-ptx", "ModuleOp"> {
  let summary = "Serializes each gpu.module to PTX and replaces it by a gpu.binary";
  let description = [{
    Runs the NVPTX backend on every `gpu.module` (already in the NVVM/LLVM
    dialects) through attn's one wrapper of MLIR's serialization API, so that
    the rest of attn never depends on that API, which changes between LLVM
    versions. The PTX becomes the assembly of a `#gpu.object` in a `gpu.binary`
    and, with `output`, is also written to a file (`-` for stdout).
    `features=auto` (the default) picks the lowest PTX ISA version that
    supports the chip, at least 8.0 (attn::resolvePTXFeatures), and records
    it in the `#nvvm.target`; explicit features older than the chip needs are
    a diagnostic, not an LLVM abort.
  }];
  let options = [
    Option<"output", "output", "std::string", "\"\"", "File to write the PTX to">,
    Option<"chip", "chip", "std::string", "\"sm_90a\"", "Target SM">,
    Option<"features", "features", "std::string", "\"auto\"",
           "LLVM NVPTX features, e.g. +ptx86; auto: the lowest PTX ISA version "
           "that supports the chip, at least 8.0">,
    Option<"optLevel", "O", "unsigned", "3", "LLVM optimisation level">,
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

#endif // ATTN_CONVERSION_PASSES
