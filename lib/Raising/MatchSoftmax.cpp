//===- MatchSoftmax.cpp - matcher stage 2: P as a softmax -----------------===//
//
// P as a softmax over the key dim, in each of the forms the frontends
// emit; what the softmax normalizes becomes the scores that stage 3 walks.
//
//===----------------------------------------------------------------------===//

#include "AttentionMatcherStages.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <limits>

namespace mlir::cp::matcher {

LogicalResult Matcher::matchSoftmax(Value p, Value &x) {
  unsigned rank = rankOf(p);
  if (auto softmax = p.getDefiningOp<linalg::SoftmaxOp>()) {
    if (softmax.getDimension() != rank - 1)
      return fail(softmax, "linalg.softmax normalizes dim " +
                               Twine(softmax.getDimension()) +
                               ", not the key dim " + Twine(rank - 1));
    m.ops.insert(softmax);
    x = softmax.getInput();
    return success();
  }
  Value e, rowSum, rowMax, sumInput;
  // exp(x - (max + log(sum(exp(x - max))))): the log-sum-exp form.
  if (Value lse = logSumExpSubtracted(p, x)) {
    Operation *add = lse.getDefiningOp();
    SmallVector<Operation *> ops;
    Value logOf, maxOf;
    for (unsigned i = 0; i < 2 && add && add->getNumOperands() >= 2; ++i) {
      Operation *log = add->getOperand(i).getDefiningOp();
      if (isa_and_nonnull<tosa::LogOp, math::LogOp>(log)) {
        logOf = log->getOperand(0);
        maxOf = add->getOperand(1 - i);
        ops = {add, log};
      }
    }
    if (!logOf)
      return fail(p.getDefiningOp(),
                  "the softmax subtracts something other than the row max or "
                  "the log-sum-exp max + log(sum)");
    Value xAgain;
    if (failed(matchRowReduction(logOf, /*isMax=*/false, sumInput)) ||
        failed(matchExpOfShifted(sumInput, xAgain, rowMax)))
      return failure();
    if (xAgain != x || rowMax != maxOf)
      return fail(add, "the log-sum-exp is not of the scores the softmax "
                       "exponentiates");
    if (failed(matchRowMaxOf(rowMax, x)))
      return failure();
    for (Operation *op : ops)
      m.ops.insert(op);
    m.rowMax = rowMax;
    m.rowSum = logOf;
    return success();
  }
  if (failed(matchNormalization(p, e, rowSum)) ||
      failed(matchRowReduction(rowSum, /*isMax=*/false, sumInput)))
    return failure();
  if (sumInput != e)
    return fail(rowSum.getDefiningOp(),
                "the softmax sums a different tensor than it divides");
  if (failed(matchExpOfShifted(e, x, rowMax)))
    return failure();
  if (failed(matchRowMaxOf(rowMax, x)))
    return failure();
  m.rowMax = rowMax;
  m.rowSum = rowSum;
  return success();
}

/// Whether `column` ([batch..., Lq, 1]) holds one value per head: a
/// broadcast (linalg.broadcast, or a generic copying its one input) that
/// adds the query-row dim and, when there are two batch dims of which the
/// first (the batch) is not 1, that one too; a tosa.tile of a tensor of
/// size 1 along those dims; or a splat constant.
static bool isPerHeadColumn(Value column, unsigned rank) {
  auto type = cast<RankedTensorType>(column.getType());
  unsigned rowDim = rank - 2;
  bool batchVaries = rank == 4 && type.getDimSize(0) != 1;
  if (DenseElementsAttr dense; matchPattern(column, m_Constant(&dense)))
    return dense.isSplat();
  if (auto tile = column.getDefiningOp<tosa::TileOp>()) {
    auto input = dyn_cast<RankedTensorType>(tile.getInput1().getType());
    return input && input.getRank() == type.getRank() &&
           input.getDimSize(rowDim) == 1 &&
           (!batchVaries || input.getDimSize(0) == 1);
  }
  if (auto broadcast = column.getDefiningOp<linalg::BroadcastOp>()) {
    ArrayRef<int64_t> added = broadcast.getDimensions();
    return llvm::is_contained(added, rowDim) &&
           (!batchVaries || llvm::is_contained(added, 0));
  }
  auto copy = column.getDefiningOp<linalg::GenericOp>();
  if (!copy || copy.getNumDpsInputs() != 1 || copy.getNumDpsInits() != 1 ||
      copy.getNumParallelLoops() != copy.getNumLoops() ||
      !copy.getIndexingMapsArray()[1].isIdentity())
    return false;
  Value yielded = copy.getBody()->getTerminator()->getOperand(0);
  if (yielded != copy.getBody()->getArgument(0))
    return false;
  for (AffineExpr e : copy.getIndexingMapsArray()[0].getResults()) {
    if (isa<AffineConstantExpr>(e))
      continue;
    auto d = dyn_cast<AffineDimExpr>(e);
    if (!d || d.getPosition() == rowDim || (batchVaries && d.getPosition() == 0))
      return false;
  }
  return true;
}

LogicalResult Matcher::matchSinkColumn(Value &x) {
  unsigned rank = rankOf(x);
  Operation *concat = x.getDefiningOp();
  ValueRange inputs;
  if (auto tensorConcat = dyn_cast_or_null<tensor::ConcatOp>(concat)) {
    if (tensorConcat.getDim() == rank - 1)
      inputs = tensorConcat.getInputs();
  } else if (auto tosaConcat = dyn_cast_or_null<tosa::ConcatOp>(concat)) {
    if (tosaConcat.getAxis() == static_cast<int32_t>(rank - 1))
      inputs = tosaConcat.getInput1();
  }
  if (inputs.size() != 2)
    return fail(x.getDefiningOp(),
                "the contraction drops the softmax's last column, but the "
                "softmax does not normalize the scores concatenated with a "
                "sink column (tensor.concat or tosa.concat along the key "
                "dim)");
  Value scores = inputs[0], column = inputs[1];
  if (cast<RankedTensorType>(column.getType()).getDimSize(rank - 1) != 1)
    return fail(concat, "the column concatenated onto the scores is " +
                            Twine(cast<RankedTensorType>(column.getType())
                                      .getDimSize(rank - 1)) +
                            " wide; a sink is one column");
  if (!isPerHeadColumn(column, rank))
    return fail(concat, "the sink column concatenated onto the scores is not "
                        "one value per head broadcast along the query rows "
                        "(cp.attention's sinks are one logit per head)");
  m.ops.insert(concat);
  m.sinkColumn = column;
  x = scores;
  return success();
}

/// rowMax is the row max of exactly `x`, the scores the softmax shifts.
LogicalResult Matcher::matchRowMaxOf(Value rowMax, Value x) {
  Value maxInput;
  if (failed(matchRowReduction(rowMax, /*isMax=*/true, maxInput)))
    return failure();
  if (maxInput != x)
    return fail(rowMax.getDefiningOp(),
                "the softmax subtracts the max of a different tensor");
  return success();
}

/// The op computing log(rowSum) + rowMax from the softmax's statistics
/// (tosa.log and tosa.add, or elementwise generics with math.log and
/// arith.addf), when the program returns the log-sum-exp besides the
/// output; null otherwise.
static Operation *logSumExpOf(Value rowMax, Value rowSum,
                              SmallVectorImpl<Operation *> &ops) {
  auto unaryGeneric = [](Operation *op, auto isBody) {
    auto g = dyn_cast<linalg::GenericOp>(op);
    return g && isElementwise(g) && g.getNumDpsInputs() == 1 &&
           g.getBody()->getOperations().size() == 2 &&
           isBody(yielded(g).getDefiningOp());
  };
  for (Operation *log : rowSum.getUsers()) {
    bool isLog = isa<tosa::LogOp>(log) ||
                 unaryGeneric(log, [](Operation *op) {
                   return isa_and_nonnull<math::LogOp>(op);
                 });
    if (!isLog || !log->hasOneUse())
      continue;
    Operation *add = *log->getUsers().begin();
    Value other;
    if (isa<tosa::AddOp>(add)) {
      other = add->getOperand(add->getOperand(0) == log->getResult(0) ? 1 : 0);
    } else if (auto g = dyn_cast<linalg::GenericOp>(add);
               g && isElementwise(g) && g.getNumDpsInputs() == 2 &&
               yieldsBinary<arith::AddFOp>(g, 0, 1, /*commutative=*/true)) {
      auto maps = g.getIndexingMapsArray();
      if (!maps[0].isIdentity() || !maps[1].isIdentity())
        continue;
      other = g.getDpsInputs()[g.getDpsInputs()[0] == log->getResult(0)];
    }
    if (other != rowMax || add->getResult(0).getType() != rowSum.getType())
      continue;
    ops.push_back(log);
    ops.push_back(add);
    return add;
  }
  return nullptr;
}

LogicalResult Matcher::matchLogSumExpResult() {
  if (!m.rowMax || !m.rowSum)
    return success();
  SmallVector<Operation *> ops;
  Operation *lse = logSumExpOf(m.rowMax, m.rowSum, ops);
  if (!lse)
    return success();
  if (!getElementTypeOrSelf(lse->getResult(0).getType()).isF32())
    return fail(lse, "the program returns the softmax's log-sum-exp in " +
                         typeName(getElementTypeOrSelf(
                             lse->getResult(0).getType())) +
                         "; cp.attention's lse is f32");
  // The softmax's own lse (the log-sum-exp form) is returned only when
  // something live outside the attention reads it.
  bool read = llvm::any_of(lse->getUsers(), [&](Operation *user) {
    return !m.ops.contains(user) && !isOpTriviallyDead(user);
  });
  if (!read)
    return success();
  for (Operation *op : ops)
    m.ops.insert(op);
  m.lse = lse->getResult(0);
  return success();
}

/// p = exp(x - lse) for a per-row lse, written as tosa.exp or math.exp (on
/// tensors) of tosa.sub or arith.subf: returns lse and sets `x`, or null.
Value Matcher::logSumExpSubtracted(Value p, Value &x) {
  Operation *exp = p.getDefiningOp();
  if (!isa_and_nonnull<tosa::ExpOp, math::ExpOp>(exp) ||
      !isa<RankedTensorType>(p.getType()))
    return Value();
  Operation *sub = exp->getOperand(0).getDefiningOp();
  if (!isa_and_nonnull<tosa::SubOp, arith::SubFOp>(sub))
    return Value();
  Value lse = sub->getOperand(1);
  auto lseType = dyn_cast<RankedTensorType>(lse.getType());
  auto type = cast<RankedTensorType>(p.getType());
  // A per-row value: [..., L, 1].
  if (!lseType || lseType.getRank() != type.getRank() ||
      lseType.getShape().back() != 1 ||
      lseType.getShape().drop_back() != type.getShape().drop_back())
    return Value();
  if (!isa_and_nonnull<tosa::AddOp, arith::AddFOp>(lse.getDefiningOp()))
    return Value();
  m.ops.insert(exp);
  m.ops.insert(sub);
  x = sub->getOperand(0);
  return lse;
}

/// p = e / rowSum (divf generic, mulf by a reciprocal generic, or
/// tosa.mul by tosa.reciprocal).
LogicalResult Matcher::matchNormalization(Value p, Value &e, Value &rowSum) {
  Operation *def = p.getDefiningOp();
  unsigned rank = rankOf(p);
  if (auto mul = dyn_cast_or_null<tosa::MulOp>(def)) {
    if (!hasZeroShift(mul))
      return fail(mul, "tosa.mul with a non-zero shift");
    for (auto [a, b] : {std::pair(mul.getInput1(), mul.getInput2()),
                        std::pair(mul.getInput2(), mul.getInput1())}) {
      if (auto reciprocal = b.getDefiningOp<tosa::ReciprocalOp>()) {
        m.ops.insert(mul);
        m.ops.insert(reciprocal);
        e = a;
        rowSum = reciprocal.getInput1();
        return success();
      }
    }
    return fail(mul, "P is a tosa.mul, but not by a tosa.reciprocal of the "
                     "row sum");
  }
  auto g = dyn_cast_or_null<linalg::GenericOp>(def);
  if (!g || !isElementwise(g) || g.getNumDpsInputs() != 2)
    return failBefore(def ? def : p.getParentBlock()->getParentOp(),
                      "P is not a softmax (linalg.softmax, a division by the "
                      "row sum, or tosa.mul by a reciprocal)");
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  if (!isIdentity(maps[0], rank) || !isRowBroadcast(maps[1], rank))
    return fail(g, "the softmax division does not divide each score by its "
                   "row's value");
  if (yieldsBinary<arith::DivFOp>(g, 0, 1, /*commutative=*/false)) {
    m.ops.insert(g);
    e = g.getDpsInputs()[0];
    rowSum = g.getDpsInputs()[1];
    return success();
  }
  if (yieldsBinary<arith::MulFOp>(g, 0, 1, /*commutative=*/true)) {
    // rowSum reciprocal as its own generic: 1 / z.
    auto inv = g.getDpsInputs()[1].getDefiningOp<linalg::GenericOp>();
    if (inv && isElementwise(inv) && inv.getNumDpsInputs() == 1 &&
        isIdentity(inv.getIndexingMapsArray()[0], rank - 1)) {
      auto div = yielded(inv).getDefiningOp<arith::DivFOp>();
      if (div && isConstant(div.getLhs(), 1.0) && isArg(div.getRhs(), inv, 0) &&
          inv.getBody()->getOperations().size() == 2) {
        m.ops.insert(g);
        m.ops.insert(inv);
        e = g.getDpsInputs()[0];
        rowSum = inv.getDpsInputs()[0];
        return success();
      }
    }
    return fail(g, "the softmax multiplies by something other than the "
                   "reciprocal of the row sum");
  }
  return fail(g, "the generic producing P is not e / rowsum");
}

/// v = max (isMax) or sum over the last dim of `input`: a reduction
/// generic or linalg.reduce from -inf / 0, or tosa.reduce_max / _sum.
LogicalResult Matcher::matchRowReduction(Value v, bool isMax, Value &input) {
  StringRef what = isMax ? "row max" : "row sum";
  Operation *def = v.getDefiningOp();
  auto wrongDim = [&](int64_t dim, unsigned rank) {
    return fail(def, Twine("the softmax's ") + what + " reduces dim " +
                         Twine(dim) + ", not the key dim " + Twine(rank - 1));
  };
  if (isa_and_nonnull<tosa::ReduceMaxOp, tosa::ReduceSumOp>(def)) {
    if (isa<tosa::ReduceMaxOp>(def) != isMax)
      return fail(def, Twine("expected the ") + what + ", found " +
                           def->getName().getStringRef());
    input = def->getOperand(0);
    auto axis = def->getAttrOfType<IntegerAttr>("axis").getInt();
    if (axis != rankOf(input) - 1)
      return wrongDim(axis, rankOf(input));
    m.ops.insert(def);
    return success();
  }
  auto combinerIs = [&](Block &body, unsigned in, unsigned acc) {
    Operation *terminator = body.getTerminator();
    if (terminator->getNumOperands() != 1 || body.getOperations().size() != 2)
      return false;
    Operation *op = terminator->getOperand(0).getDefiningOp();
    if (!op || op->getNumOperands() != 2)
      return false;
    bool kind = isMax ? isa<arith::MaximumFOp, arith::MaxNumFOp>(op)
                      : isa<arith::AddFOp>(op);
    Value a = body.getArgument(in), b = body.getArgument(acc);
    return kind && ((op->getOperand(0) == a && op->getOperand(1) == b) ||
                    (op->getOperand(0) == b && op->getOperand(1) == a));
  };
  double start = isMax ? -std::numeric_limits<double>::infinity() : 0.0;
  // The combiner and the init of a reduction op.
  auto checkCombiner = [&](Operation *op, Block &body,
                           Value init) -> LogicalResult {
    if (!combinerIs(body, 0, 1))
      return fail(op, Twine("the ") + what + " does not combine with " +
                          (isMax ? "maximumf" : "addf"));
    // A max may also start from the lowest finite value of its type (what
    // torch emits): exact for every row with a finite score, since no
    // finite score is below it (docs/Raising.md).
    bool lowest = false;
    if (isMax) {
      auto type = dyn_cast<FloatType>(getElementTypeOrSelf(init.getType()));
      lowest = type && isFilledWith(init, APFloat::getLargest(
                                              type.getFloatSemantics(),
                                              /*Negative=*/true)
                                              .convertToDouble());
    }
    if (!lowest && !isFilledWith(init, start))
      return fail(op, Twine("the ") + what + " does not start from " +
                          (isMax ? "-inf (or the lowest finite value)" : "0"));
    m.ops.insert(op);
    return success();
  };
  if (auto reduce = dyn_cast_or_null<linalg::ReduceOp>(def)) {
    if (reduce.getInputs().size() != 1 || reduce.getDimensions().size() != 1)
      return fail(reduce, Twine("the ") + what +
                              " is a linalg.reduce of several inputs or dims");
    input = reduce.getInputs()[0];
    unsigned rank = rankOf(input);
    if (reduce.getDimensions()[0] != rank - 1)
      return wrongDim(reduce.getDimensions()[0], rank);
    return checkCombiner(reduce, reduce.getCombiner().front(),
                         reduce.getInits()[0]);
  }
  auto g = dyn_cast_or_null<linalg::GenericOp>(def);
  if (!g || g.getNumDpsInputs() != 1 || g.getNumDpsInits() != 1)
    return fail(def ? def : v.getParentBlock()->getParentOp(),
                Twine("the softmax's ") + what + " is not a reduction");
  input = g.getDpsInputs()[0];
  unsigned rank = rankOf(input);
  SmallVector<utils::IteratorType> iterators = g.getIteratorTypesArray();
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  if (iterators.size() != rank ||
      llvm::count(iterators, utils::IteratorType::reduction) != 1 ||
      !isIdentity(maps[0], rank))
    return fail(g, Twine("the softmax's ") + what +
                       " is not a one-dim reduction of the scores");
  auto dim = static_cast<int64_t>(
      llvm::find(iterators, utils::IteratorType::reduction) -
      iterators.begin());
  if (dim != rank - 1 || !isRowBroadcast(maps[1], rank))
    return wrongDim(dim, rank);
  return checkCombiner(g, *g.getBody(), g.getDpsInits()[0]);
}

/// e = exp(x - rowMax): one generic, a sub generic then an exp generic, or
/// tosa.exp of tosa.sub.
LogicalResult Matcher::matchExpOfShifted(Value e, Value &x, Value &rowMax) {
  Operation *def = e.getDefiningOp();
  unsigned rank = rankOf(e);
  const char *noShift =
      "the softmax exponentiates the scores without subtracting the row max";
  // tosa.exp, or math.exp on the whole tensor, of tosa.sub or arith.subf.
  if (isa_and_nonnull<tosa::ExpOp>(def) ||
      (isa_and_nonnull<math::ExpOp>(def) && isa<RankedTensorType>(e.getType()))) {
    Operation *sub = def->getOperand(0).getDefiningOp();
    if (!isa_and_nonnull<tosa::SubOp, arith::SubFOp>(sub))
      return fail(def, noShift);
    m.ops.insert(def);
    m.ops.insert(sub);
    x = sub->getOperand(0);
    rowMax = sub->getOperand(1);
    return success();
  }
  auto g = dyn_cast_or_null<linalg::GenericOp>(def);
  if (!g || !isElementwise(g))
    return fail(def ? def : e.getParentBlock()->getParentOp(),
                "the softmax numerator is not exp(scores - row max)");
  auto exp = yielded(g).getDefiningOp<math::ExpOp>();
  if (!exp)
    return fail(g, "the softmax numerator is not an exp");
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  // exp(sub(x, max)) in one body.
  if (auto sub = exp.getOperand().getDefiningOp<arith::SubFOp>()) {
    if (g.getNumDpsInputs() == 2 && isIdentity(maps[0], rank) &&
        isRowBroadcast(maps[1], rank) && isArg(sub.getLhs(), g, 0) &&
        isArg(sub.getRhs(), g, 1) && g.getBody()->getOperations().size() == 3) {
      m.ops.insert(g);
      x = g.getDpsInputs()[0];
      rowMax = g.getDpsInputs()[1];
      return success();
    }
    return fail(g, "the softmax subtracts something other than the row max");
  }
  if (g.getNumDpsInputs() != 1 || !isArg(exp.getOperand(), g, 0) ||
      !isIdentity(maps[0], rank) || g.getBody()->getOperations().size() != 2)
    return fail(g, "the softmax numerator is not exp(scores - row max)");
  auto sub = g.getDpsInputs()[0].getDefiningOp<linalg::GenericOp>();
  if (!sub || !isElementwise(sub) || sub.getNumDpsInputs() != 2 ||
      !yieldsBinary<arith::SubFOp>(sub, 0, 1, /*commutative=*/false))
    return fail(g, noShift);
  SmallVector<AffineMap> subMaps = sub.getIndexingMapsArray();
  if (!isIdentity(subMaps[0], rank) || !isRowBroadcast(subMaps[1], rank))
    return fail(sub, "the softmax subtracts something other than a per-row "
                     "value");
  m.ops.insert(g);
  m.ops.insert(sub);
  x = sub.getDpsInputs()[0];
  rowMax = sub.getDpsInputs()[1];
  return success();
}

} // namespace mlir::cp::matcher
