//===- SchemeAndBufferization.cpp - the pipelines' common head ------------===//
//
// Both lowering pipelines start from cp tensor IR the same way: resolve
// `auto`, apply the schemes, then bufferize with the results as
// out-parameters, which is the C ABI that cp-compile's callers use.
//
//===----------------------------------------------------------------------===//

#include "cp/Conversion/Passes.h"
#include "cp/Dialect/CP/Buffers/Passes.h"
#include "cp/Dialect/CP/Schemes/Passes.h"
#include "cp/Pipelines/Pipelines.h"
#include "cp/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::cp;

void mlir::cp::buildSchemeAndBufferizationPipeline(OpPassManager &pm,
                                                   const SchemeOption &scheme,
                                                   StringRef machine,
                                                   bool unrollRing) {
  ChooseSchemePassOptions choose;
  choose.machine = machine.str();
  choose.scheme = scheme;
  // Collectives of a program partitioned with upstream's shard tools.
  pm.addPass(createConvertShardToCPPass());
  pm.addPass(createChooseSchemePass(choose));
  // One layer per function, so what follows stays linear in depth.
  OutlineAttentionLayersPassOptions outline;
  outline.scheme = scheme;
  pm.addPass(createOutlineAttentionLayersPass(outline));
  ApplySchemePassOptions apply;
  apply.scheme = scheme;
  apply.machine = machine.str();
  apply.unrollRing = unrollRing;
  pm.addPass(createApplySchemePass(apply));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());

  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  // The ring's steps loop over K/V blocks each shift allocates afresh.
  bufferize.allowReturnAllocsFromLoops = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  // buffer-results-to-out-params cannot hoist one buffer into two results.
  pm.addNestedPass<func::FuncOp>(createDistinctResultBuffersPass());
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.hoistStaticAllocs = true;
  outParams.modifyPublicFunctions = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  pm.addPass(createCanonicalizerPass());
  bufferization::buildBufferDeallocationPipeline(pm);
}
