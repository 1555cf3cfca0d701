//===- ReferenceGradient.cpp - the reference gradient vs. finite differences//
//
// The backward pass's numeric tests compare against
// cp::reference::attentionGrad, so that reference is checked first: on
// tiny problems (MHA, GQA with H/Hkv = 4, MLA with Dv != D) and every mask
// and transform the tests use (none, causal, an odd sliding window, a
// document mask, a row that sees no key, tanh soft-capping, an ALiBi bias,
// attention sinks), every element of dq, dk and dv (and of the sinks'
// gradient) must match the central finite difference of loss =
// sum(dout o attention(q, k, v)) in double precision to 1e-6.
// `--break` adds 1e-3 to one element of dv, which the check must catch.
// Prints one line per case and a summary; exits 1 on any mismatch.
//
//===----------------------------------------------------------------------===//

#include "cp/TestSupport/ReferenceAttentionGrad.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

using namespace cp::reference;

namespace {

using Predicate = std::function<bool(int64_t, int64_t, int64_t, int64_t)>;
using Scalar = std::function<double(int64_t, int64_t, int64_t, int64_t)>;
using Transform =
    std::function<double(double, int64_t, int64_t, int64_t, int64_t)>;

struct Case {
  std::string name;
  Shape shape;
  Predicate allowed;
  Scalar bias;
  Transform mod, modGrad;
  /// One sink logit per head, or none.
  bool sinks = false;
};

double loss(const Case &c, const std::vector<double> &q,
            const std::vector<double> &k, const std::vector<double> &v,
            const std::vector<double> &dout, double scale,
            const std::vector<double> &sinks) {
  const Shape &s = c.shape;
  std::vector<double> out(s.batch * s.heads * s.queries * s.valueDim);
  attention(s, q.data(), k.data(), v.data(), out.data(), 0, s.queries, scale,
            c.allowed, c.bias, static_cast<double *>(nullptr), c.mod,
            c.sinks ? sinks.data() : nullptr);
  double total = 0;
  for (size_t i = 0; i < out.size(); ++i)
    total += out[i] * dout[i];
  return total;
}

/// The largest |analytic - finite difference| over the elements of `x`.
double check(const Case &c, std::vector<double> &x,
             const std::vector<double> &grad, const std::function<double()> &f) {
  const double h = 1e-5;
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    double saved = x[i];
    x[i] = saved + h;
    double up = f();
    x[i] = saved - h;
    double down = f();
    x[i] = saved;
    worst = std::max(worst, std::fabs(grad[i] - (up - down) / (2 * h)));
  }
  return worst;
}

} // namespace

int main(int argc, char **argv) {
  bool breakIt = argc > 1 && std::strcmp(argv[1], "--break") == 0;
  auto all = [](int64_t, int64_t, int64_t, int64_t) { return true; };
  auto causal = [](int64_t, int64_t, int64_t i, int64_t j) { return j <= i; };
  auto window = [](int64_t, int64_t, int64_t i, int64_t j) {
    return j <= i && i - j < 3; // sliding_window(3)
  };
  auto document = [](int64_t, int64_t, int64_t i, int64_t j) {
    return (i < 2) == (j < 2) && j <= i; // documents [0, 2) and [2, 5)
  };
  auto emptyRow = [](int64_t, int64_t, int64_t i, int64_t j) {
    return i != 1 && j <= i; // row 1 sees no key
  };
  auto noBias = [](int64_t, int64_t, int64_t, int64_t) { return 0.0; };
  auto alibi = [](int64_t, int64_t h, int64_t i, int64_t j) {
    return -std::pow(2.0, -(h + 1.0)) * double(i - j);
  };
  auto keep = [](double x, int64_t, int64_t, int64_t, int64_t) { return x; };
  auto one = [](double, int64_t, int64_t, int64_t, int64_t) { return 1.0; };
  const double cap = 0.5;
  auto softcap = [cap](double x, int64_t, int64_t, int64_t, int64_t) {
    return cap * std::tanh(x / cap);
  };
  auto softcapGrad = [cap](double x, int64_t, int64_t, int64_t, int64_t) {
    double t = std::tanh(x / cap);
    return 1 - t * t;
  };

  const Shape mha{2, 2, 2, 5, 5, 3, 3}, gqa{1, 4, 1, 5, 5, 3, 3},
      mla{1, 2, 2, 5, 5, 3, 2};
  std::vector<Case> cases = {
      {"mha_none", mha, all, noBias, keep, one},
      {"mha_causal", mha, causal, noBias, keep, one},
      {"gqa_window3", gqa, window, noBias, keep, one},
      {"gqa_document", gqa, document, noBias, keep, one},
      {"mla_empty_row", mla, emptyRow, noBias, keep, one},
      {"mla_softcap", mla, causal, noBias, softcap, softcapGrad},
      {"gqa_alibi_softcap", gqa, all, alibi, softcap, softcapGrad},
      {"gqa_causal_sinks", gqa, causal, noBias, keep, one, /*sinks=*/true},
      {"mla_empty_row_sinks", mla, emptyRow, noBias, keep, one,
       /*sinks=*/true},
  };

  std::mt19937 rng(15);
  std::uniform_real_distribution<double> uniform(-1, 1);
  auto random = [&](int64_t n) {
    std::vector<double> x(n);
    for (double &e : x)
      e = uniform(rng);
    return x;
  };
  int failures = 0;
  for (const Case &c : cases) {
    const Shape &s = c.shape;
    std::vector<double> q = random(s.batch * s.heads * s.queries * s.headDim);
    std::vector<double> k = random(s.batch * s.kvHeads * s.keys * s.headDim);
    std::vector<double> v = random(s.batch * s.kvHeads * s.keys * s.valueDim);
    std::vector<double> dout =
        random(s.batch * s.heads * s.queries * s.valueDim);
    std::vector<double> dq(q.size()), dk(k.size()), dv(v.size());
    std::vector<double> sinks = random(s.heads), dsinks(s.heads);
    for (double &x : sinks)
      x *= 2; // from well below a row's log-sum-exp to above it
    double scale = 1 / std::sqrt(double(s.headDim));
    attentionGrad(s, q.data(), k.data(), v.data(), dout.data(), dq.data(),
                  dk.data(), dv.data(), scale, c.allowed, c.bias, c.mod,
                  c.modGrad, c.sinks ? sinks.data() : nullptr,
                  c.sinks ? dsinks.data() : nullptr);
    if (breakIt)
      dv[1] += 1e-3;
    auto f = [&] { return loss(c, q, k, v, dout, scale, sinks); };
    double eq = check(c, q, dq, f), ek = check(c, k, dk, f),
           ev = check(c, v, dv, f);
    double es = c.sinks ? check(c, sinks, dsinks, f) : 0;
    double worst = std::max({eq, ek, ev, es});
    bool ok = worst <= 1e-6;
    failures += !ok;
    char sinkError[32] = "";
    if (c.sinks)
      std::snprintf(sinkError, sizeof(sinkError), " dsinks=%.1e", es);
    std::printf("%s %s max_err dq=%.1e dk=%.1e dv=%.1e%s tol=1.0e-06\n",
                ok ? "PASS" : "FAIL", c.name.c_str(), eq, ek, ev, sinkError);
  }
  std::printf("reference gradient: %zu cases, %d failed\n", cases.size(),
              failures);
  return failures ? 1 : 0;
}
