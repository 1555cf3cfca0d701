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

#endif // CP_CONVERSION_PASSES_TD
