//===- AttentionMatcher.h - Attention written in linalg or tosa -*- C++ -*-===//
//
// Structural recognition of scaled-dot-product attention computed with
// other dialects' ops, for cp-raise-attention. Matching starts at a
// candidate contraction (the one with V) and walks up: softmax, the
// elementwise ops on the scores (scale, masks, transforms), the contraction
// Q K^T, and the transposes, broadcasts and scalings on Q, K and V. It only
// recognizes; the pass rewrites. A candidate that stops matching reports
// where and why (a near miss), so that a pass asked to find attention can
// say what it found instead.
//
//===----------------------------------------------------------------------===//

#ifndef CP_LIB_DIALECT_CP_TRANSFORMS_ATTENTIONMATCHER_H
#define CP_LIB_DIALECT_CP_TRANSFORMS_ATTENTIONMATCHER_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/SetVector.h"

#include <string>

namespace mlir {
namespace cp {

/// Where a candidate stopped matching and why.
struct NearMiss {
  Operation *at = nullptr;
  std::string reason;
  /// Stages matched before the miss: the larger, the nearer to attention.
  unsigned progress = 0;
  /// The miss shows the candidate was not the contraction with V after all
  /// (its P is not computed by anything softmax-like): at equal progress,
  /// another candidate's miss is the nearer one.
  bool candidateInDoubt = false;

  /// Orders misses by nearness: progress, then a candidate not in doubt.
  bool isNearerThan(unsigned otherProgress, bool otherInDoubt) const {
    if (progress != otherProgress)
      return progress > otherProgress;
    return !candidateInDoubt && otherInDoubt;
  }
};

/// Q, K or V as the matched IR holds it: `[batch..., L, D]` with 0 to 2
/// batch dims, or `[batch..., D, L]` when `transposed`.
struct AttentionInput {
  Value value;
  bool transposed = false;
};

/// A tensor a mask condition reads at batch and head positions only (the
/// same on every rank): a mod operand of the raised op. `argument` is the
/// score program's argument for `tensor` read through `map`.
struct ModOperandRead {
  Value argument, tensor;
  AffineMap map;
};

/// softmax(score_mod(scale * Q K^T) masked) V found in the IR.
struct AttentionMatch {
  /// The contraction with V, whose result the attention replaces.
  Operation *root = nullptr;
  /// Every op the attention replaces, root included. None has a user
  /// outside the set except the root.
  llvm::SetVector<Operation *> ops;
  /// Trivially dead ops outside `ops` that read one of them: erased first.
  llvm::SetVector<Operation *> deadUsers;
  AttentionInput query, key, value;
  /// K and V hold H / kvGroup heads; query head h reads K/V head
  /// h / kvGroup (GQA written as a broadcast of K and V).
  int64_t kvGroup = 1;
  /// Q and K have different lengths: raised with queries = replicated (a
  /// decode step against a KV cache sharded on the sequence).
  bool replicatedQueries = false;
  double scale = 1.0;
  /// A mask tensor read elementwise with the scores: i1 (true = attend) or
  /// additive. `dataMaskIsMatrix`: indexed by (q, k) only, else by every
  /// score dim.
  Value dataMask;
  bool dataMaskIsMatrix = false;

  /// The elementwise ops between Q K^T and the softmax as one scalar
  /// function (score, one index per score dim, data elements) -> score.
  /// In it, `scaledScore` is score * scale, `transformed` what the
  /// softmax sees before masking (null when it is `scaledScore`: no
  /// score_mod), and `maskConditions` the index predicates a score must
  /// satisfy (the mask_mod's conjuncts).
  OwningOpRef<func::FuncOp> scoreProgram;
  Value scaledScore, transformed;
  SmallVector<Value> maskConditions;
  /// The tensors the mask conditions read (mod operands).
  SmallVector<ModOperandRead> modReads;
  /// The softmax's row max and row sum (null for linalg.softmax), and the
  /// log-sum-exp `log(rowSum) + rowMax` when the program also returns it:
  /// raised to cp.attention's lse result.
  Value rowMax, rowSum, lse;
  /// Rank of the score tensor: [batch..., Lq, Lk].
  unsigned scoreRank = 0;
  /// Attention sinks written as torch reference code writes them: the
  /// softmax normalizes the scores concatenated with this column
  /// [batch..., Lq, 1] (a per-head logit broadcast along the rows) and the
  /// column's probabilities are dropped before the contraction with V.
  /// Raised to cp.attention's sinks (the column at row 0). Null without.
  Value sinkColumn;
};

/// Matches attention whose contraction with V is `candidate`. `groupSize`
/// is the CP group the result will run on: a data mask covers only the
/// local keys, so it is raised only when the group has one process.
/// On failure `miss` says where and why.
FailureOr<AttentionMatch> matchAttention(Operation *candidate,
                                         int64_t groupSize, NearMiss &miss);

/// One sentence naming the forms matchAttention accepts, for diagnostics.
StringRef describeAttentionForms();

} // namespace cp
} // namespace mlir

#endif // CP_LIB_DIALECT_CP_TRANSFORMS_ATTENTIONMATCHER_H
