//===- CPUPipeline.cpp - cp-lower-to-cpu
//-----------------------------------===//
//
// cp tensor IR to the LLVM dialect for CPU ranks under MPI. The pass list
// is the design of docs/Lowering.md, written as the textual pipeline a user
// would pass to cp-opt, so the two never drift apart.
//
//===----------------------------------------------------------------------===//

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
  if (!options.scheme.empty())
    os << "cp-apply-scheme{scheme=" << options.scheme << "},";
  os << "canonicalize,cse,"
     // Tensors to buffers; results become out-parameters (the C ABI).
     << "one-shot-bufferize{bufferize-function-boundaries "
        "function-boundary-type-conversion=identity-layout-map},"
     << "buffer-results-to-out-params{hoist-static-allocs "
        "modify-public-functions},canonicalize,"
     << "buffer-deallocation-pipeline,"
     // cp buffer ops to loops and runtime calls.
     << "cp-lower-local-attention{tile-q=" << options.tileQ
     << " tile-kv=" << options.tileKv << " vector-width=" << options.vectorWidth
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
  std::string errors;
  llvm::raw_string_ostream errorStream(errors);
  if (failed(parsePassPipeline(text, pm, errorStream)))
    llvm::report_fatal_error(llvm::Twine("cp-lower-to-cpu: ") + errors);
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
