//===- NormalizeContractions.cpp - batched matmuls over reshapes ----------===//
//
// cp-normalize-attention's contraction patterns: a tosa.matmul or
// linalg.batch_matmul whose batch dim merges several becomes one
// contraction generic over them, reading through its operands' reshapes
// and transposes; a reshape back to its source's source type is dropped.
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

bool isReshape(Operation *op) {
  return isa_and_nonnull<tensor::CollapseShapeOp, tensor::ExpandShapeOp,
                         tosa::ReshapeOp>(op);
}

int64_t product(ArrayRef<int64_t> dims) {
  int64_t p = 1;
  for (int64_t d : dims)
    p *= d;
  return p;
}

/// The batch dims `shape` ([N, a, b]) had before a reshape `from` [batch...,
/// a, b] (at least two batch dims) merged them, or none.
std::optional<SmallVector<int64_t>> batchOf(ArrayRef<int64_t> from,
                                            ArrayRef<int64_t> shape) {
  if (from.size() < 4 || shape.size() != 3 ||
      ShapedType::isDynamicShape(from) || ShapedType::isDynamicShape(shape))
    return std::nullopt;
  if (from.take_back(2) != shape.take_back(2) ||
      product(from.drop_back(2)) != shape[0])
    return std::nullopt;
  return SmallVector<int64_t>(from.drop_back(2));
}

/// `fine` merges, in consecutive groups, into `coarse` (e.g. [2, 2, 2] into
/// [2, 4]: GQA's [B, Hkv, G] read as [B, H]).
bool refines(ArrayRef<int64_t> fine, ArrayRef<int64_t> coarse) {
  size_t i = 0;
  for (int64_t size : coarse) {
    int64_t p = 1;
    while (i < fine.size() && p < size)
      p *= fine[i++];
    if (p != size)
      return false;
  }
  return i == fine.size();
}

/// `x` as [batch..., a, b]: the source of the reshape that made it, or an
/// expand_shape of it.
Value withBatchDims(PatternRewriter &rewriter, Location loc, Value x,
                    ArrayRef<int64_t> batch) {
  Operation *def = x.getDefiningOp();
  if (isReshape(def)) {
    Value source = def->getOperand(0);
    if (auto found = batchOf(shapeOf(source), shapeOf(x));
        found && ArrayRef<int64_t>(*found) == batch)
      return source;
  }
  auto type = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> shape(batch);
  llvm::append_range(shape, type.getShape().drop_front());
  int64_t r = batch.size();
  SmallVector<ReassociationIndices> groups{
      llvm::to_vector(llvm::seq<int64_t>(0, r)), {r}, {r + 1}};
  return tensor::ExpandShapeOp::create(
      rewriter, loc, RankedTensorType::get(shape, type.getElementType()), x,
      groups);
}

/// The input a transpose of `x` reads and its permutation (result dim i is
/// input dim perm[i]), or none.
std::optional<std::pair<Value, SmallVector<int64_t>>> transposeOf(Value x) {
  if (auto t = x.getDefiningOp<tosa::TransposeOp>())
    return std::make_pair(
        t.getInput1(), SmallVector<int64_t>(t.getPerms().begin(),
                                            t.getPerms().end()));
  if (auto t = x.getDefiningOp<linalg::TransposeOp>())
    return std::make_pair(t.getInput(),
                          SmallVector<int64_t>(t.getPermutation()));
  return std::nullopt;
}

/// A batched contraction (tosa.matmul or linalg.batch_matmul) on rank-3
/// operands, whose batch dim is a merge of several dims: an operand is a
/// reshape of a higher-rank tensor, or the result is reshaped into one.
/// It becomes a linalg.generic over the separate batch dims, with the
/// result collapsed back (the reshapes around it then cancel).
template <typename OpTy>
struct LiftBatchedContraction : Logged<OpRewritePattern<OpTy>> {
  using Logged<OpRewritePattern<OpTy>>::Logged;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Value lhs = op->getOperand(0), rhs = op->getOperand(1);
    Value result = op->getResult(0);
    auto resultType = dyn_cast<RankedTensorType>(result.getType());
    if (!resultType || resultType.getRank() != 3)
      return failure();
    // The batch dims, from the operands' sources and the result's users.
    std::optional<SmallVector<int64_t>> batch;
    bool agree = true;
    // Batches that merge into one another agree on the coarser: the finer
    // operand is then collapsed to it.
    auto consider = [&](std::optional<SmallVector<int64_t>> found) {
      if (!found || (batch && refines(*found, *batch)))
        return;
      if (batch && !refines(*batch, *found))
        agree = false;
      batch = found;
    };
    for (Value x : {lhs, rhs})
      if (Operation *def = x.getDefiningOp(); isReshape(def))
        consider(batchOf(shapeOf(def->getOperand(0)), shapeOf(x)));
    for (Operation *user : result.getUsers())
      if (isReshape(user))
        consider(batchOf(shapeOf(user->getResult(0)), shapeOf(result)));
    if (!batch || !agree)
      return failure();
    // With one batch dim that is not 1, lifting only adds unit dims: it
    // is done only when it takes a reshape out from between the
    // contraction and the computation around it (P reshaped in, or the
    // scores reshaped back and computed on). Otherwise the rank-3 form is
    // what the matcher reads, and the elementwise ops on it stay rank 3.
    if (llvm::count_if(*batch, [](int64_t d) { return d != 1; }) <= 1) {
      auto computesOn = [](Operation *reshape) {
        return llvm::any_of(reshape->getUsers(), [](Operation *user) {
          return !isReshape(user) && !user->hasTrait<OpTrait::IsTerminator>();
        });
      };
      // An operand reshaped from something computed (P from a softmax),
      // not from an argument or another reshape.
      Operation *lhsDef = lhs.getDefiningOp();
      Operation *lhsSource =
          isReshape(lhsDef) ? lhsDef->getOperand(0).getDefiningOp() : nullptr;
      bool reshapedIn = lhsSource && !isReshape(lhsSource) &&
                        !transposeOf(lhsDef->getOperand(0));
      bool reshapedOut = llvm::any_of(result.getUsers(), [&](Operation *user) {
        return isReshape(user) && computesOn(user);
      });
      if (!reshapedIn && !reshapedOut)
        return failure();
    }

    SmallVector<AffineMap> maps;
    SmallVector<utils::IteratorType> iterators;
    Value init;
    if (failed(contractionOf(op, rewriter, *batch, maps, iterators, init)))
      return failure();

    Location loc = op.getLoc();
    int64_t r = batch->size();
    MLIRContext *ctx = rewriter.getContext();
    // Operands as [batch..., ., .], read through their transposes.
    SmallVector<Value> inputs;
    for (auto [i, x] : llvm::enumerate(ValueRange{lhs, rhs})) {
      Value lifted = withBatchDims(rewriter, loc, x, *batch);
      if (auto t = transposeOf(lifted)) {
        SmallVector<AffineExpr> exprs(t->second.size());
        for (auto [out, in] : llvm::enumerate(t->second))
          exprs[in] = maps[i].getResult(out);
        maps[i] = AffineMap::get(maps[i].getNumDims(), 0, exprs, ctx);
        lifted = t->first;
      }
      inputs.push_back(lifted);
    }
    SmallVector<int64_t> shape(*batch);
    llvm::append_range(shape, resultType.getShape().drop_front());
    auto liftedType = RankedTensorType::get(shape, resultType.getElementType());
    auto generic = linalg::GenericOp::create(rewriter, loc, liftedType, inputs,
                                             init, maps, iterators);
    buildBody(op, rewriter, generic);
    SmallVector<ReassociationIndices> groups{
        llvm::to_vector(llvm::seq<int64_t>(0, r)), {r}, {r + 1}};
    Value collapsed = tensor::CollapseShapeOp::create(
        rewriter, loc, resultType, generic.getResult(0), groups);
    rewriter.replaceOp(op, collapsed);
    this->record();
    return success();
  }

private:
  /// Maps of (batch..., m, n, k), iterators and the zero-filled or lifted
  /// init of the contraction, or failure when it is not one this lifts.
  LogicalResult contractionOf(OpTy op, PatternRewriter &rewriter,
                              ArrayRef<int64_t> batch,
                              SmallVector<AffineMap> &maps,
                              SmallVector<utils::IteratorType> &iterators,
                              Value &init) const;
  void buildBody(OpTy op, PatternRewriter &rewriter,
                 linalg::GenericOp generic) const;
};

bool isZeroConstant(Value v) {
  return matchPattern(v, m_AnyZeroFloat()) || matchPattern(v, m_Zero());
}

/// (b..., m, n, k) -> the operand's dims, with `r` batch dims.
SmallVector<AffineMap> matmulMaps(MLIRContext *ctx, int64_t r) {
  auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineExpr> batch;
  for (int64_t i = 0; i < r; ++i)
    batch.push_back(d(i));
  auto with = [&](AffineExpr x, AffineExpr y) {
    SmallVector<AffineExpr> e(batch);
    e.append({x, y});
    return AffineMap::get(r + 3, 0, e, ctx);
  };
  return {with(d(r), d(r + 2)), with(d(r + 2), d(r + 1)),
          with(d(r), d(r + 1))};
}

Value zeroFilled(PatternRewriter &rewriter, Location loc,
                 ArrayRef<int64_t> shape, Type element) {
  Value empty = tensor::EmptyOp::create(rewriter, loc, shape, element);
  Value zero = arith::ConstantOp::create(rewriter, loc, element,
                                         rewriter.getZeroAttr(element));
  return linalg::FillOp::create(rewriter, loc, zero, empty).getResult(0);
}

SmallVector<utils::IteratorType> matmulIterators(int64_t r) {
  SmallVector<utils::IteratorType> it(r + 2, utils::IteratorType::parallel);
  it.push_back(utils::IteratorType::reduction);
  return it;
}

template <>
LogicalResult LiftBatchedContraction<tosa::MatMulOp>::contractionOf(
    tosa::MatMulOp op, PatternRewriter &rewriter, ArrayRef<int64_t> batch,
    SmallVector<AffineMap> &maps, SmallVector<utils::IteratorType> &iterators,
    Value &init) const {
  if (!isZeroConstant(op.getAZp()) || !isZeroConstant(op.getBZp()))
    return failure();
  auto type = cast<RankedTensorType>(op.getType());
  Type in = getElementTypeOrSelf(op.getA().getType());
  if (!isa<FloatType>(in) || !isa<FloatType>(type.getElementType()) ||
      in.getIntOrFloatBitWidth() > type.getElementTypeBitWidth() ||
      in != getElementTypeOrSelf(op.getB().getType()))
    return failure();
  int64_t r = batch.size();
  maps = matmulMaps(rewriter.getContext(), r);
  iterators = matmulIterators(r);
  SmallVector<int64_t> shape(batch);
  llvm::append_range(shape, type.getShape().drop_front());
  init = zeroFilled(rewriter, op.getLoc(), shape, type.getElementType());
  return success();
}

template <>
void LiftBatchedContraction<tosa::MatMulOp>::buildBody(
    tosa::MatMulOp op, PatternRewriter &rewriter,
    linalg::GenericOp generic) const {
  OpBuilder::InsertionGuard guard(rewriter);
  Type in = getElementTypeOrSelf(op.getA().getType());
  Type out = getElementTypeOrSelf(op.getType());
  Location loc = op.getLoc();
  Block *body = rewriter.createBlock(&generic.getRegion(), {}, {in, in, out},
                                     {loc, loc, loc});
  Value a = body->getArgument(0), b = body->getArgument(1);
  if (in != out) {
    a = arith::ExtFOp::create(rewriter, loc, out, a);
    b = arith::ExtFOp::create(rewriter, loc, out, b);
  }
  Value product = arith::MulFOp::create(rewriter, loc, a, b);
  Value sum =
      arith::AddFOp::create(rewriter, loc, body->getArgument(2), product);
  linalg::YieldOp::create(rewriter, loc, sum);
}

template <>
LogicalResult LiftBatchedContraction<linalg::BatchMatmulOp>::contractionOf(
    linalg::BatchMatmulOp op, PatternRewriter &rewriter,
    ArrayRef<int64_t> batch, SmallVector<AffineMap> &maps,
    SmallVector<utils::IteratorType> &iterators, Value &init) const {
  if (!op.hasPureTensorSemantics())
    return failure();
  MLIRContext *ctx = rewriter.getContext();
  int64_t r = batch.size();
  // Loop 0 (the batch) becomes r loops; the others move up by r - 1.
  for (AffineMap map : op.getIndexingMapsArray()) {
    if (map.getNumResults() != 3 || map.getResult(0) != getAffineDimExpr(0, ctx))
      return failure();
    SmallVector<AffineExpr> exprs;
    for (int64_t i = 0; i < r; ++i)
      exprs.push_back(getAffineDimExpr(i, ctx));
    for (AffineExpr e : map.getResults().drop_front()) {
      auto dim = dyn_cast<AffineDimExpr>(e);
      if (!dim || dim.getPosition() == 0)
        return failure();
      exprs.push_back(getAffineDimExpr(dim.getPosition() + r - 1, ctx));
    }
    maps.push_back(AffineMap::get(r + 3, 0, exprs, ctx));
  }
  iterators = matmulIterators(r);
  Value oldInit = op.getDpsInits()[0];
  auto type = cast<RankedTensorType>(oldInit.getType());
  SmallVector<int64_t> shape(batch);
  llvm::append_range(shape, type.getShape().drop_front());
  if (auto fill = oldInit.getDefiningOp<linalg::FillOp>()) {
    Value empty = tensor::EmptyOp::create(rewriter, op.getLoc(), shape,
                                          type.getElementType());
    init = linalg::FillOp::create(rewriter, op.getLoc(), fill.getInputs()[0],
                                  empty)
               .getResult(0);
  } else {
    init = withBatchDims(rewriter, op.getLoc(), oldInit, batch);
  }
  return success();
}

template <>
void LiftBatchedContraction<linalg::BatchMatmulOp>::buildBody(
    linalg::BatchMatmulOp op, PatternRewriter &rewriter,
    linalg::GenericOp generic) const {
  rewriter.cloneRegionBefore(op->getRegion(0), generic.getRegion(),
                             generic.getRegion().end());
}

/// reshape(reshape(x)) whose result has x's type is x.
template <typename OpTy>
struct ReshapeRoundTrip : Logged<OpRewritePattern<OpTy>> {
  using Logged<OpRewritePattern<OpTy>>::Logged;
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Operation *def = op->getOperand(0).getDefiningOp();
    if (!isReshape(def) ||
        def->getOperand(0).getType() != op->getResult(0).getType())
      return failure();
    rewriter.replaceOp(op, def->getOperand(0));
    this->record();
    return success();
  }
};


/// A contraction generic: two inputs, one init, one reduction loop.
bool isContraction(linalg::GenericOp op) {
  return op.getNumDpsInputs() == 2 && op.getNumDpsInits() == 1 &&
         op.getNumReductionLoops() == 1 && op.hasPureTensorSemantics();
}

/// An input of a contraction read through a permutation that puts a
/// non-batch dim before a batch dim ([B, L, H, D], as models hold Q, K, V
/// before their head transpose) is transposed first, so that the batch
/// dims lead in the result's order and the other two keep theirs.
struct BatchDimsFirst : Logged<OpRewritePattern<linalg::GenericOp>> {
  using Logged::Logged;
  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!isContraction(op))
      return failure();
    AffineMap out = op.getIndexingMapsArray().back();
    unsigned rank = out.getNumResults();
    if (rank < 3)
      return failure();
    SmallVector<AffineExpr> batch(out.getResults().drop_back(2));
    for (OpOperand *in : op.getDpsInputOperands()) {
      AffineMap map = op.getMatchingIndexingMap(in);
      if (map.getNumResults() != rank || !map.isProjectedPermutation())
        continue;
      // The new order: the batch dims as the result has them, then the rest
      // in their order.
      SmallVector<int64_t> perm;
      for (AffineExpr b : batch)
        for (unsigned i = 0; i < rank; ++i)
          if (map.getResult(i) == b)
            perm.push_back(i);
      if (perm.size() != batch.size())
        continue;
      for (unsigned i = 0; i < rank; ++i)
        if (!llvm::is_contained(perm, static_cast<int64_t>(i)))
          perm.push_back(i);
      if (llvm::equal(perm, llvm::seq<int64_t>(0, rank)))
        continue;
      auto type = cast<RankedTensorType>(in->get().getType());
      SmallVector<int64_t> shape;
      SmallVector<AffineExpr> exprs;
      for (int64_t p : perm) {
        shape.push_back(type.getDimSize(p));
        exprs.push_back(map.getResult(p));
      }
      Location loc = op.getLoc();
      Value init =
          tensor::EmptyOp::create(rewriter, loc, shape, type.getElementType());
      Value transposed =
          linalg::TransposeOp::create(rewriter, loc, in->get(), init, perm)
              ->getResult(0);
      readInputAs(rewriter, op, in, transposed,
                  AffineMap::get(map.getNumDims(), 0, exprs, op.getContext()));
      record();
      return success();
    }
    return failure();
  }
};

/// A zero-initialized contraction whose one user, an elementwise generic,
/// reads it with its last two dims swapped (scores computed as K Q^T, then
/// transposed) writes them swapped instead, its operands exchanged so that
/// the rows come from the first: the user reads it at its own index.
struct TransposedScores : Logged<OpRewritePattern<linalg::GenericOp>> {
  using Logged::Logged;
  LogicalResult matchAndRewrite(linalg::GenericOp user,
                                PatternRewriter &rewriter) const override {
    if (user.getNumReductionLoops() != 0 || user.getNumDpsInits() != 1 ||
        !user.getIndexingMapsArray().back().isIdentity())
      return failure();
    MLIRContext *ctx = getContext();
    for (OpOperand *in : user.getDpsInputOperands()) {
      auto c = in->get().getDefiningOp<linalg::GenericOp>();
      AffineMap read = user.getMatchingIndexingMap(in);
      unsigned rank = read.getNumResults();
      if (!c || !isContraction(c) || !in->get().hasOneUse() || rank < 2 ||
          read.getNumDims() != rank)
        continue;
      SmallVector<int64_t> swap = llvm::to_vector(llvm::seq<int64_t>(0, rank));
      std::swap(swap[rank - 2], swap[rank - 1]);
      if (read != AffineMap::getPermutationMap(swap, ctx))
        continue;
      auto fill = c.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
      Value lhs = c.getDpsInputs()[0], rhs = c.getDpsInputs()[1];
      if (!fill || getElementTypeOrSelf(lhs.getType()) !=
                       getElementTypeOrSelf(rhs.getType()))
        continue;
      SmallVector<AffineMap> maps = c.getIndexingMapsArray();
      AffineMap out = maps[2];
      SmallVector<AffineExpr> outExprs(out.getResults());
      std::swap(outExprs[rank - 2], outExprs[rank - 1]);
      SmallVector<AffineMap> newMaps{
          maps[1], maps[0],
          AffineMap::get(out.getNumDims(), 0, outExprs, ctx)};
      auto type = cast<RankedTensorType>(c.getResult(0).getType());
      SmallVector<int64_t> shape(type.getShape());
      std::swap(shape[rank - 2], shape[rank - 1]);
      Location loc = c.getLoc();
      Value empty =
          tensor::EmptyOp::create(rewriter, loc, shape, type.getElementType());
      Value init =
          linalg::FillOp::create(rewriter, loc, fill.getInputs()[0], empty)
              .getResult(0);
      auto swapped = linalg::GenericOp::create(
          rewriter, loc, init.getType(), ValueRange{rhs, lhs}, init, newMaps,
          c.getIteratorTypesArray());
      rewriter.cloneRegionBefore(c.getRegion(), swapped.getRegion(),
                                 swapped.getRegion().end());
      // The body reads its inputs exchanged (a product commutes exactly).
      Block *body = swapped.getBody();
      SmallVector<OpOperand *> first, second;
      for (OpOperand &use : body->getArgument(0).getUses())
        first.push_back(&use);
      for (OpOperand &use : body->getArgument(1).getUses())
        second.push_back(&use);
      for (OpOperand *use : first)
        use->set(body->getArgument(1));
      for (OpOperand *use : second)
        use->set(body->getArgument(0));
      readInputAs(rewriter, user, in, swapped.getResult(0),
                  AffineMap::getMultiDimIdentityMap(rank, ctx));
      rewriter.eraseOp(c);
      record();
      return success();
    }
    return failure();
  }
};

} // namespace

void mlir::cp::normalize::populateContractionPatterns(
    RewritePatternSet &patterns, NormalizationLog *log) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<LiftBatchedContraction<tosa::MatMulOp>>(
      ctx, log, "batch matmul over reshapes");
  patterns.add<LiftBatchedContraction<linalg::BatchMatmulOp>>(
      ctx, log, "batch matmul over reshapes");
  patterns.add<ReshapeRoundTrip<tensor::ExpandShapeOp>,
               ReshapeRoundTrip<tensor::CollapseShapeOp>,
               ReshapeRoundTrip<tosa::ReshapeOp>>(ctx, log,
                                                  "reshape round trip");
  patterns.add<BatchDimsFirst>(ctx, log, "[B, L, H, D] operand");
  patterns.add<TransposedScores>(ctx, log, "transposed scores");
}
