//===- BuiltinSchemes.cpp - cp's own schemes as SchemeDefinitions ---------===//
//
// Each built-in scheme is a SchemeDefinition whose constraints are
// SchemeConstraints.h's, whose bytes are SchemeTraffic.h's, whose estimate
// is SchemeCost.h's and whose rewrites are SchemeBuilder's rewrite*
// members. cp-apply-scheme and cp-choose-scheme see them only through the
// interface, as they see a plugin's.
//
//===----------------------------------------------------------------------===//

#include "cp/Dialect/CP/Schemes/BuiltinSchemes.h"
#include "cp/Dialect/CP/Analysis/SchemeCost.h"
#include "cp/Dialect/CP/Analysis/SchemeTraffic.h"
#include "cp/Dialect/CP/IR/SchemeDefinition.h"
#include "cp/Dialect/CP/Schemes/SchemeBuilder.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace mlir::cp;

namespace {

class BuiltinScheme : public SchemeDefinition {
public:
  explicit BuiltinScheme(SchemeKind kind)
      : SchemeDefinition(stringifySchemeKind(kind), kBuiltinSchemeProvider),
        kind(kind) {}

  /// #cp.scheme's verifier checks a built-in's parameter.
  std::optional<std::string> checkParameter(int64_t) const override {
    return std::nullopt;
  }
  std::optional<std::string>
  findViolation(SchemeAttr scheme, const AttentionShape &shape) const override {
    return findSchemeViolation(scheme, shape);
  }
  SequenceLayout getLayout(SchemeAttr) const override {
    return schemeLayout(kind);
  }
  int64_t bytesSentPerRank(SchemeAttr scheme, const AttentionShape &shape,
                           int64_t elementBytes, MaskAttr mask,
                           bool withLse) const override {
    return cp::bytesSentPerRank(scheme, shape, elementBytes, mask, withLse);
  }
  int64_t backwardBytesSentPerRank(SchemeAttr scheme,
                                   const AttentionShape &shape,
                                   const GradElementBytes &bytes,
                                   MaskAttr mask) const override {
    return cp::backwardBytesSentPerRank(scheme, shape, bytes,
                                        schemeLayout(kind),
                                        /*kvReused=*/false, mask);
  }
  LogicalResult rewrite(SchemeBuilder &builder) const override;
  bool hasBackward() const override { return true; }
  bool supportsSinks() const override { return true; }
  LogicalResult rewriteGrad(GradSchemeBuilder &builder) const override;
  void estimate(MLIRContext *context, const AttentionProblem &problem,
                const MachineModel &machine,
                SmallVectorImpl<SchemeEstimate> &out) const override;

private:
  SchemeKind kind;
};

} // namespace

LogicalResult BuiltinScheme::rewrite(SchemeBuilder &b) const {
  SequenceLayout layout = schemeLayout(kind);
  if (kind == SchemeKind::hybrid) {
    Group outer, inner;
    if (failed(b.hybridGroups(b.scheme.getParameter(), outer, inner)))
      return failure();
    b.convertOperandsTo(b.shardedGroup, layout);
    b.finish(b.shardedGroup, b.rewriteUlysses(inner, &outer), layout);
    return success();
  }
  const Group &cp = b.cpGroup();
  b.convertOperandsTo(cp, layout);
  SchemeBuilder::Result out;
  switch (kind) {
  case SchemeKind::allgather:
    out = b.rewriteAllGather(cp);
    break;
  case SchemeKind::ulysses:
    out = b.shape.replicatedQueries ? b.rewriteUlyssesReplicated(cp)
                                    : b.rewriteUlysses(cp, /*outer=*/nullptr);
    break;
  case SchemeKind::head_tail:
    out = b.rewriteHeadTail(cp);
    break;
  case SchemeKind::ring:
  case SchemeKind::zigzag:
    out = b.rewriteRing(cp, kind == SchemeKind::zigzag);
    break;
  default:
    llvm_unreachable("registered for the concrete built-in kinds only");
  }
  b.finish(cp, out, layout);
  return success();
}

LogicalResult BuiltinScheme::rewriteGrad(GradSchemeBuilder &b) const {
  SequenceLayout layout = schemeLayout(kind);
  if (kind == SchemeKind::hybrid) {
    Group outer, inner;
    if (failed(b.hybridGroups(b.scheme.getParameter(), outer, inner)))
      return failure();
    GradSchemeBuilder::Operands in = b.operandsIn(b.shardedGroup, layout);
    b.finish(b.shardedGroup, b.rewriteUlysses(inner, &outer, in), layout);
    return success();
  }
  const Group &cp = b.cpGroup();
  GradSchemeBuilder::Operands in = b.operandsIn(cp, layout);
  GradSchemeBuilder::Grads grads;
  switch (kind) {
  case SchemeKind::allgather:
    grads = b.rewriteAllGather(cp, in);
    break;
  case SchemeKind::ulysses:
    grads = b.rewriteUlysses(cp, /*outer=*/nullptr, in);
    break;
  case SchemeKind::head_tail:
    grads = b.rewriteHeadTail(cp, in);
    break;
  case SchemeKind::ring:
  case SchemeKind::zigzag:
    grads = b.rewriteRing(cp, kind == SchemeKind::zigzag, in);
    break;
  default:
    llvm_unreachable("registered for the concrete built-in kinds only");
  }
  b.finish(cp, grads, layout);
  return success();
}

void BuiltinScheme::estimate(MLIRContext *context,
                             const AttentionProblem &problem,
                             const MachineModel &machine,
                             SmallVectorImpl<SchemeEstimate> &out) const {
  if (kind != SchemeKind::hybrid) {
    out.push_back(estimateBuiltinScheme(SchemeAttr::get(context, kind), problem,
                                        machine));
    return;
  }
  for (int64_t u : hybridDegrees(problem.shape.groupSize))
    out.push_back(estimateBuiltinScheme(
        SchemeAttr::get(context, SchemeKind::hybrid, u), problem, machine));
}

void mlir::cp::registerBuiltinSchemes(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, CPDialect *dialect) {
    // In the order cp-choose-scheme lists (and breaks ties) by.
    for (SchemeKind kind :
         {SchemeKind::allgather, SchemeKind::ulysses, SchemeKind::hybrid,
          SchemeKind::head_tail, SchemeKind::ring, SchemeKind::zigzag})
      (void)registerScheme(context, std::make_unique<BuiltinScheme>(kind));
  });
}
