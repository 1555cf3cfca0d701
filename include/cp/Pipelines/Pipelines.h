//===- Pipelines.h - cp lowering pipelines ----------------------*- C++ -*-===//
//
// End-to-end pipelines from cp tensor IR to the LLVM dialect, built from
// pass objects with typed options (docs/Lowering.md has the pass lists).
//
//===----------------------------------------------------------------------===//

#ifndef CP_PIPELINES_PIPELINES_H
#define CP_PIPELINES_PIPELINES_H

#include "cp/Dialect/CP/IR/SchemeOption.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir {
namespace cp {

/// Options of `cp-lower-to-cpu`.
struct CPULoweringOptions : public PassPipelineOptions<CPULoweringOptions> {
  PassOptions::Option<SchemeOption> scheme{
      *this, "scheme",
      llvm::cl::desc("Scheme of cp.attention ops that carry none (allgather, "
                     "ulysses, hybrid(u), head_tail, ring, zigzag, auto); "
                     "empty: each op carries its own"),
      llvm::cl::init(SchemeOption())};
  PassOptions::Option<std::string> machine{
      *this, "machine",
      llvm::cl::desc("cp-choose-scheme's machine for scheme auto: a preset "
                     "or a machine profile's path (cp-calibrate)"),
      llvm::cl::init("host-mpi")};
  PassOptions::Option<bool> overlap{
      *this, "overlap",
      llvm::cl::desc("Overlap ring shifts with attention "
                     "(cp-overlap-collectives)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> packCollectives{
      *this, "pack-collectives",
      llvm::cl::desc("Run collectives on dense buffers exchanged along dim 0, "
                     "packed and unpacked by copies (cp-pack-collectives), "
                     "as the GPU pipeline does; checks that packing on CPU "
                     "ranks"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> outlineKernels{
      *this, "outline-kernels",
      llvm::cl::desc("Lower one shared kernel function per distinct local "
                     "attention, called by every op like it "
                     "(cp-outline-local-attention), instead of a loop nest "
                     "per op"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> tileQ{
      *this, "tile-q", llvm::cl::desc("cp-lower-local-attention tile-q"),
      llvm::cl::init(32)};
  PassOptions::Option<int64_t> tileKv{
      *this, "tile-kv", llvm::cl::desc("cp-lower-local-attention tile-kv"),
      llvm::cl::init(64)};
  PassOptions::Option<int64_t> gradTileKv{
      *this, "grad-tile-kv",
      llvm::cl::desc("cp-lower-local-attention grad-tile-kv"),
      llvm::cl::init(128)};
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
  PassOptions::Option<bool> bf16Dot{
      *this, "bf16-dot",
      llvm::cl::desc("cp-lower-local-attention bf16-dot: AVX512-BF16 dot "
                     "products for bf16 attention (needs a CPU with "
                     "AVX512_BF16)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> threads{
      *this, "threads",
      llvm::cl::desc("Run the attention's parallel loop on OpenMP threads "
                     "(link libomp)"),
      llvm::cl::init(true)};
};

/// The head both pipelines share: cp-choose-scheme on `machine` (it
/// resolves `auto`), cp-apply-scheme with `scheme` for ops that carry none,
/// then bufferization with results as out-parameters (the C ABI) and the
/// deallocation pipeline. `unrollRing`: cp-apply-scheme{unroll-ring}.
void buildSchemeAndBufferizationPipeline(OpPassManager &pm,
                                         const SchemeOption &scheme,
                                         StringRef machine, bool unrollRing);

/// cp tensor IR -> LLVM dialect with libcp_runtime (MPI) calls for the
/// collectives; see docs/Lowering.md.
void buildCPULoweringPipeline(OpPassManager &pm,
                              const CPULoweringOptions &options);

/// Options of `cp-lower-to-nvvm`. The CUDA toolkit and libdevice defaults
/// are the ones this build found (empty without CUDA: then `format`
/// defaults to `isa`, which needs neither).
struct NVVMLoweringOptions : public PassPipelineOptions<NVVMLoweringOptions> {
  PassOptions::Option<SchemeOption> scheme{
      *this, "scheme",
      llvm::cl::desc("Scheme of cp.attention ops that carry none; empty: each "
                     "op carries its own"),
      llvm::cl::init(SchemeOption())};
  PassOptions::Option<std::string> machine{
      *this, "machine",
      llvm::cl::desc("cp-choose-scheme's machine for scheme auto: a preset "
                     "or a machine profile's path (cp-calibrate)"),
      llvm::cl::init("h200-nvlink")};
  PassOptions::Option<bool> overlap{
      *this, "overlap",
      llvm::cl::desc("Run ring shifts on a second stream, overlapping the "
                     "kernels (cp-overlap-collectives)"),
      llvm::cl::init(true)};
  PassOptions::Option<std::string> chip{
      *this, "chip", llvm::cl::desc("GPU architecture (sm_80, sm_90, ...)"),
      llvm::cl::init("sm_90")};
  PassOptions::Option<std::string> features{
      *this, "features", llvm::cl::desc("PTX features, e.g. +ptx80"),
      llvm::cl::init("+ptx80")};
  PassOptions::Option<std::string> format{
      *this, "format",
      llvm::cl::desc("Kernel binary: isa (PTX, JIT-compiled at load; needs "
                     "no CUDA), bin (cubin, needs ptxas) or fatbin"),
      llvm::cl::init(defaultFormat())};
  PassOptions::Option<int64_t> optLevel{
      *this, "opt-level", llvm::cl::desc("NVVM optimization level"),
      llvm::cl::init(3)};
  PassOptions::Option<std::string> toolkit{
      *this, "toolkit", llvm::cl::desc("CUDA toolkit (ptxas, fatbinary)"),
      llvm::cl::init(defaultToolkit())};
  PassOptions::Option<std::string> libdevice{
      *this, "libdevice",
      llvm::cl::desc("libdevice.10.bc to link into kernels that call math "
                     "functions; empty: none"),
      llvm::cl::init(defaultLibdevice())};
  PassOptions::Option<int64_t> tileQ{
      *this, "tile-q", llvm::cl::desc("cp-lower-local-attention-to-gpu tile-q"),
      llvm::cl::init(32)};
  PassOptions::Option<int64_t> tileKv{
      *this, "tile-kv",
      llvm::cl::desc("cp-lower-local-attention-to-gpu tile-kv (0: auto)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> threadsPerRow{
      *this, "threads-per-row",
      llvm::cl::desc("cp-lower-local-attention-to-gpu threads-per-row"),
      llvm::cl::init(4)};
  PassOptions::Option<std::string> kernel{
      *this, "kernel",
      llvm::cl::desc("Attention kernels, forward and backward: auto (mma on "
                     "sm_80+, else simt), mma (mma.sync tensor cores) or "
                     "simt"),
      llvm::cl::init("auto")};
  PassOptions::Option<std::string> gradDq{
      *this, "grad-dq",
      llvm::cl::desc("How the tensor-core backward computes dQ: atomic (f32 "
                     "atomics) or recompute (a second kernel; "
                     "deterministic)"),
      llvm::cl::init("atomic")};

  static std::string defaultToolkit();
  static std::string defaultLibdevice();
  static std::string defaultFormat();
};

/// cp tensor IR -> LLVM dialect with the kernels embedded (gpu.binary) and
/// the collectives as libcp_runtime_gpu (NCCL) calls on the kernels'
/// stream; see docs/Lowering.md §6.
void buildNVVMLoweringPipeline(OpPassManager &pm,
                               const NVVMLoweringOptions &options);

/// Registers `cp-lower-to-cpu` and `cp-lower-to-nvvm`.
void registerCPPipelines();

} // namespace cp
} // namespace mlir

#endif // CP_PIPELINES_PIPELINES_H
