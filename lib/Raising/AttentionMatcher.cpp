//===- AttentionMatcher.cpp - Attention written in linalg or tosa ---------===//
//
// Stages, from the candidate up (a near miss records how many matched):
//   1. the candidate is a contraction P[batch.., i, j] * V[batch.., j, dv];
//   2. P is a softmax over j of X: linalg.softmax, or the max / sub / exp /
//      sum / div generics (linalg.reduce for the reductions), or tosa's
//      reduce_max / sub / exp / reduce_sum / reciprocal / mul; or P is
//      that softmax with its last column dropped (tensor.extract_slice,
//      tosa.slice) and X the scores concatenated with a sink column
//      (tensor.concat, tosa.concat);
//   3. X comes from a contraction Q[batch.., i, d] * K[batch.., j, d]
//      through elementwise ops (generics, tosa.mul / add / select), which
//      become one scalar program, split into scale, score_mod, index
//      predicates and a data mask;
//   4. Q, K and V are read through transposes, a GQA broadcast of K and V,
//      and a constant scaling of Q;
//   5. no intermediate value has a user outside the attention.
//
//===----------------------------------------------------------------------===//

#include "AttentionMatcher.h"
#include "AttentionMatcherStages.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::cp;

StringRef mlir::cp::describeAttentionForms() {
  return "softmax(scale * Q K^T, masked) V written with linalg (matmul, "
         "batch_matmul or mul/add generic contractions, K or V transposed "
         "by their indexing maps or by linalg.transpose; elementwise "
         "generics for the scale, linalg.index masks and score transforms; "
         "linalg.softmax or max/sub/exp/sum/div generics over the key dim; "
         "GQA as linalg.broadcast + tensor.collapse_shape or a floordiv "
         "indexing map) or with tosa (matmul, transpose, mul by a constant, "
         "add or select masks, reduce_max, sub, exp, reduce_sum, reciprocal, "
         "mul)";
}

namespace mlir::cp::matcher {

/// `result` is all of `source` but its last column (static shapes).
static bool isAllButLastColumn(Type sourceType, Type resultType) {
  auto source = dyn_cast<RankedTensorType>(sourceType);
  auto result = dyn_cast<RankedTensorType>(resultType);
  if (!source || !result || !source.hasStaticShape() ||
      !result.hasStaticShape() || result.getRank() != source.getRank())
    return false;
  int64_t last = source.getRank() - 1;
  for (int64_t d = 0; d < last; ++d)
    if (result.getDimSize(d) != source.getDimSize(d))
      return false;
  return result.getDimSize(last) + 1 == source.getDimSize(last);
}

/// The source of `p` when `p` keeps all of it but the last column: a
/// tensor.extract_slice at offset 0 with unit strides, or a tosa.slice
/// starting at 0. Null otherwise.
static Operation *droppingLastColumn(Value p, Value &source) {
  if (auto slice = p.getDefiningOp<tensor::ExtractSliceOp>()) {
    source = slice.getSource();
    if (slice.hasUnitStride() && slice.hasZeroOffset() &&
        isAllButLastColumn(source.getType(), p.getType()))
      return slice;
  }
  if (auto slice = p.getDefiningOp<tosa::SliceOp>()) {
    source = slice.getInput1();
    auto start = slice.getStart().getDefiningOp<tosa::ConstShapeOp>();
    if (start &&
        llvm::all_of(start.getValuesAttr().getValues<int64_t>(),
                     [](int64_t offset) { return offset == 0; }) &&
        isAllButLastColumn(source.getType(), p.getType()))
      return slice;
  }
  return nullptr;
}

FailureOr<AttentionMatch> Matcher::run(Operation *candidate) {
  std::optional<Contraction> pv = asContraction(candidate);
  if (!pv)
    return fail(candidate, "not a contraction");
  ++progress;
  if (failed(matchValueContraction(*pv)))
    return failure();
  ++progress;
  // Sinks: the contraction reads the softmax without its last column.
  Value p = pv->lhs, source;
  if (Operation *dropped = droppingLastColumn(p, source)) {
    m.ops.insert(dropped);
    p = source;
  }
  Value x;
  if (failed(matchSoftmax(p, x)))
    return failure();
  if (p != pv->lhs && failed(matchSinkColumn(x)))
    return failure();
  ++progress;
  if (failed(matchScores(x)))
    return failure();
  ++progress;
  if (failed(matchLogSumExpResult()) || failed(checkNoOutsideUsers()))
    return failure();
  return std::move(m);
}

//===----------------------------------------------------------------------===//
// Stage 1: the contraction with V
//===----------------------------------------------------------------------===//

/// out = [batch..., i, dv], P = [batch..., i, j], V = [batch..., j, dv]
/// (or V transposed), j the reduction.
LogicalResult Matcher::matchValueContraction(const Contraction &pv) {
  unsigned rank = pv.outDims.size();
  if (rank < 2 || rank > 4)
    return fail(pv.op, "the contraction's result has rank " + Twine(rank) +
                           "; attention has 0 to 2 batch dims");
  if (!startsFromZero(pv))
    return fail(pv.op, "the contraction accumulates into an init that is "
                       "not zero");
  batchRank = rank - 2;
  m.root = pv.op;
  m.ops.insert(pv.op);
  return matchRhs(pv, /*seqIsReduction=*/true, "V", m.value, m.kvGroup);
}

//===----------------------------------------------------------------------===//
// Stage 5
//===----------------------------------------------------------------------===//

LogicalResult Matcher::checkNoOutsideUsers() {
  for (Operation *op : m.ops) {
    if (op == m.root || (m.lse && op == m.lse.getDefiningOp()))
      continue;
    for (Operation *user : op->getUsers()) {
      // A dead op left by the front end (a reshape nobody reads) goes with
      // the attention.
      if (!m.ops.contains(user) && isOpTriviallyDead(user)) {
        m.deadUsers.insert(user);
        continue;
      }
      if (!m.ops.contains(user))
        return fail(user, "an intermediate of the attention (" +
                              op->getName().getStringRef() +
                              ") is also used here; raising would have to "
                              "keep computing it");
    }
  }
  return success();
}

} // namespace mlir::cp::matcher

FailureOr<AttentionMatch> mlir::cp::matchAttention(Operation *candidate,
                                                   int64_t groupSize,
                                                   NearMiss &miss) {
  return matcher::Matcher(groupSize, miss).run(candidate);
}
