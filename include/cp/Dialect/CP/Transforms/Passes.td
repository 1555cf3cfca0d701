//===- Passes.td - cp dialect passes -----------------------*- tablegen -*-===//
//
// Passes over the cp dialect.
//
//===----------------------------------------------------------------------===//

#ifndef CP_DIALECT_CP_TRANSFORMS_PASSES_TD
#define CP_DIALECT_CP_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def ApplySchemePass : Pass<"cp-apply-scheme", "ModuleOp"> {
  let summary = "Rewrite cp.attention into collectives and cp.local_attention";
  let description = [{
    Applies a context-parallel scheme to every `cp.attention`. A scheme
    attribute on the op wins; otherwise the `scheme` option applies; an op
    with neither is an error (there is no silent default). Each op becomes
    `cp` collectives plus `cp.local_attention` ops whose `q_offset` /
    `kv_offset` place the local blocks in the global sequence, as DESIGN §2
    specifies:

    - `allgather`: all-gather K and V along the sequence; `q_offset = r*L`.
    - `ulysses`: all-to-all Q, K, V from sequence- to head-sharded, attend
      over the full sequence, all-to-all the output back.
    - `hybrid(u)`: Ulysses on the inner axis (size u) of a `(P/u) x u` grid,
      K/V all-gather on the outer axis; `q_offset = (r / u)*u*L`. A 1-D grid
      gets a derived 2-D `shard.grid` whose row-major linear index equals
      the 1-D index.
    - `head_tail`: swap the query tail half with rank `P-1-r`, all-gather K
      and V, attend both halves at their global offsets, swap the tail
      output back.
    - `ring`: P steps; each attends the local queries to the K/V block held
      now (with its log-sum-exp), merges into a running result with
      `cp.merge`, and shifts K/V one rank on (the shift for the next step is
      issued before the attention, so it can overlap). Query/key blocks the
      structured mask hides entirely are skipped (`scf.if`). The first and
      last steps are emitted on their own; the ones between are one
      `scf.for` (`unroll-ring` emits them all).
    - `zigzag`: ring over the zigzag layout (rank `r` holds chunks `r` and
      `2P-1-r`), attending chunk pairs so causal work is equal on every
      rank; an op in the contiguous layout is converted with `cp.relayout`
      and converted back.
    - `auto` is resolved by `cp-choose-scheme`: when an op would be
      rewritten under `auto`, this pass first runs `cp-choose-scheme` with
      its own `scheme` and `machine` options, so `cp-apply-scheme{scheme=auto}`
      (and every entry point built on it: the Python package's
      `apply_scheme` and `compile_cpu`, the C API's pipelines,
      `cp-compile --scheme=auto`) chooses exactly as the `cp-lower-to-cpu`
      and `cp-lower-to-nvvm` pipelines do. When no scheme applies, that
      pass's one error listing every rejection is the diagnostic.

    The rank index comes from `shard.process_multi_index`, so the result
    stays SPMD. Constraints a scheme needs are checked here with the same
    messages as the `cp.attention` verifier. Each rewritten op's
    `cp.bytes_per_rank` attribute records DESIGN §2's bytes sent per rank.
  }];
  let options = [
    Option<"scheme", "scheme", "::mlir::cp::SchemeOption",
           /*default=*/"::mlir::cp::SchemeOption()",
           "Scheme for cp.attention ops without a scheme attribute: allgather, "
           "ulysses, hybrid(u), head_tail, ring, zigzag or auto (resolved by "
           "running cp-choose-scheme first)">,
    Option<"machine", "machine", "std::string", /*default=*/"\"h200-nvlink\"",
           "cp-choose-scheme's machine preset for ops whose scheme is auto "
           "(h200-nvlink, multinode-ib or host-mpi)">,
    Option<"unrollRing", "unroll-ring", "bool", /*default=*/"false",
           "Emit each of ring's and zigzag's P steps instead of one scf.for "
           "over the steps between the first and the last (IR that grows "
           "with P; for inspecting the steps one by one)">,
    Option<"requireMatch", "require-match", "bool", /*default=*/"false",
           "Fail when a function contains no cp.attention to rewrite">,
    Option<"reportRewrites", "report", "bool", /*default=*/"false",
           "Emit a remark per function counting the ops rewritten per scheme "
           "(pass statistics need an LLVM built with statistics enabled)">
  ];
  let statistics = [
    Statistic<"numAllGather", "allgather", "cp.attention ops rewritten with allgather">,
    Statistic<"numUlysses", "ulysses", "cp.attention ops rewritten with ulysses">,
    Statistic<"numHybrid", "hybrid", "cp.attention ops rewritten with hybrid">,
    Statistic<"numHeadTail", "head_tail", "cp.attention ops rewritten with head_tail">,
    Statistic<"numRing", "ring", "cp.attention ops rewritten with ring">,
    Statistic<"numZigzag", "zigzag", "cp.attention ops rewritten with zigzag">,
    Statistic<"numPlugin", "plugin", "cp.attention ops rewritten with a plugin's scheme">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::shard::ShardDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::cp::CPDialect"
  ];
}

def RaiseAttentionPass : Pass<"cp-raise-attention", "ModuleOp"> {
  let summary = "Raise attention written in linalg or tosa to cp.attention";
  let description = [{
    Finds scaled-dot-product attention computed with other dialects' ops and
    replaces it with `cp.attention` on a named grid, so that the scheme
    passes can parallelize it. The function is read as the program each
    rank runs on its shard of the sequence (SPMD): Q, K and V keep their
    types, and positions in masks become global positions.

    Accepted, matched structurally and exactly (docs/Raising.md):

    - contractions: `linalg.matmul`, `linalg.batch_matmul` or mul/add
      `linalg.generic` contractions with 0 to 2 batch dims, K and V
      transposed by their indexing maps or by `linalg.transpose`;
      `tosa.matmul` with `tosa.transpose`;
    - the scale: a multiplication or division of the scores, or of Q, by a
      constant (1.0 when there is none);
    - masks: `arith.select(cond, s, -inf)` on a `linalg.index` predicate
      becomes a `mask_mod` region on global positions, folded into
      `mask = causal` / `sliding_window(W)` when it is one; an i1 or
      additive mask tensor becomes `explicit_mask` on a one-process group
      (it only covers the local keys, so with P > 1 it is a near miss);
    - a transform of the scaled scores and their positions before the masks
      (e.g. soft-capping) becomes a `score_mod` region;
    - softmax over the key dim: `linalg.softmax`, or max / sub / exp / sum /
      div generics (`linalg.reduce` for the reductions), or tosa's
      `reduce_max`, `sub`, `exp`, `reduce_sum`, `reciprocal`, `mul`;
    - GQA: K and V broadcast to the query heads (`linalg.broadcast` or a
      copy generic, then `tensor.collapse_shape`) so that query head h reads
      K/V head h / G, or a `h floordiv G` head map in the contraction.

    Anything else is a near miss and left alone: a softmax over another
    dim, a contraction over the wrong dim, P^T V, an exp without the max
    subtraction, a non-constant scale, a fill other than -inf, GQA copies
    in the other order, an intermediate with another user. With
    `report-near-misses` the nearest miss of each function is a remark;
    with `require-in` a listed function without attention is an error that
    says what was searched for and what came nearest.

    Front ends rarely emit these forms as they are. With `normalize` (the
    default) each function that holds a near miss is also tried after
    cp-normalize-attention's exact rewrites (batched matmuls over reshapes
    lifted, `[B, L, H, D]` operands and K Q^T scores, keepdim statistics,
    copy generics, unused argmax results, the dialects' folds); when that raises more attention
    the normalized function replaces the original, and each raised op's
    `report-near-misses` remark names the forms normalized.
  }];
  let options = [
    Option<"grid", "grid", "std::string", /*default=*/"\"cp\"",
           "shard.grid the cp.attention ops run on">,
    Option<"gridSize", "grid-size", "int64_t", /*default=*/"0",
           "Declare the grid as shard.grid @<grid>(shape = N) when the module "
           "lacks it (0: the grid must exist)">,
    Option<"scheme", "scheme", "::mlir::cp::SchemeOption",
           /*default=*/"::mlir::cp::SchemeOption()",
           "scheme attribute for the raised ops (allgather, ulysses, "
           "hybrid(u), head_tail, ring, zigzag, auto); empty: none">,
    ListOption<"requireIn", "require-in", "std::string",
               "Functions that must contain attention: fail when one has "
               "none">,
    Option<"reportNearMisses", "report-near-misses", "bool",
           /*default=*/"false",
           "Emit a remark with the nearest candidate each function left "
           "alone, and one per raised op naming the forms it recognized">,
    Option<"normalize", "normalize", "bool", /*default=*/"true",
           "Also try each function after cp-normalize-attention's exact "
           "rewrites, and keep them when more attention is raised">
  ];
  let statistics = [
    Statistic<"numRaised", "raised", "attention raised to cp.attention">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::shard::ShardDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::cp::CPDialect"
  ];
}

def NormalizeAttentionPass : Pass<"cp-normalize-attention"> {
  let summary = "Rewrite front ends' attention forms into the ones cp-raise-attention matches";
  let description = [{
    Exact rewrites (the IR computes the same values) of the forms torch-mlir,
    TOSA producers and other front ends emit around attention, into the
    forms `cp-raise-attention` matches (docs/Raising.md, "Normalization"):

    - a `tosa.matmul` or `linalg.batch_matmul` on rank-3 operands whose
      batch dim merges several (an operand reshaped from `[B, H, L, D]`, or
      the result reshaped into `[B, H, L, L]`) becomes one contraction
      `linalg.generic` over the separate batch dims, reading through
      transposes of its operands; the result is collapsed back, so the
      reshapes around it cancel;
    - a reshape of a reshape back to the first one's source type is that
      source;
    - a contraction input held as `[B, L, H, D]` (read through a
      permutation that puts a sequence or feature dim before a batch dim)
      is transposed to batch dims first; scores computed as K Q^T and read
      transposed by their one user are computed as Q K^T;
    - a keepdim statistic (an output `[.., L, 1]` written through a map
      with a constant 0, as torch's `max.dim` and `sum.dim_IntList` with
      `keepdim` lower) is computed as `[.., L]` and expanded; a generic
      reading an `expand_shape` that only adds unit dims through constant
      0s reads its source;
    - an unused result of a generic whose computation the other results do
      not need (the argmax of `max.dim`) is dropped;
    - the canonicalizations and folds of tosa, tensor, linalg and arith
      (`tosa.add` of zeros, `tosa.reciprocal` of a constant, fills read by
      generics, dead ops).

    `cp-raise-attention` runs these on a copy of each function with a near
    miss; this pass runs them alone, to see what the matcher is given.
  }];
  let options = [
    Option<"report", "report", "bool", /*default=*/"false",
           "Emit a remark counting the rewrites applied per form">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def ChooseSchemePass : Pass<"cp-choose-scheme"> {
  let summary = "Resolve scheme = auto with a cost model of the machine";
  let description = [{
    For every `cp.attention` whose scheme is `auto` (or that has none, when
    the `scheme` option is `auto`), estimates each scheme on a model of the
    machine and sets `scheme` to the fastest one whose constraints and
    memory budget hold. The op also gets a `cp.cost` dictionary with the
    machine, the choice, and per scheme either its estimate (`time_ns`,
    `comm_ns`, `compute_ns`, `bytes` sent per rank, `flops` of the busiest
    rank, peak `memory` per rank) or why it was rejected, so the decision is
    visible in the IR. When no scheme applies, the op gets one error that
    lists every rejection.

    Training. A `cp.attention_grad` with scheme `auto` is costed too: the
    backward moves SchemeTraffic's backward bytes and does 2.5x the
    forward's FLOPs. When its `output` and `lse` are the results of a
    `cp.attention` whose scheme is also `auto`, the two are one training
    step: both get the scheme that is fastest for forward + backward, and
    both record `cp.cost` with `passes = "forward+backward"`. A lone
    backward is ranked by the backward alone. With `training=true`, every
    remaining `auto` forward is ranked by forward + backward as well.

    The machine is the `machine` preset, then the `cp.machine` dictionaries
    on the op's ancestors and the op (keys as in docs/Schemes.md, e.g.
    `{preset = "multinode-ib", memory = 8.0e10}`), then any numeric option
    of this pass that is set.

    ```mlir
    %o = cp.attention %q, %k, %v on @cp grid_axes = [0] mask = causal
        scheme = auto : ...
    // cp-choose-scheme:
    %o = cp.attention %q, %k, %v on @cp grid_axes = [0] mask = causal
        scheme = ulysses {cp.cost = {allgather = {bytes = ..., time_ns = ...},
        chosen = "ulysses", machine = "h200-nvlink", ...}} : ...
    ```
  }];
  let options = [
    Option<"scheme", "scheme", "::mlir::cp::SchemeOption",
           /*default=*/"::mlir::cp::SchemeOption()",
           "Scheme of cp.attention ops that carry none (auto resolves them "
           "here; anything else leaves them alone)">,
    Option<"machine", "machine", "std::string", /*default=*/"\"h200-nvlink\"",
           "Machine preset: h200-nvlink, multinode-ib or host-mpi">,
    Option<"intraNodeBandwidth", "intra-node-bandwidth", "double",
           /*default=*/"0", "Bytes/s a rank sends within a node (0: preset)">,
    Option<"interNodeBandwidth", "inter-node-bandwidth", "double",
           /*default=*/"0", "Bytes/s a rank sends across nodes (0: preset)">,
    Option<"latency", "latency", "double", /*default=*/"0",
           "Seconds per collective step (0: preset)">,
    Option<"ranksPerNode", "ranks-per-node", "int64_t", /*default=*/"0",
           "Consecutive ranks that share a node (0: preset)">,
    Option<"attentionFlops", "attention-flops", "double", /*default=*/"0",
           "FLOP/s the attention kernel sustains (0: preset)">,
    Option<"memoryBandwidth", "memory-bandwidth", "double", /*default=*/"0",
           "Device memory bytes/s, for merges (0: preset)">,
    Option<"memory", "memory", "double", /*default=*/"0",
           "Bytes of memory per rank the attention may use (0: preset)">,
    Option<"launchOverhead", "launch-overhead", "double", /*default=*/"0",
           "Seconds per kernel launch (0: preset)">,
    Option<"overlap", "overlap", "double", /*default=*/"-1",
           "Fraction of a ring step's attention that hides its shift, 0..1 "
           "(negative: preset)">,
    Option<"training", "training", "bool", /*default=*/"false",
           "Rank the schemes of every auto cp.attention by forward + "
           "backward (its backward is elsewhere, e.g. another function)">
  ];
  let dependentDialects = ["::mlir::cp::CPDialect"];
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
    not with depth. Run before `cp-lower-local-attention`, which then
    lowers the functions' single ops; `cp-lower-to-cpu` does.

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
  let dependentDialects = ["::mlir::func::FuncDialect"];
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

#endif // CP_DIALECT_CP_TRANSFORMS_PASSES_TD
