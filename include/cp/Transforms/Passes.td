//===- Passes.td - passes over upstream dialects -----------*- tablegen -*-===//
//
// Steps of the cp pipelines that touch only upstream dialects: CPU math,
// C-callable entry points, distinct result buffers, and placing a host program's buffers and
// element-wise loops on the GPU.
//
//===----------------------------------------------------------------------===//

#ifndef CP_TRANSFORMS_PASSES_TD
#define CP_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def MapParallelLoopsToGPUPass : Pass<"cp-map-parallel-loops-to-gpu"> {
  let summary = "Map host scf.parallel loops to GPU blocks of threads";
  let description = [{
    The element-wise loops of a GPU program (pack and unpack copies, the
    merge of partial attention results, materialized masks) come from
    `convert-linalg-to-parallel-loops` as one `scf.parallel` over all
    dimensions. Upstream's `gpu-map-parallel-loops` maps the dimensions of
    such a loop to blocks, one thread each, and runs any dimension past the
    third sequentially.

    This pass linearizes every outermost `scf.parallel` outside kernels into
    one index whose fastest-varying part is the loop's last dimension, and
    splits it into blocks of `block-size` threads: the outer loop is mapped
    to block x, the inner one to thread x, and a guard keeps the last block
    in bounds. Consecutive threads touch consecutive elements of the
    innermost dimension, so accesses to row-major buffers coalesce.
    `convert-parallel-loops-to-gpu` then makes the `gpu.launch`.

    ```mlir
    scf.parallel (%i, %j) = (%c0, %c0) to (%c64, %c48) step (%c1, %c1) {...}
    // becomes (3072 = 64 * 48 elements, 12 blocks of 256 threads)
    scf.parallel (%b) = (%c0) to (%c12) step (%c1) {
      scf.parallel (%t) = (%c0) to (%c256) step (%c1) {
        %n = affine.apply (d0, d1) -> (d0 * 256 + d1) (%b, %t)
        scf.if (%n < %c3072) { %i, %j = delinearize %n into (64, 48); ... }
      } {mapping = [#gpu.loop_dim_map<processor = thread_x, ...>]}
    } {mapping = [#gpu.loop_dim_map<processor = block_x, ...>]}
    ```

    A loop with reductions cannot be mapped this way and is an error.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per block (a multiple of 32, at most 1024)">,
  ];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::scf::SCFDialect"
  ];
}

def PlaceBuffersOnGPUPass : Pass<"cp-place-buffers-on-gpu"> {
  let summary = "Allocate, free and copy the host program's buffers on the GPU";
  let description = [{
    In a GPU program every buffer lives in device memory: the function's
    arguments are device buffers, and so are the buffers bufferization
    allocates. Outside GPU kernels this pass rewrites

    - `memref.alloc` into `gpu.alloc` and `memref.dealloc` into
      `gpu.dealloc`;
    - `memref.copy` into `gpu.memcpy` when both sides are dense, else into
      `linalg.copy` (a kernel after `convert-parallel-loops-to-gpu`).

    The ops are synchronous; `gpu-async-region` later threads them into the
    stream. Host code that would load or store a device buffer is an error.

    Host bookkeeping stays in host memory: an allocation whose only uses
    are scalar loads and stores, `memref.dim`, `memref.dealloc` and call
    operands, and the arguments of private functions every caller passes
    such a buffer. These are the ownership arrays of buffer deallocation
    (the pointers and flags `dealloc_helper` compares) that a loop over
    freshly allocated buffers, such as the ring's steps, needs.

    ```mlir
    %b = memref.alloc() : memref<1x4x256x32xf32>
    memref.copy %a, %b : memref<1x4x256x32xf32> to memref<1x4x256x32xf32>
    // becomes
    %b = gpu.alloc () : memref<1x4x256x32xf32>
    gpu.memcpy %b, %a : memref<1x4x256x32xf32>, memref<1x4x256x32xf32>
    ```
  }];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::memref::MemRefDialect"
  ];
}

def ApproximateMathPass : Pass<"cp-approximate-math"> {
  let summary = "Replace f32 math functions with polynomial approximations";
  let description = [{
    Applies upstream MLIR's polynomial approximations to `math.exp`,
    `math.log`, `math.tanh` and `math.erf` on f32 scalars and vectors, so
    that the attention loops' `exp` stays in vector registers instead of
    becoming one libm call per lane. The approximations are accurate to a
    few ulp in f32.

    ```mlir
    %e = math.exp %x : vector<8xf32>
    // becomes a range reduction, a polynomial and an exponent bit-shift in
    // arith ops on vector<8xf32>
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def ExportCInterfacePass : Pass<"cp-export-c-interface", "ModuleOp"> {
  let summary = "Give every public function a C-callable wrapper";
  let description = [{
    Sets `llvm.emit_c_interface` on every public `func.func` definition, so
    that the LLVM lowering also emits `_mlir_ciface_<name>`, which takes
    memref arguments as pointers to descriptors. This is the entry point
    drivers (`cp-run-attention`, Python) call:

    ```mlir
    func.func @attention(%q: memref<1x8x64x32xf32>, ...)
    // becomes
    func.func @attention(%q: memref<1x8x64x32xf32>, ...)
        attributes {llvm.emit_c_interface}
    ```

    Private definitions (the kernels `cp-outline-local-attention` shares
    between layers) get `llvm.linkage = #llvm.linkage<internal>`, so that
    the compiled program exports only its public functions.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def DistinctResultBuffersPass
    : Pass<"cp-distinct-result-buffers", "::mlir::func::FuncOp"> {
  let summary = "Return each buffer at most once from a function";
  let description = [{
    A function whose `func.return` names the same memref more than once
    (two results that CSE merged, e.g. two identical attentions) is valid
    IR, but upstream `buffer-results-to-out-params{hoist-static-allocs}`
    crashes on it. This pass, run before it, gives every repeated operand a
    copy of its own, so that each result has a distinct buffer to hoist into
    its out-parameter. Operands with a non-identity layout are left alone
    (function boundaries bufferize to identity layouts in cp's pipelines).

    ```mlir
    return %a, %a : memref<4xf32>, memref<4xf32>
    // becomes
    %b = memref.alloc() : memref<4xf32>
    memref.copy %a, %b : memref<4xf32> to memref<4xf32>
    return %a, %b : memref<4xf32>, memref<4xf32>
    ```
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def TensorCoreLaunchBoundsPass
    : Pass<"cp-tensor-core-launch-bounds", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Ask ptxas for registers over occupancy in tensor-core kernels";
  let description = [{
    Sets `nvvm.minctasm = 1` (PTX `.minnctapersm 1`) on every kernel
    `gpu.func` that issues `nvvm.mma.sync`, unless it already has one. The
    tensor-core attention kernel keeps Q fragments, scores and output
    accumulators in registers (docs/GPU.md, "The tensor-core kernel");
    with only the `.maxntid 128` the outlining gives it, ptxas may cap it
    at 168 registers to fit a third block per SM and spill instead. One
    resident block is what the kernel is designed for, as FlashAttention's
    `__launch_bounds__(128, 1)` states. Other kernels are left alone.

    ```mlir
    gpu.func @k() kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      ... nvvm.mma.sync ...
    // becomes
    gpu.func @k() kernel attributes {known_block_size = array<i32: 128, 1, 1>,
                                     nvvm.minctasm = 1 : i32} {
    ```
  }];
}

def ShareEqualKernelsPass : Pass<"cp-share-equal-kernels", "ModuleOp"> {
  let summary = "One gpu.module for kernels that are equal up to their names";
  let description = [{
    `gpu-kernel-outlining` gives every `gpu.launch` a `gpu.module` of its
    own, so a program whose attention layers, cases or ring steps launch
    the same kernel (the same conversions, merges and copies, the same
    local attention on the same shapes and attributes) carries one copy per
    launch, and `gpu-module-to-binary` compiles each copy. This pass keeps
    the first of the modules that print the same once their own symbol
    names are left out, points every `gpu.launch_func` of the others at
    it, and erases them. Modules that some other operation names (not a
    `gpu.launch_func`) are left alone.

    ```mlir
    gpu.launch_func @copy_kernel::@copy_kernel ...
    gpu.launch_func @copy_kernel_0::@copy_kernel ...
    gpu.module @copy_kernel { gpu.func @copy_kernel(...) kernel {...} }
    gpu.module @copy_kernel_0 { gpu.func @copy_kernel(...) kernel {...} }
    // becomes (the two bodies being equal)
    gpu.launch_func @copy_kernel::@copy_kernel ...
    gpu.launch_func @copy_kernel::@copy_kernel ...
    gpu.module @copy_kernel { gpu.func @copy_kernel(...) kernel {...} }
    ```
  }];
}

#endif // CP_TRANSFORMS_PASSES_TD
