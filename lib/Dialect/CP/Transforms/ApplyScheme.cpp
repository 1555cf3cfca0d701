//===- ApplyScheme.cpp - rewrite cp.attention under a CP scheme -----------===//
//
// Implements cp-apply-scheme: each cp.attention becomes cp collectives plus
// cp.local_attention ops with the global offsets of DESIGN §2, and each
// cp.attention_grad the backward of its scheme (cp.local_attention_grad
// ops and collectives, docs/Training.md §3). Scheme
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
  /// The scheme `op` (cp.attention or cp.attention_grad) is rewritten under
  /// and its shape; fails with a diagnostic when it cannot be.
  template <typename ShardedOp>
  FailureOr<std::pair<SchemeAttr, AttentionShape>> schemeOf(ShardedOp op);
  /// Rewrites `op`; returns the scheme applied.
  FailureOr<SchemeAttr> rewrite(AttentionOp op);
  FailureOr<SchemeAttr> rewrite(AttentionGradOp op);

  SchemeAttr defaultScheme;
};

/// The CP group of a hybrid(u) op as an (outer, inner) pair of grid axes.
/// A 1-D grid of size P is viewed through a derived `(P/u) x u` grid whose
/// row-major linear index equals the 1-D index, so both name the same ranks.
static FailureOr<Group> hybridOuterInner(Operation *op,
                                         FlatSymbolRefAttr gridAttr,
                                         ArrayRef<int16_t> axes,
                                         CollectiveBuilder &builder,
                                         Group &inner, int64_t u) {
  auto grid = SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(op, gridAttr);
  Group outer;
  if (axes.size() == 2) {
    int64_t innerSize = grid.getShape()[axes[1]];
    if (innerSize != u)
      return op->emitOpError("hybrid(")
             << u << ") on grid_axes [" << axes[0] << ", " << axes[1]
             << "] needs the inner axis " << axes[1]
             << " to have size u = " << u << ", got " << innerSize;
    outer = {gridAttr, {axes[0]}, grid.getShape()[axes[0]], Value()};
    inner = {gridAttr, {axes[1]}, u, Value()};
  } else if (grid.getRank() == 1 && axes.size() == 1) {
    int64_t p = grid.getShape()[0], rows = p / u;
    std::string name =
        (grid.getSymName() + "_hybrid_" + Twine(rows) + "x" + Twine(u)).str();
    auto derived = SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(
        op, StringAttr::get(op->getContext(), name));
    if (derived && derived.getShape() != ArrayRef<int64_t>{rows, u})
      return op->emitOpError("hybrid(")
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
    return op->emitOpError("hybrid needs a 1-D grid or two grid axes (outer, "
                          "inner); got grid_axes of size ")
           << axes.size() << " on a rank-" << grid.getRank() << " grid";
  }
  outer.index = builder.groupIndex(outer.grid, outer.axes, {outer.size});
  inner.index = builder.groupIndex(inner.grid, inner.axes, {inner.size});
  return outer;
}

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
  if (scheme.getKind() == SchemeKind::automatic)
    return op.emitOpError("has scheme auto, which cp-choose-scheme resolves: "
                          "run cp-choose-scheme before cp-apply-scheme (the "
                          "cp-lower-to-cpu and cp-lower-to-nvvm pipelines "
                          "do)");
  if (std::optional<std::string> violation = findSchemeViolation(scheme, shape))
    return op.emitOpError("cannot use scheme ") << scheme << ": " << *violation;
  return std::make_pair(scheme, shape);
}

/// The CP group of `op` with this process's index in it.
static Group cpGroup(Operation *op, FlatSymbolRefAttr gridAttr,
                     ArrayRef<int16_t> axes, int64_t groupSize,
                     CollectiveBuilder &builder) {
  auto grid = SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(op, gridAttr);
  SmallVector<int64_t> axisSizes;
  for (int16_t axis : axes)
    axisSizes.push_back(grid.getShape()[axis]);
  Group cp{gridAttr, SmallVector<int16_t>(axes), groupSize, Value()};
  cp.index = builder.groupIndex(cp.grid, cp.axes, axisSizes);
  return cp;
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
  SchemeKind kind = scheme.getKind();
  GradSchemeBuilder builder(op, shape);
  builder.scheme = scheme;
  builder.unrollRing = unrollRing;
  Group cp{op.getGridAttr(), SmallVector<int16_t>(op.getGridAxes()),
           shape.groupSize, Value()};
  SequenceLayout layout = schemeLayout(kind);
  GradSchemeBuilder::Grads grads;
  if (kind == SchemeKind::hybrid) {
    Group inner;
    FailureOr<Group> outer =
        hybridOuterInner(op, op.getGridAttr(), op.getGridAxes(), builder,
                         inner, scheme.getUlyssesDegree());
    if (failed(outer))
      return failure();
    grads = builder.rewriteUlysses(inner, &*outer, builder.operandsIn(cp, layout));
    ++numHybrid;
  } else {
    cp = cpGroup(op, op.getGridAttr(), op.getGridAxes(), shape.groupSize,
                 builder);
    GradSchemeBuilder::Operands in = builder.operandsIn(cp, layout);
    if (kind == SchemeKind::allgather) {
      grads = builder.rewriteAllGather(cp, in);
      ++numAllGather;
    } else if (kind == SchemeKind::head_tail) {
      grads = builder.rewriteHeadTail(cp, in);
      ++numHeadTail;
    } else if (kind == SchemeKind::ring || kind == SchemeKind::zigzag) {
      grads = builder.rewriteRing(cp, kind == SchemeKind::zigzag, in);
      ++(kind == SchemeKind::ring ? numRing : numZigzag);
    } else {
      grads = builder.rewriteUlysses(cp, /*outer=*/nullptr, in);
      ++numUlysses;
    }
  }
  builder.finish(cp, grads, layout);
  op.erase();
  return scheme;
}

FailureOr<SchemeAttr> ApplySchemePass::rewrite(AttentionOp op) {
  auto resolved = schemeOf(op);
  if (failed(resolved))
    return failure();
  auto [scheme, shape] = *resolved;
  int64_t groupSize = shape.groupSize;
  SchemeBuilder builder(op, shape);
  builder.scheme = scheme;
  builder.unrollRing = unrollRing;
  SchemeKind kind = scheme.getKind();
  int64_t elementBytes = op.getQuery().getType().getElementTypeBitWidth() / 8;
  builder.bytesPerRank =
      bytesSentPerRank(scheme, shape, elementBytes, op.getLayout(),
                       op.getMask(), /*withLse=*/builder.wantsLse());

  Group cp{op.getGridAttr(), SmallVector<int16_t>(op.getGridAxes()), groupSize,
           Value()};

  SequenceLayout layout = schemeLayout(kind);
  SchemeBuilder::Result out;
  if (kind == SchemeKind::hybrid) {
    Group inner;
    FailureOr<Group> outer =
        hybridOuterInner(op, op.getGridAttr(), op.getGridAxes(), builder, inner,
                         scheme.getUlyssesDegree());
    if (failed(outer))
      return failure();
    builder.convertOperandsTo(cp, layout);
    out = builder.rewriteUlysses(inner, &*outer);
    ++numHybrid;
  } else {
    cp = cpGroup(op, op.getGridAttr(), op.getGridAxes(), groupSize, builder);
    builder.convertOperandsTo(cp, layout);
    switch (kind) {
    case SchemeKind::allgather:
      out = builder.rewriteAllGather(cp);
      ++numAllGather;
      break;
    case SchemeKind::ulysses:
      out = shape.replicatedQueries
                ? builder.rewriteUlyssesReplicated(cp)
                : builder.rewriteUlysses(cp, /*outer=*/nullptr);
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
