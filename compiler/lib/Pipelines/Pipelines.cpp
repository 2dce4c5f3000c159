//===- Pipelines.cpp - attn's named pass pipelines ------------------------===//

#include "attn/Pipelines/Pipelines.h"

#include "attn/Conversion/Passes.h"
#include "attn/NVIDIA/Passes.h"
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
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVMPass.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
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

/// The target-independent front half: the kernel, its configuration, the
/// tiling and the decomposition into generic tile ops.
template <typename Options>
static void buildTiledAttention(OpPassManager &pm, const Options &options,
                                AttnConfigureOptions configure) {
  pm.addPass(createAttnCreateKernel(AttnCreateKernelOptions{
      options.headDim, options.dtype, options.maskName(), options.variants,
      options.positiveScale, options.backward,
      options.varlen, options.pageSize, options.split,
      options.deterministic}));
  configure.blockM = options.blockM;
  configure.blockN = options.blockN;
  configure.packGqa = options.packGqa;
  pm.addPass(createAttnConfigure(configure));
  pm.addPass(createAttnTile());
  pm.addPass(createAttnDecompose());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void mlir::attn::buildAttnToNVVMPipeline(OpPassManager &pm,
                                         const AttnToPTXOptions &options) {
  AttnConfigureOptions configure;
  configure.target = "nvidia";
  configure.chip = options.chip;
  configure.tensorCore = options.tensorCore;
  configure.warps = options.warps;
  configure.stages = options.stages;
  configure.tma = options.tma;
  configure.warpSpecialize = options.warpSpecialize;
  configure.persistent = options.persistent;
  configure.qStages = options.qStages;
  configure.shortWorkTiles = options.shortWorkTiles;
  configure.pagedDecode = options.pagedDecode;
  buildTiledAttention(pm, options, configure);
  // The NVIDIA tile program, then its schedule, one pass per decision.
  pm.addPass(nv::createAttnNVSplitKernels());
  pm.addPass(nv::createAttnNVAssignLayouts());
  pm.addPass(nv::createAttnNVStageTables());
  pm.addPass(nv::createAttnNVDeferRowSums());
  pm.addPass(nv::createAttnNVPipelineCopies());
  pm.addPass(nv::createAttnNVPipelineWgmma());
  pm.addPass(nv::createAttnNVOrderWarpgroups());
  pm.addPass(nv::createAttnNVSkipRescale());
  pm.addPass(nv::createAttnNVStoreOutputTma());
  pm.addPass(nv::createAttnNVWarpSpecialize());
  pm.addPass(nv::createAttnNVPersist());
  pm.addPass(nv::createAttnNVAllocateShared());
  pm.addPass(createConvertAttnNVToNVVM());
  OpPassManager &gpu = pm.nest<gpu::GPUModuleOp>();
  gpu.addPass(createSCFToControlFlowPass());
  gpu.addPass(createConvertGpuOpsToNVVMOps());
  gpu.addPass(nv::createAttnNVGridConstants());
  // No canonicalize and CSE here: over the whole lowered kernel they cost
  // ~3 % of a compile, and LLVM's O3 (attn-emit-ptx) does the same folding;
  // the PTX of every attn-compile-time configuration is the same without.
  pm.addPass(createConvertNVVMToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void mlir::attn::buildAttnToPTXPipeline(OpPassManager &pm,
                                        const AttnToPTXOptions &options) {
  buildAttnToNVVMPipeline(pm, options);
  pm.addPass(createAttnEmitPTX(AttnEmitPTXOptions{
      options.ptxFile, options.chip, options.features, options.llvmOptLevel}));
}

void mlir::attn::buildAttnToHostPipeline(OpPassManager &pm,
                                         const AttnToHostOptions &options) {
  AttnConfigureOptions configure;
  configure.target = "host";
  buildTiledAttention(pm, options, configure);
  pm.addPass(createConvertAttnToLinalg());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createAttnHostVectorize());
  pm.addPass(createAttnHostExpandE4M3());
  pm.addPass(createCanonicalizerPass());
  // The K/V loop yields new (m, l, acc) tensors each iteration.
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.allowReturnAllocsFromLoops = true;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  bufferization::buildBufferDeallocationPipeline(pm);
  pm.addPass(createConvertLinalgToLoopsPass());
  pm.addPass(createConvertVectorToSCFPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertVectorToLLVMPass());
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
      "configuration, tiling, decomposition, NVIDIA layouts and schedule, "
      "NVVM, NVPTX",
      buildAttnToPTXPipeline);
  PassPipelineRegistration<AttnToHostOptions>(
      "attn-to-host",
      "Compiles attn IR (or, with head-dim, the canonical kernel) to the LLVM "
      "dialect for the CPU: the same tiling and online softmax, bufferized",
      buildAttnToHostPipeline);
}
