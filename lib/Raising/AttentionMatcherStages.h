//===- AttentionMatcherStages.h - the matcher across its stages -*- C++ -*-===//
//
// The Matcher each stage of AttentionMatcher is a member function of, and
// the predicates on indexing maps, constants, generic bodies and
// contractions that the stages share.
//
//===----------------------------------------------------------------------===//

#ifndef CP_LIB_DIALECT_CP_TRANSFORMS_ATTENTIONMATCHERSTAGES_H
#define CP_LIB_DIALECT_CP_TRANSFORMS_ATTENTIONMATCHERSTAGES_H

#include "AttentionMatcher.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

#include <optional>
#include <string>

namespace mlir::cp::matcher {

//===----------------------------------------------------------------------===//
// Indexing maps
//===----------------------------------------------------------------------===//

/// A result of an indexing map: loop dim `dim`, divided by `div` (a GQA
/// head map `h floordiv G`).
struct DimRef {
  unsigned dim;
  int64_t div = 1;
  bool operator==(const DimRef &o) const {
    return dim == o.dim && div == o.div;
  }
};
using Dims = SmallVector<DimRef>;

/// None when a result of `map` is neither a dim nor a dim floordiv a
/// constant.
std::optional<Dims> dimsOf(AffineMap map);

/// (d0, ..., dn-1) -> (d0, ..., dn-1).
bool isIdentity(AffineMap map, unsigned rank);

/// (d0, ..., dn-1) -> (d0, ..., dn-2): a per-row value broadcast over keys.
bool isRowBroadcast(AffineMap map, unsigned rank);

unsigned rankOf(Value v);

std::string typeName(Type type);

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

/// A float constant or splat.
std::optional<double> constantFloat(Value v);

bool isConstant(Value v, double expected);

bool isNegInf(Value v);

/// An init filled with `value` (linalg.fill or a constant splat).
bool isFilledWith(Value init, double value);

/// A tosa.mul's shift is zero (it must be, for floats).
bool hasZeroShift(tosa::MulOp mul);

//===----------------------------------------------------------------------===//
// Generic bodies
//===----------------------------------------------------------------------===//

/// The one value a one-result generic yields.
Value yielded(linalg::GenericOp g);

bool isArg(Value v, linalg::GenericOp g, unsigned n);

/// An all-parallel generic with one result and an identity output map.
bool isElementwise(linalg::GenericOp g);

/// body yields op(arg a, arg b) with op one of Ops, in either order when
/// `commutative`.
template <typename OpTy>
bool yieldsBinary(linalg::GenericOp g, unsigned a, unsigned b,
                  bool commutative) {
  auto op = yielded(g).getDefiningOp<OpTy>();
  if (!op || g.getBody()->getOperations().size() != 2)
    return false;
  Value l = op->getOperand(0), r = op->getOperand(1);
  return (isArg(l, g, a) && isArg(r, g, b)) ||
         (commutative && isArg(l, g, b) && isArg(r, g, a));
}

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

/// out[...] = sum over one loop of lhs[...] * rhs[...].
struct Contraction {
  Operation *op = nullptr;
  Value lhs, rhs;
  Dims lhsDims, rhsDims, outDims;
  unsigned reduction = 0;
};

/// tosa.matmul without zero points, or a two-input linalg op with a mul/add
/// body and one reduction loop; none for anything else.
std::optional<Contraction> asContraction(Operation *op);

/// The zero the accumulator of a linalg contraction must start from.
bool startsFromZero(const Contraction &c);

//===----------------------------------------------------------------------===//
// The matcher
//===----------------------------------------------------------------------===//

class Matcher {
public:
  Matcher(int64_t groupSize, NearMiss &miss)
      : groupSize(groupSize), miss(miss) {}

  FailureOr<AttentionMatch> run(Operation *candidate);

private:
  LogicalResult fail(Operation *at, const Twine &reason) {
    miss = {at, reason.str(), progress};
    return failure();
  }
  /// A failure that shows the previous stage did not really match either
  /// (the "P" of a candidate is not computed by anything softmax-like: the
  /// candidate is not the contraction with V).
  LogicalResult failBefore(Operation *at, const Twine &reason) {
    miss = {at, reason.str(), progress - 1, /*candidateInDoubt=*/true};
    return failure();
  }

  // Stage 1: the contraction with V.
  LogicalResult matchValueContraction(const Contraction &pv);
  // Stage 2: softmax over the key dim.
  LogicalResult matchSoftmax(Value p, Value &x);
  /// Stage 2 with sinks: `x`, what the softmax normalizes, is the scores
  /// concatenated with a sink column along the key dim; on success `x` is
  /// the scores and m.sinkColumn the column.
  LogicalResult matchSinkColumn(Value &x);
  LogicalResult matchRowReduction(Value v, bool isMax, Value &input);
  LogicalResult matchRowMaxOf(Value rowMax, Value x);
  LogicalResult matchExpOfShifted(Value e, Value &x, Value &rowMax);
  LogicalResult matchNormalization(Value p, Value &e, Value &rowSum);
  Value logSumExpSubtracted(Value p, Value &x);
  // Stage 3: the score chain and Q K^T.
  LogicalResult matchScores(Value x);
  LogicalResult buildScoreProgram(ArrayRef<Operation *> chain, Type element);
  LogicalResult replayGeneric(linalg::GenericOp g, unsigned scoreInput,
                              OpBuilder &b, Value &current);
  LogicalResult replayTosa(Operation *op, unsigned scoreInput, OpBuilder &b,
                           Value &current);
  Value dataArgument(Value tensor, AffineMap map, OpBuilder &b);
  /// A tensor read elementwise with scores of `scoreShape` (dims equal or
  /// 1), replayed as a scalar of the score program when it is computed
  /// from positions only: iota and splat constants and tosa integer
  /// arithmetic, compares, casts and logical_not on them; null otherwise.
  Value replayPositions(Value v, ArrayRef<int64_t> scoreShape, OpBuilder &b,
                        unsigned depth);
  LogicalResult splitScoreProgram();
  bool recordModReads(Value v, bool atPositions);
  unsigned dependencies(Value v);
  // Stage 4: operands.
  LogicalResult matchOperands(const Contraction &qk);
  LogicalResult matchRhs(const Contraction &c, bool seqIsReduction,
                         StringRef name, AttentionInput &input, int64_t &group);
  // Stage 5: the log-sum-exp the program may return, then outside users.
  LogicalResult matchLogSumExpResult();
  LogicalResult checkNoOutsideUsers();

  int64_t groupSize;
  NearMiss &miss;
  unsigned progress = 0;
  AttentionMatch m;
  unsigned batchRank = 0;
  // Score program state.
  Block *program = nullptr;
  SmallVector<std::pair<std::pair<Value, AffineMap>, Value>> dataArgs;
  DenseMap<Value, unsigned> dependencyCache;
};

} // namespace mlir::cp::matcher

#endif // CP_LIB_DIALECT_CP_TRANSFORMS_ATTENTIONMATCHERSTAGES_H
