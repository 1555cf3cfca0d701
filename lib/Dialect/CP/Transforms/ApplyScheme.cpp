//===- ApplyScheme.cpp - rewrite cp.attention under a CP scheme -----------===//
//
// Implements cp-apply-scheme: each cp.attention becomes cp collectives plus
// cp.local_attention ops with the global offsets of DESIGN §2. Scheme
// constraints come from SchemeConstraints.h, traffic from SchemeTraffic.h;
// scheme = auto is cp-choose-scheme's to resolve, never this pass's. Each
// scheme is a SchemeBuilder rewrite (SchemeBuilder.h).
//
//===----------------------------------------------------------------------===//

#include "SchemeBuilder.h"
#include "cp/Dialect/CP/Analysis/SchemeTraffic.h"
#include "cp/Dialect/CP/IR/CPOps.h"
#include "cp/Dialect/CP/IR/SchemeConstraints.h"
#include "cp/Dialect/CP/Transforms/Passes.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/StringExtras.h"

namespace mlir {
namespace cp {
#define GEN_PASS_DEF_APPLYSCHEMEPASS
#include "cp/Dialect/CP/Transforms/Passes.h.inc"
} // namespace cp
} // namespace mlir

using namespace mlir;
using namespace mlir::cp;
using namespace mlir::cp::detail;

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
  /// Rewrites `op`; returns the scheme applied.
  FailureOr<SchemeAttr> rewrite(AttentionOp op);
  FailureOr<Group> hybridOuterInner(SchemeBuilder &builder, Group &inner,
                                    int64_t u);

  SchemeAttr defaultScheme;
};

/// The CP group of a hybrid(u) op as an (outer, inner) pair of grid axes.
/// A 1-D grid of size P is viewed through a derived `(P/u) x u` grid whose
/// row-major linear index equals the 1-D index, so both name the same ranks.
FailureOr<Group> ApplySchemePass::hybridOuterInner(SchemeBuilder &builder,
                                                   Group &inner, int64_t u) {
  AttentionOp op = builder.op;
  auto grid =
      SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(op, op.getGridAttr());
  ArrayRef<int16_t> axes = op.getGridAxes();
  Group outer;
  if (axes.size() == 2) {
    int64_t innerSize = grid.getShape()[axes[1]];
    if (innerSize != u)
      return op.emitOpError("hybrid(")
             << u << ") on grid_axes [" << axes[0] << ", " << axes[1]
             << "] needs the inner axis " << axes[1]
             << " to have size u = " << u << ", got " << innerSize;
    outer = {op.getGridAttr(), {axes[0]}, grid.getShape()[axes[0]], Value()};
    inner = {op.getGridAttr(), {axes[1]}, u, Value()};
  } else if (grid.getRank() == 1 && axes.size() == 1) {
    int64_t p = grid.getShape()[0], rows = p / u;
    std::string name =
        (grid.getSymName() + "_hybrid_" + Twine(rows) + "x" + Twine(u)).str();
    auto derived = SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(
        op, StringAttr::get(op.getContext(), name));
    if (derived && derived.getShape() != ArrayRef<int64_t>{rows, u})
      return op.emitOpError("hybrid(")
             << u << ") needs grid @" << name << " to have shape " << rows
             << "x" << u << ", but a grid of that name has another shape";
    if (!derived) {
      OpBuilder gridBuilder(grid);
      gridBuilder.setInsertionPointAfter(grid);
      derived = shard::GridOp::create(gridBuilder, grid.getLoc(), name,
                                      ArrayRef<int64_t>{rows, u});
    }
    auto ref = FlatSymbolRefAttr::get(derived.getSymNameAttr());
    outer = {ref, {0}, rows, Value()};
    inner = {ref, {1}, u, Value()};
  } else {
    return op.emitOpError("hybrid needs a 1-D grid or two grid axes (outer, "
                          "inner); got grid_axes of size ")
           << axes.size() << " on a rank-" << grid.getRank() << " grid";
  }
  outer.index = builder.groupIndex(outer.grid, outer.axes, {outer.size});
  inner.index = builder.groupIndex(inner.grid, inner.axes, {inner.size});
  return outer;
}

FailureOr<SchemeAttr> ApplySchemePass::rewrite(AttentionOp op) {
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
  AttentionShape shape =
      AttentionShape::fromTypes(op.getQuery().getType(), op.getKey().getType(),
                                op.getValue().getType(), groupSize);
  if (scheme.getKind() == SchemeKind::automatic)
    return op.emitOpError("has scheme auto, which cp-choose-scheme resolves: "
                          "run cp-choose-scheme before cp-apply-scheme (the "
                          "cp-lower-to-cpu and cp-lower-to-nvvm pipelines "
                          "do)");
  if (std::optional<std::string> violation = findSchemeViolation(scheme, shape))
    return op.emitOpError("cannot use scheme ") << scheme << ": " << *violation;

  SchemeBuilder builder(op, shape);
  builder.scheme = scheme;
  builder.unrollRing = unrollRing;
  SchemeKind kind = scheme.getKind();
  int64_t elementBytes = op.getQuery().getType().getElementTypeBitWidth() / 8;
  builder.bytesPerRank = bytesSentPerRank(scheme, shape, elementBytes,
                                          op.getLayout(), op.getMask());

  auto grid =
      SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(op, op.getGridAttr());
  SmallVector<int64_t> axisSizes;
  for (int16_t axis : op.getGridAxes())
    axisSizes.push_back(grid.getShape()[axis]);
  Group cp{op.getGridAttr(), SmallVector<int16_t>(op.getGridAxes()), groupSize,
           Value()};

  SequenceLayout layout = schemeLayout(kind);
  Value out;
  if (kind == SchemeKind::hybrid) {
    Group inner;
    FailureOr<Group> outer =
        hybridOuterInner(builder, inner, scheme.getUlyssesDegree());
    if (failed(outer))
      return failure();
    builder.convertOperandsTo(cp, layout);
    out = builder.rewriteUlysses(inner, &*outer);
    ++numHybrid;
  } else {
    cp.index = builder.groupIndex(cp.grid, cp.axes, axisSizes);
    builder.convertOperandsTo(cp, layout);
    switch (kind) {
    case SchemeKind::allgather:
      out = builder.rewriteAllGather(cp);
      ++numAllGather;
      break;
    case SchemeKind::ulysses:
      out = builder.rewriteUlysses(cp, /*outer=*/nullptr);
      ++numUlysses;
      break;
    case SchemeKind::head_tail:
      out = builder.rewriteHeadTail(cp);
      ++numHeadTail;
      break;
    case SchemeKind::ring:
    case SchemeKind::zigzag:
      out = builder.rewriteRing(cp, kind == SchemeKind::zigzag);
      ++(kind == SchemeKind::ring ? numRing : numZigzag);
      break;
    default:
      llvm_unreachable("auto is rejected above, hybrid handled before");
    }
  }
  builder.finish(cp, out, layout);
  op.erase();
  return scheme;
}

void ApplySchemePass::runOnOperation() {
  bool failedAny = false;
  getOperation().walk([&](FunctionOpInterface func) {
    if (func.isExternal())
      return;
    SmallVector<AttentionOp> ops;
    func.walk([&](AttentionOp op) { ops.push_back(op); });
    if (ops.empty() && requireMatch) {
      func.emitError("cp-apply-scheme found no cp.attention in function @")
          << func.getName()
          << " (require-match is set): nothing would be parallelized; "
             "check that the attention was raised to cp.attention";
      failedAny = true;
    }
    llvm::StringMap<int64_t> rewritten;
    for (AttentionOp op : ops) {
      FailureOr<SchemeAttr> applied = rewrite(op);
      if (failed(applied)) {
        failedAny = true;
        continue;
      }
      ++rewritten[stringifySchemeKind(applied->getKind())];
    }
    if (reportRewrites && !ops.empty()) {
      InFlightDiagnostic remark = func.emitRemark("cp-apply-scheme rewrote ")
                                  << ops.size() << " cp.attention:";
      for (StringRef kind :
           {"allgather", "ulysses", "hybrid", "head_tail", "ring", "zigzag"})
        if (rewritten.count(kind))
          remark << " " << kind << " = " << rewritten[kind];
    }
  });
  if (failedAny)
    signalPassFailure();
}

} // namespace
