//===- MatchPredicates.cpp - what the attention matcher tests ops for -----===//
//
// The structural tests every stage of the matcher applies: which loop dims
// an indexing map reads, which values are constants, what a generic body
// computes, and whether an op is a contraction.
//
//===----------------------------------------------------------------------===//

#include "AttentionMatcherStages.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Matchers.h"

#include <cmath>
#include <limits>

namespace mlir::cp::matcher {

//===----------------------------------------------------------------------===//
// Indexing maps
//===----------------------------------------------------------------------===//

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

bool isIdentity(AffineMap map, unsigned rank) {
  return map.isIdentity() && map.getNumDims() == rank;
}

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

std::optional<double> constantFloat(Value v) {
  FloatAttr scalar;
  if (matchPattern(v, m_Constant(&scalar)))
    return scalar.getValueAsDouble();
  DenseElementsAttr dense;
  if (matchPattern(v, m_Constant(&dense)) && dense.isSplat() &&
      isa<FloatType>(dense.getElementType()))
    return dense.getSplatValue<APFloat>().convertToDouble();
  if (auto splat = v.getDefiningOp<tensor::SplatOp>())
    return constantFloat(splat.getInput());
  return std::nullopt;
}

bool isConstant(Value v, double expected) {
  std::optional<double> c = constantFloat(v);
  return c && (*c == expected || (std::isnan(*c) && std::isnan(expected)));
}

bool isNegInf(Value v) {
  return isConstant(v, -std::numeric_limits<double>::infinity());
}

bool isFilledWith(Value init, double value) {
  if (auto fill = init.getDefiningOp<linalg::FillOp>())
    return isConstant(fill.getInputs()[0], value);
  return isConstant(init, value);
}

bool hasZeroShift(tosa::MulOp mul) {
  DenseElementsAttr shift;
  return matchPattern(mul.getShift(), m_Constant(&shift)) && shift.isSplat() &&
         shift.getSplatValue<APInt>().isZero();
}

//===----------------------------------------------------------------------===//
// Generic bodies
//===----------------------------------------------------------------------===//

Value yielded(linalg::GenericOp g) {
  auto yield = cast<linalg::YieldOp>(g.getBody()->getTerminator());
  return yield.getNumOperands() == 1 ? yield.getOperand(0) : Value();
}

bool isArg(Value v, linalg::GenericOp g, unsigned n) {
  auto arg = dyn_cast<BlockArgument>(v);
  return arg && arg.getOwner() == g.getBody() && arg.getArgNumber() == n;
}

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

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

/// mulf(in0, in1) (either order) added to the accumulator, yielded.
static bool isMulAddBody(Block &body) {
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

bool startsFromZero(const Contraction &c) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(c.op);
  return !linalgOp || isFilledWith(linalgOp.getDpsInits()[0], 0.0);
}

} // namespace mlir::cp::matcher
