//===- ChooseScheme.cpp - resolve scheme = auto with the cost model -------===//
//
// Implements cp-choose-scheme: every cp.attention whose scheme is `auto`
// gets the fastest applicable scheme under SchemeCost's model of the
// machine, and a `cp.cost` attribute that records why.
//
//===----------------------------------------------------------------------===//

#include "cp/Dialect/CP/Analysis/SchemeCost.h"
#include "cp/Dialect/CP/IR/CPOps.h"
#include "cp/Dialect/CP/Transforms/Passes.h"

namespace mlir {
namespace cp {
#define GEN_PASS_DEF_CHOOSESCHEMEPASS
#include "cp/Dialect/CP/Transforms/Passes.h.inc"
} // namespace cp
} // namespace mlir

using namespace mlir;
using namespace mlir::cp;

/// The fastest scheme for `op` on `machine`: the op's scheme becomes that
/// scheme and its `cp.cost` attribute lists every scheme's estimate or
/// rejection. When no scheme can be used, fails with one diagnostic on the
/// op that says why each was rejected.
static LogicalResult chooseScheme(AttentionOp op, const MachineModel &machine) {
  int64_t groupSize = op.getGroupSize();
  RankedTensorType q = op.getQuery().getType();
  if (ShapedType::isDynamic(groupSize) || !q.hasStaticShape() ||
      !op.getKey().getType().hasStaticShape() ||
      !op.getValue().getType().hasStaticShape())
    return op.emitOpError("scheme auto needs static shapes and a static CP "
                          "group size to estimate costs");
  AttentionProblem problem{
      AttentionShape::fromTypes(q, op.getKey().getType(),
                                op.getValue().getType(), groupSize),
      op.getMask(), op.getLayout(), q.getElementTypeBitWidth() / 8};
  SmallVector<SchemeEstimate> estimates = estimateSchemes(problem, machine);
  const SchemeEstimate *best = pickFastest(estimates);
  if (!best) {
    InFlightDiagnostic diag =
        op.emitOpError("scheme auto found no applicable scheme on machine ")
        << machine.name << ": ";
    llvm::interleave(
        estimates,
        [&](const SchemeEstimate &e) {
          diag << schemeName(e.scheme) << ": " << *e.rejection;
        },
        [&] { diag << "; "; });
    return diag;
  }
  op.setSchemeAttr(best->scheme);
  op->setAttr("cp.cost",
              describeChoice(op.getContext(), estimates, *best, machine));
  return success();
}

namespace {

struct ChooseSchemePass
    : public cp::impl::ChooseSchemePassBase<ChooseSchemePass> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *context) override {
    std::optional<MachineModel> preset = MachineModel::preset(machine);
    if (!preset)
      return emitError(UnknownLoc::get(context))
             << "cp-choose-scheme: unknown machine '" << machine
             << "'; expected one of " << MachineModel::presetNames();
    base = *preset;
    FailureOr<SchemeAttr> resolved = scheme.resolve(context, "cp-choose-scheme");
    if (failed(resolved))
      return failure();
    defaultScheme = *resolved;
    return success();
  }

  /// Numeric pass options win over the IR's cp.machine.
  void applyOptions(MachineModel &m) {
    auto set = [](double option, double &field) {
      if (option > 0)
        field = option;
    };
    set(intraNodeBandwidth, m.intraNodeBandwidth);
    set(interNodeBandwidth, m.interNodeBandwidth);
    set(latency, m.latency);
    set(attentionFlops, m.attentionFlops);
    set(memoryBandwidth, m.memoryBandwidth);
    set(memory, m.memory);
    set(launchOverhead, m.launchOverhead);
    if (overlap >= 0)
      m.overlap = overlap;
    if (ranksPerNode > 0)
      m.ranksPerNode = ranksPerNode;
  }

  void runOnOperation() override {
    bool failedAny = false;
    getOperation()->walk([&](AttentionOp op) {
      SchemeAttr scheme =
          op.getSchemeAttr() ? op.getSchemeAttr() : defaultScheme;
      if (!scheme || scheme.getKind() != SchemeKind::automatic)
        return;
      FailureOr<MachineModel> machine = machineFor(op, base);
      if (failed(machine)) {
        failedAny = true;
        return;
      }
      applyOptions(*machine);
      if (failed(chooseScheme(op, *machine)))
        failedAny = true;
    });
    if (failedAny)
      signalPassFailure();
  }

  MachineModel base;
  SchemeAttr defaultScheme;
};

} // namespace
