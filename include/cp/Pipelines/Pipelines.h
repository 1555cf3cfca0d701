//===- Pipelines.h - cp lowering pipelines ----------------------*- C++ -*-===//
//
// End-to-end pipelines from cp tensor IR to the LLVM dialect.
//
//===----------------------------------------------------------------------===//

#ifndef CP_PIPELINES_PIPELINES_H
#define CP_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir {
namespace cp {

/// Options of `cp-lower-to-cpu`.
struct CPULoweringOptions : public PassPipelineOptions<CPULoweringOptions> {
  PassOptions::Option<std::string> scheme{
      *this, "scheme",
      llvm::cl::desc("Run cp-apply-scheme with this scheme first (allgather, "
                     "ulysses, hybrid(u), head_tail); empty: the input has "
                     "no cp.attention left, or each carries its own scheme"),
      llvm::cl::init("")};
  PassOptions::Option<int64_t> tileQ{
      *this, "tile-q", llvm::cl::desc("cp-lower-local-attention tile-q"),
      llvm::cl::init(32)};
  PassOptions::Option<int64_t> tileKv{
      *this, "tile-kv", llvm::cl::desc("cp-lower-local-attention tile-kv"),
      llvm::cl::init(64)};
  PassOptions::Option<int64_t> vectorWidth{
      *this, "vector-width",
      llvm::cl::desc("cp-lower-local-attention vector-width"),
      llvm::cl::init(8)};
  PassOptions::Option<int64_t> microRows{
      *this, "micro-rows",
      llvm::cl::desc("cp-lower-local-attention micro-rows"), llvm::cl::init(6)};
  PassOptions::Option<int64_t> microVectors{
      *this, "micro-vectors",
      llvm::cl::desc("cp-lower-local-attention micro-vectors"),
      llvm::cl::init(2)};
  PassOptions::Option<bool> threads{
      *this, "threads",
      llvm::cl::desc("Run the attention's parallel loop on OpenMP threads "
                     "(link libomp)"),
      llvm::cl::init(true)};
};

/// cp tensor IR -> LLVM dialect with libcp_runtime (MPI) calls for the
/// collectives; see docs/Lowering.md.
void buildCPULoweringPipeline(OpPassManager &pm,
                              const CPULoweringOptions &options);

/// Registers `cp-lower-to-cpu`.
void registerCPPipelines();

} // namespace cp
} // namespace mlir

#endif // CP_PIPELINES_PIPELINES_H
