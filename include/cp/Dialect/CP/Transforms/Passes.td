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

    The rank index comes from `shard.process_multi_index`, so the result
    stays SPMD. Constraints a scheme needs are checked here with the same
    messages as the `cp.attention` verifier. Each rewritten op's
    `cp.bytes_per_rank` attribute records DESIGN §2's bytes sent per rank.
  }];
  let options = [
    Option<"scheme", "scheme", "std::string", /*default=*/"\"\"",
           "Scheme for cp.attention ops without a scheme attribute: allgather, "
           "ulysses, hybrid(u), head_tail">,
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
    Statistic<"numHeadTail", "head_tail", "cp.attention ops rewritten with head_tail">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::shard::ShardDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::cp::CPDialect"
  ];
}

#endif // CP_DIALECT_CP_TRANSFORMS_PASSES_TD
