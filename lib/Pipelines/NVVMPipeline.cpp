//===- NVVMPipeline.cpp - cp-lower-to-nvvm
//---------------------------------===//
//
// cp tensor IR to the LLVM dialect for GPUs: flash kernels as gpu.func,
// collectives as NCCL calls on the kernels' stream. The pass list is the
// design of docs/Lowering.md §6, written as a textual pipeline like
// cp-lower-to-cpu; the host half follows upstream's
// gpu-lower-to-nvvm-pipeline.
//
//===----------------------------------------------------------------------===//

#include "PipelineText.h"
#include "cp/Pipelines/Pipelines.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/raw_ostream.h"

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
  std::string text;
  llvm::raw_string_ostream os(text);
  detail::appendSchemeAndBufferization(os, options.scheme, options.machine);
  os
      // cp buffer ops to kernels and device buffers.
      << "cp-pack-collectives,"
      << (options.overlap ? "cp-overlap-collectives," : "")
      << "cp-free-buffers-early,"
      << "cp-lower-local-attention-to-gpu{tile-q=" << options.tileQ
      << " tile-kv=" << options.tileKv
      << " threads-per-row=" << options.threadsPerRow << "},"
      << "cp-place-buffers-on-gpu,"
      << "convert-linalg-to-parallel-loops,"
      << "func.func(cp-map-parallel-loops-to-gpu,convert-parallel-loops-to-gpu)"
         ","
      << "canonicalize,"
      << "gpu-launch-sink-index-computations,gpu-kernel-outlining,lower-affine,"
      << "cp-export-c-interface,"
      // One stream: kernels, copies and collectives in token order.
      << "func.func(gpu-async-region),"
      // Host and device to LLVM (upstream's gpu-lower-to-nvvm order).
      << "convert-scf-to-cf,convert-nvvm-to-llvm,convert-func-to-llvm,"
      << "expand-strided-metadata,"
      << "nvvm-attach-target{chip=" << options.chip
      << " features=" << options.features << " O=" << options.optLevel;
  if (!options.libdevice.empty())
    os << " l=" << options.libdevice;
  os << "},lower-affine,convert-arith-to-llvm,convert-index-to-llvm,"
     << "canonicalize,cse,"
     << "gpu.module(convert-gpu-to-nvvm,canonicalize,cse,"
        "reconcile-unrealized-casts),"
     // gpu-to-llvm, with the collectives on their streams.
     << "convert-cp-to-nccl,gpu-module-to-binary{format=" << options.format;
  if (!options.toolkit.empty())
    os << " toolkit=" << options.toolkit;
  os << "},convert-math-to-llvm,canonicalize,cse,reconcile-unrealized-casts";
  detail::addPipelineText(pm, "cp-lower-to-nvvm", text);
}
