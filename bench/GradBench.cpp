//===- GradBench.cpp - the backward and training-step table ---------------===//
//
// cp-bench-attention's backward table (CPU): cp.local_attention_grad, given
// the forward's output and lse, next to that forward at the same shape,
// and the local training step they make together (forward + backward), in
// f32 and with bf16 storage.
//
//===----------------------------------------------------------------------===//

#include "BenchCases.h"

#include <dlfcn.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>

namespace cp::bench {
namespace {

using cp::tools::denseDescriptor;

struct GradCase {
  BenchCase shape;
  bool bf16;
  std::string name() const { return shape.name() + (bf16 ? "_bf16" : ""); }
};

/// The backward's shapes: the forward's two shortest lengths at D = 64
/// and 128, the longest at D = 128, and that one again with bf16 storage.
std::vector<GradCase> gradCases(const Setting &s) {
  std::vector<GradCase> all;
  int64_t shortEnd = s.lengths[std::min<size_t>(1, s.lengths.size() - 1)];
  for (const BenchCase &c : cases(s))
    if (c.seq <= shortEnd || (c.seq == s.lengths.back() && c.headDim == 128))
      all.push_back({c, false});
  for (bool causal : {false, true})
    all.push_back({{s.lengths.back(), 128, causal}, true});
  return all;
}

void emitOne(const Setting &s, const GradCase &g) {
  const BenchCase &c = g.shape;
  std::string dims = std::to_string(s.batch) + "x" + std::to_string(s.heads) +
                     "x" + std::to_string(c.seq);
  std::string t = "tensor<" + dims + "x" + std::to_string(c.headDim) + "x" +
                  (g.bf16 ? "bf16" : "f32") + ">";
  std::string l = "tensor<" + dims + "xf32>";
  const char *mask = c.causal ? " mask = causal" : "";
  std::printf("func.func @fwd_%s(%%q: %s, %%k: %s, %%v: %s) -> (%s, %s) {\n"
              "  %%c0 = arith.constant 0 : index\n"
              "  %%o, %%lse = cp.local_attention %%q, %%k, %%v offsets(%%c0, "
              "%%c0)%s\n      : %s, %s, %s -> %s, %s\n"
              "  return %%o, %%lse : %s, %s\n}\n",
              g.name().c_str(), t.c_str(), t.c_str(), t.c_str(), t.c_str(),
              l.c_str(), mask, t.c_str(), t.c_str(), t.c_str(), t.c_str(),
              l.c_str(), t.c_str(), l.c_str());
  std::printf(
      "func.func @grad_%s(%%q: %s, %%k: %s, %%v: %s, %%o: %s, %%lse: "
      "%s, %%do: %s) -> (%s, %s, %s) {\n"
      "  %%c0 = arith.constant 0 : index\n"
      "  %%dq, %%dk, %%dv = cp.local_attention_grad %%q, %%k, %%v, %%o, "
      "%%lse, %%do offsets(%%c0, %%c0)%s\n"
      "      : %s, %s, %s, %s, %s, %s -> %s, %s, %s\n"
      "  return %%dq, %%dk, %%dv : %s, %s, %s\n}\n",
      g.name().c_str(), t.c_str(), t.c_str(), t.c_str(), t.c_str(), l.c_str(),
      t.c_str(), t.c_str(), t.c_str(), t.c_str(), mask, t.c_str(), t.c_str(),
      t.c_str(), t.c_str(), l.c_str(), t.c_str(), t.c_str(), t.c_str(),
      t.c_str(), t.c_str(), t.c_str(), t.c_str());
}

/// A case's forward and backward calls on their own buffers: the forward
/// writes O and lse, which the backward reads with dO.
struct GradCalls {
  Inputs in;
  std::vector<unsigned char> o, gradOut, dq, dk, dv;
  std::vector<float> lse;
  std::function<void()> forward, backward;
};

std::unique_ptr<GradCalls> bindCase(const Setting &s, void *handle,
                                    const std::string &lib, const GradCase &g) {
  using P = void *;
  auto fwd = reinterpret_cast<void (*)(P, P, P, P, P)>(
      dlsym(handle, ("_mlir_ciface_fwd_" + g.name()).c_str()));
  auto grad = reinterpret_cast<void (*)(P, P, P, P, P, P, P, P, P)>(
      dlsym(handle, ("_mlir_ciface_grad_" + g.name()).c_str()));
  if (!fwd || !grad) {
    std::fprintf(stderr, "cp-bench-attention: %s's backward not in %s\n",
                 g.name().c_str(), lib.c_str());
    return nullptr;
  }
  const BenchCase &c = g.shape;
  auto calls = std::make_unique<GradCalls>();
  GradCalls &k = *calls;
  k.in = makeInputs(s, c, g.bf16);
  int64_t n = s.batch * s.heads * c.seq * c.headDim;
  size_t bytes = n * (g.bf16 ? 2 : 4);
  for (auto *v : {&k.o, &k.gradOut, &k.dq, &k.dk, &k.dv})
    v->resize(bytes);
  k.lse.resize(s.batch * s.heads * c.seq);
  for (int64_t i = 0; i < n; ++i) {
    float x = std::sin(0.21 * i + 2);
    if (g.bf16) {
      uint16_t h = toBf16(x);
      std::memcpy(&k.gradOut[i * 2], &h, 2);
    } else {
      std::memcpy(&k.gradOut[i * 4], &x, 4);
    }
  }
  int64_t sizes[4] = {s.batch, s.heads, c.seq, c.headDim};
  auto d4 = [&](std::vector<unsigned char> &v) {
    return denseDescriptor<4>(v.data(), sizes);
  };
  auto q = d4(k.in.qBytes), kk = d4(k.in.kBytes), v = d4(k.in.vBytes),
       o = d4(k.o), dO = d4(k.gradOut), dQ = d4(k.dq), dK = d4(k.dk),
       dV = d4(k.dv);
  auto lse = denseDescriptor<3>(k.lse.data(), sizes);
  k.forward = [=]() mutable { fwd(&q, &kk, &v, &o, &lse); };
  k.backward = [=]() mutable {
    grad(&q, &kk, &v, &o, &lse, &dO, &dQ, &dK, &dV);
  };
  k.forward();
  return calls;
}

} // namespace

void emitGradMlir(const Setting &s) {
  for (const GradCase &g : gradCases(s))
    emitOne(s, g);
}

bool runGrad(const Setting &setting, void *handle, const std::string &lib,
             double peakGflops) {
  std::printf("\nbackward (cp.local_attention_grad) and the training step "
              "(forward + backward), FA2 backward FLOPs the mask leaves (10 D "
              "per visible pair; the step: 14 D)\n");
  std::printf("%-8s %-5s %-7s %-5s %9s %9s %8s %9s %8s %8s %9s %8s %7s\n",
              "S_local", "D", "mask", "type", "bwd_ms", "GFLOP/s", "of_peak",
              "fwd_ms", "fwd_peak", "bwd/fwd", "step_GF/s", "step_pk",
              "vs_f32");
  for (const GradCase &g : gradCases(setting)) {
    std::unique_ptr<GradCalls> calls = bindCase(setting, handle, lib, g);
    if (!calls)
      return false;
    const BenchCase &c = g.shape;
    double tf = best(3, calls->forward);
    calls->backward(); // warm-up
    double tb = best(3, calls->backward);
    std::string vsF32 = "";
    if (g.bf16) {
      // bf16 storage against f32 at the same shape, in alternation.
      std::unique_ptr<GradCalls> f32 =
          bindCase(setting, handle, lib, GradCase{c, false});
      if (!f32)
        return false;
      auto [tBf16, tF32] = alternateBest(calls->backward, f32->backward);
      tb = std::min(tb, tBf16);
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.2fx", tF32 / tBf16);
      vsF32 = buf;
    }
    double fwdFlops = usefulFlops(setting, c);
    double bwdFlops = usefulGradFlops(setting, c);
    double rate = bwdFlops / tb / 1e9, fwdRate = fwdFlops / tf / 1e9;
    double stepRate = (fwdFlops + bwdFlops) / (tf + tb) / 1e9;
    std::printf("%-8lld %-5lld %-7s %-5s %9.2f %9.1f %7.1f%% %9.2f %7.1f%% "
                "%7.2fx %9.1f %7.1f%% %7s\n",
                (long long)c.seq, (long long)c.headDim,
                c.causal ? "causal" : "none", g.bf16 ? "bf16" : "f32", tb * 1e3,
                rate, 100 * rate / peakGflops, tf * 1e3,
                100 * fwdRate / peakGflops, tb / tf, stepRate,
                100 * stepRate / peakGflops, vsF32.c_str());
  }
  std::printf("targets: backward >= 45%% of the peak and <= 3.0x the "
              "forward's time at S_local=4096 D=128, none and causal, f32; "
              "bf16 no slower than f32 (vs_f32 >= 1.00x)\n");
  return true;
}

} // namespace cp::bench
