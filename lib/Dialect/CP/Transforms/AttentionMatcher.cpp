//===- AttentionMatcher.cpp - Attention written in linalg or tosa ---------===//
//
// Stages, from the candidate up (a near miss records how many matched):
//   1. the candidate is a contraction P[batch.., i, j] * V[batch.., j, dv];
//   2. P is a softmax over j of X: linalg.softmax, or the max / sub / exp /
//      sum / div generics (linalg.reduce for the reductions), or tosa's
//      reduce_max / sub / exp / reduce_sum / reciprocal / mul;
//   3. X comes from a contraction Q[batch.., i, d] * K[batch.., j, d]
//      through elementwise ops (generics, tosa.mul / add / select), which
//      become one scalar program, split into scale, score_mod, index
//      predicates and a data mask;
//   4. Q, K and V are read through transposes, a GQA broadcast of K and V,
//      and a constant scaling of Q;
//   5. no intermediate value has a user outside the attention.
//
//===----------------------------------------------------------------------===//

#include "cp/Dialect/CP/Transforms/AttentionMatcher.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseMap.h"

#include <cmath>
#include <limits>

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

namespace {

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

std::optional<Dims> dimsOf(AffineMap map) {
  Dims dims;
  for (AffineExpr e : map.getResults()) {
    if (auto d = dyn_cast<AffineDimExpr>(e)) {
      dims.push_back({d.getPosition()});
      continue;
    }
    auto bin = dyn_cast<AffineBinaryOpExpr>(e);
    if (bin && bin.getKind() == AffineExprKind::FloorDiv) {
      auto d = dyn_cast<AffineDimExpr>(bin.getLHS());
      auto c = dyn_cast<AffineConstantExpr>(bin.getRHS());
      if (d && c && c.getValue() > 1) {
        dims.push_back({d.getPosition(), c.getValue()});
        continue;
      }
    }
    return std::nullopt;
  }
  return dims;
}

/// (d0, ..., dn-1) -> (d0, ..., dn-1).
bool isIdentity(AffineMap map, unsigned rank) {
  return map.isIdentity() && map.getNumDims() == rank;
}

/// (d0, ..., dn-1) -> (d0, ..., dn-2): a per-row value broadcast over keys.
bool isRowBroadcast(AffineMap map, unsigned rank) {
  if (map.getNumDims() != rank || map.getNumResults() != rank - 1)
    return false;
  for (unsigned i = 0; i + 1 < rank; ++i)
    if (map.getResult(i) != getAffineDimExpr(i, map.getContext()))
      return false;
  return true;
}

unsigned rankOf(Value v) { return cast<ShapedType>(v.getType()).getRank(); }

std::string typeName(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

/// A float constant or splat.
std::optional<double> constantFloat(Value v) {
  FloatAttr scalar;
  if (matchPattern(v, m_Constant(&scalar)))
    return scalar.getValueAsDouble();
  DenseElementsAttr dense;
  if (matchPattern(v, m_Constant(&dense)) && dense.isSplat() &&
      isa<FloatType>(dense.getElementType()))
    return dense.getSplatValue<APFloat>().convertToDouble();
  return std::nullopt;
}

bool isConstant(Value v, double expected) {
  std::optional<double> c = constantFloat(v);
  return c && (*c == expected || (std::isnan(*c) && std::isnan(expected)));
}

bool isNegInf(Value v) {
  return isConstant(v, -std::numeric_limits<double>::infinity());
}

/// An init filled with `value` (linalg.fill or a constant splat).
bool isFilledWith(Value init, double value) {
  if (auto fill = init.getDefiningOp<linalg::FillOp>())
    return isConstant(fill.getInputs()[0], value);
  return isConstant(init, value);
}

/// A tosa.mul's shift is zero (it must be, for floats).
bool hasZeroShift(tosa::MulOp mul) {
  DenseElementsAttr shift;
  return matchPattern(mul.getShift(), m_Constant(&shift)) && shift.isSplat() &&
         shift.getSplatValue<APInt>().isZero();
}

//===----------------------------------------------------------------------===//
// Generic bodies
//===----------------------------------------------------------------------===//

/// The one value a one-result generic yields.
Value yielded(linalg::GenericOp g) {
  auto yield = cast<linalg::YieldOp>(g.getBody()->getTerminator());
  return yield.getNumOperands() == 1 ? yield.getOperand(0) : Value();
}

bool isArg(Value v, linalg::GenericOp g, unsigned n) {
  auto arg = dyn_cast<BlockArgument>(v);
  return arg && arg.getOwner() == g.getBody() && arg.getArgNumber() == n;
}

/// An all-parallel generic with one result and an identity output map.
bool isElementwise(linalg::GenericOp g) {
  if (g.getNumDpsInits() != 1 || g.getNumResults() != 1)
    return false;
  unsigned rank = g.getNumLoops();
  return llvm::all_of(g.getIteratorTypesArray(),
                      [](utils::IteratorType t) {
                        return t == utils::IteratorType::parallel;
                      }) &&
         isIdentity(g.getIndexingMapsArray().back(), rank);
}

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

/// mulf(in0, in1) (either order) added to the accumulator, yielded.
bool isMulAddBody(Block &body) {
  if (body.getNumArguments() != 3 || body.getOperations().size() != 3)
    return false;
  auto yield = dyn_cast<linalg::YieldOp>(body.getTerminator());
  if (!yield || yield.getNumOperands() != 1)
    return false;
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add)
    return false;
  Value acc = body.getArgument(2);
  Value product = add.getLhs() == acc   ? add.getRhs()
                  : add.getRhs() == acc ? add.getLhs()
                                        : Value();
  auto mul = product ? product.getDefiningOp<arith::MulFOp>() : nullptr;
  if (!mul)
    return false;
  Value a = body.getArgument(0), b = body.getArgument(1);
  return (mul.getLhs() == a && mul.getRhs() == b) ||
         (mul.getLhs() == b && mul.getRhs() == a);
}

std::optional<Contraction> asContraction(Operation *op) {
  if (!op)
    return std::nullopt;
  if (auto mm = dyn_cast<tosa::MatMulOp>(op)) {
    // [n, i, k] x [n, k, j] -> [n, i, j]; loops (n, i, j, k).
    if (!isConstant(mm.getAZp(), 0.0) || !isConstant(mm.getBZp(), 0.0))
      return std::nullopt;
    return Contraction{op,
                       mm.getA(),
                       mm.getB(),
                       {{0}, {1}, {3}},
                       {{0}, {3}, {2}},
                       {{0}, {1}, {2}},
                       3};
  }
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || linalgOp.getNumDpsInputs() != 2 ||
      linalgOp.getNumDpsInits() != 1 || op->getNumResults() != 1 ||
      !linalgOp.getBlock() || !isMulAddBody(*linalgOp.getBlock()))
    return std::nullopt;
  SmallVector<utils::IteratorType> iterators = linalgOp.getIteratorTypesArray();
  if (llvm::count(iterators, utils::IteratorType::reduction) != 1)
    return std::nullopt;
  SmallVector<AffineMap> maps = linalgOp.getIndexingMapsArray();
  std::optional<Dims> lhs = dimsOf(maps[0]), rhs = dimsOf(maps[1]),
                      out = dimsOf(maps[2]);
  if (!lhs || !rhs || !out)
    return std::nullopt;
  auto reduction = static_cast<unsigned>(
      llvm::find(iterators, utils::IteratorType::reduction) -
      iterators.begin());
  return Contraction{op,
                     linalgOp.getDpsInputs()[0],
                     linalgOp.getDpsInputs()[1],
                     *lhs,
                     *rhs,
                     *out,
                     reduction};
}

/// The zero the accumulator of a linalg contraction must start from.
bool startsFromZero(const Contraction &c) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(c.op);
  return !linalgOp || isFilledWith(linalgOp.getDpsInits()[0], 0.0);
}

//===----------------------------------------------------------------------===//
// The matcher
//===----------------------------------------------------------------------===//

/// Dependencies of a value of the score program.
enum Depends : unsigned { onScore = 1, onIndex = 2, onData = 4 };

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
    miss = {at, reason.str(), progress - 1};
    return failure();
  }

  // Stage 1: the contraction with V.
  LogicalResult matchValueContraction(const Contraction &pv);
  // Stage 2: softmax over the key dim.
  LogicalResult matchSoftmax(Value p, Value &x);
  LogicalResult matchRowReduction(Value v, bool isMax, Value &input);
  LogicalResult matchExpOfShifted(Value e, Value &x, Value &rowMax);
  LogicalResult matchNormalization(Value p, Value &e, Value &rowSum);
  // Stage 3: the score chain and Q K^T.
  LogicalResult matchScores(Value x);
  LogicalResult buildScoreProgram(ArrayRef<Operation *> chain, Type element);
  LogicalResult replayGeneric(linalg::GenericOp g, unsigned scoreInput,
                              OpBuilder &b, Value &current);
  LogicalResult replayTosa(Operation *op, unsigned scoreInput, OpBuilder &b,
                           Value &current);
  Value dataArgument(Value tensor, AffineMap map, OpBuilder &b);
  LogicalResult splitScoreProgram();
  unsigned dependencies(Value v);
  // Stage 4: operands.
  LogicalResult matchOperands(const Contraction &qk);
  LogicalResult matchRhs(const Contraction &c, bool seqIsReduction,
                         StringRef name, AttentionInput &input, int64_t &group);
  // Stage 5.
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

FailureOr<AttentionMatch> Matcher::run(Operation *candidate) {
  std::optional<Contraction> pv = asContraction(candidate);
  if (!pv)
    return fail(candidate, "not a contraction");
  ++progress;
  if (failed(matchValueContraction(*pv)))
    return failure();
  ++progress;
  Value x;
  if (failed(matchSoftmax(pv->lhs, x)))
    return failure();
  ++progress;
  if (failed(matchScores(x)))
    return failure();
  ++progress;
  if (failed(checkNoOutsideUsers()))
    return failure();
  return std::move(m);
}

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

/// Checks out = [batch..., x, y] and lhs = [batch..., x, r] (r the
/// reduction) and classifies the rhs: [batch'..., seq, feature] or its
/// transpose, where seq is r for P V (seqIsReduction) and y for Q K^T, and
/// batch' equals batch except that the head dim may be divided (GQA).
LogicalResult Matcher::matchRhs(const Contraction &c, bool seqIsReduction,
                                StringRef name, AttentionInput &input,
                                int64_t &group) {
  unsigned rank = c.outDims.size();
  StringRef lhsName = seqIsReduction ? "P" : "Q";
  if (c.lhsDims.size() != rank || c.rhsDims.size() != rank)
    return fail(c.op, "the contraction's operands do not have the rank of "
                      "its result");
  DimRef x = c.outDims[rank - 2], y = c.outDims[rank - 1];
  DimRef r{c.reduction};
  for (const DimRef &d : c.outDims)
    if (d.div != 1)
      return fail(c.op, "the contraction's result map is not a permutation");
  for (unsigned i = 0; i + 2 < rank; ++i)
    if (!(c.lhsDims[i] == c.outDims[i]))
      return fail(c.op, Twine(lhsName) +
                            " and the result disagree on batch dim " +
                            Twine(i));
  if (!(c.lhsDims[rank - 2] == x) || !(c.lhsDims[rank - 1] == r))
    return fail(c.op, Twine("the contraction does not reduce ") + lhsName +
                          "'s last dim (" + lhsName +
                          " must be [batch..., rows, reduced])");
  DimRef seq = seqIsReduction ? r : y, feature = seqIsReduction ? y : r;
  if (c.rhsDims[rank - 2] == seq && c.rhsDims[rank - 1] == feature)
    input.transposed = false;
  else if (c.rhsDims[rank - 2] == feature && c.rhsDims[rank - 1] == seq)
    input.transposed = true;
  else
    return fail(c.op, Twine(name) +
                          " is not indexed [batch..., keys, features] or its "
                          "transpose");
  group = 1;
  for (unsigned i = 0; i + 2 < rank; ++i) {
    DimRef b = c.rhsDims[i];
    if (b.dim != c.outDims[i].dim)
      return fail(c.op, Twine(name) + " and the result disagree on batch dim " +
                            Twine(i));
    if (b.div != 1) {
      if (i + 3 != rank)
        return fail(c.op, Twine(name) + " divides batch dim " + Twine(i) +
                              ", which is not the head dim");
      group = b.div;
    }
  }
  input.value = c.rhs;
  return success();
}

//===----------------------------------------------------------------------===//
// Stage 2: softmax
//===----------------------------------------------------------------------===//

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
  if (failed(matchNormalization(p, e, rowSum)) ||
      failed(matchRowReduction(rowSum, /*isMax=*/false, sumInput)))
    return failure();
  if (sumInput != e)
    return fail(rowSum.getDefiningOp(),
                "the softmax sums a different tensor than it divides");
  if (failed(matchExpOfShifted(e, x, rowMax)))
    return failure();
  Value maxInput;
  if (failed(matchRowReduction(rowMax, /*isMax=*/true, maxInput)))
    return failure();
  if (maxInput != x)
    return fail(rowMax.getDefiningOp(),
                "the softmax subtracts the max of a different tensor");
  return success();
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
    if (!isFilledWith(init, start))
      return fail(op, Twine("the ") + what + " does not start from " +
                          (isMax ? "-inf" : "0"));
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
  if (auto exp = dyn_cast_or_null<tosa::ExpOp>(def)) {
    auto sub = exp.getInput1().getDefiningOp<tosa::SubOp>();
    if (!sub)
      return fail(exp, noShift);
    m.ops.insert(exp);
    m.ops.insert(sub);
    x = sub.getInput1();
    rowMax = sub.getInput2();
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

//===----------------------------------------------------------------------===//
// Stage 3: scores
//===----------------------------------------------------------------------===//

/// Whether `v` is produced from a contraction through elementwise ops.
bool reachesContraction(Value v, unsigned depth = 0) {
  Operation *def = v.getDefiningOp();
  if (!def || depth > 16)
    return false;
  if (asContraction(def))
    return true;
  if (auto g = dyn_cast<linalg::GenericOp>(def)) {
    if (!isElementwise(g))
      return false;
    return llvm::any_of(g.getDpsInputs(), [&](Value in) {
      return reachesContraction(in, depth + 1);
    });
  }
  if (isa<tosa::MulOp, tosa::AddOp, tosa::SelectOp>(def))
    return llvm::any_of(def->getOperands(), [&](Value in) {
      return reachesContraction(in, depth + 1);
    });
  return false;
}

LogicalResult Matcher::matchScores(Value x) {
  // Walk up the elementwise chain to Q K^T.
  SmallVector<std::pair<Operation *, unsigned>> chain;
  Value current = x;
  auto scoreType = cast<RankedTensorType>(x.getType());
  std::optional<Contraction> qk;
  while (!(qk = asContraction(current.getDefiningOp()))) {
    Operation *def = current.getDefiningOp();
    if (!def)
      return fail(current.getParentBlock()->getParentOp(),
                  "the softmax input is not computed from a contraction");
    // The operand that carries the scores: the one shaped like them that
    // reaches the contraction.
    std::optional<unsigned> scoreInput;
    unsigned numInputs = def->getNumOperands();
    if (auto g = dyn_cast<linalg::GenericOp>(def)) {
      if (!isElementwise(g))
        return fail(g, "an op between Q K^T and the softmax is not "
                       "elementwise");
      numInputs = g.getNumDpsInputs();
    } else if (!isa<tosa::MulOp, tosa::AddOp, tosa::SelectOp>(def)) {
      return fail(def, "the softmax input comes from '" +
                           def->getName().getStringRef() +
                           "', not Q K^T or an elementwise op on it");
    }
    for (unsigned i = 0; i < numInputs; ++i) {
      Value in = def->getOperand(i);
      if (in.getType() == scoreType && reachesContraction(in)) {
        if (scoreInput)
          return fail(def, "two operands of an elementwise op on the scores "
                           "come from contractions");
        scoreInput = i;
      }
    }
    if (!scoreInput)
      return fail(def, "the softmax input is not computed from a "
                       "contraction");
    chain.push_back({def, *scoreInput});
    current = def->getOperand(*scoreInput);
  }
  if (qk->outDims.size() != rankOf(x))
    return fail(qk->op, "Q K^T and P V have different ranks");
  if (!startsFromZero(*qk))
    return fail(qk->op, "Q K^T accumulates into an init that is not zero");
  m.ops.insert(qk->op);
  for (auto [op, input] : chain)
    m.ops.insert(op);
  m.scoreRank = rankOf(x);
  std::reverse(chain.begin(), chain.end());

  // The elementwise ops as one scalar program.
  MLIRContext *ctx = x.getContext();
  OpBuilder b(ctx);
  Type element = scoreType.getElementType();
  SmallVector<Type> argTypes{element};
  argTypes.append(m.scoreRank, b.getIndexType());
  m.scoreProgram = func::FuncOp::create(b, x.getLoc(), "score_program",
                                        b.getFunctionType(argTypes, element));
  program = m.scoreProgram->addEntryBlock();
  b.setInsertionPointToStart(program);
  Value score = program->getArgument(0);
  for (auto [op, input] : chain) {
    LogicalResult replayed =
        isa<linalg::GenericOp>(op)
            ? replayGeneric(cast<linalg::GenericOp>(op), input, b, score)
            : replayTosa(op, input, b, score);
    if (failed(replayed))
      return failure();
  }
  func::ReturnOp::create(b, x.getLoc(), score);
  m.scoreProgram->setFunctionType(
      b.getFunctionType(program->getArgumentTypes(), element));
  if (failed(splitScoreProgram()))
    return failure();
  ++progress;
  return matchOperands(*qk);
}

/// The program argument standing for `tensor` read through `map`.
Value Matcher::dataArgument(Value tensor, AffineMap map, OpBuilder &b) {
  for (auto &[key, arg] : dataArgs)
    if (key.first == tensor && key.second == map)
      return arg;
  Value arg = program->addArgument(
      cast<ShapedType>(tensor.getType()).getElementType(), tensor.getLoc());
  dataArgs.push_back({{tensor, map}, arg});
  return arg;
}

LogicalResult Matcher::replayGeneric(linalg::GenericOp g, unsigned scoreInput,
                                     OpBuilder &b, Value &current) {
  Block *body = g.getBody();
  IRMapping mapping;
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  for (unsigned i = 0; i < g.getNumDpsInputs(); ++i) {
    Value in = g.getDpsInputs()[i];
    if (i == scoreInput) {
      if (!isIdentity(maps[i], m.scoreRank))
        return fail(g, "the scores are read through a non-identity map");
      mapping.map(body->getArgument(i), current);
    } else {
      mapping.map(body->getArgument(i), dataArgument(in, maps[i], b));
    }
  }
  if (!body->getArgument(g.getNumDpsInputs()).use_empty())
    return fail(g, "an elementwise op on the scores reads its output");
  for (Operation &op : body->without_terminator()) {
    if (auto index = dyn_cast<linalg::IndexOp>(op)) {
      mapping.map(index.getResult(), program->getArgument(1 + index.getDim()));
      continue;
    }
    if (op.getNumRegions() != 0)
      return fail(g, "an elementwise op on the scores holds '" +
                         op.getName().getStringRef() + "', an op with regions");
    for (Value operand : op.getOperands()) {
      if (mapping.contains(operand) || operand.getParentBlock() == body)
        continue;
      // A value captured from outside: only constants can be replayed.
      Operation *def = operand.getDefiningOp();
      if (!def || !matchPattern(operand, m_Constant()))
        return fail(g, "an elementwise op on the scores reads a value from "
                       "outside that is not a constant");
      mapping.map(operand, b.clone(*def)->getResult(0));
    }
    b.clone(op, mapping);
  }
  current = mapping.lookup(yielded(g));
  return success();
}

LogicalResult Matcher::replayTosa(Operation *op, unsigned scoreInput,
                                  OpBuilder &b, Value &current) {
  Location loc = op->getLoc();
  auto scoreType = cast<RankedTensorType>(op->getResult(0).getType());
  Type element = scoreType.getElementType();
  AffineMap identity =
      AffineMap::getMultiDimIdentityMap(scoreType.getRank(), op->getContext());
  // An operand other than the scores: a splat constant or a tensor shaped
  // like the scores.
  auto other = [&](Value v) -> Value {
    if (std::optional<double> c = constantFloat(v))
      return arith::ConstantOp::create(b, loc, element,
                                       b.getFloatAttr(element, *c));
    if (v.getType() == scoreType ||
        (cast<ShapedType>(v.getType()).getShape() == scoreType.getShape()))
      return dataArgument(v, identity, b);
    return Value();
  };
  if (auto mul = dyn_cast<tosa::MulOp>(op)) {
    if (!hasZeroShift(mul))
      return fail(op, "tosa.mul with a non-zero shift");
    Value c = other(op->getOperand(1 - scoreInput));
    if (!c)
      return fail(op, "tosa.mul of the scores by a broadcast tensor");
    current = arith::MulFOp::create(b, loc, current, c);
    return success();
  }
  if (isa<tosa::AddOp>(op)) {
    Value c = other(op->getOperand(1 - scoreInput));
    if (!c)
      return fail(op, "tosa.add of a broadcast tensor to the scores");
    current = arith::AddFOp::create(b, loc, current, c);
    return success();
  }
  auto select = cast<tosa::SelectOp>(op);
  if (scoreInput != 1)
    return fail(op, "tosa.select keeps the scores where the mask is false");
  if (!isNegInf(select.getOnFalse()))
    return fail(op, "tosa.select fills masked scores with a value other "
                    "than -inf");
  Value keep = other(select.getPred());
  if (!keep)
    return fail(op, "tosa.select with a broadcast mask");
  Value fill = arith::ConstantOp::create(
      b, loc, element,
      b.getFloatAttr(element, -std::numeric_limits<double>::infinity()));
  current = arith::SelectOp::create(b, loc, keep, current, fill);
  return success();
}

unsigned Matcher::dependencies(Value v) {
  auto it = dependencyCache.find(v);
  if (it != dependencyCache.end())
    return it->second;
  unsigned deps = 0;
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    unsigned n = arg.getArgNumber();
    deps = n == 0 ? onScore : n <= m.scoreRank ? onIndex : onData;
  } else {
    for (Value operand : v.getDefiningOp()->getOperands())
      deps |= dependencies(operand);
  }
  dependencyCache[v] = deps;
  return deps;
}

/// Peels the masks off the program's result (select(c, s, -inf), s + bias),
/// then the scale off its argument; what is left between is the score_mod.
LogicalResult Matcher::splitScoreProgram() {
  Value score = program->getArgument(0);
  Value result = program->getTerminator()->getOperand(0);
  Operation *at = m.root;
  auto isDataArg = [&](Value v) {
    auto arg = dyn_cast<BlockArgument>(v);
    return arg && arg.getOwner() == program && arg.getArgNumber() > m.scoreRank;
  };
  auto tensorOf = [&](Value arg) -> std::pair<Value, AffineMap> {
    for (auto &[key, a] : dataArgs)
      if (a == arg)
        return key;
    return {};
  };
  auto setDataMask = [&](Value arg) -> LogicalResult {
    if (m.dataMask)
      return fail(at, "the scores have two data masks; cp.attention takes "
                      "one");
    auto [tensor, map] = tensorOf(arg);
    unsigned rank = m.scoreRank;
    MLIRContext *ctx = map.getContext();
    AffineMap matrix = AffineMap::get(
        rank, 0,
        {getAffineDimExpr(rank - 2, ctx), getAffineDimExpr(rank - 1, ctx)},
        ctx);
    if (map == matrix)
      m.dataMaskIsMatrix = true;
    else if (!isIdentity(map, rank))
      return fail(at, "the data mask is indexed by neither (q, k) nor every "
                      "score dim");
    auto type = cast<RankedTensorType>(tensor.getType());
    int64_t keys = type.getShape().back();
    if (groupSize != 1)
      return fail(at, "the mask tensor covers the " + Twine(keys) +
                          " local keys; on a CP group of " + Twine(groupSize) +
                          " a mask must cover all " + Twine(keys * groupSize) +
                          " global keys: build it from linalg.index (raised "
                          "to a mask on global positions) or pass the "
                          "global mask to cp.attention directly");
    m.dataMask = tensor;
    return success();
  };

  while (true) {
    if (auto select = result.getDefiningOp<arith::SelectOp>()) {
      if (isNegInf(select.getFalseValue()) &&
          !(dependencies(select.getCondition()) & onScore)) {
        Value c = select.getCondition();
        unsigned deps = dependencies(c);
        if (deps == onIndex || deps == 0)
          m.maskConditions.push_back(c);
        else if (isDataArg(c) && c.getType().isInteger(1)) {
          if (failed(setDataMask(c)))
            return failure();
        } else {
          return fail(at, "a mask condition mixes mask data with positions");
        }
        result = select.getTrueValue();
        continue;
      }
    }
    if (auto add = result.getDefiningOp<arith::AddFOp>()) {
      Value bias = isDataArg(add.getRhs())   ? add.getRhs()
                   : isDataArg(add.getLhs()) ? add.getLhs()
                                             : Value();
      if (bias) {
        if (failed(setDataMask(bias)))
          return failure();
        result = bias == add.getRhs() ? add.getLhs() : add.getRhs();
        continue;
      }
    }
    break;
  }

  // scale: score * c, c * score or score / c, the score's only use.
  m.scaledScore = score;
  if (score.hasOneUse()) {
    Operation *user = *score.getUsers().begin();
    Value c;
    if (isa<arith::MulFOp>(user))
      c = user->getOperand(user->getOperand(0) == score ? 1 : 0);
    else if (isa<arith::DivFOp>(user) && user->getOperand(0) == score)
      c = user->getOperand(1);
    if (std::optional<double> value = c ? constantFloat(c) : std::nullopt) {
      m.scale = isa<arith::DivFOp>(user) ? 1.0 / *value : *value;
      m.scaledScore = user->getResult(0);
    }
  }
  if (result != m.scaledScore) {
    unsigned deps = dependencies(result);
    if (deps & onData)
      return fail(at, "the score transform reads a tensor; only transforms "
                      "of the score and its positions are raised");
    if (!(deps & onScore))
      return fail(at, "the scores are replaced by a value that does not "
                      "depend on them");
    if (!m.scaledScore.getType().isF32())
      return fail(at, "a score transform on " +
                          typeName(m.scaledScore.getType()) +
                          " scores; score_mod takes f32");
    m.transformed = result;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Stage 4: operands
//===----------------------------------------------------------------------===//

LogicalResult Matcher::matchOperands(const Contraction &qk) {
  int64_t keyGroup = 1;
  if (failed(matchRhs(qk, /*seqIsReduction=*/false, "K", m.key, keyGroup)))
    return failure();
  m.query.value = qk.lhs;

  // A constant scaling of Q (generic or tosa.mul) is part of the scale.
  if (auto g = m.query.value.getDefiningOp<linalg::GenericOp>()) {
    if (isElementwise(g) && g.getNumDpsInputs() == 1 &&
        isIdentity(g.getIndexingMapsArray()[0], rankOf(m.query.value)) &&
        g.getBody()->getOperations().size() == 2) {
      Operation *op = yielded(g).getDefiningOp();
      if (isa_and_nonnull<arith::MulFOp, arith::DivFOp>(op)) {
        bool isDiv = isa<arith::DivFOp>(op);
        Value a = op->getOperand(0), c = op->getOperand(1);
        if (!isDiv && !isArg(a, g, 0))
          std::swap(a, c);
        std::optional<double> value = constantFloat(c);
        if (isArg(a, g, 0) && value) {
          m.scale *= isDiv ? 1.0 / *value : *value;
          m.ops.insert(g);
          m.query.value = g.getDpsInputs()[0];
        }
      }
    }
  } else if (auto mul = m.query.value.getDefiningOp<tosa::MulOp>()) {
    if (hasZeroShift(mul))
      for (auto [a, c] : {std::pair(mul.getInput1(), mul.getInput2()),
                          std::pair(mul.getInput2(), mul.getInput1())})
        if (std::optional<double> value = constantFloat(c)) {
          m.scale *= *value;
          m.ops.insert(mul);
          m.query.value = a;
          break;
        }
  }

  // Transposes written as ops.
  auto unTranspose = [&](AttentionInput &in) {
    if (!in.transposed)
      return;
    unsigned rank = rankOf(in.value);
    SmallVector<int64_t> swapLast =
        llvm::to_vector(llvm::seq<int64_t>(0, rank));
    std::swap(swapLast[rank - 2], swapLast[rank - 1]);
    Operation *def = in.value.getDefiningOp();
    if (auto t = dyn_cast_or_null<linalg::TransposeOp>(def);
        t && t.getPermutation() == ArrayRef<int64_t>(swapLast)) {
      m.ops.insert(t);
      in = {t.getInput(), false};
    } else if (auto t = dyn_cast_or_null<tosa::TransposeOp>(def)) {
      SmallVector<int64_t> perms(t.getPerms().begin(), t.getPerms().end());
      if (perms == swapLast) {
        m.ops.insert(t);
        in = {t.getInput1(), false};
      }
    }
  };
  unTranspose(m.key);
  unTranspose(m.value);

  // GQA: a floordiv head map, or K and V broadcast to the query heads:
  // collapse_shape of a broadcast that inserts the copies right after the
  // head dim ([.., Hkv, G, ..] -> [.., Hkv*G, ..]), so that query head h
  // reads K/V head h / G.
  int64_t valueGroup = m.kvGroup;
  auto broadcastGroup = [&](AttentionInput &in, StringRef name,
                            int64_t &group) -> LogicalResult {
    auto collapse = in.value.getDefiningOp<tensor::CollapseShapeOp>();
    if (!collapse || in.transposed || batchRank == 0)
      return success();
    unsigned head = batchRank - 1;
    SmallVector<ReassociationIndices> groups =
        collapse.getReassociationIndices();
    bool shape = groups.size() == rankOf(in.value);
    for (unsigned i = 0; shape && i < groups.size(); ++i) {
      unsigned first = i <= head ? i : i + 1;
      ReassociationIndices expected{first};
      if (i == head)
        expected.push_back(first + 1);
      shape = groups[i] == expected;
    }
    if (!shape)
      return success();
    Value source = collapse.getSrc();
    auto sourceType = cast<RankedTensorType>(source.getType());
    Value kv;
    Operation *broadcast = source.getDefiningOp();
    if (auto bc = dyn_cast_or_null<linalg::BroadcastOp>(broadcast)) {
      if (bc.getDimensions().size() != 1)
        return success();
      if (bc.getDimensions()[0] != head + 1)
        return fail(bc, Twine(name) +
                            " is repeated for GQA with the copies "
                            "before the K/V heads ([.., G, Hkv, ..]): "
                            "query head h would read K/V head h mod "
                            "Hkv, but cp.attention reads h / G");
      kv = bc.getInput();
    } else if (auto g = dyn_cast_or_null<linalg::GenericOp>(broadcast)) {
      // A copy generic whose input map drops one dim.
      if (!isElementwise(g) || g.getNumDpsInputs() != 1 ||
          !isArg(yielded(g), g, 0) || g.getBody()->getOperations().size() != 1)
        return success();
      std::optional<Dims> dims = dimsOf(g.getIndexingMapsArray()[0]);
      if (!dims ||
          static_cast<int64_t>(dims->size()) + 1 != sourceType.getRank())
        return success();
      SmallVector<unsigned> kept;
      for (const DimRef &d : *dims)
        kept.push_back(d.dim);
      SmallVector<unsigned> expected;
      for (unsigned i = 0; i < sourceType.getRank(); ++i)
        if (i != head + 1)
          expected.push_back(i);
      if (kept != expected)
        return fail(g, Twine(name) + " is repeated for GQA in an order where "
                                     "query head h does not read K/V head "
                                     "h / G");
      kv = g.getDpsInputs()[0];
    } else {
      return success();
    }
    m.ops.insert(collapse);
    m.ops.insert(broadcast);
    group = sourceType.getDimSize(head + 1);
    in.value = kv;
    return success();
  };
  int64_t keyBroadcast = 1, valueBroadcast = 1;
  if (failed(broadcastGroup(m.key, "K", keyBroadcast)) ||
      failed(broadcastGroup(m.value, "V", valueBroadcast)))
    return failure();
  keyGroup *= keyBroadcast;
  valueGroup *= valueBroadcast;
  if (keyGroup != valueGroup)
    return fail(m.root, "K is shared by " + Twine(keyGroup) +
                            " query heads and V by " + Twine(valueGroup) +
                            "; cp.attention needs one GQA group");
  m.kvGroup = keyGroup;

  // What cp.attention can state: one float type, static shapes, one
  // sequence (not cross-attention), H = G * Hkv.
  auto q = cast<RankedTensorType>(m.query.value.getType());
  Type element = q.getElementType();
  if (!element.isF32() && !element.isF16() && !element.isBF16())
    return fail(m.root, "attention on " + typeName(element) +
                            "; cp.attention takes f32, f16 or bf16");
  for (Value v : {m.key.value, m.value.value, Value(m.root->getResult(0))})
    if (cast<RankedTensorType>(v.getType()).getElementType() != element)
      return fail(m.root, "Q, K, V and the result have different element "
                          "types");
  for (Value v : {m.query.value, m.key.value, m.value.value})
    if (!cast<RankedTensorType>(v.getType()).hasStaticShape())
      return fail(m.root, "Q, K or V has a dynamic shape");
  auto seqLength = [](const AttentionInput &in) {
    ArrayRef<int64_t> shape =
        cast<RankedTensorType>(in.value.getType()).getShape();
    return shape[shape.size() - (in.transposed ? 1 : 2)];
  };
  int64_t queries = q.getShape()[q.getRank() - 2];
  int64_t keys = seqLength(m.key);
  if (keys != queries || seqLength(m.value) != keys)
    return fail(m.root, Twine(queries) + " queries attend " + Twine(keys) +
                            " keys: cross-attention; cp.attention shards one "
                            "sequence for Q, K and V");
  if (batchRank > 0) {
    int64_t heads = q.getShape()[batchRank - 1];
    for (Value v : {m.key.value, m.value.value}) {
      int64_t kvHeads =
          cast<RankedTensorType>(v.getType()).getShape()[batchRank - 1];
      if (kvHeads * m.kvGroup != heads)
        return fail(m.root, Twine(heads) + " query heads read " +
                                Twine(kvHeads) + " K/V heads in groups of " +
                                Twine(m.kvGroup) +
                                "; cp.attention needs H = G * Hkv");
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Stage 5
//===----------------------------------------------------------------------===//

LogicalResult Matcher::checkNoOutsideUsers() {
  for (Operation *op : m.ops) {
    if (op == m.root)
      continue;
    for (Operation *user : op->getUsers())
      if (!m.ops.contains(user))
        return fail(user, "an intermediate of the attention (" +
                              op->getName().getStringRef() +
                              ") is also used here; raising would have to "
                              "keep computing it");
  }
  return success();
}

} // namespace

FailureOr<AttentionMatch> mlir::cp::matchAttention(Operation *candidate,
                                                   int64_t groupSize,
                                                   NearMiss &miss) {
  return Matcher(groupSize, miss).run(candidate);
}
