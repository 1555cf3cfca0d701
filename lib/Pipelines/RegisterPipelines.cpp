//===- RegisterPipelines.cpp - cp-lower-to-cpu and cp-lower-to-nvvm -------===//
//
// The pipelines under their names, for cp-opt, the mlir-opt plugin and
// textual pass pipelines.
//
//===----------------------------------------------------------------------===//

#include "cp/Pipelines/Pipelines.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace mlir::cp;

void mlir::cp::registerCPPipelines() {
  PassPipelineRegistration<CPULoweringOptions>(
      "cp-lower-to-cpu",
      "Lower cp tensor IR to the LLVM dialect for CPU ranks: bufferize, tiled "
      "attention loops on OpenMP threads, collectives as libcp_runtime (MPI) "
      "calls, C-callable entry points",
      buildCPULoweringPipeline);
  PassPipelineRegistration<NVVMLoweringOptions>(
      "cp-lower-to-nvvm",
      "Lower cp tensor IR to the LLVM dialect for NVIDIA GPUs: flash-attention "
      "kernels (gpu.func, embedded as gpu.binary), device buffers, "
      "collectives as libcp_runtime_gpu (NCCL) calls on the kernels' stream, "
      "C-callable entry points",
      buildNVVMLoweringPipeline);
}
