//===- NVVMPipeline.cpp - cp-lower-to-nvvm --------------------------------===//
//
// cp tensor IR to the LLVM dialect for GPUs: flash kernels as gpu.func,
// collectives as NCCL calls on the kernels' stream. The pass list is the
// design of docs/Lowering.md §6, as pass objects with typed options; the
// host half follows upstream's gpu-lower-to-nvvm-pipeline.
//
//===----------------------------------------------------------------------===//

#include "cp/Conversion/Passes.h"
#include "cp/Dialect/CP/Buffers/Passes.h"
#include "cp/Dialect/CP/Schemes/Passes.h"
#include "cp/Pipelines/Pipelines.h"
#include "cp/Transforms/Passes.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::cp;

#ifndef CP_DEFAULT_CUDA_TOOLKIT
#define CP_DEFAULT_CUDA_TOOLKIT ""
#endif
#ifndef CP_DEFAULT_LIBDEVICE
#define CP_DEFAULT_LIBDEVICE ""
#endif

std::string NVVMLoweringOptions::defaultToolkit() {
  return CP_DEFAULT_CUDA_TOOLKIT;
}
std::string NVVMLoweringOptions::defaultLibdevice() {
  return CP_DEFAULT_LIBDEVICE;
}
std::string NVVMLoweringOptions::defaultFormat() {
  return defaultToolkit().empty() ? "isa" : "fatbin";
}

void mlir::cp::buildNVVMLoweringPipeline(OpPassManager &pm,
                                         const NVVMLoweringOptions &options) {
  // The ring's middle steps are one loop, as on the CPU; its deallocation
  // bookkeeping stays on the host (cp-place-buffers-on-gpu).
  buildSchemeAndBufferizationPipeline(pm, options.scheme, options.machine,
                                      /*unrollRing=*/false);

  // cp buffer ops to kernels and device buffers.
  pm.addPass(createPackCollectivesPass());
  if (options.overlap)
    pm.addPass(createOverlapCollectivesPass());
  pm.addPass(createFreeBuffersEarlyPass());
  LowerLocalAttentionToGPUPassOptions tiles;
  tiles.tileQ = options.tileQ;
  tiles.tileKv = options.tileKv;
  tiles.threadsPerRow = options.threadsPerRow;
  tiles.kernel = options.kernel;
  tiles.chip = options.chip;
  pm.addPass(createLowerLocalAttentionToGPUPass(tiles));
  LowerLocalAttentionGradToGPUPassOptions grad;
  grad.kernel = options.kernel;
  grad.chip = options.chip;
  grad.dq = options.gradDq;
  pm.addPass(createLowerLocalAttentionGradToGPUPass(grad));
  pm.addPass(createPlaceBuffersOnGPUPass());
  pm.addPass(createConvertLinalgToParallelLoopsPass());
  OpPassManager &hostLoops = pm.nest<func::FuncOp>();
  hostLoops.addPass(createMapParallelLoopsToGPUPass());
  hostLoops.addPass(createConvertParallelLoopToGpuPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createGpuLaunchSinkIndexComputationsPass());
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createShareEqualKernelsPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createExportCInterfacePass());
  // One stream: kernels, copies and collectives in token order.
  pm.nest<func::FuncOp>().addPass(createGpuAsyncRegionPass());

  // Host and device to LLVM (upstream's gpu-lower-to-nvvm order).
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertNVVMToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features;
  target.optLevel = options.optLevel;
  if (!options.libdevice.empty())
    target.linkLibs.push_back(options.libdevice);
  pm.addPass(createGpuNVVMAttachTarget(target));
  pm.addPass(createLowerAffinePass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createTensorCoreLaunchBoundsPass());
  kernels.addPass(createConvertNVGPUToNVVMPass());
  kernels.addPass(createConvertGpuOpsToNVVMOps());
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());

  // gpu-to-llvm, with the collectives on their streams.
  pm.addPass(createConvertCPToNCCLPass());
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = options.format;
  if (!options.toolkit.empty())
    binary.toolkitPath = options.toolkit;
  pm.addPass(createGpuModuleToBinaryPass(binary));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}
