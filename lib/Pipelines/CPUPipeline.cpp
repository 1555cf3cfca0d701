//===- CPUPipeline.cpp - cp-lower-to-cpu ----------------------------------===//
//
// cp tensor IR to the LLVM dialect for CPU ranks under MPI: the design of
// docs/Lowering.md, as pass objects with typed options.
//
//===----------------------------------------------------------------------===//

#include "cp/Conversion/Passes.h"
#include "cp/Dialect/CP/Buffers/Passes.h"
#include "cp/Dialect/CP/Schemes/Passes.h"
#include "cp/Pipelines/Pipelines.h"
#include "cp/Transforms/Passes.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::cp;

void mlir::cp::buildCPULoweringPipeline(OpPassManager &pm,
                                        const CPULoweringOptions &options) {
  buildSchemeAndBufferizationPipeline(pm, options.scheme, options.machine,
                                      /*unrollRing=*/false);
  if (options.packCollectives)
    pm.addPass(createPackCollectivesPass());
  if (options.overlap)
    pm.addPass(createOverlapCollectivesPass());
  pm.addPass(createFreeBuffersEarlyPass());

  // cp buffer ops to loops and runtime calls.
  LowerLocalAttentionPassOptions tiles;
  tiles.tileQ = options.tileQ;
  tiles.tileKv = options.tileKv;
  tiles.gradTileKv = options.gradTileKv;
  tiles.vectorWidth = options.vectorWidth;
  tiles.microRows = options.microRows;
  tiles.microVectors = options.microVectors;
  tiles.bf16Dot = options.bf16Dot;
  if (options.outlineKernels)
    pm.addPass(createOutlineLocalAttentionPass());
  pm.addPass(createLowerLocalAttentionPass(tiles));
  pm.addPass(createConvertCPToMPIPass());
  pm.addPass(createConvertLinalgToLoopsPass());
  if (options.threads)
    pm.addPass(createConvertSCFToOpenMPPass());
  pm.addPass(createApproximateMathPass());
  pm.addPass(createExportCInterfacePass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());

  // To the LLVM dialect. memref (and its alloca scopes) goes before
  // scf-to-cf, which would leave an alloca scope with several blocks.
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expand));
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createSCFToControlFlowPass());
  if (options.bf16Dot) {
    // x86vector ops (the bf16 dot products) have no convert-to-llvm
    // interface: the vector conversion lowers them.
    ConvertVectorToLLVMPassOptions vectorToLLVM;
    vectorToLLVM.x86Vector = true;
    pm.addPass(createConvertVectorToLLVMPass(vectorToLLVM));
  }
  pm.addPass(createConvertToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}
