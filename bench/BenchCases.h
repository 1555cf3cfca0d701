//===- BenchCases.h - what cp-bench-attention measures, and how -*- C++ -*-===//
//
// The shapes cp-bench-attention measures, their inputs, the FLOPs a rate
// counts and the timing rules, shared by its forward tables
// (cp-bench-attention.cpp) and its backward table (GradBench.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef CP_BENCH_BENCHCASES_H
#define CP_BENCH_BENCHCASES_H

#include "cp/TestSupport/DeviceMirror.h"

#include <cstdint>
#include <limits>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace cp::bench {

struct BenchCase {
  int64_t seq, headDim;
  bool causal;
  std::string name() const {
    return "la_s" + std::to_string(seq) + "_d" + std::to_string(headDim) +
           (causal ? "_causal" : "_none");
  }
};

/// What is measured where: shapes, storage type.
struct Setting {
  bool gpu;
  int64_t batch, heads;
  std::vector<int64_t> lengths;
  const char *type;
  /// Cases longer than this are not run (--max-length; every case is
  /// emitted).
  int64_t maxLength = std::numeric_limits<int64_t>::max();
  int64_t elementBytes() const { return gpu ? 2 : 4; }
};

Setting settingFor(bool gpu);
/// The forward's shapes: every length, D in {64, 128}, none and causal.
std::vector<BenchCase> cases(const Setting &s);

/// Dense-equivalent attention FLOPs (QK^T and PV, 2 per multiply-add) and
/// the FLOPs a causal mask leaves.
double usefulFlops(const Setting &s, const BenchCase &c);
/// FlashAttention-2 backward FLOPs the mask leaves: per visible pair, S =
/// QK^T recomputed (2D), dP = dO V^T (2Dv), dV += P^T dO (2Dv), dQ += dS K
/// (2D) and dK += dS^T Q (2D), 2.5x the forward's 4D when Dv = D.
double usefulGradFlops(const Setting &s, const BenchCase &c);

double seconds();
/// Best of `reps` runs of `fn`, in seconds.
template <typename Fn> double best(int reps, Fn fn) {
  double t = 1e30;
  for (int r = 0; r < reps; ++r) {
    double start = seconds();
    fn();
    t = std::min(t, seconds() - start);
  }
  return t;
}
/// Best seconds of `a` and of `b`, measured in alternation (5 rounds after
/// a warm-up): on a shared machine, two rates taken a minute apart can
/// differ by more than the effect being measured.
std::pair<double, double> alternateBest(const std::function<void()> &a,
                                        const std::function<void()> &b);

/// One case's inputs in the setting's storage type, as raw bytes.
struct Inputs {
  std::vector<float> q, k, v;
  std::vector<unsigned char> qBytes, kBytes, vBytes, outBytes;
};
/// Descriptors of one case's Q, K, V and output bytes, [B, H, S, D].
struct Operands {
  cp::tools::Descriptor<4> q, k, v, out;
};
Operands describe(Inputs &in, const Setting &s, const BenchCase &c);
/// Q, K and V of case `c`, stored as bf16 bytes when `bf16` (f32 otherwise).
Inputs makeInputs(const Setting &s, const BenchCase &c, bool bf16);
inline Inputs makeInputs(const Setting &s, const BenchCase &c) {
  return makeInputs(s, c, s.gpu);
}

// The backward table (GradBench.cpp).
/// The forward with its lse (@fwd_*) and cp.local_attention_grad (@grad_*)
/// of every backward case: f32 and bf16 on CPU, bf16 on GPU.
void emitGradMlir(const Setting &s);
/// The backward and the training step (forward + backward) of every
/// backward case up to s.maxLength, against `peakGflops`.
bool runGrad(const Setting &s, void *handle, const std::string &lib,
             double peakGflops);

} // namespace cp::bench

#endif // CP_BENCH_BENCHCASES_H
