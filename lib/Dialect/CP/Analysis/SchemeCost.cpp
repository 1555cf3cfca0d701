//===- SchemeCost.cpp - the cost model behind scheme = auto ---------------===//
//
// Estimates per scheme, for the busiest rank:
//   bytes    SchemeTraffic's bytes sent per rank (relayouts included);
//   flops    2 * B * (D + Dv) * (visible query/key pairs) * local heads;
//   memory   the attention's tensors resident at once;
//   time     exposed communication + computation, where a collective over
//            n steps moving X bytes takes n * latency + X / bandwidth, ring
//            and zigzag hide each shift behind the previous step's
//            attention, and merges cost memory traffic.
// A backward (cp.attention_grad) costs 2.5x the forward's FLOPs, sends
// SchemeTraffic's backward bytes and overlaps the ring's K/V and dK/dV
// shifts with its steps; a training step costs both passes.
// See docs/Schemes.md and docs/Training.md for the formulas written out.
//
//===----------------------------------------------------------------------===//

#include "cp/Dialect/CP/Analysis/SchemeCost.h"
#include "cp/Dialect/CP/Analysis/RingSchedule.h"
#include "cp/Dialect/CP/Analysis/SchemeTraffic.h"
#include "cp/Dialect/CP/Analysis/StructuredMask.h"
#include "cp/Dialect/CP/IR/SchemeDefinition.h"
#include "cp/Dialect/CP/IR/CPAttrBodies.h"
#include "mlir/IR/Builders.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::cp;

//===----------------------------------------------------------------------===//
// Work: visible query/key pairs
//===----------------------------------------------------------------------===//

namespace {

/// The ranks whose work the model counts: all of them up to 4096, else
/// 4096 evenly spaced ones from 0 to P - 1 (the first and the last, where
/// causal work is least and most, included), so that the model's time
/// does not grow with P.
SmallVector<int64_t> modelledRanks(int64_t p) {
  constexpr int64_t kMaxModelled = 4096;
  SmallVector<int64_t> ranks;
  if (p <= kMaxModelled) {
    for (int64_t r = 0; r < p; ++r)
      ranks.push_back(r);
    return ranks;
  }
  for (int64_t i = 0; i < kMaxModelled; ++i)
    ranks.push_back(static_cast<int64_t>(
        static_cast<double>(i) * static_cast<double>(p - 1) /
        static_cast<double>(kMaxModelled - 1)));
  ranks.back() = p - 1;
  return ranks;
}

/// Query/key pairs (times local heads) of the modelled ranks under
/// `scheme`.
SmallVector<double> pairsPerRank(SchemeAttr scheme,
                                 const AttentionProblem &pr) {
  const AttentionShape &s = pr.shape;
  int64_t p = s.groupSize;
  double l = s.localLen, len = s.globalLen(), h = s.heads;
  MaskAttr m = pr.mask;
  SmallVector<double> pairs;
  for (int64_t r : modelledRanks(p)) {
    // Replicated queries: rows 0..Lq-1 on every rank, against all keys
    // (allgather, ring) or with a 1/P share of the heads (ulysses).
    if (s.replicatedQueries) {
      double rows = countVisiblePairs(m, 0, s.queryLen, len);
      pairs.push_back(scheme.getKind() == SchemeKind::ulysses ? h / p * rows
                                                              : h * rows);
      continue;
    }
    switch (scheme.getKind()) {
    case SchemeKind::allgather:
    case SchemeKind::ring:
      pairs.push_back(h * countVisiblePairs(m, r * l, l, len));
      break;
    case SchemeKind::ulysses:
      pairs.push_back(h / p * countVisiblePairs(m, 0, len, len));
      break;
    case SchemeKind::hybrid: {
      int64_t u = scheme.getUlyssesDegree();
      double block = u * l;
      pairs.push_back(h / u *
                      countVisiblePairs(m, (r / u) * block, block, len));
      break;
    }
    case SchemeKind::head_tail: {
      double half = l / 2;
      pairs.push_back(
          h * (countVisiblePairs(m, r * l, half, len) +
               countVisiblePairs(m, (p - 1 - r) * l + half, half, len)));
      break;
    }
    case SchemeKind::zigzag: {
      double c = l / 2;
      pairs.push_back(h * (countVisiblePairs(m, r * c, c, len) +
                           countVisiblePairs(m, (2 * p - 1 - r) * c, c, len)));
      break;
    }
    case SchemeKind::automatic:
    case SchemeKind::plugin:
      pairs.push_back(0);
      break;
    }
  }
  return pairs;
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

/// Elements of one rank's Q, K, V and O shards.
double qkvoElements(const AttentionShape &s) {
  return double(s.batch) * s.localLen *
         (s.heads * s.headDim + s.kvHeads * (s.headDim + s.valueDim) +
          s.heads * s.valueDim);
}

double kvElements(const AttentionShape &s, double rows, double kvHeads) {
  return double(s.batch) * rows * kvHeads * (s.headDim + s.valueDim);
}

double peakMemory(SchemeAttr scheme, const AttentionProblem &pr) {
  const AttentionShape &s = pr.shape;
  double b = pr.elementBytes, len = s.globalLen();
  double bytes = qkvoElements(s) * b;
  if (schemeLayout(scheme.getKind()) != pr.layout)
    bytes += qkvoElements(s) * b; // the relayouted copies
  switch (scheme.getKind()) {
  case SchemeKind::allgather:
    return bytes + kvElements(s, len, s.kvHeads) * b;
  case SchemeKind::head_tail:
    return bytes + kvElements(s, len, s.kvHeads) * b +
           double(s.batch) * s.localLen * s.heads * (s.headDim + s.valueDim) *
               b;
  case SchemeKind::ulysses:
    return bytes + qkvoElements(s) * b;
  case SchemeKind::hybrid: {
    double u = scheme.getUlyssesDegree();
    return bytes + qkvoElements(s) * b + kvElements(s, len, s.kvHeads / u) * b;
  }
  case SchemeKind::ring:
  case SchemeKind::zigzag:
    // The next K/V block, and f32 partial and running outputs with lse.
    return bytes + kvElements(s, s.localLen, s.kvHeads) * b +
           2.0 * s.batch * s.localLen * s.heads * (s.valueDim + 1) * 4;
  case SchemeKind::automatic:
  case SchemeKind::plugin:
    break;
  }
  return bytes;
}

/// Peak bytes of a backward's buffers per rank: the forward's operands and
/// output, dO and the lse, the local gradients, and what the scheme holds
/// besides (gathered K/V with full-length dK/dV partial sums, head-sharded
/// copies, or the travelling dK/dV accumulators).
double backwardPeakMemory(SchemeAttr scheme, const AttentionProblem &pr) {
  const AttentionShape &s = pr.shape;
  double b = pr.elementBytes, a = pr.gradElementBytes, len = s.globalLen();
  double rows = double(s.batch) * s.localLen;
  double gradOut = rows * s.heads * s.valueDim * b + rows * s.heads * 4;
  double grads = rows * (s.heads * s.headDim * a +
                         s.kvHeads * (s.headDim + s.valueDim) * a);
  double local = qkvoElements(s) * b + gradOut + grads;
  double bytes = local;
  if (schemeLayout(scheme.getKind()) != pr.layout)
    bytes += local; // the relayouted copies
  double gatheredKV = kvElements(s, len, s.kvHeads) * (b + a);
  switch (scheme.getKind()) {
  case SchemeKind::allgather:
    return bytes + gatheredKV;
  case SchemeKind::head_tail:
    return bytes + gatheredKV +
           rows / 2 * s.heads * (s.headDim * (b + a) + 2 * s.valueDim * b + 4);
  case SchemeKind::ulysses:
    return bytes + local;
  case SchemeKind::hybrid: {
    double u = scheme.getUlyssesDegree();
    return bytes + local + kvElements(s, len, s.kvHeads / u) * (b + a);
  }
  case SchemeKind::ring:
  case SchemeKind::zigzag:
    // The next K/V block, and the dK/dV accumulators of the block being
    // worked on and of the one in flight.
    return bytes + kvElements(s, s.localLen, s.kvHeads) * (b + 2 * a);
  case SchemeKind::automatic:
  case SchemeKind::plugin:
    break;
  }
  return bytes;
}

//===----------------------------------------------------------------------===//
// Time
//===----------------------------------------------------------------------===//

class TimeModel {
public:
  TimeModel(const AttentionProblem &pr, const MachineModel &m)
      : pr(pr), s(pr.shape), m(m) {}

  /// `calls` calls of collective `kind` moving `bytes` in all from this
  /// rank, over `ranks` consecutive ranks (or strided ones when `strided`).
  /// With a profile: one burst of the calls, each at bytes / calls, the
  /// first at the measured first call's time and the others at a following
  /// call's. With
  /// the constants: `steps` message rounds of latency plus the bytes at
  /// the link's bandwidth.
  double collective(ProfiledCollective kind, double calls, double bytes,
                    double steps, int64_t ranks, bool strided = false) const {
    if (m.profile) {
      if (bytes <= 0 || calls <= 0 || ranks <= 1)
        return 0;
      std::optional<double> seconds =
          m.profile->burstSeconds(kind, ranks, calls, bytes / calls);
      if (!seconds) {
        if (!missing)
          missing = llvm::formatv("the machine profile has no {0} timings for "
                                  "groups of {1} ranks",
                                  stringifyProfiledCollective(kind), ranks)
                        .str();
        return 0;
      }
      return *seconds;
    }
    bool crossesNodes =
        strided ? s.groupSize > m.ranksPerNode : ranks > m.ranksPerNode;
    double bandwidth =
        crossesNodes ? m.interNodeBandwidth : m.intraNodeBandwidth;
    return steps * m.latency + bytes / bandwidth;
  }

  /// The heads one local attention call of `scheme` computes.
  double headsPerCall(SchemeAttr scheme) const {
    switch (scheme.getKind()) {
    case SchemeKind::ulysses:
      return double(s.heads) / s.groupSize;
    case SchemeKind::hybrid:
      return double(s.heads) / scheme.getUlyssesDegree();
    default:
      return s.heads;
    }
  }

  /// Seconds of `calls` local attention kernel calls that do `flops` in
  /// all (of `pass`; a backward's are 2.5x the forward's), launches
  /// included. With a profile, each call's heads are timed at the call's
  /// FLOPs per head: a head's cost depends on its sequence lengths, not on
  /// how many heads share the call.
  double kernels(KernelPass pass, double calls, double flops) const {
    if (m.profile) {
      if (flops <= 0 || calls <= 0)
        return 0;
      double units = calls * std::max(heads, 1.0); // heads computed
      KernelType type =
          pr.elementBytes == 4 ? KernelType::f32 : KernelType::bf16;
      KernelMask mask = pr.mask && pr.mask.getKind() != MaskKind::none
                            ? KernelMask::causal
                            : KernelMask::none;
      double forwardFlops = pass == KernelPass::forward
                                ? flops
                                : flops / kBackwardFlopsPerForwardFlop;
      const MeasuredCurve *curve = m.profile->kernel(pass, type, mask);
      // A rank's calls, timed with every rank busy, from its share of the
      // busiest rank's work.
      auto callsOf = [&](double share) {
        return share > 0 ? units * curve->seconds(forwardFlops * share / units)
                         : 0.0;
      };
      double busiest = callsOf(1);
      // Ranks sharing cores: what the ranks that finish first leave to the
      // busiest one, by the measured share of idle cores that are reused.
      // All of it: the ranks finish as the node's cores, divided among the
      // ranks still running, would finish them (sharedCoresFinish).
      int64_t perNode = std::min(m.profile->ranksPerNode, s.groupSize);
      double sharing = m.profile->cores > 0
                           ? double(perNode) / double(m.profile->cores)
                           : 1.0;
      if (sharing <= 1)
        return busiest;
      SmallVector<double> coreSeconds;
      for (double share : shares)
        coreSeconds.push_back(callsOf(share) / sharing);
      double reuse = m.profile->idleCoreReuse;
      return (1 - reuse) * busiest +
             reuse * sharedCoresFinish(coreSeconds, perNode,
                                       m.profile->cores);
    }
    return flops / m.attentionFlops + calls * m.launchOverhead;
  }

  /// The relayouts into and out of the scheme's layout, when needed:
  /// `calls` of them (one per operand and result).
  double relayout(SchemeAttr scheme, double schemeBytes, double calls) const {
    if (schemeLayout(scheme.getKind()) == pr.layout)
      return 0;
    double extra =
        bytesSentPerRank(scheme, s, pr.elementBytes, pr.layout, pr.mask) -
        schemeBytes;
    return collective(ProfiledCollective::relayout, calls, extra, 4,
                      s.groupSize);
  }

  /// Communication not hidden by computation, and computation.
  std::pair<double, double> estimate(SchemeAttr scheme, double busiestFlops,
                                     int64_t bytes) const {
    heads = headsPerCall(scheme);
    int64_t p = s.groupSize;
    double b = pr.elementBytes;
    double agBytes = kvElements(s, s.localLen, s.kvHeads) * b;
    // The forward's lse travels back too in a training step.
    double results = pr.costsBackward() ? 2 : 1;
    auto oneKernel = [&] {
      return kernels(KernelPass::forward, 1, busiestFlops);
    };
    switch (scheme.getKind()) {
    case SchemeKind::allgather:
      return {collective(ProfiledCollective::all_gather, 2, bytes,
                         2 * (p - 1), p),
              oneKernel()};
    case SchemeKind::ulysses:
      return {collective(ProfiledCollective::all_to_all, 3 + results, bytes,
                         4 * (p - 1), p),
              oneKernel()};
    case SchemeKind::hybrid: {
      int64_t u = scheme.getUlyssesDegree(), outer = p / u;
      double inner = qkvoElements(s) * b * (u - 1) / u;
      return {collective(ProfiledCollective::all_to_all, 3 + results, inner,
                         4 * (u - 1), u) +
                  collective(ProfiledCollective::all_gather, 2,
                             agBytes * (outer - 1), 2 * (outer - 1), outer,
                             /*strided=*/true),
              oneKernel()};
    }
    case SchemeKind::head_tail: {
      if (!m.profile)
        return {collective(ProfiledCollective::all_gather, 2, bytes,
                           2 * (p - 1) + 2, p),
                kernels(KernelPass::forward, 2, busiestFlops)};
      // K/V gathered, the tail's queries there and its output back.
      double gathered = agBytes * (p - 1);
      return {collective(ProfiledCollective::all_gather, 2, gathered, 0, p) +
                  collective(ProfiledCollective::exchange, 1 + results,
                             bytes - gathered, 0, p),
              kernels(KernelPass::forward, 2, busiestFlops)};
    }
    case SchemeKind::ring:
    case SchemeKind::zigzag: {
      // Step s's shift overlaps step s-1's attention; every step merges.
      // Steps no rank can see under the mask are not run.
      bool zigzag = scheme.getKind() == SchemeKind::zigzag;
      RingSchedule ring{p, s.localLen, zigzag};
      // Replicated queries run every step (rows 0..Lq-1 on every rank).
      double shifts = s.replicatedQueries ? double(p - 1)
                                          : ring.shiftsNeeded(pr.mask);
      double launches = ringLaunches(zigzag, shifts);
      double attention =
          kernels(KernelPass::forward, launches, busiestFlops);
      // K and V, one shift each.
      double shift =
          collective(ProfiledCollective::shift, 2, agBytes, 2, p);
      double exposed = exposedShifts(shifts, shift, hiding(attention, busiestFlops));
      double rowsMerged =
          zigzag ? (2.0 + 4.0 * shifts) * s.localLen / 2 : shifts * s.queryLen;
      double mergeBytes =
          3.0 * s.batch * rowsMerged * s.heads * (s.valueDim + 1) * 4;
      return {exposed, attention + mergeBytes / m.memoryBandwidth};
    }
    case SchemeKind::automatic:
    case SchemeKind::plugin:
      break;
    }
    return {0, oneKernel()};
  }

  /// The ring's shift time not hidden: each of `shifts` shifts of
  /// `shift` seconds overlaps (by the machine's overlap factor) one step's
  /// share of `attention`, the forward's or the backward's.
  double exposedShifts(double shifts, double shift, double attention) const {
    double perStep = attention / (shifts + 1);
    return shifts * (shift - m.overlap * std::min(shift, perStep));
  }
  /// The computation a ring's shifts can hide behind: the kernels' time
  /// as measured, or with the constants their FLOPs alone (launches are
  /// not overlapped).
  double hiding(double kernelSeconds, double flops) const {
    return m.profile ? kernelSeconds : flops / m.attentionFlops;
  }
  /// Kernel launches of a ring (one per step) or zigzag (two per step, three
  /// for the first) over `shifts` shifts.
  static double ringLaunches(bool zigzag, double shifts) {
    return zigzag ? 3.0 + 2.0 * shifts : shifts + 1;
  }

  /// The backward's exposed communication and computation: `busiestFlops`
  /// of gradient work, `bytes` sent by the scheme itself (no relayouts).
  std::pair<double, double> estimateBackward(SchemeAttr scheme,
                                             double busiestFlops,
                                             int64_t bytes) const {
    heads = headsPerCall(scheme);
    int64_t p = s.groupSize;
    double b = pr.elementBytes, a = pr.gradElementBytes;
    double kv = kvElements(s, s.localLen, s.kvHeads);
    // In one training step the backward reuses what the forward gathered.
    bool reuses = pr.fusedStep && pr.costsForward();
    auto oneKernel = [&] {
      return kernels(KernelPass::backward, 1, busiestFlops);
    };
    // dK and dV reduce-scattered over `ranks`, and the rest of `total`
    // (K and V gathered again, unless reused) all-gathered.
    auto gatherAndReduce = [&](double total, int64_t ranks, bool strided) {
      double reduced = kv * a * (ranks - 1);
      return collective(ProfiledCollective::reduce_scatter, 2, reduced, 0,
                        ranks, strided) +
             collective(ProfiledCollective::all_gather, 2,
                        std::max(0.0, total - reduced), 0, ranks, strided);
    };
    switch (scheme.getKind()) {
    case SchemeKind::allgather:
      // Gather K and V, reduce-scatter dK and dV.
      if (m.profile)
        return {gatherAndReduce(bytes, p, false), oneKernel()};
      return {collective(ProfiledCollective::all_gather, 4, bytes, 4 * (p - 1),
                         p),
              oneKernel()};
    case SchemeKind::ulysses:
      // Six all-to-alls in (q, k, v, o, dO, lse), three back; in a training
      // step q, k, v are already there.
      return {collective(ProfiledCollective::all_to_all, reuses ? 6 : 9, bytes,
                         9 * (p - 1), p),
              oneKernel()};
    case SchemeKind::hybrid: {
      int64_t u = scheme.getUlyssesDegree(), outer = p / u;
      double across = kv * (b + a) * (outer - 1);
      if (m.profile) {
        double acrossSent =
            reuses ? kv * a * (outer - 1) : across;
        return {collective(ProfiledCollective::all_to_all, reuses ? 6 : 9,
                           bytes - acrossSent, 0, u) +
                    gatherAndReduce(acrossSent, outer, true),
                oneKernel()};
      }
      return {collective(ProfiledCollective::all_to_all, 9, bytes - across,
                         9 * (u - 1), u) +
                  collective(ProfiledCollective::all_gather, 4, across,
                             4 * (outer - 1), outer,
                             /*strided=*/true),
              oneKernel()};
    }
    case SchemeKind::head_tail: {
      if (!m.profile)
        return {collective(ProfiledCollective::all_gather, 7, bytes,
                           4 * (p - 1) + 5, p),
                kernels(KernelPass::backward, 2, busiestFlops)};
      // K/V gathered (unless reused) with dK/dV reduce-scattered, and the
      // tail's q, o, dO, lse there and dq back.
      double gathered = kv * (reuses ? a : b + a) * (p - 1);
      return {gatherAndReduce(gathered, p, false) +
                  collective(ProfiledCollective::exchange, 7,
                             bytes - gathered, 0, p),
              kernels(KernelPass::backward, 2, busiestFlops)};
    }
    case SchemeKind::ring:
    case SchemeKind::zigzag: {
      // Each step's K/V shift and the previous block's dK/dV shift overlap
      // the step's gradients; the last dK/dV hop home is exposed.
      bool zigzag = scheme.getKind() == SchemeKind::zigzag;
      RingSchedule ring{p, s.localLen, zigzag};
      double shifts = ring.shiftsNeeded(pr.mask);
      if (shifts == 0)
        return {0, oneKernel()};
      double launches = ringLaunches(zigzag, shifts);
      double attention =
          kernels(KernelPass::backward, launches, busiestFlops);
      double shift =
          collective(ProfiledCollective::shift, 4, kv * (b + a), 2, p);
      double exposed =
          exposedShifts(shifts, shift, hiding(attention, busiestFlops)) +
          collective(ProfiledCollective::shift, 2, kv * a, 1, p);
      return {exposed, attention};
    }
    case SchemeKind::automatic:
    case SchemeKind::plugin:
      break;
    }
    return {0, oneKernel()};
  }

  /// Each rank's attention FLOPs over the busiest rank's, in group rank
  /// order.
  void setShares(SmallVector<double> rankOverBusiest) {
    shares = std::move(rankOverBusiest);
  }

  /// Why the profile cannot cost the scheme (a group size it has no
  /// timings for), after an estimate.
  const std::optional<std::string> &getMissing() const { return missing; }

private:
  const AttentionProblem &pr;
  const AttentionShape &s;
  const MachineModel &m;
  mutable std::optional<std::string> missing;
  SmallVector<double> shares{1.0};
  mutable double heads = 1;
};

std::string formatBytes(double bytes) {
  if (bytes >= 1024.0 * 1024 * 1024)
    return llvm::formatv("{0:F1} GiB", bytes / (1024.0 * 1024 * 1024)).str();
  if (bytes >= 1024.0 * 1024)
    return llvm::formatv("{0:F1} MiB", bytes / (1024.0 * 1024)).str();
  return llvm::formatv("{0:F1} KiB", bytes / 1024.0).str();
}

} // namespace

SchemeEstimate mlir::cp::estimateBuiltinScheme(SchemeAttr scheme,
                                               const AttentionProblem &problem,
                                               const MachineModel &machine) {
  assert(!scheme.isPlugin() && scheme.getKind() != SchemeKind::automatic &&
         "a built-in scheme");
  const AttentionShape &s = problem.shape;
  TimeModel time(problem, machine);
  SchemeEstimate e;
  e.scheme = scheme;
  e.rejection = findSchemeViolation(scheme, s);
  if (!e.rejection && problem.layout == SequenceLayout::zigzag &&
      s.localLen % 2 != 0)
    e.rejection = "the zigzag layout needs an even local length";
  if (e.rejection)
    return e;
  SmallVector<double> pairs = pairsPerRank(scheme, problem);
  double perPair = 2.0 * s.batch * (s.headDim + s.valueDim);
  double busiest = *std::max_element(pairs.begin(), pairs.end());
  double total = 0;
  for (double x : pairs)
    total += x;
  double forwardFlops = perPair * busiest;
  double meanForwardFlops = perPair * total / pairs.size();
  SmallVector<double> shares;
  for (double x : pairs)
    shares.push_back(busiest > 0 ? x / busiest : 1.0);
  time.setShares(std::move(shares));
  double memory = 0;
  if (problem.costsForward()) {
    bool withLse = problem.costsBackward();
    e.flops = forwardFlops;
    e.meanFlops = meanForwardFlops;
    e.bytes = bytesSentPerRank(scheme, s, problem.elementBytes, problem.layout,
                               problem.mask, withLse);
    memory = peakMemory(scheme, problem);
    int64_t schemeBytes = bytesSentPerRank(scheme, s, problem.elementBytes,
                                           problem.mask, withLse);
    auto [comm, compute] = time.estimate(scheme, e.flops, schemeBytes);
    // q, k, v in and o (with its lse in a training step) out.
    e.commSeconds =
        comm + time.relayout(scheme, schemeBytes, withLse ? 5 : 4);
    e.computeSeconds = compute;
    }
    if (problem.costsBackward()) {
      GradElementBytes sizes{problem.elementBytes, problem.elementBytes,
                             problem.gradElementBytes,
                             problem.gradElementBytes};
      double flops = kBackwardFlopsPerForwardFlop * forwardFlops;
      e.flops += flops;
      e.meanFlops += kBackwardFlopsPerForwardFlop * meanForwardFlops;
      e.backwardBytes = backwardBytesSentPerRank(scheme, s, sizes,
                                                 problem.layout,
                                                 /*kvReused=*/false,
                                                 problem.mask);
      memory = std::max(memory, backwardPeakMemory(scheme, problem));
      int64_t schemeBytes = backwardBytesSentPerRank(
          scheme, s, sizes, schemeLayout(scheme.getKind()),
          /*kvReused=*/false, problem.mask);
      if (problem.fusedStep && problem.costsForward()) {
        // What the backward need not send again.
        int64_t shared = e.bytes + e.backwardBytes -
                         trainingBytesSentPerRank(scheme, s, sizes,
                                                  problem.layout, problem.mask);
        e.backwardBytes -= shared;
        schemeBytes = std::max<int64_t>(0, schemeBytes - shared);
      }
      if (problem.sinks)
        e.backwardBytes += sinksGradientBytesPerRank(s);
      e.bytes += e.backwardBytes;
      auto [comm, compute] = time.estimateBackward(scheme, flops, schemeBytes);
      // o, dO and lse in, dq, dk, dv out (q, k, v too without the forward).
      double relayout =
          schemeLayout(scheme.getKind()) == problem.layout
              ? 0
              : time.collective(
                    ProfiledCollective::relayout,
                    problem.fusedStep ? 6 : 9,
                    std::max<int64_t>(0, e.backwardBytes - schemeBytes), 4,
                    s.groupSize);
      e.backwardSeconds = comm + relayout + compute;
      e.commSeconds += comm + relayout;
      e.computeSeconds += compute;
    }
    e.memory = static_cast<int64_t>(memory);
    e.seconds = e.commSeconds + e.computeSeconds;
    if (time.getMissing())
      e.rejection = *time.getMissing();
    rejectMemoryOverrun(e, machine);
    return e;
}

SmallVector<int64_t> mlir::cp::hybridDegrees(int64_t p) {
  // Every divisor 1 < u < p, in increasing order (found up to sqrt(p)).
  SmallVector<int64_t> small, large;
  for (int64_t u = 2; u <= p / u; ++u)
    if (p % u == 0) {
      small.push_back(u);
      if (u != p / u)
        large.push_back(p / u);
    }
  small.append(large.rbegin(), large.rend());
  return small;
}

SmallVector<SchemeEstimate>
mlir::cp::estimateSchemes(const AttentionProblem &problem,
                          const MachineModel &machine) {
  MLIRContext *context = problem.mask.getContext();
  SmallVector<SchemeEstimate> estimates;
  for (const SchemeDefinition *definition : registeredSchemes(context))
    definition->estimate(context, problem, machine, estimates);
  return estimates;
}

void mlir::cp::rejectMemoryOverrun(SchemeEstimate &estimate,
                                   const MachineModel &machine) {
  if (!estimate.rejection && estimate.memory > machine.memory)
    estimate.rejection = "needs " + formatBytes(estimate.memory) +
                         " per rank, more than the machine's " +
                         formatBytes(machine.memory);
}

std::string mlir::cp::schemeName(SchemeAttr scheme) {
  std::string text;
  llvm::raw_string_ostream os(text);
  printSchemeSpelling(os, scheme.getKind(), scheme.getName(),
                      scheme.getParameter());
  return text;
}

const SchemeEstimate *
mlir::cp::pickFastest(ArrayRef<SchemeEstimate> estimates) {
  const SchemeEstimate *best = nullptr;
  for (const SchemeEstimate &e : estimates) {
    if (!e.usable())
      continue;
    if (!best || e.seconds < best->seconds ||
        (e.seconds == best->seconds && e.bytes < best->bytes))
      best = &e;
  }
  return best;
}

DictionaryAttr mlir::cp::describeChoice(MLIRContext *ctx,
                                        ArrayRef<SchemeEstimate> estimates,
                                        const SchemeEstimate &chosen,
                                        const MachineModel &machine,
                                        CostedPasses passes) {
  Builder b(ctx);
  auto nanos = [&](double seconds) {
    return b.getI64IntegerAttr(
        static_cast<int64_t>(std::llround(seconds * 1e9)));
  };
  auto name = [](SchemeAttr scheme) { return schemeName(scheme); };
  SmallVector<NamedAttribute> entries{
      b.getNamedAttr("chosen", b.getStringAttr(name(chosen.scheme))),
      b.getNamedAttr("machine", b.getStringAttr(machine.name))};
  // Which figures the times come from: a measured profile, or the preset's
  // built-in constants.
  if (machine.profile) {
    entries.push_back(
        b.getNamedAttr("profile", b.getStringAttr(machine.profile->path)));
    entries.push_back(b.getNamedAttr(
        "measured", b.getStringAttr(machine.profile->date + ", " +
                                    machine.profile->runtime)));
  } else {
    entries.push_back(
        b.getNamedAttr("profile", b.getStringAttr("none: built-in constants")));
  }
  if (passes != CostedPasses::forward)
    entries.push_back(b.getNamedAttr(
        "passes", b.getStringAttr(passes == CostedPasses::backward
                                      ? "backward"
                                      : "forward+backward")));
  for (const SchemeEstimate &e : estimates) {
    Attribute value;
    if (e.rejection) {
      value = b.getStringAttr("rejected: " + *e.rejection);
    } else {
      SmallVector<NamedAttribute> figures{
          b.getNamedAttr("time_ns", nanos(e.seconds)),
          b.getNamedAttr("comm_ns", nanos(e.commSeconds)),
          b.getNamedAttr("compute_ns", nanos(e.computeSeconds)),
          b.getNamedAttr("bytes", b.getI64IntegerAttr(e.bytes)),
          b.getNamedAttr("flops",
                         b.getI64IntegerAttr(static_cast<int64_t>(e.flops))),
          b.getNamedAttr("memory", b.getI64IntegerAttr(e.memory))};
      if (passes != CostedPasses::forward) {
        figures.push_back(
            b.getNamedAttr("backward_ns", nanos(e.backwardSeconds)));
        figures.push_back(b.getNamedAttr(
            "backward_bytes", b.getI64IntegerAttr(e.backwardBytes)));
      }
      value = b.getDictionaryAttr(figures);
    }
    entries.push_back(b.getNamedAttr(name(e.scheme), value));
  }
  return b.getDictionaryAttr(entries);
}
