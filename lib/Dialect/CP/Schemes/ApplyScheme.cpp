//===- ApplyScheme.cpp - rewrite cp.attention under a CP scheme -----------===//
//
// Implements cp-apply-scheme: each cp.attention becomes cp collectives plus
// cp.local_attention ops with the global offsets of DESIGN §2, and each
// cp.attention_grad the backward of its scheme (cp.local_attention_grad
// ops and collectives, docs/Training.md §3). Scheme
// constraints come from SchemeConstraints.h, traffic from SchemeTraffic.h;
// scheme = auto is resolved by running cp-choose-scheme (on this pass's
// `machine`) first, so every entry point that applies a scheme resolves
// auto with the one cost model the pipelines use. Each
// scheme, built in or a plugin's, is the SchemeDefinition registered for it
// (SchemeDefinition.h), whose rewrite builds on SchemeBuilder.h.
//
//===----------------------------------------------------------------------===//

#include "cp/Dialect/CP/Analysis/SchemeTraffic.h"
#include "cp/Dialect/CP/IR/CPOps.h"
#include "cp/Dialect/CP/IR/SchemeConstraints.h"
#include "cp/Dialect/CP/IR/SchemeDefinition.h"
#include "cp/Dialect/CP/Schemes/Passes.h"
#include "cp/Dialect/CP/Schemes/SchemeBuilder.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"

namespace mlir {
namespace cp {
#define GEN_PASS_DEF_APPLYSCHEMEPASS
#include "cp/Dialect/CP/Schemes/Passes.h.inc"
} // namespace cp
} // namespace mlir

using namespace mlir;
using namespace mlir::cp;

namespace {

struct ApplySchemePass : public cp::impl::ApplySchemePassBase<ApplySchemePass> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *context) override {
    FailureOr<SchemeAttr> resolved = scheme.resolve(context, "cp-apply-scheme");
    if (failed(resolved))
      return failure();
    defaultScheme = *resolved;
    return success();
  }

  void runOnOperation() override;
  /// Runs cp-choose-scheme (this pass's scheme and machine) on the anchor
  /// when an op would be rewritten under `auto`; fails when it fails.
  LogicalResult resolveAuto();
  /// The scheme `op` (cp.attention or cp.attention_grad) is rewritten under
  /// and its shape; fails with a diagnostic when it cannot be.
  template <typename ShardedOp>
  FailureOr<std::pair<SchemeAttr, AttentionShape>> schemeOf(ShardedOp op);
  /// Rewrites `op`; returns the scheme applied.
  FailureOr<SchemeAttr> rewrite(AttentionOp op);
  FailureOr<SchemeAttr> rewrite(AttentionGradOp op);
  /// Adds one to the statistic of `scheme`'s kind.
  void count(SchemeAttr scheme);

  SchemeAttr defaultScheme;
};

template <typename ShardedOp>
FailureOr<std::pair<SchemeAttr, AttentionShape>>
ApplySchemePass::schemeOf(ShardedOp op) {
  SchemeAttr scheme = op.getSchemeAttr() ? op.getSchemeAttr() : defaultScheme;
  if (!scheme)
    return op.emitOpError("has no scheme: set `scheme = ...` on the op or "
                          "run cp-apply-scheme{scheme=...}");
  auto types = {op.getQuery().getType(), op.getKey().getType(),
                op.getValue().getType()};
  int64_t groupSize = op.getGroupSize();
  if (ShapedType::isDynamic(groupSize) ||
      llvm::any_of(types,
                   [](RankedTensorType t) { return !t.hasStaticShape(); }))
    return op.emitOpError("cp-apply-scheme needs static shapes and a static "
                          "CP group size, got P = ")
           << (ShapedType::isDynamic(groupSize) ? std::string("?")
                                                : std::to_string(groupSize))
           << " and query " << op.getQuery().getType();
  QueryPlacement queries = QueryPlacement::sharded;
  if constexpr (std::is_same_v<ShardedOp, AttentionOp>)
    queries = op.getQueries();
  AttentionShape shape =
      AttentionShape::fromTypes(op.getQuery().getType(), op.getKey().getType(),
                                op.getValue().getType(), groupSize, queries);
  // resolveAuto ran cp-choose-scheme, which gives every auto op a scheme
  // or fails; an auto left here is a bug in that contract.
  if (scheme.getKind() == SchemeKind::automatic)
    return op.emitOpError("still has scheme auto after cp-choose-scheme ran; "
                          "report this as a cp-choose-scheme bug");
  if (std::optional<std::string> violation = findSchemeViolation(scheme, shape))
    return op.emitOpError("cannot use scheme ") << scheme << ": " << *violation;
  return std::make_pair(scheme, shape);
}

/// The registered definition of `scheme`, or a diagnostic on `op`.
static const SchemeDefinition *definitionOf(Operation *op, SchemeAttr scheme) {
  const SchemeDefinition *definition = lookupScheme(scheme);
  if (!definition)
    op->emitOpError("has scheme ")
        << scheme << ", which no definition is registered for; register "
        << "cp's schemes with cp::registerAllDialects (and load the plugin "
           "that provides a plugin scheme)";
  return definition;
}

/// A scheme that does not take sinks would drop them: an op with sinks
/// under one is an error.
static LogicalResult checkTakesSinks(Operation *op, Value sinks,
                                     const SchemeDefinition *definition) {
  if (!sinks || definition->supportsSinks())
    return success();
  return op->emitOpError("has sinks, which ")
         << definition->describe()
         << " does not take (its definition does not say supportsSinks); "
            "use a built-in scheme";
}

FailureOr<SchemeAttr> ApplySchemePass::rewrite(AttentionGradOp op) {
  auto resolved = schemeOf(op);
  if (failed(resolved))
    return failure();
  auto [scheme, shape] = *resolved;
  for (Value v : llvm::concat<Value>(
           ValueRange{op.getOutput(), op.getLse(), op.getGradOutput()},
           op.getResults()))
    if (!cast<RankedTensorType>(v.getType()).hasStaticShape())
      return op.emitOpError("cp-apply-scheme needs static shapes, got ")
             << v.getType()
             << " for an output, lse, grad_output or gradient; give every "
                "operand and result of cp.attention_grad a static shape";
  const SchemeDefinition *definition = definitionOf(op, scheme);
  if (!definition)
    return failure();
  if (failed(checkTakesSinks(op, op.getSinks(), definition)))
    return failure();
  if (!definition->hasBackward())
    return op.emitOpError("cannot use ")
           << definition->describe()
           << " for cp.attention_grad: it defines no backward rewrite; use "
              "a scheme with one (every built-in scheme has one)";
  GradSchemeBuilder builder(op, shape);
  builder.scheme = scheme;
  builder.unrollRing = unrollRing;
  if (failed(definition->rewriteGrad(builder)))
    return failure();
  op.erase();
  return scheme;
}

FailureOr<SchemeAttr> ApplySchemePass::rewrite(AttentionOp op) {
  auto resolved = schemeOf(op);
  if (failed(resolved))
    return failure();
  auto [scheme, shape] = *resolved;
  const SchemeDefinition *definition = definitionOf(op, scheme);
  if (!definition)
    return failure();
  if (failed(checkTakesSinks(op, op.getSinks(), definition)))
    return failure();
  SchemeBuilder builder(op, shape);
  builder.scheme = scheme;
  builder.unrollRing = unrollRing;
  int64_t elementBytes = op.getQuery().getType().getElementTypeBitWidth() / 8;
  builder.bytesPerRank =
      bytesSentPerRank(scheme, shape, elementBytes, op.getLayout(),
                       op.getMask(), /*withLse=*/builder.wantsLse());
  if (failed(definition->rewrite(builder)))
    return failure();
  op.erase();
  return scheme;
}

void ApplySchemePass::count(SchemeAttr scheme) {
  switch (scheme.getKind()) {
  case SchemeKind::allgather:
    ++numAllGather;
    break;
  case SchemeKind::ulysses:
    ++numUlysses;
    break;
  case SchemeKind::hybrid:
    ++numHybrid;
    break;
  case SchemeKind::head_tail:
    ++numHeadTail;
    break;
  case SchemeKind::ring:
    ++numRing;
    break;
  case SchemeKind::zigzag:
    ++numZigzag;
    break;
  case SchemeKind::plugin:
    ++numPlugin;
    break;
  case SchemeKind::automatic:
    break;
  }
}

LogicalResult ApplySchemePass::resolveAuto() {
  auto isAuto = [&](SchemeAttr own) {
    SchemeAttr scheme = own ? own : defaultScheme;
    return scheme && scheme.getKind() == SchemeKind::automatic;
  };
  WalkResult found = getOperation()->walk([&](Operation *op) {
    SchemeAttr own;
    if (auto forward = dyn_cast<AttentionOp>(op))
      own = forward.getSchemeAttr();
    else if (auto backward = dyn_cast<AttentionGradOp>(op))
      own = backward.getSchemeAttr();
    else
      return WalkResult::advance();
    return isAuto(own) ? WalkResult::interrupt() : WalkResult::advance();
  });
  if (!found.wasInterrupted())
    return success();
  OpPassManager choose(getOperation()->getName());
  ChooseSchemePassOptions options;
  options.scheme = scheme;
  options.machine = machine;
  choose.addPass(createChooseSchemePass(options));
  return runPipeline(choose, getOperation());
}

void ApplySchemePass::runOnOperation() {
  if (failed(resolveAuto()))
    return signalPassFailure();
  bool failedAny = false;
  getOperation().walk([&](FunctionOpInterface func) {
    if (func.isExternal())
      return;
    SmallVector<Operation *> ops;
    func.walk([&](Operation *op) {
      if (isa<AttentionOp, AttentionGradOp>(op))
        ops.push_back(op);
    });
    if (ops.empty() && requireMatch) {
      func.emitError("cp-apply-scheme found no cp.attention in function @")
          << func.getName()
          << " (require-match is set): nothing would be parallelized; "
             "check that the attention was raised to cp.attention";
      failedAny = true;
    }
    llvm::StringMap<int64_t> rewritten;
    for (Operation *op : ops) {
      FailureOr<SchemeAttr> applied =
          isa<AttentionOp>(op) ? rewrite(cast<AttentionOp>(op))
                               : rewrite(cast<AttentionGradOp>(op));
      if (failed(applied)) {
        failedAny = true;
        continue;
      }
      count(*applied);
      ++rewritten[applied->getSchemeName()];
    }
    if (reportRewrites && !ops.empty()) {
      InFlightDiagnostic remark = func.emitRemark("cp-apply-scheme rewrote ")
                                  << ops.size() << " cp.attention:";
      for (const SchemeDefinition *definition :
           registeredSchemes(func.getContext()))
        if (rewritten.count(definition->getName()))
          remark << " " << definition->getName() << " = "
                 << rewritten[definition->getName()];
    }
  });
  if (failedAny)
    signalPassFailure();
}

} // namespace
