//===- Passes.td - cp buffer passes ------------------------*- tablegen -*-===//
//
// Passes over bufferized cp (cp.buffer.* ops): sharing local attention
// kernels, overlapping and packing collectives, freeing buffers early.
//
//===----------------------------------------------------------------------===//

#ifndef CP_DIALECT_CP_BUFFERS_PASSES_TD
#define CP_DIALECT_CP_BUFFERS_PASSES_TD

include "mlir/Pass/PassBase.td"

def OutlineLocalAttentionPass
    : Pass<"cp-outline-local-attention", "ModuleOp"> {
  let summary = "One private kernel function per distinct local attention";
  let description = [{
    Replaces each `cp.buffer.local_attention` and
    `cp.buffer.local_attention_grad` by a `func.call` of a private function
    whose body is that op on the function's arguments. Ops with the same
    attributes and operand types share one function, so a model of N
    identical layers lowers (and LLVM compiles) one attention loop nest
    instead of N: compile time grows with the number of distinct layers,
    not with depth. A memref parameter keeps its shape and strides but
    takes a dynamic offset (`memref.cast` at the call), so views of one
    buffer at different offsets, such as zigzag's two chunks or a ring
    step's halves, share one function too. Run before
    `cp-lower-local-attention`, which then lowers the functions' single
    ops; `cp-lower-to-cpu` does.

    ```mlir
    cp.buffer.local_attention %q, %k, %v offsets(%a, %b) into %o ...
    cp.buffer.local_attention %o, %k, %v offsets(%a, %b) into %o2 ...
    // becomes
    call @cp_local_attention_0(%q, %k, %v, %a, %b, %o) : (...) -> ()
    call @cp_local_attention_0(%o, %k, %v, %a, %b, %o2) : (...) -> ()
    func.func private @cp_local_attention_0(...) {
      cp.buffer.local_attention %arg0, %arg1, %arg2 offsets(%arg3, %arg4)
          into %arg5 ...
      return
    }
    ```
  }];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect"];
}

def OverlapCollectivesPass : Pass<"cp-overlap-collectives"> {
  let summary = "Split buffer shifts into start and wait around independent work";
  let description = [{
    Turns each `cp.buffer.shift` into `cp.buffer.shift_start` at the same
    place and a `cp.buffer.wait` placed as late as its buffers allow: just
    before the first later op in the block that reads or writes the output
    buffer (or a view of it), writes or frees the input buffer, has effects
    the pass cannot see, or ends the block. Work in between (the ring's
    attention on the current K/V block) then overlaps the transfer: on CPUs
    through nonblocking MPI, on GPUs through a second stream.

    ```mlir
    cp.buffer.shift %k into %k1 on @cp grid_axes = [0] offset = 1 : ...
    cp.buffer.local_attention %q, %k, %v offsets(%qo, %ko) into %o, %l : ...
    cp.buffer.local_attention %q, %k1, %v1 ...
    // becomes
    %req = cp.buffer.shift_start %k into %k1 on @cp grid_axes = [0] offset = 1 : ...
    cp.buffer.local_attention %q, %k, %v offsets(%qo, %ko) into %o, %l : ...
    cp.buffer.wait %req
    cp.buffer.local_attention %q, %k1, %v1 ...
    ```
  }];
  let dependentDialects = ["::mlir::cp::CPDialect"];
}

def PackCollectivesPass : Pass<"cp-pack-collectives"> {
  let summary = "Give bufferized collectives dense buffers exchanged along dim 0";
  let description = [{
    NCCL moves flat byte ranges, so a device collective needs dense buffers
    in which every rank's block is contiguous. This pass rewrites each
    `cp.buffer` collective that is not in that form:

    - `all_gather` along dim `a`: gather along dim 0 into a stacked buffer,
      then copy block r to `[r*n, (r+1)*n)` along `a` of the output;
    - `all_to_all` (split `s`, concat `c`): copy input part j (along `s`)
      to block j of a stacked send buffer, exchange along dim 0, copy block
      r to part r (along `c`) of the output;
    - `reduce_scatter` along dim `a`: copy block r (along `a`) to block r
      of a stacked send buffer, reduce-scatter along dim 0 into the output
      (or a dense temporary copied out);
    - `exchange` / `shift`: dense copies of strided inputs or outputs.

    The P blocks move in one copy each way, not P: both sides are split
    into `[P, n]` along their dim (`memref.expand_shape`) and the source
    view is transposed so that its block index sits where the target's
    does (`memref.transpose`), so the IR does not grow with P. Copies are
    `linalg.copy` (GPU kernels after `convert-parallel-loops-to-gpu`);
    temporaries are freed after use. Static shapes and group sizes are
    required. `cp-lower-to-cpu{pack-collectives}` runs this pass on CPU
    ranks too, which checks the packing numerically without a GPU.

    ```mlir
    cp.buffer.all_to_all %q into %qh on @cp grid_axes = [0] split_axis = 1
        concat_axis = 2 : memref<1x8x64x32xf32> into memref<1x2x256x32xf32>
    // becomes (heads split into [4, 2], block index moved to dim 0)
    %qs = memref.expand_shape %q [[0], [1, 2], [3], [4]] ... to memref<1x4x2x64x32xf32>
    %qt = memref.transpose %qs (d0, d1, d2, d3, d4) -> (d1, d0, d2, d3, d4)
    linalg.copy ins(%qt) outs(%send as memref<4x1x2x64x32xf32>)
    cp.buffer.all_to_all %send into %recv on @cp grid_axes = [0]
        split_axis = 0 concat_axis = 0 : memref<4x2x64x32xf32> into ...
    linalg.copy ins(%recv transposed to [1, 2, 4, 64, 32])
                outs(%qh as memref<1x2x4x64x32xf32>)
    ```
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect",
    "::mlir::memref::MemRefDialect"
  ];
}

def FreeBuffersEarlyPass : Pass<"cp-free-buffers-early"> {
  let summary = "Move deallocations of local buffers up to their last use";
  let description = [{
    Ownership-based buffer deallocation frees a buffer at the end of the
    block that allocated it. Ring attention allocates a K/V block per step,
    so all P blocks, as much as an all-gather, would stay alive until the
    function returns. This pass moves each `memref.dealloc` (or
    `gpu.dealloc`) of a buffer allocated in the same block up to just after
    the last op that uses the buffer or a view of it; a started shift uses
    its buffers until its `cp.buffer.wait`. Peak memory then follows what
    the schedule actually needs (two K/V blocks for ring).

    ```mlir
    %a = memref.alloc() : memref<64xf32>
    "use"(%a) : (memref<64xf32>) -> ()
    "other"() : () -> ()
    memref.dealloc %a : memref<64xf32>
    // becomes
    %a = memref.alloc() : memref<64xf32>
    "use"(%a) : (memref<64xf32>) -> ()
    memref.dealloc %a : memref<64xf32>
    "other"() : () -> ()
    ```
  }];
}

#endif // CP_DIALECT_CP_BUFFERS_PASSES_TD
