//===- CPUPipeline.cpp - cp-lower-to-cpu --------------------------------===//
//
// cp tensor IR to the LLVM dialect for CPU ranks under MPI. The pass list
// is the design of docs/Lowering.md, written as the textual pipeline a user
// would pass to cp-opt, so the two never drift apart.
//
//===----------------------------------------------------------------------===//

#include "PipelineText.h"
#include "cp/Pipelines/Pipelines.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::cp;

void mlir::cp::buildCPULoweringPipeline(OpPassManager &pm,
                                        const CPULoweringOptions &options) {
  std::string text;
  llvm::raw_string_ostream os(text);
  detail::appendSchemeAndBufferization(os, options.scheme, options.machine);
  if (options.overlap)
    os << "cp-overlap-collectives,";
  os << "cp-free-buffers-early,";
  os
      // cp buffer ops to loops and runtime calls.
      << "cp-lower-local-attention{tile-q=" << options.tileQ
      << " tile-kv=" << options.tileKv
      << " vector-width=" << options.vectorWidth
      << " micro-rows=" << options.microRows
      << " micro-vectors=" << options.microVectors << "},"
      << "convert-cp-to-mpi,convert-linalg-to-loops,"
      << (options.threads ? "convert-scf-to-openmp," : "")
      << "cp-approximate-math,cp-export-c-interface,canonicalize,cse,"
      // To the LLVM dialect. memref (and its alloca scopes) goes before
      // scf-to-cf, which would leave an alloca scope with several blocks.
      << "arith-expand{include-bf16},expand-strided-metadata,lower-affine,"
      << "finalize-memref-to-llvm,convert-scf-to-cf,convert-to-llvm,"
      << "reconcile-unrealized-casts";
  detail::addPipelineText(pm, "cp-lower-to-cpu", text);
}

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
