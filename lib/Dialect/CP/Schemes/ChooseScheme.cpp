//===- ChooseScheme.cpp - resolve scheme = auto with the cost model -------===//
//
// Implements cp-choose-scheme: every cp.attention and cp.attention_grad
// whose scheme is `auto` gets the fastest applicable scheme under
// SchemeCost's model of the machine (a forward and its backward together,
// by the cost of both), and a `cp.cost` attribute that records why.
//
//===----------------------------------------------------------------------===//

#include "cp/Dialect/CP/Analysis/SchemeCost.h"
#include "cp/Dialect/CP/IR/CPOps.h"
#include "cp/Dialect/CP/IR/SchemeDefinition.h"
#include "cp/Dialect/CP/Schemes/Passes.h"

#include "llvm/Support/FileSystem.h"

#include <type_traits>

namespace mlir {
namespace cp {
#define GEN_PASS_DEF_CHOOSESCHEMEPASS
#include "cp/Dialect/CP/Schemes/Passes.h.inc"
} // namespace cp
} // namespace mlir

using namespace mlir;
using namespace mlir::cp;

/// The fastest scheme for `op` (a cp.attention or cp.attention_grad) on
/// `machine` over `passes`: the scheme of `op` and of `partner` (the other
/// half of a training step, or null) becomes that scheme, and their
/// `cp.cost` attribute lists every scheme's estimate or rejection. When no
/// scheme can be used, fails with one diagnostic on the op that says why
/// each was rejected.
template <typename OpTy>
static LogicalResult chooseScheme(OpTy op, Operation *partner,
                                  CostedPasses passes,
                                  const MachineModel &machine) {
  int64_t groupSize = op.getGroupSize();
  RankedTensorType q = op.getQuery().getType();
  if (ShapedType::isDynamic(groupSize) || !q.hasStaticShape() ||
      !op.getKey().getType().hasStaticShape() ||
      !op.getValue().getType().hasStaticShape())
    return op.emitOpError("scheme auto needs static shapes and a static CP "
                          "group size to estimate costs");
  if (machine.profile && machine.profile->ranks != groupSize)
    return op.emitOpError("scheme auto is costed with the machine profile '")
           << machine.profile->path << "', measured on "
           << machine.profile->ranks << " ranks, but this op's CP group has "
           << groupSize << ": measure one on " << groupSize
           << " ranks (mpirun -n " << groupSize << " cp-calibrate -o FILE)";
  QueryPlacement queries = QueryPlacement::sharded;
  if constexpr (std::is_same_v<OpTy, AttentionOp>)
    queries = op.getQueries();
  AttentionProblem problem{
      AttentionShape::fromTypes(q, op.getKey().getType(),
                                op.getValue().getType(), groupSize, queries),
      op.getMask(), op.getLayout(), q.getElementTypeBitWidth() / 8, passes};
  // A backward paired with its forward: one function, one training step.
  problem.fusedStep = partner != nullptr;
  problem.sinks = static_cast<bool>(op.getSinks());
  if constexpr (std::is_same_v<OpTy, AttentionGradOp>)
    problem.gradElementBytes =
        op.getGradKey().getType().getElementTypeBitWidth() / 8;
  SmallVector<SchemeEstimate> estimates = estimateSchemes(problem, machine);
  // A scheme that does not take sinks would drop them (cp-apply-scheme
  // rejects it): never chosen for an op with sinks.
  if (op.getSinks())
    for (SchemeEstimate &e : estimates)
      if (const SchemeDefinition *definition = lookupScheme(e.scheme);
          !e.rejection && definition && !definition->supportsSinks())
        e.rejection = "does not take sinks (its definition does not say "
                      "supportsSinks)";
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
  DictionaryAttr cost =
      describeChoice(op.getContext(), estimates, *best, machine, passes);
  for (Operation *target : {op.getOperation(), partner}) {
    if (auto forward = dyn_cast_or_null<AttentionOp>(target))
      forward.setSchemeAttr(best->scheme);
    else if (auto backward = dyn_cast_or_null<AttentionGradOp>(target))
      backward.setSchemeAttr(best->scheme);
    else
      continue;
    target->setAttr("cp.cost", cost);
  }
  return success();
}

/// The cp.attention whose output and lse `grad` differentiates, when both
/// come from one.
static AttentionOp forwardOf(AttentionGradOp grad) {
  auto forward = grad.getOutput().getDefiningOp<AttentionOp>();
  if (!forward || forward.getLse() != grad.getLse())
    return nullptr;
  return forward;
}

namespace {

struct ChooseSchemePass
    : public cp::impl::ChooseSchemePassBase<ChooseSchemePass> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *context) override {
    FailureOr<MachineModel> described = describedMachine(context);
    if (failed(described))
      return failure();
    base = *described;
    FailureOr<SchemeAttr> resolved = scheme.resolve(context, "cp-choose-scheme");
    if (failed(resolved))
      return failure();
    defaultScheme = *resolved;
    return success();
  }

  /// The `machine` option's machine: a preset, or a profile file.
  FailureOr<MachineModel> describedMachine(MLIRContext *context) {
    if (std::optional<MachineModel> preset = MachineModel::preset(machine))
      return *preset;
    llvm::Expected<MachineProfile> profile = MachineProfile::load(machine);
    if (profile)
      return MachineModel::fromProfile(std::move(*profile));
    std::string why = llvm::toString(profile.takeError());
    // A name without a path separator or an extension was meant as a
    // preset; say so first.
    if (!llvm::StringRef(machine).contains('/') &&
        !llvm::StringRef(machine).contains('.') &&
        !llvm::sys::fs::exists(machine))
      return emitError(UnknownLoc::get(context))
             << "cp-choose-scheme: unknown machine '" << machine
             << "'; expected one of " << MachineModel::presetNames()
             << ", or the path of a machine profile (cp-calibrate)";
    return emitError(UnknownLoc::get(context))
           << "cp-choose-scheme: machine profile '" << machine
           << "': " << why;
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

  bool isAuto(SchemeAttr own) {
    SchemeAttr scheme = own ? own : defaultScheme;
    return scheme && scheme.getKind() == SchemeKind::automatic;
  }

  template <typename OpTy>
  void choose(OpTy op, Operation *partner, CostedPasses passes) {
    FailureOr<MachineModel> machine = machineFor(op, base);
    if (failed(machine)) {
      failedAny = true;
      return;
    }
    applyOptions(*machine);
    if (failed(chooseScheme(op, partner, passes, *machine)))
      failedAny = true;
  }

  void runOnOperation() override {
    failedAny = false;
    // Backwards first: one whose forward is auto too decides both.
    getOperation()->walk([&](AttentionGradOp grad) {
      if (!isAuto(grad.getSchemeAttr()))
        return;
      AttentionOp forward = forwardOf(grad);
      if (forward && isAuto(forward.getSchemeAttr()))
        choose(grad, forward, CostedPasses::training);
      else
        choose(grad, nullptr, CostedPasses::backward);
    });
    getOperation()->walk([&](AttentionOp op) {
      if (isAuto(op.getSchemeAttr()))
        choose(op, nullptr,
               training ? CostedPasses::training : CostedPasses::forward);
    });
    if (failedAny)
      signalPassFailure();
  }

  bool failedAny = false;

  MachineModel base;
  SchemeAttr defaultScheme;
};

} // namespace
