//===- Passes.td - cp conversion passes --------------------*- tablegen -*-===//
//
// Conversions into the cp dialect (upstream shard collectives, ShardToCP)
// and out of it: the local attention to CPU loops (CPToLoops) or a GPU
// kernel (CPToGPU), the collectives to MPI (CPToMPI) or NCCL (CPToNCCL)
// calls of the runtime.
//
//===----------------------------------------------------------------------===//

#ifndef CP_CONVERSION_PASSES_TD
#define CP_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertShardToCPPass : Pass<"convert-shard-to-cp"> {
  let summary = "Rewrite upstream shard collectives as cp collectives";
  let description = [{
    Makes a program partitioned with upstream's tools (`shard.sharding`,
    `sharding-propagation`, `shard-partition`) lower through cp's
    collectives, which have MPI (`convert-cp-to-mpi`) and NCCL
    (`convert-cp-to-nccl`) lowerings. Groups keep their meaning:
    `grid_axes` of a `shard.grid`, ranked row-major, in both dialects.

    | shard | cp |
    |---|---|
    | `all_gather gather_axis = a` | `all_gather gather_axis = a` |
    | `all_to_all split_axis = s concat_axis = c` | `all_to_all split_axis = s concat_axis = c` |
    | `reduce_scatter scatter_axis = a` (sum) | `reduce_scatter scatter_axis = a` |
    | `shift shift_axis = x offset = k [rotate]` | `shift grid_axes = [x] offset = (-k) mod P` |

    The shift is the one place the two dialects disagree: `shard.shift`
    gives device `r` the input of device `r + k` (data moves to lower
    indices), `cp.shift` gives rank `r` the input of rank `r - offset`.
    A non-rotating `shard.shift` leaves the devices without a source
    undefined; the rotation is one such result.

    ```mlir
    %1 = shard.shift %0 on @grid grid_axes = [0] shift_axis = 0 offset = 1 rotate
        : tensor<2xf32> -> tensor<2xf32>
    // becomes, on a grid of 4
    %1 = cp.shift %0 on @grid grid_axes = [0] offset = 3 : tensor<2xf32>
    ```

    A collective cp has no counterpart for (`all_reduce`, `all_slice`,
    `broadcast`, `gather`, `scatter`, `reduce`, `send`, `recv`), a
    reduction other than sum, or a shift along a dynamic grid axis or one
    of size 0 is an error on the op that names it.
  }];
  let dependentDialects = ["::mlir::cp::CPDialect"];
}

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

def LowerLocalAttentionPass : Pass<"cp-lower-local-attention"> {
  let summary = "Lower cp.buffer.local_attention to tiled online-softmax loops";
  let description = [{
    Rewrites every `cp.buffer.local_attention` into a flash-attention loop
    nest in scf, vector, math and memref (docs/Lowering.md §2):

    - `scf.parallel` over (batch, head, pair of query tiles); each pair is
      tiles `t` and `T-1-t`, so causal work is balanced across iterations;
    - per query tile, Q is packed transposed and pre-scaled into a scratch
      buffer; scores are kept transposed (keys by rows, query rows as vector
      lanes), so the online softmax is made of vertical vector ops;
    - both contractions are register-blocked broadcast-FMA micro-kernels:
      scores broadcast K's scalars against Q lanes, the output broadcasts
      probabilities against V's lanes;
    - for `causal` and `sliding_window`, only the key tiles a query tile can
      see are visited, and the mask is applied only on tiles it cuts;
      explicit masks are applied per tile;
    - fully masked rows give 0 (and `lse = -inf`), never NaN; f16/bf16 are
      read into f32 and the output is truncated once.

    K is read in place when it is dense f32, else packed once into a dense
    f32 copy; V is always packed once into f32 panels of one register
    block's lanes (zero padded), which the output kernel streams.

    With `bf16-dot` and bf16 Q, K and V, both products run on AVX512-BF16
    dot products (`x86vector.avx512.dot`): a step of the register block is
    a pair of bf16 products per lane, accumulated in f32. K is read in
    place (pairs of adjacent head dims broadcast to every lane), Q is
    packed per tile into pairs of head dims per query lane, V once into
    pair panels (two adjacent rows per lane), and the probabilities are
    rounded to bf16 pairs (two adjacent keys per query) before the second
    product. A remark says why a bf16 op keeps the f32 path (odd or dynamic
    D, non-contiguous K rows, odd tile-kv).

    `cp.buffer.local_attention_grad` becomes the FlashAttention-2 backward
    on the same kernels (docs/Lowering.md, "The backward"): `scf.parallel`
    over (batch, KV head); per query head of the group, Q, dO, lse and
    `rowsum(dO o O)` are packed once; then for each key tile of
    `grad-tile-kv` rows, every visible query tile recomputes P from the
    lse and adds its products to f32 dK/dV/dQ accumulators that only that
    thread writes. Scratch
    per query tile is `memref.alloca` inside the `scf.parallel` (an
    automatic allocation scope); no `Lq x Lkv` buffer is ever created.

    ```mlir
    cp.buffer.local_attention %q, %k, %v offsets(%qo, %c0) into %o mask = causal
        : memref<1x8x64x32xf32>, memref<1x2x256x32xf32>,
          memref<1x2x256x32xf32> into memref<1x8x64x32xf32>
    // becomes
    %panels = memref.alloc(...) : memref<?x?x?x?x16xf32>   // V, packed
    scf.parallel (%b, %h, %v, %d) = ... { ... }            // packing
    scf.parallel (%b, %h, %pair) = ... {
      %qt = memref.alloca() : memref<32x32xf32>              // D x tile-q
      ...
      scf.for %kt = %first to %last step %c1 { ... vector.fma ... }
    }
    memref.dealloc %panels
    ```
  }];
  let options = [
    Option<"tileQ", "tile-q", "int64_t", /*default=*/"32",
           "Query rows per tile (a multiple of vector-width * micro-vectors)">,
    Option<"tileKv", "tile-kv", "int64_t", /*default=*/"64",
           "Key/value rows per tile">,
    Option<"gradTileKv", "grad-tile-kv", "int64_t", /*default=*/"128",
           "Key/value rows per tile of cp.buffer.local_attention_grad (its "
           "dK/dV accumulators stay in cache while every query tile passes, "
           "so a taller tile halves the query-side traffic)">,
    Option<"vectorWidth", "vector-width", "int64_t", /*default=*/"8",
           "f32 lanes per vector">,
    Option<"microRows", "micro-rows", "int64_t", /*default=*/"6",
           "Rows (keys, or value dims) per register block of the FMA kernels">,
    Option<"microVectors", "micro-vectors", "int64_t", /*default=*/"2",
           "Vectors of query lanes per register block of the FMA kernels">,
    Option<"bf16Dot", "bf16-dot", "bool", /*default=*/"false",
           "For bf16 Q, K and V: both products as AVX512-BF16 dot products "
           "(x86vector.avx512.dot, vdpbf16ps) on bf16 pairs with f32 "
           "accumulation, the probabilities rounded to bf16; needs a CPU "
           "with AVX512_BF16 and convert-vector-to-llvm{enable-x86vector}">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect",
    "::mlir::x86vector::X86VectorDialect"
  ];
}

def LowerLocalAttentionToGPUPass : Pass<"cp-lower-local-attention-to-gpu"> {
  let summary = "Lower cp.buffer.local_attention to a flash-attention gpu.launch";
  let description = [{
    Rewrites every `cp.buffer.local_attention` into one `gpu.launch`
    (docs/Lowering.md §6):

    - a block per (query tile, head, batch), `tile-q * threads-per-row`
      threads; R = `threads-per-row` adjacent lanes own one query row;
    - the scaled query tile is staged once in workgroup memory, then each
      key tile the mask leaves visible (StructuredMask.h, as on CPU) is
      staged as f32 K and V tiles;
    - a thread scores keys `lane, lane + R, ...`; the row's max and sum are
      reduced with `gpu.shuffle xor`; probabilities pass through workgroup
      memory; a thread accumulates value columns `lane, lane + R, ...` in
      registers;
    - the mask is applied on tiles it cuts (and explicit masks on every
      tile); fully masked rows give 0 and `lse = -inf`; f16/bf16 are read
      into f32 and the output truncated once.

    D and Dv must be static (they size workgroup memory). `tile-kv = 0`
    picks the largest tile up to 64 that fits `shared-memory-bytes`.

    `kernel=mma` (the default, `auto`, on sm_80 and newer) lowers the
    forward to the tensor-core kernel instead (docs/GPU.md, "The
    tensor-core kernel"): 4 warps own 64 query rows; Q.K^T and P.V run on
    `mma.sync.m16n8k16` (f16/bf16 in, f32 accumulate) with operands from
    `nvgpu.ldmatrix` (`.trans` for V); K/V tiles of 64 keys are staged by
    `nvgpu.device_async_copy` (cp.async) two deep in dynamic workgroup
    memory; the online softmax runs on the accumulators, and P becomes the
    A operand of P.V in registers. Masks, mods, explicit masks, biases,
    lse, GQA and Dv != D (MLA) are all handled as in the SIMT kernel. An op
    it cannot take (f32 or mixed element types, D or Dv not a multiple of
    16 or over 128, a non-contiguous memref) gets the SIMT kernel; under
    `kernel=mma` a remark on the op names the reason.

    `cp.buffer.local_attention_grad` is lowered by
    `cp-lower-local-attention-grad-to-gpu`.

    ```mlir
    cp.buffer.local_attention %q, %k, %v offsets(%qo, %c0) into %o mask = causal
        : memref<1x8x64x32xf16>, ... into memref<1x8x64x32xf16>
    // becomes
    gpu.launch blocks(%tile, %h, %b) in (...) threads(%t, ...) in (%c128, ...)
        workgroup(%qs : memref<32x33xf32, #gpu.address_space<workgroup>>, ...) {
      ... gpu.barrier ... gpu.shuffle xor ... gpu.terminator
    }
    ```
  }];
  let options = [
    Option<"tileQ", "tile-q", "int64_t", /*default=*/"32",
           "Query rows per block">,
    Option<"tileKv", "tile-kv", "int64_t", /*default=*/"0",
           "Keys per staged tile (a multiple of threads-per-row); 0 picks "
           "the largest up to 64 that fits shared-memory-bytes">,
    Option<"threadsPerRow", "threads-per-row", "int64_t", /*default=*/"4",
           "Threads that share one query row (a power of two <= 32)">,
    Option<"sharedMemoryBytes", "shared-memory-bytes", "int64_t",
           /*default=*/"49152",
           "Workgroup memory budget per block (static shared memory)">,
    Option<"kernel", "kernel", "std::string", /*default=*/"\"auto\"",
           "Forward kernel: simt, mma (mma.sync tensor cores, sm_80+) or "
           "auto (mma where the chip and the op allow it, else simt)">,
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90\"",
           "The GPU the kernels are for (sm_XY); kernel=auto and mma need "
           "sm_80 or newer for the tensor-core kernel">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::NVVM::NVVMDialect",
    "::mlir::nvgpu::NVGPUDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def LowerLocalAttentionGradToGPUPass
    : Pass<"cp-lower-local-attention-grad-to-gpu"> {
  let summary = "Lower cp.buffer.local_attention_grad to GPU kernels";
  let description = [{
    Rewrites every `cp.buffer.local_attention_grad` into GPU launches that
    recompute `P = exp(s - lse)` from the forward's log-sum-exp and never
    store an Lq x Lkv buffer (docs/GPU.md, "The backward kernels").

    `kernel=mma` (the default, `auto`, on sm_80 and newer) is
    FlashAttention-2's backward on tensor cores:

    - a preprocessing launch writes `D_i = rowsum(dO o O)` and the lse of
      every query row (+inf for rows that saw no key and for the padding
      of the last query tile, so that P = 0 there) into f32 scratch;
    - the main launch has a workgroup of 4 warps per (key tile of 64 keys,
      KV head, batch); K and V of the tile stay in workgroup memory while
      it loops over the group's query heads and the query tiles the mask
      lets see the keys (Q, dO, lse and D_i staged by `cp.async`, two
      stages deep). Each warp owns 16 keys: S^T = K Q^T and
      dP^T = V dO^T on `mma.sync.m16n8k16` (f32 accumulators, operands by
      `ldmatrix`), P^T and dS^T = P^T o (dP^T - D) in registers, and
      dV += P^T dO, dK += dS^T Q with P^T and dS^T reused as A fragments
      (`ldmatrix.trans` for dO and Q). dK and dV of a GQA group are summed
      in registers and written once;
    - dQ (`dq=atomic`, the default): dS goes through workgroup memory, each
      warp multiplies 16 of its rows by the K tile, and adds the result to
      an f32 dQ in global memory with atomics (a last launch rounds it to
      dq's type when that is not f32). `dq=recompute` instead runs a
      second tensor-core kernel per query tile that recomputes S and dP
      and accumulates dQ in registers: two more matmuls per pair, no
      atomics, a deterministic dQ.

    Masks, `mask_mod`, `score_mod` (with its derivative), explicit masks
    and biases are applied per score as in the forward; causal and window
    masks skip query (and key) tiles, and a document `mask_mod` skips tile
    pairs whose segment ids do not meet. An op the tensor-core kernels
    cannot take (f32 or mixed Q/K/V/dO types, D or Dv not a multiple of 16
    or over 128, a non-contiguous memref, more workgroup memory than the
    chip allows) gets the SIMT kernels; under `kernel=mma` a remark on the
    op names the reason.

    `kernel=simt` (and chips before sm_80) lowers to two SIMT launches of
    `simt-threads` threads per block: one thread per key row accumulates
    that row's dK and dV over the group's query heads and the queries the
    structured mask lets see it (one writer per row, no atomics); one
    thread per query row accumulates its dQ over the keys it may see.

    ```mlir
    cp.buffer.local_attention_grad %q, %k, %v, %o, %lse, %do
        offsets(%qo, %c0) into %dq, %dk, %dv mask = causal
        : memref<1x8x64x64xbf16>, ... into memref<1x8x64x64xbf16>, ...
    // becomes (kernel=mma, dq=atomic)
    gpu.launch ... { ... D_i, lse ... }                 // preprocessing
    gpu.launch blocks(%kt, %kvh, %b) ... threads(...) in (%c128, ...)
        dynamic_shared_memory_size %c65536 {
      ... nvgpu.device_async_copy ... nvgpu.ldmatrix ... nvvm.mma.sync ...
      ... memref.atomic_rmw addf ...
    }
    gpu.launch ... { ... arith.truncf ... }            // dQ to bf16
    ```
  }];
  let options = [
    Option<"kernel", "kernel", "std::string", /*default=*/"\"auto\"",
           "Backward kernels: simt, mma (mma.sync tensor cores, sm_80+) or "
           "auto (mma where the chip and the op allow it, else simt)">,
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90\"",
           "The GPU the kernels are for (sm_XY)">,
    Option<"dq", "dq", "std::string", /*default=*/"\"atomic\"",
           "How the tensor-core backward computes dQ: atomic (f32 atomics "
           "from the dK/dV kernel) or recompute (a second kernel per query "
           "tile; deterministic)">,
    Option<"simtThreads", "simt-threads", "int64_t", /*default=*/"128",
           "Threads per block of the SIMT kernels (a multiple of 32, at "
           "most 1024)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::NVVM::NVVMDialect",
    "::mlir::nvgpu::NVGPUDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
}


#endif // CP_CONVERSION_PASSES_TD
