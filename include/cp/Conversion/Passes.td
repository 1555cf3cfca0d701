//===- Passes.td - cp conversion passes --------------------*- tablegen -*-===//
//
// Conversions out of the cp dialect.
//
//===----------------------------------------------------------------------===//

#ifndef CP_CONVERSION_PASSES_TD
#define CP_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertCPToMPIPass : Pass<"convert-cp-to-mpi", "ModuleOp"> {
  let summary = "Lower cp.buffer collectives and shard process indices to "
                "libcp_runtime calls";
  let description = [{
    Replaces every bufferized cp collective with a call into
    `libcp_runtime` (`include/cp/Runtime/cp_runtime.h`), which implements
    it over MPI, and every `shard.process_multi_index` /
    `shard.process_linear_index` with the runtime's grid queries. Buffers
    are passed as unranked memrefs, so any shape and stride is accepted:

    ```mlir
    cp.buffer.all_gather %k into %kf on @cp grid_axes = [0] gather_axis = 2
        : memref<1x2x64x32xf32> into memref<1x2x256x32xf32>
    // becomes
    %g = call @cp_rt_group(%name, %spec) : (memref<*xi8>, memref<*xi64>) -> i64
    call @cp_rt_all_gather_f32(%g, %in, %out, %c2_i64)
        : (i64, memref<*xf32>, memref<*xf32>, i64) -> ()
    ```

    A group is described to the runtime by two constant globals: the grid
    name, and `[grid rank, shape..., number of axes, axes...]`. The runtime
    checks that the world has as many processes as the grid and caches
    one communicator per group. `shard.grid` symbols are erased once
    nothing refers to them; any other remaining `shard` op is an error.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::memref::MemRefDialect"
  ];
}

def ConvertCPToNCCLPass : Pass<"convert-cp-to-nccl", "ModuleOp"> {
  let summary = "Lower the host's GPU ops and async cp.buffer collectives to "
                "LLVM, the collectives as NCCL calls on their stream";
  let description = [{
    The GPU counterpart of `convert-cp-to-mpi`, run after
    `gpu-async-region` has threaded the collectives (gpu::AsyncOpInterface
    ops) into the token chain of the kernels around them, in place of
    upstream `gpu-to-llvm`. A `!gpu.async.token` becomes a stream (or an
    event) only in the conversion that lowers the host's GPU ops, and that
    conversion tracks which is which; so this pass is that conversion with
    the collectives added. Each async collective with one dependency
    becomes a call into `libcp_runtime_gpu` that receives the stream of its
    dependency and enqueues the NCCL operation on it; its token is that same
    stream, as for `gpu.alloc` or `gpu.memcpy`:

    ```mlir
    %t0 = gpu.wait async
    %t1 = cp.buffer.all_gather async [%t0] %k into %kf on @cp grid_axes = [0]
        gather_axis = 0 : memref<1x4x64x32xf32> into memref<4x4x64x32xf32>
    gpu.wait [%t1]
    // becomes
    %s = llvm.call @mgpuStreamCreate() : () -> !llvm.ptr
    %g = llvm.call @cp_rt_group(...) : (...) -> i64
    llvm.call @cp_rt_gpu_all_gather(%g, %rank, %in, %rank, %out, %c4, %c0, %s)
    llvm.call @mgpuStreamSynchronize(%s) : (!llvm.ptr) -> ()
    ```

    Buffers go to the runtime as unranked descriptors; the runtime checks
    that they are dense and exchanged along dim 0 (`cp-pack-collectives`).
    Shard process indices become the runtime's grid queries, as in
    `convert-cp-to-mpi`.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::memref::MemRefDialect"
  ];
}

#endif // CP_CONVERSION_PASSES_TD
