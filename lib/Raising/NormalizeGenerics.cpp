//===- NormalizeGenerics.cpp - torch's generics around attention ---------===//
//
// cp-normalize-attention's generic patterns: keepdim statistics computed
// without their unit dim, inputs read through unit-dim reshapes, constant-0
// reads of unit batch dims, copy generics (broadcasts, transposes, copies
// of a tensor to itself) read through, fills read as scalars, and unused
// results (torch's argmax) dropped.
//
//===----------------------------------------------------------------------===//

#include "NormalizePatterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::cp;
using namespace mlir::cp::normalize;

namespace {

/// `shape` without dim `p` (a unit dim), and the groups that collapse it.
SmallVector<ReassociationIndices> dropUnitDimGroups(int64_t rank, int64_t p) {
  SmallVector<ReassociationIndices> groups;
  for (int64_t i = 0; i < rank; ++i) {
    if (i == p && i > 0) {
      groups.back().push_back(i);
      continue;
    }
    if (i == p + 1 && p == 0) {
      groups.back().push_back(i);
      continue;
    }
    groups.push_back({i});
  }
  return groups;
}

/// A generic output [.., 1, ..] written through a map whose result for the
/// unit dim is the constant 0 (torch's keepdim max and sum): computed
/// without that dim, then expanded back.
struct KeepdimStatistic : Logged<OpRewritePattern<linalg::GenericOp>> {
  using Logged::Logged;
  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics())
      return failure();
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    for (OpOperand &out : op.getDpsInitsMutable()) {
      AffineMap map = op.getMatchingIndexingMap(&out);
      auto type = cast<RankedTensorType>(out.get().getType());
      if (type.getRank() < 2)
        continue;
      for (unsigned p = 0; p < map.getNumResults(); ++p) {
        auto c = dyn_cast<AffineConstantExpr>(map.getResult(p));
        if (!c || c.getValue() != 0 || type.getDimSize(p) != 1)
          continue;
        Location loc = op.getLoc();
        auto groups = dropUnitDimGroups(type.getRank(), p);
        Value init = tensor::CollapseShapeOp::create(rewriter, loc, out.get(),
                                                     groups);
        unsigned index = out.getOperandNumber();
        maps[index] = map.dropResult(p);
        SmallVector<Value> inits(op.getDpsInits());
        inits[index - op.getNumDpsInputs()] = init;
        SmallVector<Type> types;
        for (Value v : inits)
          types.push_back(v.getType());
        auto generic = linalg::GenericOp::create(
            rewriter, loc, types, op.getDpsInputs(), inits, maps,
            op.getIteratorTypesArray());
        rewriter.inlineRegionBefore(op.getRegion(), generic.getRegion(),
                                    generic.getRegion().end());
        SmallVector<Value> results(generic.getResults());
        unsigned resultIndex = index - op.getNumDpsInputs();
        results[resultIndex] = tensor::ExpandShapeOp::create(
            rewriter, loc, type, results[resultIndex], groups);
        rewriter.replaceOp(op, results);
        record();
        return success();
      }
    }
    return failure();
  }
};

/// The map that reads a reshape's source where `map` reads its result,
/// when every reassociation group holds at most one dim of size > 1 (the
/// reshape only adds or drops unit dims): the group's one index is that
/// dim's, the unit dims' are 0. None otherwise.
std::optional<AffineMap> readThroughUnitReshape(AffineMap map,
                                                ArrayRef<int64_t> source,
                                                ArrayRef<int64_t> result,
                                                ArrayRef<ReassociationIndices>
                                                    groups,
                                                bool expands) {
  MLIRContext *ctx = map.getContext();
  AffineExpr zero = getAffineConstantExpr(0, ctx);
  auto isZero = [](AffineExpr e) {
    auto c = dyn_cast<AffineConstantExpr>(e);
    return c && c.getValue() == 0;
  };
  // The high-rank side's dims within a group, and the one that carries the
  // index (the last when all are unit dims).
  ArrayRef<int64_t> wide = expands ? result : source;
  auto carrier = [&](const ReassociationIndices &g) -> std::optional<int64_t> {
    std::optional<int64_t> found;
    for (int64_t p : g) {
      if (wide[p] == 1)
        continue;
      if (found)
        return std::nullopt;
      found = p;
    }
    return found ? found : std::optional<int64_t>(g.back());
  };
  SmallVector<AffineExpr> exprs(expands ? source.size() : wide.size(), zero);
  for (auto [g, group] : llvm::enumerate(groups)) {
    std::optional<int64_t> c = carrier(group);
    if (!c)
      return std::nullopt;
    if (expands) {
      // Source dim g is read at the carrier's index; the unit dims at 0.
      for (int64_t p : group)
        if (p != *c && !isZero(map.getResult(p)))
          return std::nullopt;
      exprs[g] = map.getResult(*c);
    } else {
      exprs[*c] = map.getResult(g);
    }
  }
  return AffineMap::get(map.getNumDims(), 0, exprs, ctx);
}

/// A generic input that is a reshape only adding or dropping unit dims
/// (torch's keepdim expand_shape, a [1, ..] collapse) is read from the
/// reshape's source through the corresponding map.
struct UnitReshapeIntoInput : Logged<OpRewritePattern<linalg::GenericOp>> {
  using Logged::Logged;
  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    for (OpOperand *in : op.getDpsInputOperands()) {
      Operation *def = in->get().getDefiningOp();
      std::optional<AffineMap> map;
      Value source;
      AffineMap current = op.getMatchingIndexingMap(in);
      if (auto expand = dyn_cast_or_null<tensor::ExpandShapeOp>(def)) {
        source = expand.getSrc();
        map = readThroughUnitReshape(
            current, expand.getSrcType().getShape(),
            expand.getResultType().getShape(),
            expand.getReassociationIndices(), /*expands=*/true);
      } else if (auto collapse =
                     dyn_cast_or_null<tensor::CollapseShapeOp>(def)) {
        source = collapse.getSrc();
        map = readThroughUnitReshape(
            current, collapse.getSrcType().getShape(),
            collapse.getResultType().getShape(),
            collapse.getReassociationIndices(), /*expands=*/false);
      }
      if (!map)
        continue;
      readInputAs(rewriter, op, in, source, *map);
      record();
      return success();
    }
    return failure();
  }
};

/// A generic input read at the constant 0 along a dim the output reads at
/// a loop of extent 1 is read at that loop (the same element): torch's
/// (0, d1, d2, d3) for a batch of one becomes the identity.
struct UnitLoopForConstantZero : Logged<OpRewritePattern<linalg::GenericOp>> {
  using Logged::Logged;
  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getNumDpsInits() == 0)
      return failure();
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    AffineMap out = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
    bool changed = false;
    for (OpOperand *in : op.getDpsInputOperands()) {
      AffineMap map = maps[in->getOperandNumber()];
      if (map.getNumResults() != out.getNumResults())
        continue;
      SmallVector<AffineExpr> exprs(map.getResults());
      for (auto [i, e] : llvm::enumerate(exprs)) {
        auto c = dyn_cast<AffineConstantExpr>(e);
        auto loop = dyn_cast<AffineDimExpr>(out.getResult(i));
        if (!c || c.getValue() != 0 || !loop ||
            ranges[loop.getPosition()] != 1)
          continue;
        e = loop;
        changed = true;
      }
      maps[in->getOperandNumber()] =
          AffineMap::get(map.getNumDims(), 0, exprs, op.getContext());
    }
    if (!changed)
      return failure();
    rewriter.modifyOpInPlace(op, [&] {
      op.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
    });
    record();
    return success();
  }
};

/// The input a copy generic reads and its input map, when `v` is the
/// result of one: one input, all parallel, an identity output map, a body
/// that yields its input (a broadcast or transpose written as a generic).
std::optional<std::pair<Value, AffineMap>> copyOf(Value v) {
  auto copy = v.getDefiningOp<linalg::GenericOp>();
  if (!copy || copy.getNumDpsInputs() != 1 || copy.getNumDpsInits() != 1 ||
      copy.getNumReductionLoops() != 0 || !copy.hasPureTensorSemantics())
    return std::nullopt;
  AffineMap out = copy.getIndexingMapsArray()[1];
  if (!out.isIdentity() ||
      copy.getBody()->getTerminator()->getOperand(0) !=
          copy.getBody()->getArgument(0))
    return std::nullopt;
  return std::make_pair(copy.getDpsInputs()[0], copy.getIndexingMapsArray()[0]);
}

/// A generic input produced by a copy generic (broadcast, transpose) is
/// read from the copy's input through the composed map.
struct CopyIntoConsumer : Logged<OpRewritePattern<linalg::GenericOp>> {
  using Logged::Logged;
  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    for (OpOperand *in : op.getDpsInputOperands()) {
      auto copy = copyOf(in->get());
      if (!copy)
        continue;
      readInputAs(rewriter, op, in, copy->first,
                  copy->second.compose(op.getMatchingIndexingMap(in)));
      record();
      return success();
    }
    return failure();
  }
};

/// A result of a multi-result generic that nobody uses, whose computation
/// in the body nothing the other results need depends on (the argmax of
/// torch's max.dim), is dropped with its init.
struct UnusedGenericResult : Logged<OpRewritePattern<linalg::GenericOp>> {
  using Logged::Logged;
  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getNumResults() < 2 || !op.hasPureTensorSemantics())
      return failure();
    SmallVector<unsigned> keep, drop;
    for (OpResult r : op->getResults())
      (r.use_empty() ? drop : keep).push_back(r.getResultNumber());
    if (drop.empty() || keep.empty())
      return failure();
    Block *body = op.getBody();
    Operation *yield = body->getTerminator();
    // What the kept results need.
    llvm::SetVector<Operation *> needed;
    SmallVector<Value> work;
    for (unsigned k : keep)
      work.push_back(yield->getOperand(k));
    while (!work.empty()) {
      Operation *def = work.pop_back_val().getDefiningOp();
      if (!def || def->getBlock() != body || !needed.insert(def))
        continue;
      llvm::append_range(work, def->getOperands());
    }
    unsigned inputs = op.getNumDpsInputs();
    for (unsigned d : drop)
      for (Operation *user : body->getArgument(inputs + d).getUsers())
        if (needed.contains(user))
          return failure();
    for (Operation &inner : body->without_terminator())
      if (!needed.contains(&inner) && !isMemoryEffectFree(&inner))
        return failure();

    SmallVector<AffineMap> maps(op.getIndexingMapsArray());
    SmallVector<AffineMap> newMaps(maps.begin(), maps.begin() + inputs);
    SmallVector<Value> inits;
    SmallVector<Type> types;
    for (unsigned k : keep) {
      newMaps.push_back(maps[inputs + k]);
      inits.push_back(op.getDpsInits()[k]);
      types.push_back(op->getResult(k).getType());
    }
    auto generic = linalg::GenericOp::create(
        rewriter, op.getLoc(), types, op.getDpsInputs(), inits, newMaps,
        op.getIteratorTypesArray());
    Block *newBody = rewriter.createBlock(&generic.getRegion());
    IRMapping mapping;
    for (unsigned i = 0; i < inputs; ++i)
      mapping.map(body->getArgument(i),
                  newBody->addArgument(body->getArgument(i).getType(),
                                       body->getArgument(i).getLoc()));
    for (unsigned k : keep)
      mapping.map(body->getArgument(inputs + k),
                  newBody->addArgument(body->getArgument(inputs + k).getType(),
                                       body->getArgument(inputs + k).getLoc()));
    rewriter.setInsertionPointToEnd(newBody);
    for (Operation &inner : body->without_terminator())
      if (needed.contains(&inner))
        rewriter.clone(inner, mapping);
    SmallVector<Value> yielded;
    for (unsigned k : keep)
      yielded.push_back(mapping.lookupOrDefault(yield->getOperand(k)));
    linalg::YieldOp::create(rewriter, yield->getLoc(), yielded);
    SmallVector<Value> replacements(op.getNumResults(), Value());
    for (auto [i, k] : llvm::enumerate(keep))
      replacements[k] = generic.getResult(i);
    rewriter.replaceOp(op, replacements);
    record();
    return success();
  }
};

/// A generic input that is a fill (or a splat constant) is read as its
/// scalar: the block argument's uses take the scalar (a dead input is then
/// erased by linalg's dead-operand patterns).
struct FilledInputAsScalar : Logged<OpRewritePattern<linalg::GenericOp>> {
  using Logged::Logged;
  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    for (OpOperand *in : op.getDpsInputOperands()) {
      BlockArgument arg = op.getMatchingBlockArgument(in);
      if (arg.use_empty())
        continue;
      Value scalar;
      auto generic = in->get().getDefiningOp<linalg::GenericOp>();
      if (auto fill = in->get().getDefiningOp<linalg::FillOp>()) {
        scalar = fill.getInputs()[0];
      } else if (generic && generic.getNumDpsInputs() == 0 &&
                 generic.getNumDpsInits() == 1) {
        // A fill written as a generic: it yields a value from above.
        Value y = generic.getBody()->getTerminator()->getOperand(0);
        if (y.getParentRegion() == &generic.getRegion())
          continue;
        scalar = y;
      } else {
        DenseElementsAttr splat;
        if (!matchPattern(in->get(), m_Constant(&splat)) || !splat.isSplat())
          continue;
        OpBuilder::InsertionGuard guard(rewriter);
        rewriter.setInsertionPoint(op);
        scalar = arith::ConstantOp::create(
            rewriter, op.getLoc(),
            cast<TypedAttr>(splat.getSplatValue<Attribute>()));
      }
      if (scalar.getType() != arg.getType())
        continue;
      rewriter.replaceAllUsesWith(arg, scalar);
      record();
      return success();
    }
    return failure();
  }
};

/// A generic that copies its one input to an output of the same shape,
/// reading it at the output's index (or at 0 along a unit dim), is its
/// input: torch's "broadcast" of a [1, ..] tensor to itself.
struct IdentityCopy : Logged<OpRewritePattern<linalg::GenericOp>> {
  using Logged::Logged;
  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
        op.getNumReductionLoops() != 0 || !op.hasPureTensorSemantics())
      return failure();
    Value in = op.getDpsInputs()[0];
    if (in.getType() != op.getResult(0).getType() ||
        op.getBody()->getTerminator()->getOperand(0) !=
            op.getBody()->getArgument(0))
      return failure();
    AffineMap inMap = op.getIndexingMapsArray()[0];
    AffineMap outMap = op.getIndexingMapsArray()[1];
    ArrayRef<int64_t> shape = shapeOf(in);
    if (inMap.getNumResults() != outMap.getNumResults())
      return failure();
    for (unsigned i = 0; i < inMap.getNumResults(); ++i) {
      AffineExpr e = inMap.getResult(i);
      if (e == outMap.getResult(i))
        continue;
      auto c = dyn_cast<AffineConstantExpr>(e);
      if (!c || c.getValue() != 0 || shape[i] != 1)
        return failure();
    }
    // Every output element is written: the output map is a permutation.
    if (!outMap.isPermutation())
      return failure();
    for (unsigned i = 0; i < outMap.getNumResults(); ++i)
      if (outMap.getResult(i) != getAffineDimExpr(i, op.getContext()))
        return failure();
    rewriter.replaceOp(op, in);
    record();
    return success();
  }
};

} // namespace

void mlir::cp::normalize::populateGenericPatterns(RewritePatternSet &patterns,
                                                  NormalizationLog *log) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<KeepdimStatistic>(ctx, log, "keepdim statistic");
  patterns.add<UnitReshapeIntoInput>(ctx, log,
                                     "unit-dim reshape read through");
  patterns.add<UnusedGenericResult>(ctx, log, "unused generic result");
  patterns.add<FilledInputAsScalar>(ctx, log, "filled input");
  patterns.add<IdentityCopy>(ctx, log, "identity copy");
  patterns.add<UnitLoopForConstantZero>(ctx, log, "unit batch read at 0");
  patterns.add<CopyIntoConsumer>(ctx, log, "broadcast or transpose copy");
}
