//===- SchemeCost.h - the cost model behind scheme = auto -------*- C++ -*-===//
//
// For one attention and one machine, estimates every scheme's bytes per
// rank (SchemeTraffic), FLOPs on the busiest rank (causal imbalance
// included), peak memory per rank and time, and picks the fastest scheme
// whose constraints (SchemeConstraints) and memory budget hold. The
// formulas are documented in docs/Schemes.md.
//
//===----------------------------------------------------------------------===//

#ifndef CP_DIALECT_CP_ANALYSIS_SCHEMECOST_H
#define CP_DIALECT_CP_ANALYSIS_SCHEMECOST_H

#include "cp/Dialect/CP/Analysis/MachineModel.h"
#include "cp/Dialect/CP/IR/SchemeConstraints.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Operation.h"

#include <optional>
#include <string>

namespace mlir {
namespace cp {

/// The passes an estimate covers: the forward (cp.attention), its backward
/// (cp.attention_grad), or a training step, which runs both (its forward
/// then also returns the lse the backward needs).
enum class CostedPasses { forward, backward, training };

/// The attention an estimate is for.
struct AttentionProblem {
  AttentionShape shape;
  MaskAttr mask;
  SequenceLayout layout;
  int64_t elementBytes;
  CostedPasses passes = CostedPasses::forward;
  /// Bytes per element of dq and of dk/dv (their partial sums travel in
  /// it): 4 for f32 gradients, the storage type's size otherwise.
  int64_t gradElementBytes = 4;
  /// A training step whose forward and backward are in one function: the
  /// collectives the backward repeats on the forward's values are sent
  /// once (trainingBytesSentPerRank).
  bool fusedStep = false;
  /// The op has attention sinks: the backward also all-gathers the [H] f32
  /// partial sums of their gradient, (P - 1) * H * 4 bytes per rank,
  /// whatever the scheme (sinksGradientBytesPerRank).
  bool sinks = false;

  bool costsForward() const { return passes != CostedPasses::backward; }
  bool costsBackward() const { return passes != CostedPasses::forward; }
};

/// The FLOPs of a FlashAttention-2 backward per forward FLOP: it recomputes
/// the scores and runs four more products (dV, dP, dQ, dK) to the
/// forward's two.
constexpr double kBackwardFlopsPerForwardFlop = 2.5;

/// One scheme's estimate, or why it cannot be used. The figures are totals
/// over the costed passes; the backward's share is also given alone.
struct SchemeEstimate {
  SchemeAttr scheme;
  std::optional<std::string> rejection;
  int64_t bytes = 0;         // bytes sent per rank (busiest rank)
  double flops = 0;          // attention FLOPs of the busiest rank
  double meanFlops = 0;      // attention FLOPs averaged over ranks
  int64_t memory = 0;        // peak bytes of the attention's buffers per rank
  double commSeconds = 0;    // communication not hidden by computation
  double computeSeconds = 0; // busiest rank's attention and merges
  double seconds = 0;
  int64_t backwardBytes = 0;   // of `bytes`, what the backward sends
  double backwardSeconds = 0;  // of `seconds`, the backward's time

  bool usable() const { return !rejection; }
};

/// The estimates every scheme registered in the problem's context gives
/// (SchemeDefinition::estimate), built-ins first: allgather, ulysses,
/// hybrid(u) for each 1 < u < P dividing P, head_tail, ring, zigzag, then
/// the plugins'. Rejected ones carry the violated constraint or the memory
/// overrun.
SmallVector<SchemeEstimate> estimateSchemes(const AttentionProblem &problem,
                                            const MachineModel &machine);

/// The estimate of one built-in scheme (not auto) on `machine`, by the
/// formulas of docs/Schemes.md. A plugin scheme may start from the built-in
/// it resembles and adjust the figures.
SchemeEstimate estimateBuiltinScheme(SchemeAttr scheme,
                                     const AttentionProblem &problem,
                                     const MachineModel &machine);

/// The hybrid degrees worth costing on P ranks: every 1 < u < P dividing
/// P, in increasing order.
SmallVector<int64_t> hybridDegrees(int64_t groupSize);

/// Rejects `estimate` when its memory exceeds the machine's.
void rejectMemoryOverrun(SchemeEstimate &estimate, const MachineModel &machine);

/// "allgather", "hybrid(2)", "auto", a plugin's "name(3)": the scheme as
/// written in op syntax.
std::string schemeName(SchemeAttr scheme);

/// The usable estimate with the least time (ties: fewer bytes, then the
/// order above); null when none is usable.
const SchemeEstimate *pickFastest(ArrayRef<SchemeEstimate> estimates);

/// `{chosen = "...", machine = "...", profile = "...", <scheme> = {time_ns,
/// comm_ns, compute_ns, bytes, flops, memory} or "rejected: <why>"}`,
/// recorded on an op so that the decision can be read in the IR. `profile`
/// is the machine profile's path (with `measured`: its date and runtime),
/// or "none: built-in constants". Estimates that cover a
/// backward also give `backward_ns` and `backward_bytes`, and the
/// dictionary says which `passes` were costed.
DictionaryAttr describeChoice(MLIRContext *ctx,
                              ArrayRef<SchemeEstimate> estimates,
                              const SchemeEstimate &chosen,
                              const MachineModel &machine,
                              CostedPasses passes = CostedPasses::forward);

} // namespace cp
} // namespace mlir

#endif // CP_DIALECT_CP_ANALYSIS_SCHEMECOST_H
