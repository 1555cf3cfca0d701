//===- cp-run-attention.cpp - run compiled attention on MPI ranks ---------===//
//
// The numeric check of compiled cp programs. For one attention shape and a
// list of cases (mask kinds), it either prints the cp IR of one function
// per case (--emit-mlir), or loads a shared object compiled from that IR
// (--lib) and, on every rank: builds the same deterministic global Q, K, V
// and masks, takes this rank's contiguous shard, calls the compiled
// function, and compares with the plain full attention of
// ReferenceAttention.h in double precision. Rank 0 prints one line per case
// with the max abs error over all ranks, the wall time, the bytes each
// rank sent and the time shifts were in flight (libcp_runtime's counters).
//
// This file runs the cases; RunConfig, CaseEmitter and HostData hold the
// options, the IR and the data.
//
//===----------------------------------------------------------------------===//

#include "CaseEmitter.h"
#include "HostData.h"
#include "RunConfig.h"
#include "cp/Runtime/cp_runtime.h"
#include "cp/TestSupport/DeviceMirror.h"
#include "cp/TestSupport/ReferenceAttentionGrad.h"

#include <mpi.h>

#include <dlfcn.h>

#include <algorithm>
#include <cinttypes>
#include <cstdlib>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

using namespace cp::run;
using namespace cp::tools;

namespace {

template <int R> Descriptor<R> describe(HostTensor &t) {
  return denseDescriptor<R>(t.bytes.data(), t.shape.data());
}

/// The rows of `blocks` ((begin, count) along `dim`) of a row-major tensor,
/// one after the other: a rank's shard of a sequence-sharded tensor.
HostTensor gatherRows(const HostTensor &t, int dim,
                      const std::vector<std::pair<int64_t, int64_t>> &blocks) {
  int64_t rows = 0;
  for (auto [begin, count] : blocks)
    rows += count;
  HostTensor s;
  s.shape = t.shape;
  s.shape[dim] = rows;
  s.elementBytes = t.elementBytes;
  int64_t inner = t.elementBytes, outer = 1;
  for (size_t d = dim + 1; d < t.shape.size(); ++d)
    inner *= t.shape[d];
  for (int d = 0; d < dim; ++d)
    outer *= t.shape[d];
  s.bytes.resize(outer * rows * inner);
  for (int64_t o = 0; o < outer; ++o) {
    int64_t row = 0;
    for (auto [begin, count] : blocks) {
      std::memcpy(&s.bytes[(o * rows + row) * inner],
                  &t.bytes[(o * t.shape[dim] + begin) * inner], count * inner);
      row += count;
    }
  }
  return s;
}

/// The rows of `blocks` along dim 2 of the row-major [B, H, S, D] values
/// `values` of shape `shape` (a rank's shard of a reference result).
std::vector<double>
rowsOf(const std::vector<double> &values, const std::vector<int64_t> &shape,
       const std::vector<std::pair<int64_t, int64_t>> &blocks) {
  HostTensor t;
  t.shape = shape;
  t.elementBytes = sizeof(double);
  t.bytes.resize(values.size() * sizeof(double));
  std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
  HostTensor rows = gatherRows(t, 2, blocks);
  std::vector<double> out(rows.size());
  std::memcpy(out.data(), rows.bytes.data(), rows.bytes.size());
  return out;
}

/// Calls the C interface `entry` with the descriptors `args` (4 to 10).
void callEntry(void *entry, const std::vector<void *> &a) {
  using P = void *;
  switch (a.size()) {
  case 4:
    return reinterpret_cast<void (*)(P, P, P, P)>(entry)(a[0], a[1], a[2],
                                                         a[3]);
  case 5:
    return reinterpret_cast<void (*)(P, P, P, P, P)>(entry)(a[0], a[1], a[2],
                                                            a[3], a[4]);
  case 6:
    return reinterpret_cast<void (*)(P, P, P, P, P, P)>(entry)(
        a[0], a[1], a[2], a[3], a[4], a[5]);
  case 7:
    return reinterpret_cast<void (*)(P, P, P, P, P, P, P)>(entry)(
        a[0], a[1], a[2], a[3], a[4], a[5], a[6]);
  case 8:
    return reinterpret_cast<void (*)(P, P, P, P, P, P, P, P)>(entry)(
        a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]);
  case 9:
    return reinterpret_cast<void (*)(P, P, P, P, P, P, P, P, P)>(entry)(
        a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8]);
  case 10:
    return reinterpret_cast<void (*)(P, P, P, P, P, P, P, P, P, P)>(entry)(
        a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9]);
  case 11:
    return reinterpret_cast<void (*)(P, P, P, P, P, P, P, P, P, P, P)>(entry)(
        a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10]);
  case 12:
    return reinterpret_cast<void (*)(P, P, P, P, P, P, P, P, P, P, P, P)>(
        entry)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9],
               a[10], a[11]);
  case 13:
    return reinterpret_cast<void (*)(P, P, P, P, P, P, P, P, P, P, P, P, P)>(
        entry)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9],
               a[10], a[11], a[12]);
  default:
    std::fprintf(stderr, "cp-run-attention: %zu arguments are not supported\n",
                 a.size());
    std::abort();
  }
}

/// Max abs difference of `got` and `expected`; NaN counts as infinite.
double maxAbsError(const HostTensor &got, ElementType type,
                   const std::vector<double> &expected) {
  double worst = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    double err =
        std::fabs(load(got, static_cast<int64_t>(i), type) - expected[i]);
    if (!(err <= worst))
      worst = std::isnan(err) ? INFINITY : err;
  }
  return worst;
}

struct Outcome {
  double maxError = 0;
  /// With +grad: the max abs error over dq, dk and dv.
  double maxGradError = 0;
  double seconds = 0;
  int64_t bytes = 0;
  /// Time shifts spent in flight while the program computed.
  double secondsInFlight = 0;
};

Outcome runCase(const Config &c, const Case &cs, void *library, int rank) {
  ElementType type = c.type;
  int64_t l = c.localLen(), s = c.seq;
  HostTensor q = makeTensor({c.batch, c.heads, s, c.headDim}, type);
  HostTensor k = makeTensor({c.batch, c.kvHeads, s, c.headDim}, type);
  HostTensor v = makeTensor({c.batch, c.kvHeads, s, c.valueDim}, type);
  for (int64_t i = 0; i < q.size(); ++i)
    store(q, i, uniform(1, i), type);
  for (int64_t i = 0; i < k.size(); ++i)
    store(k, i, uniform(2, i), type);
  for (int64_t i = 0; i < v.size(); ++i)
    store(v, i, uniform(3, i), type);

  // Reference rows of this rank, in double.
  std::vector<std::pair<int64_t, int64_t>> blocks = c.rowBlocks(rank);
  /// The global row of local row i.
  auto globalRow = [&](int64_t i) {
    for (auto [begin, count] : blocks) {
      if (i < count)
        return begin + i;
      i -= count;
    }
    return int64_t(-1);
  };
  cp::reference::Shape shape{c.batch, c.heads,   c.kvHeads, s,
                             s,       c.headDim, c.valueDim};
  std::vector<double> expected(c.batch * c.heads * l * c.valueDim);
  std::vector<double> expectedLse(c.batch * c.heads * l);
  std::vector<int32_t> segments = segmentIds(s);
  auto allowed = [&](int64_t, int64_t h, int64_t i, int64_t j) {
    if (!structuredAllows(cs, cs.qOffset + i, cs.kvOffset + j))
      return false;
    if (cs.causalModRegion && j > i)
      return false;
    if (cs.document && segments[i] != segments[j])
      return false;
    if (cs.explicitMask == Case::Explicit::globalBool ||
        cs.explicitMask == Case::Explicit::localBool)
      return explicitAllows(
          cs.explicitMask == Case::Explicit::globalBool ? h : 0, i, j);
    return true;
  };
  // The bias, rounded to the storage type as the compiled code sees it.
  HostTensor bias;
  if (cs.explicitMask == Case::Explicit::globalBias) {
    bias = makeTensor({s, s}, type);
    for (int64_t i = 0; i < s; ++i)
      for (int64_t j = 0; j < s; ++j)
        store(bias, i * s + j, explicitBias(i, j), type);
  }
  auto biasOf = [&](int64_t, int64_t, int64_t i, int64_t j) {
    return cs.explicitMask == Case::Explicit::globalBias
               ? bias.values[i * s + j]
               : 0.0;
  };
  auto scoreMod = [&](double score, int64_t, int64_t h, int64_t i,
                      int64_t j) {
    return modifiedScore(cs, c.heads, score, h, i, j);
  };
  // +sinks: one logit per head, from below to above a row's log-sum-exp
  // (about log S), so that some heads' sinks dominate and some barely count.
  std::vector<double> sinks;
  std::vector<float> sinksF32;
  if (cs.sinks)
    for (int64_t h = 0; h < c.heads; ++h) {
      sinksF32.push_back(
          static_cast<float>(std::log(double(s)) * double(h % 4) / 2.0 - 1.0));
      sinks.push_back(sinksF32.back());
    }
  const double *sinksIn = cs.sinks ? sinks.data() : nullptr;
  // +stacked: the second layer's queries are the first layer's output on
  // every row, rounded to the storage type as the program's are.
  HostTensor layerInput = q;
  if (cs.stacked) {
    std::vector<double> first(c.batch * c.heads * s * c.valueDim);
    cp::reference::attention<double>(
        shape, q.values.data(), k.values.data(), v.values.data(),
        first.data(), 0, s, 1.0 / std::sqrt(double(c.headDim)), allowed,
        biasOf, nullptr, scoreMod, sinksIn);
    for (int64_t i = 0; i < layerInput.size(); ++i)
      store(layerInput, i, first[i], type);
  }
  int64_t localRow = 0;
  for (auto [begin, count] : blocks) {
    std::vector<double> rows(c.batch * c.heads * count * c.valueDim);
    std::vector<double> rowsLse(c.batch * c.heads * count);
    cp::reference::attention<double>(
        shape, layerInput.values.data(), k.values.data(), v.values.data(),
        rows.data(),
        begin, begin + count, 1.0 / std::sqrt(double(c.headDim)), allowed,
        biasOf, cs.lse || cs.grad ? rowsLse.data() : nullptr, scoreMod,
        sinksIn);
    for (int64_t bh = 0; bh < c.batch * c.heads; ++bh)
      for (int64_t i = 0; i < count; ++i) {
        for (int64_t d = 0; d < c.valueDim; ++d)
          expected[(bh * l + localRow + i) * c.valueDim + d] =
              rows[(bh * count + i) * c.valueDim + d];
        expectedLse[bh * l + localRow + i] = rowsLse[bh * count + i];
      }
    localRow += count;
  }

  // This rank's shards and mask.
  HostTensor qLocal = gatherRows(q, 2, blocks);
  HostTensor kLocal = gatherRows(k, 2, blocks);
  HostTensor vLocal = gatherRows(v, 2, blocks);
  HostTensor out = makeTensor({c.batch, c.heads, l, c.valueDim}, type);
  HostTensor mask;
  if (cs.explicitMask == Case::Explicit::globalBool ||
      cs.explicitMask == Case::Explicit::localBool) {
    bool global = cs.explicitMask == Case::Explicit::globalBool;
    mask.shape = maskShape(c, cs.explicitMask);
    mask.elementBytes = 1;
    mask.bytes.resize(mask.size());
    int64_t rows = global ? s : l, heads = global ? c.heads : 1;
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < s; ++j)
          mask.bytes[(h * rows + i) * s + j] =
              explicitAllows(global ? h : 0, global ? i : globalRow(i), j);
  } else if (cs.explicitMask == Case::Explicit::globalBias) {
    mask = bias;
  }

  // With +grad: the loss gradient dO and the reference dq, dk, dv (this
  // rank's rows), and f32 buffers the program writes them into. With a
  // scheme (cp.attention_grad) the program is also given the reference
  // output and lse, unless +train chains the forward into it.
  bool sharded = cs.grad && !cs.train && !c.scheme.empty();
  HostTensor gradOut, outIn;
  std::vector<double> expectedDq, expectedDk, expectedDv, expectedDsinks;
  HostTensor dqOut, dkOut, dvOut;
  std::vector<float> dsinksOut(cs.sinks ? c.heads : 0, 0.0f);
  ElementType gradType = c.gradInStorageType ? type : ElementType::f32;
  if (cs.grad) {
    gradOut = makeTensor({c.batch, c.heads, s, c.valueDim}, type);
    for (int64_t i = 0; i < gradOut.size(); ++i)
      store(gradOut, i, uniform(4, i), type);
    expectedDq.resize(q.size());
    expectedDk.resize(k.size());
    expectedDv.resize(v.size());
    if (cs.sinks)
      expectedDsinks.resize(c.heads);
    auto scoreModSlope = [&](double score, int64_t, int64_t, int64_t,
                             int64_t) { return modifiedScoreSlope(cs, score); };
    cp::reference::attentionGrad<double>(
        shape, q.values.data(), k.values.data(), v.values.data(),
        gradOut.values.data(), expectedDq.data(), expectedDk.data(),
        expectedDv.data(), 1.0 / std::sqrt(double(c.headDim)), allowed, biasOf,
        scoreMod, scoreModSlope, sinksIn,
        cs.sinks ? expectedDsinks.data() : nullptr);
    expectedDq = rowsOf(expectedDq, q.shape, blocks);
    expectedDk = rowsOf(expectedDk, k.shape, blocks);
    expectedDv = rowsOf(expectedDv, v.shape, blocks);
    gradOut = gatherRows(gradOut, 2, blocks);
    dqOut = makeTensor({c.batch, c.heads, l, c.headDim}, gradType);
    dkOut = makeTensor({c.batch, c.kvHeads, l, c.headDim}, gradType);
    dvOut = makeTensor({c.batch, c.kvHeads, l, c.valueDim}, gradType);
    outIn = makeTensor({c.batch, c.heads, l, c.valueDim}, type);
    for (int64_t i = 0; i < outIn.size(); ++i)
      store(outIn, i, expected[i], type);
  }

  std::string symbol = "_mlir_ciface_" + cs.name;
  void *entry = dlsym(library, symbol.c_str());
  if (!entry) {
    std::fprintf(stderr, "cp-run-attention: rank %d: %s not found in %s\n",
                 rank, symbol.c_str(), c.lib.c_str());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  auto dq = describe<4>(qLocal), dk = describe<4>(kLocal),
       dv = describe<4>(vLocal), dout = describe<4>(out);
  // The segment ids (global, the same on every rank) for document masks.
  int64_t segmentShape[1] = {s};
  auto dseg = denseDescriptor<1>(segments.data(), segmentShape);
  int64_t headShape[1] = {c.heads};
  auto dsinks = denseDescriptor<1>(sinksF32.data(), headShape);
  auto ddsinks = denseDescriptor<1>(dsinksOut.data(), headShape);
  auto dm4 = mask.shape.size() == 4 ? describe<4>(mask) : Descriptor<4>{};
  auto dm2 = mask.shape.size() == 2 ? describe<2>(mask) : Descriptor<2>{};
  void *dmask = mask.shape.size() == 4 ? static_cast<void *>(&dm4)
                                       : static_cast<void *>(&dm2);
  std::vector<float> lse(expectedLse.size(), 0.0f);
  if (sharded)
    for (size_t i = 0; i < lse.size(); ++i)
      lse[i] = static_cast<float>(expectedLse[i]);
  Descriptor<3> dlse{
      lse.data(), lse.data(), 0, {c.batch, c.heads, l}, {c.heads * l, l, 1}};
  // The backward's buffers: dO, the gradients and, given to
  // cp.attention_grad, the forward's output.
  Descriptor<4> dgrad{};
  Descriptor<4> ddq{}, ddk{}, ddv{};
  if (cs.grad) {
    ddq = describe<4>(dqOut);
    ddk = describe<4>(dkOut);
    ddv = describe<4>(dvOut);
    dgrad = describe<4>(gradOut);
  }
  Descriptor<4> doutIn{};
  if (sharded)
    doutIn = describe<4>(outIn);
  std::optional<DeviceMirror> device;
  if (c.gpu) {
    device.emplace();
    device->mirror(dq, qLocal.bytes.size());
    device->mirror(dk, kLocal.bytes.size());
    device->mirror(dv, vLocal.bytes.size());
    device->mirror(dout, out.bytes.size());
    if (cs.explicitMask != Case::Explicit::none) {
      if (mask.shape.size() == 4)
        device->mirror(dm4, mask.bytes.size());
      else
        device->mirror(dm2, mask.bytes.size());
    }
    if (cs.document)
      device->mirror(dseg, segments.size() * sizeof(int32_t));
    if (cs.sinks) {
      device->mirror(dsinks, sinksF32.size() * sizeof(float));
      if (cs.grad)
        device->mirror(ddsinks, dsinksOut.size() * sizeof(float));
    }
    if (cs.lse || sharded)
      device->mirror(dlse, lse.size() * sizeof(float));
    if (cs.grad) {
      device->mirror(dgrad, gradOut.bytes.size());
      device->mirror(ddq, dqOut.bytes.size());
      device->mirror(ddk, dkOut.bytes.size());
      device->mirror(ddv, dvOut.bytes.size());
    }
    if (sharded)
      device->mirror(doutIn, outIn.bytes.size());
    device->synchronize();
  }
  // Operands in order, then the results (out-parameters).
  std::vector<void *> args{&dq, &dk, &dv};
  if (cs.explicitMask != Case::Explicit::none)
    args.push_back(dmask);
  if (cs.document)
    args.push_back(&dseg);
  if (cs.sinks)
    args.push_back(&dsinks);
  if (sharded) {
    args.push_back(&doutIn);
    args.push_back(&dlse);
  }
  if (cs.grad)
    args.push_back(&dgrad);
  if (!sharded)
    args.push_back(&dout);
  if (cs.lse)
    args.push_back(&dlse);
  if (cs.grad)
    for (Descriptor<4> *d : {&ddq, &ddk, &ddv})
      args.push_back(d);
  if (cs.grad && cs.sinks)
    args.push_back(&ddsinks);
  auto call = [&] { callEntry(entry, args); };

  for (int w = 0; w < c.warmup; ++w)
    call(); // communicators, page faults
  cp_rt_reset_counters();
  MPI_Barrier(MPI_COMM_WORLD);
  double start = MPI_Wtime();
  for (int r = 0; r < c.repeat; ++r)
    call();
  double elapsed = (MPI_Wtime() - start) / c.repeat;

  if (device)
    device->copyBack();
  Outcome result;
  result.bytes = cp_rt_bytes_sent(-1) / c.repeat;
  result.secondsInFlight = cp_rt_seconds_in_flight() / c.repeat;
  for (size_t i = 0; i < expected.size() && !sharded; ++i) {
    double got = load(out, static_cast<int64_t>(i), type);
    double err = std::fabs(got - expected[i]);
    if (!(err <= result.maxError)) // NaN counts as infinitely wrong
      result.maxError = std::isnan(err) ? INFINITY : err;
  }
  // A row that sees no key has lse = -inf on both sides; else the error.
  for (size_t i = 0; i < expectedLse.size() && cs.lse; ++i) {
    bool bothMasked =
        std::isinf(expectedLse[i]) && std::isinf(lse[i]) && lse[i] < 0;
    double err = bothMasked ? 0.0 : std::fabs(lse[i] - expectedLse[i]);
    if (!(err <= result.maxError))
      result.maxError = std::isnan(err) ? INFINITY : err;
  }
  if (cs.grad)
    result.maxGradError =
        std::max({maxAbsError(dqOut, gradType, expectedDq),
                  maxAbsError(dkOut, gradType, expectedDk),
                  maxAbsError(dvOut, gradType, expectedDv)});
  // The sinks' gradient: every rank returns the whole group's sum.
  for (size_t h = 0; h < expectedDsinks.size(); ++h) {
    double err = std::fabs(dsinksOut[h] - expectedDsinks[h]);
    if (!(err <= result.maxGradError))
      result.maxGradError = std::isnan(err) ? INFINITY : err;
  }
  result.seconds = elapsed;
  return result;
}

} // namespace

int main(int argc, char **argv) {
  Config c = parseArgs(argc, argv);
  if (c.emitMlir) {
    emitMlir(c);
    return 0;
  }
  cp_rt_init(&argc, &argv);
  int rank = cp_rt_world_rank(), size = cp_rt_world_size();
  if (size != c.p) {
    if (rank == 0)
      std::fprintf(stderr,
                   "cp-run-attention: --P %" PRId64
                   " but %d MPI ranks; run under mpirun -np %" PRId64 "\n",
                   c.p, size, c.p);
    // Still run: the compiled program must itself refuse a mismatched grid.
  }
  void *library = dlopen(c.lib.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!library) {
    std::fprintf(stderr, "cp-run-attention: rank %d: cannot load %s: %s\n",
                 rank, c.lib.c_str(), dlerror());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  double tolerance = c.tolerance.value_or(c.defaultTolerance());
  int failures = 0;
  for (const Case &cs : c.cases) {
    Outcome o = runCase(c, cs, library, rank);
    double maxError = 0, maxGradError = 0, maxSeconds = 0, maxInFlight = 0;
    int64_t minBytes = 0, maxBytes = 0;
    MPI_Reduce(&o.maxError, &maxError, 1, MPI_DOUBLE, MPI_MAX, 0,
               MPI_COMM_WORLD);
    MPI_Reduce(&o.maxGradError, &maxGradError, 1, MPI_DOUBLE, MPI_MAX, 0,
               MPI_COMM_WORLD);
    MPI_Reduce(&o.seconds, &maxSeconds, 1, MPI_DOUBLE, MPI_MAX, 0,
               MPI_COMM_WORLD);
    MPI_Reduce(&o.bytes, &minBytes, 1, MPI_INT64_T, MPI_MIN, 0, MPI_COMM_WORLD);
    MPI_Reduce(&o.bytes, &maxBytes, 1, MPI_INT64_T, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&o.secondsInFlight, &maxInFlight, 1, MPI_DOUBLE, MPI_MAX, 0,
               MPI_COMM_WORLD);
    if (rank != 0)
      continue;
    bool ok = maxError <= tolerance;
    std::string gradNote;
    if (cs.grad) {
      double gradTolerance = c.gradTolerance.value_or(c.defaultGradTolerance());
      ok = ok && maxGradError <= gradTolerance;
      char text[96];
      std::snprintf(text, sizeof(text), " grad_max_abs_err=%.3e grad_tol=%.1e",
                    maxGradError, gradTolerance);
      gradNote = text;
    }
    std::string bytesNote;
    if (c.expectBytes) {
      bool bytesOk = maxBytes == *c.expectBytes;
      ok = ok && bytesOk;
      bytesNote = " predicted=" + std::to_string(*c.expectBytes) +
                  (bytesOk ? "" : " BYTES-MISMATCH");
    }
    failures += !ok;
    std::printf("%s case=%s dtype=%s P=%" PRId64 " max_abs_err=%.3e tol=%.1e"
                "%s time_ms=%.3f bytes_sent_per_rank=%" PRId64 "..%" PRId64
                "%s in_flight_ms=%.3f\n",
                ok ? "PASS" : "FAIL", cs.name.c_str(), c.typeName(), c.p,
                maxError, tolerance, gradNote.c_str(), maxSeconds * 1e3,
                minBytes, maxBytes, bytesNote.c_str(), maxInFlight * 1e3);
  }
  if (rank == 0)
    std::printf("cp-run-attention: %zu cases, %d failed\n", c.cases.size(),
                failures);
  MPI_Bcast(&failures, 1, MPI_INT, 0, MPI_COMM_WORLD);
  cp_rt_finalize();
  return failures ? 1 : 0;
}
