//===- ApproximateMath.cpp - polynomial f32 math functions ----------------===//
//
// Implements cp-approximate-math over upstream's polynomial approximation
// patterns, so vector exp/log never scalarize into libm calls.
//
//===----------------------------------------------------------------------===//

#include "cp/Transforms/Passes.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace cp {
#define GEN_PASS_DEF_APPROXIMATEMATHPASS
#include "cp/Transforms/Passes.h.inc"
} // namespace cp
} // namespace mlir

using namespace mlir;

namespace {
struct ApproximateMathPass
    : public cp::impl::ApproximateMathPassBase<ApproximateMathPass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns, [](StringRef name) {
      return name == math::ExpOp::getOperationName() ||
             name == math::LogOp::getOperationName() ||
             name == math::TanhOp::getOperationName() ||
             name == math::ErfOp::getOperationName();
    });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
