//===- Pipelines.cpp - attn's named pass pipelines ------------------------===//

#include "attn/Pipelines/Pipelines.h"

#include "attn/Compiler/TilePolicy.h"
#include "attn/Conversion/Passes.h"
#include "attn/Transforms/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::attn;

/// The target-independent front half: configuration, tiling, online softmax.
template <typename Options>
static void buildTiledAttention(OpPassManager &pm, const Options &options,
                                StringRef tileFor) {
  pm.addPass(createAttnCreateKernel(AttnCreateKernelOptions{
      options.headDim, options.dtype, options.maskName()}));
  pm.addPass(createAttnTile(
      AttnTileOptions{options.blockM, options.blockN, tileFor.str()}));
  pm.addPass(createAttnExpandOnlineSoftmax());
  pm.addPass(createCanonicalizerPass());
}

void mlir::attn::buildAttnToNVVMPipeline(OpPassManager &pm,
                                         const AttnToPTXOptions &options) {
  // Default tiles follow the mapping that auto would choose.
  bool wgmma = ::attn::compiler::tilesForWgmma(options.tensorCore.getValue(),
                                               options.chip.getValue());
  buildTiledAttention(pm, options, wgmma ? "wgmma" : "mma.sync");
  pm.addPass(createConvertAttnToNVVM(ConvertAttnToNVVMOptions{
      options.chip, options.warps, options.tensorCore, /*stages=*/0}));
  OpPassManager &gpu = pm.nest<gpu::GPUModuleOp>();
  gpu.addPass(createSCFToControlFlowPass());
  gpu.addPass(createConvertGpuOpsToNVVMOps());
  gpu.addPass(createCanonicalizerPass());
  gpu.addPass(createCSEPass());
  pm.addPass(createConvertNVVMToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void mlir::attn::buildAttnToPTXPipeline(OpPassManager &pm,
                                        const AttnToPTXOptions &options) {
  buildAttnToNVVMPipeline(pm, options);
  pm.addPass(createAttnEmitPTX(AttnEmitPTXOptions{
      options.ptxFile, options.chip, options.features, /*optLevel=*/3}));
}

void mlir::attn::buildAttnToHostPipeline(OpPassManager &pm,
                                         const AttnToHostOptions &options) {
  buildTiledAttention(pm, options, "mma.sync");
  pm.addPass(createConvertAttnToLinalg());
  pm.addPass(createCanonicalizerPass());
  // The K/V loop yields new (m, l, acc) tensors each iteration.
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.allowReturnAllocsFromLoops = true;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  bufferization::buildBufferDeallocationPipeline(pm);
  pm.addPass(createConvertLinalgToLoopsPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
}

void mlir::attn::registerAttnPipelines() {
  PassPipelineRegistration<AttnToPTXOptions>(
      "attn-to-ptx",
      "Compiles attn IR (or, with head-dim, the canonical kernel) to PTX: "
      "tiling, online softmax, mma.sync or wgmma mapping, NVVM, NVPTX",
      buildAttnToPTXPipeline);
  PassPipelineRegistration<AttnToHostOptions>(
      "attn-to-host",
      "Compiles attn IR (or, with head-dim, the canonical kernel) to the LLVM "
      "dialect for the CPU: the same tiling and online softmax, bufferized",
      buildAttnToHostPipeline);
}
