//===- Passes.td - cp-mlir raising passes ------------------*- tablegen -*-===//
//
// Attention written by front ends (linalg, tosa, torch-mlir, StableHLO
// forms) raised to cp.attention: cp-normalize-attention and
// cp-raise-attention.
//
//===----------------------------------------------------------------------===//

#ifndef CP_RAISING_PASSES_TD
#define CP_RAISING_PASSES_TD

include "mlir/Pass/PassBase.td"

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

#endif // CP_RAISING_PASSES_TD
