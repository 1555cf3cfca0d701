//===- MatchScores.cpp - matcher stage 3: the scores and Q K^T ------------===//
//
// The elementwise ops between Q K^T and the softmax, replayed as one
// scalar program so that the pass can split it into scale, score_mod,
// mask_mod and a data mask whatever mix of generics and tosa wrote it.
// One file past 600 lines on purpose: the replay is one walk whose cases
// (generic bodies, tosa ops, broadcasts, selects) share its state, and
// the split that follows it reads that state; apart, each half would need
// the other's internals.
//
//===----------------------------------------------------------------------===//

#include "AttentionMatcherStages.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

#include <limits>

namespace mlir::cp::matcher {

namespace {

/// Dependencies of a value of the score program.
enum Depends : unsigned { onScore = 1, onIndex = 2, onData = 4 };

} // namespace

/// Whether `v` is produced from a contraction through elementwise ops.
static bool reachesContraction(Value v, unsigned depth = 0) {
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

/// `x` with casts between integer widths stripped, down to an i1 it was
/// extended from (a tosa.cast chain i1 -> i32 -> i8 -> i1 keeps the bool).
static Value boolSource(Value x) {
  while (true) {
    if (x.getType().isInteger(1))
      return x;
    if (auto ext = x.getDefiningOp<arith::ExtUIOp>())
      x = ext.getIn();
    else if (auto trunc = x.getDefiningOp<arith::TruncIOp>())
      x = trunc.getIn();
    else
      return Value();
  }
}

/// `x` when it is an index_cast of an index value: positions compared in
/// their integer type compare the same as the indices when no position
/// overflows that type (`maxPosition` fits).
static Value indexSource(Value x, int64_t maxPosition) {
  auto cast = x.getDefiningOp<arith::IndexCastOp>();
  if (!cast || !cast.getIn().getType().isIndex())
    return Value();
  unsigned width = x.getType().getIntOrFloatBitWidth();
  if (width < 64 && maxPosition >= (int64_t(1) << (width - 1)))
    return Value();
  return cast.getIn();
}

static Value negate(OpBuilder &b, Location loc, Value c) {
  if (auto cmp = c.getDefiningOp<arith::CmpIOp>())
    return arith::CmpIOp::create(
        b, loc, arith::invertPredicate(cmp.getPredicate()), cmp.getLhs(),
        cmp.getRhs());
  Value one = arith::ConstantOp::create(b, loc, b.getBoolAttr(true));
  return arith::XOrIOp::create(b, loc, c, one);
}

Value Matcher::replayPositions(Value v, ArrayRef<int64_t> scoreShape,
                               OpBuilder &b, unsigned depth) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || depth > 16 || type.getRank() != int64_t(scoreShape.size()) ||
      !type.getElementType().isSignlessInteger())
    return Value();
  for (auto [size, scoreSize] : llvm::zip(type.getShape(), scoreShape))
    if (size != scoreSize && size != 1)
      return Value();
  Location loc = v.getLoc();
  Type element = type.getElementType();
  int64_t maxPosition = *llvm::max_element(scoreShape);

  DenseIntElementsAttr values;
  if (matchPattern(v, m_Constant(&values))) {
    if (values.isSplat())
      return arith::ConstantOp::create(
          b, loc, b.getIntegerAttr(element, values.getSplatValue<APInt>()));
    // An iota along the one dim that is not 1: the position on that dim.
    std::optional<unsigned> dim;
    for (auto [i, size] : llvm::enumerate(type.getShape()))
      if (size != 1) {
        if (dim)
          return Value();
        dim = i;
      }
    if (!dim)
      return Value();
    int64_t expected = 0;
    for (const APInt &value : values.getValues<APInt>())
      if (value.getSExtValue() != expected++)
        return Value();
    return arith::IndexCastOp::create(b, loc, element,
                                      program->getArgument(1 + *dim));
  }

  // Data the positions are compared with (e.g. a sequence length per
  // head), read broadcast like the scores.
  auto data = [&]() -> Value {
    if (depth == 0)
      return Value();
    SmallVector<AffineExpr> exprs;
    for (auto [i, size] : llvm::enumerate(type.getShape()))
      exprs.push_back(size == scoreShape[i] && size != 1
                          ? b.getAffineDimExpr(i)
                          : b.getAffineConstantExpr(0));
    return dataArgument(
        v, AffineMap::get(scoreShape.size(), 0, exprs, v.getContext()), b);
  };
  Operation *def = v.getDefiningOp();
  if (!def)
    return data();
  auto operand = [&](unsigned i) {
    return replayPositions(def->getOperand(i), scoreShape, b, depth + 1);
  };
  auto isConstantInt = [](Value x, int64_t c) {
    APInt value;
    return matchPattern(x, m_ConstantInt(&value)) && value.getSExtValue() == c;
  };
  if (auto mul = dyn_cast<tosa::MulOp>(def)) {
    if (!hasZeroShift(mul))
      return Value();
    Value l = operand(0), r = l ? operand(1) : Value();
    if (!r)
      return Value();
    if (isConstantInt(r, 1))
      return l;
    if (isConstantInt(l, 1))
      return r;
    return arith::MulIOp::create(b, loc, l, r);
  }
  if (isa<tosa::AddOp, tosa::SubOp>(def)) {
    Value l = operand(0), r = l ? operand(1) : Value();
    if (!r)
      return Value();
    if (isConstantInt(r, 0))
      return l;
    if (isa<tosa::AddOp>(def)) {
      if (isConstantInt(l, 0))
        return r;
      return arith::AddIOp::create(b, loc, l, r);
    }
    return arith::SubIOp::create(b, loc, l, r);
  }
  if (isa<tosa::GreaterOp, tosa::GreaterEqualOp, tosa::EqualOp>(def)) {
    Value l = operand(0), r = l ? operand(1) : Value();
    if (!r || !l.getType().isSignlessInteger())
      return Value();
    auto predicate = isa<tosa::GreaterOp>(def) ? arith::CmpIPredicate::sgt
                     : isa<tosa::GreaterEqualOp>(def)
                         ? arith::CmpIPredicate::sge
                         : arith::CmpIPredicate::eq;
    Value li = indexSource(l, maxPosition), ri = indexSource(r, maxPosition);
    if (li && ri)
      return arith::CmpIOp::create(b, loc, predicate, li, ri);
    return arith::CmpIOp::create(b, loc, predicate, l, r);
  }
  if (auto cast = dyn_cast<tosa::CastOp>(def)) {
    Value in = operand(0);
    if (!in)
      return Value();
    unsigned from = in.getType().getIntOrFloatBitWidth();
    unsigned to = element.getIntOrFloatBitWidth();
    if (to == 1) {
      if (Value bit = boolSource(in))
        return bit;
      Value zero = arith::ConstantOp::create(b, loc, b.getIntegerAttr(in.getType(), 0));
      return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, in, zero);
    }
    if (from == to)
      return in;
    if (from == 1)
      return arith::ExtUIOp::create(b, loc, element, in);
    if (from > to)
      return arith::TruncIOp::create(b, loc, element, in);
    return arith::ExtSIOp::create(b, loc, element, in);
  }
  if (isa<tosa::LogicalNotOp>(def)) {
    Value in = operand(0);
    return in ? negate(b, loc, in) : Value();
  }
  return data();
}

LogicalResult Matcher::replayTosa(Operation *op, unsigned scoreInput,
                                  OpBuilder &b, Value &current) {
  Location loc = op->getLoc();
  auto scoreType = cast<RankedTensorType>(op->getResult(0).getType());
  Type element = scoreType.getElementType();
  // An operand other than the scores: a splat constant or a tensor shaped
  // like the scores, or broadcast to them along dims of size 1 (read at 0).
  auto other = [&](Value v) -> Value {
    if (std::optional<double> c = constantFloat(v))
      return arith::ConstantOp::create(b, loc, element,
                                       b.getFloatAttr(element, *c));
    ArrayRef<int64_t> shape = cast<ShapedType>(v.getType()).getShape();
    if (shape.size() != scoreType.getShape().size())
      return Value();
    SmallVector<AffineExpr> exprs;
    for (auto [i, size] : llvm::enumerate(shape)) {
      if (size == scoreType.getDimSize(i))
        exprs.push_back(b.getAffineDimExpr(i));
      else if (size == 1)
        exprs.push_back(b.getAffineConstantExpr(0));
      else
        return Value();
    }
    return dataArgument(
        v, AffineMap::get(shape.size(), 0, exprs, op->getContext()), b);
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
  // select(keep, s, -inf), or select(masked, -inf, s).
  auto select = cast<tosa::SelectOp>(op);
  if (scoreInput == 0)
    return fail(op, "tosa.select chooses by the scores");
  bool inverted = scoreInput == 2;
  if (!isNegInf(inverted ? select.getOnTrue() : select.getOnFalse()))
    return fail(op, "tosa.select fills masked scores with a value other "
                    "than -inf");
  Value keep = replayPositions(select.getPred(), scoreType.getShape(), b, 0);
  if (!keep)
    keep = other(select.getPred());
  if (!keep)
    return fail(op, "tosa.select with a broadcast mask");
  if (inverted)
    keep = negate(b, loc, keep);
  Value fill = arith::ConstantOp::create(
      b, loc, element,
      b.getFloatAttr(element, -std::numeric_limits<double>::infinity()));
  current = arith::SelectOp::create(b, loc, keep, current, fill);
  return success();
}

/// Every data the program value `v` reads is read at the batch (and
/// head) position only, never at q or k (unless `atPositions`): the same
/// tensor on every rank (e.g. a sequence length per head), which a mod
/// region may read as a mod operand. Records those reads in the match.
bool Matcher::recordModReads(Value v, bool atPositions) {
  SmallVector<Value> work{v};
  DenseSet<Value> seen;
  SmallVector<ModOperandRead> reads;
  while (!work.empty()) {
    Value x = work.pop_back_val();
    if (!seen.insert(x).second)
      continue;
    if (auto arg = dyn_cast<BlockArgument>(x)) {
      if (arg.getOwner() != program || arg.getArgNumber() <= m.scoreRank)
        continue;
      for (auto &[key, a] : dataArgs) {
        if (a != arg)
          continue;
        auto [tensor, map] = key;
        for (AffineExpr e : map.getResults())
          if (auto d = dyn_cast<AffineDimExpr>(e);
              d && d.getPosition() + 2 >= m.scoreRank && !atPositions)
            return false;
        reads.push_back({arg, tensor, map});
      }
      continue;
    }
    for (Value operand : x.getDefiningOp()->getOperands())
      work.push_back(operand);
  }
  for (const ModOperandRead &read : reads)
    if (llvm::none_of(m.modReads, [&](const ModOperandRead &r) {
          return r.argument == read.argument;
        }))
      m.modReads.push_back(read);
  return true;
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
    // Every score dim, or a broadcast over the batch dims (a constant 0
    // for a dim of size 1: [1, 1, Lq, Lk] over [B, H, Lq, Lk]).
    auto type = cast<RankedTensorType>(tensor.getType());
    auto readsScoreDims = [&] {
      if (map.getNumResults() != rank)
        return false;
      for (auto [i, e] : llvm::enumerate(map.getResults())) {
        if (e == getAffineDimExpr(i, ctx))
          continue;
        auto c = dyn_cast<AffineConstantExpr>(e);
        if (!c || c.getValue() != 0 || i + 2 >= rank ||
            type.getDimSize(i) != 1)
          return false;
      }
      return true;
    };
    if (map == matrix)
      m.dataMaskIsMatrix = true;
    else if (!readsScoreDims())
      return fail(at, "the data mask is indexed by neither (q, k) nor the "
                      "score dims (each, or broadcast from size 1 over a "
                      "batch dim)");
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
    // s + 0 is s for the softmax: a zero's sign does not change exp.
    if (auto add = result.getDefiningOp<arith::AddFOp>()) {
      if (isConstant(add.getRhs(), 0.0) || isConstant(add.getLhs(), 0.0)) {
        result = isConstant(add.getRhs(), 0.0) ? add.getLhs() : add.getRhs();
        continue;
      }
    }
    if (auto select = result.getDefiningOp<arith::SelectOp>()) {
      if (isNegInf(select.getFalseValue()) &&
          !(dependencies(select.getCondition()) & onScore)) {
        Value c = select.getCondition();
        unsigned deps = dependencies(c);
        if (deps == onIndex || deps == 0)
          m.maskConditions.push_back(c);
        else if (deps == (onIndex | onData) &&
                 recordModReads(c, /*atPositions=*/false))
          m.maskConditions.push_back(c);
        else if (isDataArg(c) && c.getType().isInteger(1)) {
          if (failed(setDataMask(c)))
            return failure();
        } else if (deps == onData) {
          return fail(at, "the mask condition is computed from a mask tensor "
                          "(e.g. negated); cp.attention's explicit_mask is "
                          "the tensor itself, true where a score is kept");
        } else {
          return fail(at, "a mask condition mixes mask data with positions");
        }
        result = select.getTrueValue();
        continue;
      }
      // select(hidden, -inf, s), as torch's triu(-inf) masks come out: the
      // kept positions are the inverted comparison of positions.
      auto hidden = select.getCondition().getDefiningOp<arith::CmpIOp>();
      if (hidden && isNegInf(select.getTrueValue()) &&
          dependencies(hidden.getResult()) == onIndex) {
        OpBuilder b(select);
        m.maskConditions.push_back(
            arith::CmpIOp::create(b, hidden.getLoc(),
                                  arith::invertPredicate(hidden.getPredicate()),
                                  hidden.getLhs(), hidden.getRhs()));
        result = select.getFalseValue();
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
    // A tensor the transform reads (a runtime scale, a per-head factor) is
    // a mod operand of the score_mod. Read at the query and key positions,
    // it covers only the local ones, which are the global ones only on a
    // group of one process.
    if ((deps & onData) &&
        !recordModReads(result, /*atPositions=*/groupSize == 1))
      return fail(at, "the score transform reads a tensor at the query and "
                      "key positions, which covers only the local keys on a "
                      "CP group of " +
                          Twine(groupSize) +
                          "; read it per batch and head, or pass the global "
                          "tensor as a mod operand of cp.attention directly");
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

} // namespace mlir::cp::matcher
