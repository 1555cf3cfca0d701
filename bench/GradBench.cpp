//===- GradBench.cpp - the backward and training-step table ---------------===//
//
// cp-bench-attention's backward table: cp.local_attention_grad, given the
// forward's output and lse, next to that forward at the same shape, and
// the local training step they make together (forward + backward); on CPU
// in f32 and with bf16 storage, on GPU (--device gpu) in bf16 on device
// buffers.
//
//===----------------------------------------------------------------------===//

#include "BenchCases.h"
#include "cp/TestSupport/Bf16.h"

#include <dlfcn.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>

namespace cp::bench {
namespace {

using cp::tools::denseDescriptor;
using cp::tools::toBf16;

struct GradCase {
  BenchCase shape;
  bool bf16;
  std::string name() const { return shape.name() + (bf16 ? "_bf16" : ""); }
};

/// The backward's shapes. CPU: the forward's two shortest lengths at D = 64
/// and 128, the longest at D = 128, and that one again with bf16 storage.
/// GPU: the forward's, bf16.
std::vector<GradCase> gradCases(const Setting &s) {
  std::vector<GradCase> all;
  if (s.gpu) {
    for (const BenchCase &c : cases(s))
      all.push_back({c, true});
    return all;
  }
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
  /// GPU: the device copies every call works on.
  std::optional<cp::tools::DeviceMirror> device;
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
  cp::tools::DeviceMirror *device = nullptr;
  if (s.gpu) {
    device = &k.device.emplace();
    for (auto *d : {&q, &kk, &v, &o, &dO, &dQ, &dK, &dV})
      device->mirror(*d, bytes);
    device->mirror(lse, k.lse.size() * sizeof(float));
    device->synchronize();
  }
  // A call ends when its kernels have (GPU).
  k.forward = [=]() mutable {
    fwd(&q, &kk, &v, &o, &lse);
    if (device)
      device->synchronize();
  };
  k.backward = [=]() mutable {
    grad(&q, &kk, &v, &o, &lse, &dO, &dQ, &dK, &dV);
    if (device)
      device->synchronize();
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
  bool gpu = setting.gpu;
  const char *unit = gpu ? "TFLOP/s" : "GFLOP/s";
  double scale = gpu ? 1e12 : 1e9, peak = peakGflops * 1e9 / scale;
  std::printf("\nbackward (cp.local_attention_grad) and the training step "
              "(forward + backward), FA2 backward FLOPs the mask leaves (10 D "
              "per visible pair; the step: 14 D)\n");
  std::printf("%-8s %-5s %-7s %-5s %9s %9s %8s %9s %8s %8s %9s %8s %7s\n",
              "S_local", "D", "mask", "type", "bwd_ms", unit, "of_peak",
              "fwd_ms", "fwd_peak", "bwd/fwd", gpu ? "step_TF/s" : "step_GF/s",
              "step_pk", gpu ? "" : "vs_f32");
  for (const GradCase &g : gradCases(setting)) {
    const BenchCase &c = g.shape;
    if (c.seq > setting.maxLength)
      continue;
    std::unique_ptr<GradCalls> calls = bindCase(setting, handle, lib, g);
    if (!calls)
      return false;
    double tf = best(3, calls->forward);
    calls->backward(); // warm-up
    double tb = best(3, calls->backward);
    std::string vsF32 = "";
    if (g.bf16 && !gpu) {
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
    double rate = bwdFlops / tb / scale, fwdRate = fwdFlops / tf / scale;
    double stepRate = (fwdFlops + bwdFlops) / (tf + tb) / scale;
    std::printf("%-8lld %-5lld %-7s %-5s %9.2f %9.1f %7.1f%% %9.2f %7.1f%% "
                "%7.2fx %9.1f %7.1f%% %7s\n",
                (long long)c.seq, (long long)c.headDim,
                c.causal ? "causal" : "none", g.bf16 ? "bf16" : "f32", tb * 1e3,
                rate, 100 * rate / peak, tf * 1e3, 100 * fwdRate / peak,
                tb / tf, stepRate, 100 * stepRate / peak, vsF32.c_str());
  }
  if (gpu)
    std::printf("FlashAttention-2's backward takes 2-2.5x its forward's "
                "time (bwd/fwd)\n");
  else
    std::printf("targets: backward >= 45%% of the peak and <= 3.0x the "
                "forward's time at S_local=4096 D=128, none and causal, f32; "
                "bf16 no slower than f32 (vs_f32 >= 1.00x)\n");
  return true;
}

} // namespace cp::bench
