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
    The host (CPU) mapping: `attn.tile_grid` becomes a loop over work items
    (batch, head, tile) taken from a counter shared by threads, in the
    function's phase for that grid (two arguments added to the function,
    attn/Compiler/KernelABI.h's kHostGridsAttr), and each generic tile op (`attn.matmul`, `attn.map`, `attn.reduce`,
    loads and stores) becomes `linalg`/`tensor` ops on tensors, which the
    upstream bufferization and LLVM lowering take to machine code. It runs
    the very tile program the NVIDIA path maps onto tensor cores, so CI
    checks the tiling, the mask and the online softmax numerically on a
    machine without a GPU.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
                           "::mlir::math::MathDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect",
                           "::mlir::bufferization::BufferizationDialect"];
}

def AttnHostVectorize : Pass<"attn-host-vectorize"> {
  let summary = "Vectorizes the host tile program's linalg ops for the CPU";
  let description = [{
    Runs after `convert-attn-to-linalg`, on tensors. Each matrix product
    becomes a register-blocked loop nest of `vector.fma`: R rows by C
    vectors of W lanes of the accumulator stay in registers over the whole
    reduction (an `rhs` read transposed is first copied into a [K, N] tile,
    so every vector load is contiguous); products whose N no vector width
    divides stay scalar. Every other linalg op with static shapes (the
    maps, the row reductions) is tiled to one row and vectorized by MLIR's
    linalg vectorizer; ops it cannot vectorize (a body that loads from a
    table) stay scalar loops. The summation order of each product is the
    scalar one (k ascending), with fused multiply-adds.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
                           "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect",
                           "::mlir::vector::VectorDialect"];
}

def ConvertAttnNVToNVVM : Pass<"convert-attn-nv-to-nvvm", "ModuleOp"> {
  let summary = "Lowers the NVIDIA tile program to NVVM, one pattern per op";
  let description = [{
    The last NVIDIA step: every function with an NVIDIA `attn.config` moves
    into a `gpu.module` and becomes a `gpu.func` kernel whose parameters are
    its arguments after type conversion (per memref: pointer, sizes,
    strides; then the scalars: attn/Compiler/KernelABI.h), with its launch
    (threads, query rows per CTA, shared bytes) as attributes. Tiles with a
    register layout become the values each thread holds, shared buffers
    their byte offset; each op of attn and attn_nv is lowered by its own
    conversion pattern (compiler/lib/Conversion/AttnNVToNVVM, one file per
    family), loops and branches by the upstream structural type conversion.
    Nothing is scheduled here: the IR already says what runs when.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect", "::mlir::NVVM::NVVMDialect",
                           "::mlir::LLVM::LLVMDialect", "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def AttnHostExpandE4M3 : Pass<"attn-host-expand-e4m3"> {
  let summary = "Expands FP8 (e4m3) conversions on the host into integer ops";
  let description = [{
    LLVM has no FP8 type, and MLIR lowers no `arith.extf` from or
    `arith.truncf` to `f8E4M3FN`: this pass rewrites each (scalar or
    vector) into bit operations on the i8 encoding, the extension exact and
    the truncation rounding to nearest even and saturating to ±448 as
    PTX's `cvt.rn.satfinite.e4m3x2.f32` does (NaN stays NaN), so that the
    host computes what the NVIDIA kernel would. Runs on the host tile
    program after `attn-host-vectorize`.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
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
    Option<"optLevel", "O", "unsigned", "::mlir::attn::kMaxLlvmOptLevel",
           "LLVM optimisation level, 0 to 3">,
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

#endif // ATTN_CONVERSION_PASSES
