//===- NormalizeAttention.cpp - front-end attention forms, normalized -----===//
//
// normalizeAttentionForms and the cp-normalize-attention pass: the
// patterns of NormalizeContractions.cpp and NormalizeGenerics.cpp (each
// exact: the IR computes the same values) with the canonicalizations and
// folds of tosa, tensor, linalg and arith, to a fixpoint.
//
//===----------------------------------------------------------------------===//

#include "NormalizeAttention.h"
#include "NormalizePatterns.h"

#include "cp/Raising/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::cp {
#define GEN_PASS_DEF_NORMALIZEATTENTIONPASS
#include "cp/Raising/Passes.h.inc"
} // namespace mlir::cp

using namespace mlir;
using namespace mlir::cp;

LogicalResult mlir::cp::normalizeAttentionForms(Operation *root,
                                                NormalizationLog *log) {
  MLIRContext *ctx = root->getContext();
  RewritePatternSet patterns(ctx);
  normalize::populateContractionPatterns(patterns, log);
  normalize::populateGenericPatterns(patterns, log);
  normalize::populateBroadcastPatterns(patterns, log);
  linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
  // The dialects' own canonicalizations and folds: tosa.add of zeros,
  // tosa.reciprocal of a constant, fills read by generics, dead ops.
  for (Dialect *dialect : ctx->getLoadedDialects())
    dialect->getCanonicalizationPatterns(patterns);
  for (RegisteredOperationName op : ctx->getRegisteredOperations())
    if (isa<tosa::TosaDialect, tensor::TensorDialect, linalg::LinalgDialect,
            arith::ArithDialect>(op.getDialect()))
      op.getCanonicalizationPatterns(patterns, ctx);
  return applyPatternsGreedily(root, std::move(patterns));
}

std::string mlir::cp::describe(const NormalizationLog &log) {
  std::string text;
  for (auto [form, count] : log) {
    if (!text.empty())
      text += ", ";
    text += form.str() + " x" + std::to_string(count);
  }
  return text;
}

namespace {

struct NormalizeAttentionPass
    : public cp::impl::NormalizeAttentionPassBase<NormalizeAttentionPass> {
  using Base::Base;

  void runOnOperation() override {
    NormalizationLog log;
    if (failed(normalizeAttentionForms(getOperation(), &log))) {
      getOperation()->emitError("cp-normalize-attention: the rewrites did "
                                "not converge");
      return signalPassFailure();
    }
    if (report && !log.empty())
      mlir::emitRemark(getOperation()->getLoc(), "cp-normalize-attention: ")
          << describe(log);
  }
};

} // namespace
