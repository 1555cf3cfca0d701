//===- NormalizeBroadcasts.cpp - broadcasts written as arithmetic ---------===//
//
// Front ends that cannot broadcast a tensor explicitly (MIGraphX to TOSA,
// Dynamo to TOSA) repeat it by adding zeros of the wider shape: K and V
// repeated for grouped-query attention as [B, Hkv, 1, L, D] + zeros of
// [B, Hkv, G, L, D]. Written as linalg.broadcast, the repetition is what
// the matcher reads GQA from.
//
//===----------------------------------------------------------------------===//

#include "NormalizePatterns.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::cp;
using namespace mlir::cp::normalize;

namespace {

/// tosa.add(x, zeros) whose result is wider than x along dims of size 1 in
/// x: linalg.broadcast of x (its unit dims collapsed away) along those
/// dims. Exact but for the sign of a zero (x + 0 is +0 where x is -0),
/// which no product, sum or exp of attention can tell apart, as in tosa's
/// own fold of an add of zeros of the same shape.
struct BroadcastAddOfZeros : Logged<OpRewritePattern<tosa::AddOp>> {
  using Logged::Logged;

  LogicalResult matchAndRewrite(tosa::AddOp op,
                                PatternRewriter &rewriter) const override {
    Value x = repeatedByAddOfZeros(op);
    if (!x)
      return failure();
    auto type = cast<RankedTensorType>(op.getType());
    auto xType = cast<RankedTensorType>(x.getType());
    SmallVector<int64_t> broadcastDims;
    SmallVector<ReassociationIndices> groups;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      if (xType.getDimSize(d) == type.getDimSize(d)) {
        groups.push_back({d});
        continue;
      }
      if (xType.getDimSize(d) != 1)
        return failure();
      broadcastDims.push_back(d);
    }
    // Each dropped unit dim joins a kept neighbour's group.
    if (groups.empty())
      return failure();
    for (int64_t d : broadcastDims) {
      auto next = llvm::find_if(groups, [&](const ReassociationIndices &g) {
        return g.front() > d;
      });
      if (next == groups.end())
        groups.back().push_back(d);
      else
        next->insert(next->begin(), d);
    }
    for (ReassociationIndices &g : groups)
      llvm::sort(g);
    Location loc = op.getLoc();
    Value collapsed =
        tensor::CollapseShapeOp::create(rewriter, loc, x, groups);
    Value init = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                         type.getElementType());
    auto broadcast = linalg::BroadcastOp::create(rewriter, loc, collapsed,
                                                 init, broadcastDims);
    rewriter.replaceOp(op, broadcast->getResults());
    record();
    return success();
  }
};

} // namespace

Value mlir::cp::repeatedByAddOfZeros(Operation *op) {
  auto add = dyn_cast_or_null<tosa::AddOp>(op);
  if (!add)
    return Value();
  auto type = dyn_cast<RankedTensorType>(add.getType());
  if (!type || !type.hasStaticShape() ||
      !isa<FloatType>(type.getElementType()))
    return Value();
  for (auto [x, zeros] : {std::pair(add.getInput1(), add.getInput2()),
                          std::pair(add.getInput2(), add.getInput1())}) {
    auto xType = dyn_cast<RankedTensorType>(x.getType());
    if (xType && xType.getRank() == type.getRank() &&
        xType.hasStaticShape() && xType != type &&
        cast<ShapedType>(zeros.getType()).getShape() == type.getShape() &&
        matchPattern(zeros, m_AnyZeroFloat()))
      return x;
  }
  return Value();
}

void mlir::cp::normalize::populateBroadcastPatterns(
    RewritePatternSet &patterns, NormalizationLog *log) {
  patterns.add<BroadcastAddOfZeros>(patterns.getContext(), log,
                                    "broadcast as an add of zeros");
}
