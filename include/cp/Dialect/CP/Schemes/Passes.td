//===- Passes.td - cp scheme passes ------------------------*- tablegen -*-===//
//
// How a sharded cp.attention becomes collectives and local attention:
// cp-choose-scheme, cp-outline-attention-layers and cp-apply-scheme.
//
//===----------------------------------------------------------------------===//

#ifndef CP_DIALECT_CP_SCHEMES_PASSES_TD
#define CP_DIALECT_CP_SCHEMES_PASSES_TD

include "mlir/Pass/PassBase.td"

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

    The machine is the `machine` option, then the `cp.machine` dictionaries
    on the op's ancestors and the op (keys as in docs/Schemes.md, e.g.
    `{preset = "multinode-ib", memory = 8.0e10}`), then any numeric option
    of this pass that is set. `machine` is a preset (built-in constants) or
    the path of a machine profile that `cp-calibrate` measured on the ranks
    and runtime the program will run on: its kernel and collective timings
    then replace the constants, and `cp.cost` names the file (`profile`)
    and when and on what runtime it was measured (`measured`). Without one
    `cp.cost` says `profile = "none: built-in constants"`. A missing,
    unreadable or malformed profile is an error naming the file, the line
    and what is wrong; an op whose CP group size differs from the ranks the
    profile was measured on is an error on the op.

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
           "Machine preset (h200-nvlink, multinode-ib, host-mpi) or the path "
           "of a machine profile measured by cp-calibrate">,
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

def OutlineAttentionLayersPass
    : Pass<"cp-outline-attention-layers", "ModuleOp"> {
  let summary = "One private function per distinct sharded attention layer "
                "when a function holds several";
  let description = [{
    In a function with more than one `cp.attention` (or more than one
    `cp.attention_grad`) whose scheme is decided, each of them becomes a
    `func.call` of a private function, at the level of the nearest symbol
    table, whose body is that op on the function's arguments. Ops that
    print the same (op, attributes, types, `mask_mod`/`score_mod` regions)
    share one function, named `cp_<scheme>_layer` (`_grad` for backwards).

    Why: the lowering of a function holding N scheme rewrites is
    superlinear in N. Ring and zigzag rewrite each layer into an `scf.for`
    over the steps, and `convert-scf-to-cf` splits the function's block at
    every loop, moving the rest of the block each time; every scheme's
    collectives allocate, and `buffer-deallocation-simplification` relates
    each buffer of a function to every other. One layer per function keeps
    `cp-lower-to-cpu` and `cp-compile` linear in depth, and a model of N
    identical layers rewrites, bufferizes and compiles one.

    A function with one forward and one backward (a training step) is left
    as it is, so its backward still shares the forward's collectives (CSE
    merges ring's first K/V shift, allgather's backward reuses the
    forward's gather). In a deeper function each outlined backward sends
    its K/V again: more traffic, and no gathered or shifted K/V held from
    the forward to the backward of every layer.

    Run after `cp-choose-scheme` (ops still `auto` are left in place) and
    before `cp-apply-scheme`; both lowering pipelines do.

    ```mlir
    %o0 = cp.attention %x, %k, %v on @cp grid_axes = [0] mask = causal
        scheme = ring : ...
    %o1 = cp.attention %o0, %x, %k on @cp grid_axes = [0] mask = causal
        scheme = ring : ...
    // becomes
    %o0 = call @cp_ring_layer(%x, %k, %v) : (...) -> tensor<...>
    %o1 = call @cp_ring_layer(%o0, %x, %k) : (...) -> tensor<...>
    func.func private @cp_ring_layer(%q: ..., %k: ..., %v: ...) -> ... {
      %o = cp.attention %q, %k, %v on @cp ... scheme = ring : ...
      return %o : ...
    }
    ```
  }];
  let options = [
    Option<"scheme", "scheme", "::mlir::cp::SchemeOption",
           /*default=*/"::mlir::cp::SchemeOption()",
           "The scheme of ops without a scheme attribute, as cp-apply-scheme "
           "will apply it">,
  ];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

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
           "cp-choose-scheme's machine for ops whose scheme is auto: a "
           "preset (h200-nvlink, multinode-ib, host-mpi) or a machine "
           "profile's path (cp-calibrate)">,
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
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::shard::ShardDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::cp::CPDialect"
  ];
}

#endif // CP_DIALECT_CP_SCHEMES_PASSES_TD
