//===- cp-bench-attention.cpp - local attention throughput ----------------===//
//
// Measures the compiled cp.local_attention (and, on CPU, its backward
// cp.local_attention_grad) against baselines in the same run. On CPU
// (default): f32, against the ceilings MachinePeaks.h measures (the widest
// FMA the CPU has, bf16 dot products, memory bandwidth), and the naive
// full-score attention of ReferenceAttention.h. On GPU (--device gpu, a program from
// cp-compile --target=nvvm): bf16, next to the device's dense bf16 peak
// (CP_GPU_PEAK_TFLOPS, default the H200's 989). Like cp-run-attention it
// first emits the IR it measures (--emit-mlir), which bench/run.sh (or
// scripts/gpu-artifacts.sh) compiles; then it loads the result (--lib) and
// prints figures.
//
//===----------------------------------------------------------------------===//

#include "MachinePeaks.h"
#include "cp/TestSupport/DeviceMirror.h"
#include "cp/TestSupport/ReferenceAttention.h"

#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

using namespace cp::tools;

namespace {

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
  int64_t elementBytes() const { return gpu ? 2 : 4; }
};

Setting settingFor(bool gpu) {
  if (gpu)
    return {true, 1, 16, {1024, 4096, 16384}, "bf16"};
  return {false, 1, 4, {1024, 2048, 4096}, "f32"};
}

std::vector<BenchCase> cases(const Setting &s) {
  std::vector<BenchCase> all;
  for (int64_t length : s.lengths)
    for (int64_t d : {64, 128})
      for (bool causal : {false, true})
        all.push_back({length, d, causal});
  return all;
}

/// The backward's shapes (CPU): the forward's two shortest lengths.
std::vector<BenchCase> gradCases(const Setting &s) {
  std::vector<BenchCase> all;
  for (const BenchCase &c : cases(s))
    if (c.seq <= s.lengths[std::min<size_t>(1, s.lengths.size() - 1)])
      all.push_back(c);
  return all;
}

/// The bf16 table's shapes (CPU): the longest length, D = 128.
std::vector<BenchCase> bf16Cases(const Setting &s) {
  return {{s.lengths.back(), 128, false}, {s.lengths.back(), 128, true}};
}

/// A mask_mod / score_mod case (CPU): its regions on the forward at the
/// longest length, D = 128, beside the structured masks at that shape.
struct RegionCase {
  const char *name;  // symbol suffix and table label
  const char *mask;  // structured mask (" mask = causal") or ""
  const char *score; // score_mod body (on %x, %qi, %ki) or null
  bool document;     // mask_mod: seg[q_idx] == seg[kv_idx]
  int64_t shift;     // document boundaries: multiples of S/8, shifted by this
  const char *baseline; // the structured case it is compared with
};

std::vector<RegionCase> regionCases() {
  const char *softcap = "        %cap = arith.constant 30.0 : f32\n"
                        "        %xs = arith.divf %x, %cap : f32\n"
                        "        %t = math.tanh %xs : f32\n"
                        "        %y = arith.mulf %t, %cap : f32\n";
  const char *alibi = "        %qq = arith.index_cast %qi : index to i64\n"
                      "        %kk = arith.index_cast %ki : index to i64\n"
                      "        %dd = arith.subi %kk, %qq : i64\n"
                      "        %df = arith.sitofp %dd : i64 to f32\n"
                      "        %sl = arith.constant 0.0625 : f32\n"
                      "        %bias = arith.mulf %df, %sl : f32\n"
                      "        %y = arith.addf %x, %bias : f32\n";
  return {{"softcap", "", softcap, false, 0, "none"},
          {"alibi_causal", " mask = causal", alibi, false, 0, "causal"},
          {"document8", "", nullptr, true, 0, "causal"},
          {"document8_shifted", "", nullptr, true, 37, "causal"}};
}

/// Segment ids of 8 documents over `seq` positions: boundaries at multiples
/// of seq / 8, each but the first and last moved by `shift`.
std::vector<int32_t> documentIds(int64_t seq, int64_t shift) {
  std::vector<int32_t> ids(seq);
  for (int64_t i = 0; i < seq; ++i) {
    int64_t doc = 0;
    for (int64_t d = 1; d < 8; ++d)
      if (i >= d * (seq / 8) + shift)
        doc = d;
    ids[i] = static_cast<int32_t>(doc);
  }
  return ids;
}

int64_t regionSeq(const Setting &s) { return s.lengths.back(); }

std::string regionSymbol(const Setting &s, const RegionCase &r) {
  return "la_s" + std::to_string(regionSeq(s)) + "_d128_" + r.name;
}

void emitRegionMlir(const Setting &s, const RegionCase &r) {
  int64_t seq = regionSeq(s);
  std::string t = "tensor<" + std::to_string(s.batch) + "x" +
                  std::to_string(s.heads) + "x" + std::to_string(seq) +
                  "x128x" + s.type + ">";
  std::string seg = "tensor<" + std::to_string(seq) + "xi32>";
  std::string header = "(%b: index, %h: index, %qi: index, %ki: index" +
                       std::string(r.document ? ", %s: " + seg : "") + "):\n";
  std::string regions;
  if (r.document)
    regions += "      mask_mod {\n      ^bb0" + header +
               "        %a = tensor.extract %s[%qi] : " + seg +
               "\n        %c = tensor.extract %s[%ki] : " + seg +
               "\n        %same = arith.cmpi eq, %a, %c : i32\n"
               "        cp.yield %same : i1\n      }\n";
  if (r.score)
    regions += "      score_mod {\n      ^bb0(%x: f32, " + header.substr(1) +
               r.score + "        cp.yield %y : f32\n      }\n";
  std::printf(
      "func.func @%s(%%q: %s, %%k: %s, %%v: %s%s) -> %s {\n"
      "  %%c0 = arith.constant 0 : index\n"
      "  %%o = cp.local_attention %%q, %%k, %%v offsets(%%c0, %%c0)%s%s\n"
      "%s      : %s, %s, %s -> %s\n"
      "  return %%o : %s\n}\n",
      regionSymbol(s, r).c_str(), t.c_str(), t.c_str(), t.c_str(),
      r.document ? (", %seg: " + seg).c_str() : "", t.c_str(),
      r.document ? (" mod_operands(%seg : " + seg + ")").c_str() : "", r.mask,
      regions.c_str(), t.c_str(), t.c_str(), t.c_str(), t.c_str(), t.c_str());
}

/// The forward with its lse (@fwd_*) and cp.local_attention_grad (@grad_*)
/// of one backward case.
void emitGradMlir(const Setting &s, const BenchCase &c) {
  std::string dims = std::to_string(s.batch) + "x" + std::to_string(s.heads) +
                     "x" + std::to_string(c.seq);
  std::string t = "tensor<" + dims + "x" + std::to_string(c.headDim) + "xf32>";
  std::string l = "tensor<" + dims + "xf32>";
  const char *mask = c.causal ? " mask = causal" : "";
  std::printf("func.func @fwd_%s(%%q: %s, %%k: %s, %%v: %s) -> (%s, %s) {\n"
              "  %%c0 = arith.constant 0 : index\n"
              "  %%o, %%lse = cp.local_attention %%q, %%k, %%v offsets(%%c0, "
              "%%c0)%s\n      : %s, %s, %s -> %s, %s\n"
              "  return %%o, %%lse : %s, %s\n}\n",
              c.name().c_str(), t.c_str(), t.c_str(), t.c_str(), t.c_str(),
              l.c_str(), mask, t.c_str(), t.c_str(), t.c_str(), t.c_str(),
              l.c_str(), t.c_str(), l.c_str());
  std::printf("func.func @grad_%s(%%q: %s, %%k: %s, %%v: %s, %%o: %s, %%lse: "
              "%s, %%do: %s) -> (%s, %s, %s) {\n"
              "  %%c0 = arith.constant 0 : index\n"
              "  %%dq, %%dk, %%dv = cp.local_attention_grad %%q, %%k, %%v, %%o, "
              "%%lse, %%do offsets(%%c0, %%c0)%s\n"
              "      : %s, %s, %s, %s, %s, %s -> %s, %s, %s\n"
              "  return %%dq, %%dk, %%dv : %s, %s, %s\n}\n",
              c.name().c_str(), t.c_str(), t.c_str(), t.c_str(), t.c_str(),
              l.c_str(), t.c_str(), t.c_str(), t.c_str(), t.c_str(), mask,
              t.c_str(), t.c_str(), t.c_str(), t.c_str(), l.c_str(), t.c_str(),
              t.c_str(), t.c_str(), t.c_str(), t.c_str(), t.c_str(), t.c_str());
}

void emitMlir(const Setting &s) {
  std::printf("// cp-bench-attention: local attention, B=%lld H=%lld, %s\n",
              (long long)s.batch, (long long)s.heads, s.type);
  for (const BenchCase &c : cases(s)) {
    std::string t = "tensor<" + std::to_string(s.batch) + "x" +
                    std::to_string(s.heads) + "x" + std::to_string(c.seq) +
                    "x" + std::to_string(c.headDim) + "x" + s.type + ">";
    std::printf(
        "func.func @%s(%%q: %s, %%k: %s, %%v: %s) -> %s {\n"
        "  %%c0 = arith.constant 0 : index\n"
        "  %%o = cp.local_attention %%q, %%k, %%v offsets(%%c0, %%c0)%s\n"
        "      : %s, %s, %s -> %s\n"
        "  return %%o : %s\n}\n",
        c.name().c_str(), t.c_str(), t.c_str(), t.c_str(), t.c_str(),
        c.causal ? " mask = causal" : "", t.c_str(), t.c_str(), t.c_str(),
        t.c_str(), t.c_str());
  }
  if (!s.gpu) {
    // bf16 storage at the longest length, D = 128 (the bf16 table).
    for (const BenchCase &c : bf16Cases(s)) {
      std::string t = "tensor<" + std::to_string(s.batch) + "x" +
                      std::to_string(s.heads) + "x" + std::to_string(c.seq) +
                      "x128xbf16>";
      std::printf("func.func @%s_bf16(%%q: %s, %%k: %s, %%v: %s) -> %s {\n"
                  "  %%c0 = arith.constant 0 : index\n"
                  "  %%o = cp.local_attention %%q, %%k, %%v offsets(%%c0, "
                  "%%c0)%s\n      : %s, %s, %s -> %s\n"
                  "  return %%o : %s\n}\n",
                  c.name().c_str(), t.c_str(), t.c_str(), t.c_str(), t.c_str(),
                  c.causal ? " mask = causal" : "", t.c_str(), t.c_str(),
                  t.c_str(), t.c_str(), t.c_str());
    }
    for (const RegionCase &r : regionCases())
      emitRegionMlir(s, r);
    for (const BenchCase &c : gradCases(s))
      emitGradMlir(s, c);
  }
}

double seconds() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// Dense-equivalent attention FLOPs (QK^T and PV, 2 per multiply-add) and
/// the FLOPs a causal mask leaves.
double usefulFlops(const Setting &s, const BenchCase &c) {
  double perHead = 4.0 * c.headDim;
  double pairs =
      c.causal ? c.seq * (c.seq + 1) / 2.0 : static_cast<double>(c.seq) * c.seq;
  return perHead * pairs * s.batch * s.heads;
}

/// FlashAttention-2 backward FLOPs the mask leaves: per visible pair, S = QK^T
/// recomputed (2D), dP = dO V^T (2Dv), dV += P^T dO (2Dv), dQ += dS K (2D)
/// and dK += dS^T Q (2D), 2.5x the forward's 4D when Dv = D.
double usefulGradFlops(const Setting &s, const BenchCase &c) {
  return usefulFlops(s, c) / (4.0 * c.headDim) * 10.0 * c.headDim;
}

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

/// The naive baseline on `threads` threads (split over heads).
double naiveSeconds(const Setting &s, const BenchCase &c,
                    const std::vector<float> &q, const std::vector<float> &k,
                    const std::vector<float> &v, unsigned threads) {
  std::vector<float> out(q.size());
  int64_t len = c.seq, d = c.headDim;
  return best(1, [&] {
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        for (int64_t h = t; h < s.heads; h += threads) {
          cp::reference::Shape one{1, 1, 1, len, len, d, d};
          int64_t off = h * len * d;
          cp::reference::attention<float>(
              one, q.data() + off, k.data() + off, v.data() + off,
              out.data() + off, 0, len, 1.0f / std::sqrt(float(d)),
              [&](int64_t, int64_t, int64_t i, int64_t j) {
                return !c.causal || j <= i;
              },
              [](int64_t, int64_t, int64_t, int64_t) { return 0.0f; });
        }
      });
    for (std::thread &t : pool)
      t.join();
  });
}

/// bf16 bits of `f`, rounded to nearest even.
uint16_t toBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  bits += 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

/// One case's inputs in the setting's storage type, as raw bytes.
struct Inputs {
  std::vector<float> q, k, v;
  std::vector<unsigned char> qBytes, kBytes, vBytes, outBytes;
};

/// Descriptors of one case's Q, K, V and output bytes, [B, H, S, D].
struct Operands {
  Descriptor<4> q, k, v, out;
};

Operands describe(Inputs &in, const Setting &s, const BenchCase &c) {
  int64_t sizes[4] = {s.batch, s.heads, c.seq, c.headDim};
  return {denseDescriptor<4>(in.qBytes.data(), sizes),
          denseDescriptor<4>(in.kBytes.data(), sizes),
          denseDescriptor<4>(in.vBytes.data(), sizes),
          denseDescriptor<4>(in.outBytes.data(), sizes)};
}

Inputs makeInputs(const Setting &s, const BenchCase &c) {
  int64_t n = s.batch * s.heads * c.seq * c.headDim;
  Inputs in;
  in.q.resize(n);
  in.k.resize(n);
  in.v.resize(n);
  for (int64_t i = 0; i < n; ++i) {
    in.q[i] = std::sin(0.37 * i);
    in.k[i] = std::cos(0.11 * i);
    in.v[i] = std::sin(0.05 * i + 1);
  }
  auto store = [&](const std::vector<float> &values,
                   std::vector<unsigned char> &bytes) {
    bytes.resize(n * s.elementBytes());
    for (int64_t i = 0; i < n; ++i) {
      if (s.gpu) {
        uint16_t h = toBf16(values[i]);
        std::memcpy(&bytes[i * 2], &h, 2);
      } else {
        std::memcpy(&bytes[i * 4], &values[i], 4);
      }
    }
  };
  store(in.q, in.qBytes);
  store(in.k, in.kBytes);
  store(in.v, in.vBytes);
  in.outBytes.resize(n * s.elementBytes());
  return in;
}

/// Visible (query, key) pairs of a region case at `seq` positions.
double regionPairs(const RegionCase &r, int64_t seq) {
  if (r.document) {
    std::vector<int32_t> ids = documentIds(seq, r.shift);
    double pairs = 0, run = 1;
    for (int64_t i = 1; i <= seq; ++i) {
      if (i == seq || ids[i] != ids[i - 1]) {
        pairs += run * run;
        run = 0;
      }
      ++run;
    }
    return pairs;
  }
  return std::strlen(r.mask) ? seq * (seq + 1) / 2.0
                             : static_cast<double>(seq) * seq;
}

/// A call of the main table's f32 function of case `c`, on its own inputs:
/// the baseline a variant is measured next to.
std::function<void()> f32Call(const Setting &setting, void *handle,
                              const BenchCase &c) {
  auto entry = reinterpret_cast<void (*)(void *, void *, void *, void *)>(
      dlsym(handle, ("_mlir_ciface_" + c.name()).c_str()));
  auto in = std::make_shared<Inputs>(makeInputs(setting, c));
  auto o = std::make_shared<Operands>(describe(*in, setting, c));
  return [entry, in, o] { entry(&o->q, &o->k, &o->v, &o->out); };
}

/// Best seconds of `a` and of `b`, measured in alternation (5 rounds after
/// a warm-up): on a shared machine, two rates taken a minute apart can
/// differ by more than the effect being measured.
std::pair<double, double> alternateBest(const std::function<void()> &a,
                                        const std::function<void()> &b) {
  a();
  b();
  double ta = 1e30, tb = 1e30;
  for (int round = 0; round < 5; ++round) {
    ta = std::min(ta, best(1, a));
    tb = std::min(tb, best(1, b));
  }
  return {ta, tb};
}

/// The mask_mod / score_mod table: each case's rate on the pairs it leaves
/// visible, against the structured case of the same shape measured in
/// alternation with it.
bool runRegions(const Setting &setting, void *handle, const std::string &lib,
                double peakGflops) {
  int64_t seq = regionSeq(setting), d = 128;
  std::printf("\nmask_mod / score_mod regions, S_local=%lld D=%lld; the rate "
              "counts the pairs the mask leaves (8 documents: S^2/8)\n",
              (long long)seq, (long long)d);
  std::printf("%-18s %10s %9s %8s %-9s %12s\n", "case", "time_ms", "GFLOP/s",
              "of_peak", "vs", "rate_ratio");
  using P = void *;
  for (const RegionCase &r : regionCases()) {
    std::string symbol = regionSymbol(setting, r);
    auto fn = dlsym(handle, ("_mlir_ciface_" + symbol).c_str());
    if (!fn) {
      std::fprintf(stderr, "cp-bench-attention: %s not in %s\n", symbol.c_str(),
                   lib.c_str());
      return false;
    }
    BenchCase shape{seq, d, std::strlen(r.mask) > 0};
    Inputs in = makeInputs(setting, shape);
    Operands o = describe(in, setting, shape);
    std::vector<int32_t> ids = documentIds(seq, r.shift);
    int64_t segSizes[1] = {seq};
    auto dseg = denseDescriptor<1>(ids.data(), segSizes);
    std::function<void()> call;
    if (r.document)
      call = [&] {
        reinterpret_cast<void (*)(P, P, P, P, P)>(fn)(&o.q, &o.k, &o.v, &dseg,
                                                      &o.out);
      };
    else
      call = [&] {
        reinterpret_cast<void (*)(P, P, P, P)>(fn)(&o.q, &o.k, &o.v, &o.out);
      };
    BenchCase base{seq, d, std::string(r.baseline) == "causal"};
    auto [t, baseTime] = alternateBest(call, f32Call(setting, handle, base));
    double rate =
        4.0 * d * regionPairs(r, seq) * setting.batch * setting.heads / t / 1e9;
    double baseRate = usefulFlops(setting, base) / baseTime / 1e9;
    std::printf("%-18s %10.2f %9.1f %7.1f%% %-9s %11.2fx\n", r.name, t * 1e3,
                rate, 100 * rate / peakGflops, r.baseline, baseRate / rate);
  }
  std::printf("rate_ratio: the structured case's rate over this one's (1.00x: "
              "the regions cost nothing; target <= 1.3x)\n");
  return true;
}

/// The bf16 table: bf16 Q, K, V and output, computed by widening to f32
/// FMAs (the default) and, from `dotLib` (compiled with bf16-dot=true), by
/// AVX512-BF16 dot products, each against the f32 case of the same shape
/// measured in alternation with it.
bool runBf16(const Setting &setting, void *handle, const std::string &dotLib) {
  void *dotHandle = nullptr;
  if (!dotLib.empty() && !(dotHandle = dlopen(dotLib.c_str(), RTLD_NOW))) {
    std::fprintf(stderr, "cp-bench-attention: %s\n", dlerror());
    return false;
  }
  std::printf("\nbf16 storage (f32 accumulation), against f32 at the same "
              "shape\n");
  std::printf("%-8s %-5s %-7s %-22s %10s %9s %9s\n", "S_local", "D", "mask",
              "products", "time_ms", "GFLOP/s", "vs_f32");
  using Entry = void (*)(void *, void *, void *, void *);
  for (const BenchCase &c : bf16Cases(setting)) {
    std::function<void()> f32 = f32Call(setting, handle, c);
    Setting bf16 = setting;
    bf16.gpu = true; // makeInputs: bf16 bytes
    Inputs in = makeInputs(bf16, c);
    Operands o = describe(in, setting, c);
    std::string symbol = "_mlir_ciface_" + c.name() + "_bf16";
    for (auto [lib, label] : {std::pair(handle, "widened to f32 FMAs"),
                              std::pair(dotHandle, "vdpbf16ps (bf16-dot)")}) {
      if (!lib)
        continue;
      auto entry = reinterpret_cast<Entry>(dlsym(lib, symbol.c_str()));
      if (!entry) {
        std::fprintf(stderr, "cp-bench-attention: %s not found\n",
                     symbol.c_str());
        return false;
      }
      auto [t, f32Time] =
          alternateBest([&] { entry(&o.q, &o.k, &o.v, &o.out); }, f32);
      std::printf("%-8lld %-5lld %-7s %-22s %10.2f %9.1f %8.2fx\n",
                  (long long)c.seq, (long long)c.headDim,
                  c.causal ? "causal" : "none", label, t * 1e3,
                  usefulFlops(setting, c) / t / 1e9, f32Time / t);
    }
  }
  if (!dotHandle)
    std::printf("(no --bf16-dot-lib: the dot-product kernel was not "
                "measured)\n");
  return true;
}

/// The backward table: cp.local_attention_grad (given the forward's output
/// and lse) next to the forward with lse at the same shape.
bool runGrad(const Setting &setting, void *handle, const std::string &lib,
             double peakGflops) {
  std::printf("\nbackward (cp.local_attention_grad), FA2 backward FLOPs the "
              "mask leaves (10 D per visible pair)\n");
  std::printf("%-8s %-5s %-7s %10s %9s %8s %12s %9s\n", "S_local", "D", "mask",
              "time_ms", "GFLOP/s", "of_peak", "fwd_GFLOP/s", "bwd/fwd");
  using P = void *;
  for (const BenchCase &c : gradCases(setting)) {
    auto fwd = reinterpret_cast<void (*)(P, P, P, P, P)>(
        dlsym(handle, ("_mlir_ciface_fwd_" + c.name()).c_str()));
    auto grad = reinterpret_cast<void (*)(P, P, P, P, P, P, P, P, P)>(
        dlsym(handle, ("_mlir_ciface_grad_" + c.name()).c_str()));
    if (!fwd || !grad) {
      std::fprintf(stderr, "cp-bench-attention: %s's backward not in %s\n",
                   c.name().c_str(), lib.c_str());
      return false;
    }
    Inputs in = makeInputs(setting, c);
    int64_t n = setting.batch * setting.heads * c.seq * c.headDim;
    std::vector<float> o(n), lse(setting.batch * setting.heads * c.seq),
        gradOut(n), dq(n), dk(n), dv(n);
    for (int64_t i = 0; i < n; ++i)
      gradOut[i] = std::sin(0.21 * i + 2);
    int64_t sizes[4] = {setting.batch, setting.heads, c.seq, c.headDim};
    auto dQ = denseDescriptor<4>(in.qBytes.data(), sizes);
    auto dK = denseDescriptor<4>(in.kBytes.data(), sizes);
    auto dV = denseDescriptor<4>(in.vBytes.data(), sizes);
    auto dO = denseDescriptor<4>(o.data(), sizes);
    auto dLse = denseDescriptor<3>(lse.data(), sizes);
    auto dG = denseDescriptor<4>(gradOut.data(), sizes);
    auto dDq = denseDescriptor<4>(dq.data(), sizes);
    auto dDk = denseDescriptor<4>(dk.data(), sizes);
    auto dDv = denseDescriptor<4>(dv.data(), sizes);
    fwd(&dQ, &dK, &dV, &dO, &dLse);
    double tf = best(3, [&] { fwd(&dQ, &dK, &dV, &dO, &dLse); });
    grad(&dQ, &dK, &dV, &dO, &dLse, &dG, &dDq, &dDk, &dDv); // warm-up
    double tb =
        best(3, [&] { grad(&dQ, &dK, &dV, &dO, &dLse, &dG, &dDq, &dDk, &dDv); });
    double rate = usefulGradFlops(setting, c) / tb / 1e9;
    std::printf("%-8lld %-5lld %-7s %10.2f %9.1f %7.1f%% %12.1f %8.2fx\n",
                (long long)c.seq, (long long)c.headDim,
                c.causal ? "causal" : "none", tb * 1e3, rate,
                100 * rate / peakGflops,
                usefulFlops(setting, c) / tf / 1e9, tb / tf);
  }
  return true;
}

} // namespace

int main(int argc, char **argv) {
  std::string lib, dotLib;
  bool naive = true, gpu = false, emit = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--emit-mlir")
      emit = true;
    else if (a == "--lib" && i + 1 < argc)
      lib = argv[++i];
    else if (a == "--bf16-dot-lib" && i + 1 < argc)
      dotLib = argv[++i];
    else if (a == "--no-naive")
      naive = false;
    else if (a == "--device" && i + 1 < argc)
      gpu = std::string(argv[++i]) == "gpu";
    else {
      std::fprintf(stderr,
                   "usage: cp-bench-attention [--device cpu|gpu] "
                   "(--emit-mlir | --lib FILE.so [--bf16-dot-lib FILE.so] "
                   "[--no-naive])\n");
      return 2;
    }
  }
  Setting setting = settingFor(gpu);
  if (emit) {
    emitMlir(setting);
    return 0;
  }
  if (lib.empty()) {
    std::fprintf(stderr, "cp-bench-attention: give --emit-mlir or --lib\n");
    return 2;
  }
  void *handle = dlopen(lib.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!handle) {
    std::fprintf(stderr, "cp-bench-attention: %s\n", dlerror());
    return 1;
  }
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  if (const char *env = std::getenv("OMP_NUM_THREADS"))
    threads = std::max(1, std::atoi(env));
  double peakGflops = 0;
  // FlashAttention-3's published H200 bf16 rates at d = 128, non-causal
  // and causal (CP_GPU_ANCHOR_TFLOPS="none,causal" for another chip): the
  // anchor the tensor-core kernel is measured against.
  double anchorNone = 646, anchorCausal = 616;
  if (gpu) {
    const char *env = std::getenv("CP_GPU_PEAK_TFLOPS");
    peakGflops = (env ? std::atof(env) : 989.0) * 1e3;
    std::printf("GPU dense bf16 peak (CP_GPU_PEAK_TFLOPS, spec): %.0f "
                "TFLOP/s\n",
                peakGflops / 1e3);
    if (const char *anchors = std::getenv("CP_GPU_ANCHOR_TFLOPS"))
      std::sscanf(anchors, "%lf,%lf", &anchorNone, &anchorCausal);
    std::printf("of_FA3 is against FlashAttention-3 at d = 128 "
                "(CP_GPU_ANCHOR_TFLOPS): %.0f none, %.0f causal TFLOP/s\n",
                anchorNone, anchorCausal);
    naive = false;
  } else {
    // The ceilings of this run (MachinePeaks.h): the f32 FMA peak with the
    // widest vector ISA the CPU has and with 256-bit vectors, the higher
    // of the two being the machine's f32 peak (a CPU with one 512-bit FMA
    // port per core, or a lower AVX-512 clock, runs zmm no faster than
    // ymm), bf16 dot products and memory bandwidth.
    cp::bench::Peak widest = cp::bench::f32FmaPeak(threads);
    cp::bench::Peak narrow = cp::bench::f32Fma256Peak(threads);
    std::printf("f32 FMA peak, %s, %u threads: %.1f GFLOP/s\n",
                widest.isa.c_str(), threads, widest.gflops);
    if (narrow.isa != widest.isa)
      std::printf("f32 FMA peak, %s, %u threads: %.1f GFLOP/s (zmm/ymm "
                  "%.2fx)\n",
                  narrow.isa.c_str(), threads, narrow.gflops,
                  widest.gflops / narrow.gflops);
    const cp::bench::Peak &ceiling =
        widest.gflops >= narrow.gflops ? widest : narrow;
    peakGflops = ceiling.gflops;
    std::printf("of_peak is against the higher: %.1f GFLOP/s (%s)\n",
                ceiling.gflops, ceiling.isa.c_str());
    if (std::optional<cp::bench::Peak> bf16 = cp::bench::bf16DotPeak(threads))
      std::printf("bf16 dot-product peak, %s, %u threads: %.1f GFLOP/s "
                  "(%.2fx the f32 peak)\n",
                  bf16->isa.c_str(), threads, bf16->gflops,
                  bf16->gflops / ceiling.gflops);
    else
      std::printf("bf16 dot-product peak: no AVX512_BF16 on this CPU\n");
    std::printf("memory bandwidth, triad, %u threads: %.1f GB/s\n", threads,
                cp::bench::triadBandwidthGBs(threads));
  }
  std::printf("local attention, B=%lld H=%lld, %s; the rate counts the "
              "FLOPs the mask leaves (causal: about half)\n",
              (long long)setting.batch, (long long)setting.heads, setting.type);
  const char *unit = gpu ? "TFLOP/s" : "GFLOP/s";
  double scale = gpu ? 1e12 : 1e9;
  std::printf("%-8s %-5s %-7s %10s %9s %8s %12s %9s\n", "S_local", "D", "mask",
              "time_ms", unit, "of_peak",
              naive ? "naive_GFLOP/s" : (gpu ? "of_FA3" : ""),
              naive ? "speedup" : "");
  double noneTime = 0;
  for (const BenchCase &c : cases(setting)) {
    Inputs in = makeInputs(setting, c);
    auto entry = reinterpret_cast<void (*)(void *, void *, void *, void *)>(
        dlsym(handle, ("_mlir_ciface_" + c.name()).c_str()));
    if (!entry) {
      std::fprintf(stderr, "cp-bench-attention: %s not in %s\n",
                   c.name().c_str(), lib.c_str());
      return 1;
    }
    Operands o = describe(in, setting, c);
    std::optional<DeviceMirror> device;
    if (gpu) {
      device.emplace();
      for (auto *d : {&o.q, &o.k, &o.v, &o.out})
        device->mirror(*d, in.qBytes.size());
      device->synchronize();
    }
    entry(&o.q, &o.k, &o.v, &o.out); // warm-up
    double t = best(3, [&] { entry(&o.q, &o.k, &o.v, &o.out); });
    double rate = usefulFlops(setting, c) / t / scale;
    std::string naiveRate, speedup;
    if (gpu) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.1f%%",
                    100 * rate / (c.causal ? anchorCausal : anchorNone));
      naiveRate = buf;
    }
    if (naive) {
      double tn = naiveSeconds(setting, c, in.q, in.k, in.v, threads);
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.1f",
                    usefulFlops(setting, c) / tn / 1e9);
      naiveRate = buf;
      std::snprintf(buf, sizeof buf, "%.1fx", tn / t);
      speedup = buf;
    }
    std::printf("%-8lld %-5lld %-7s %10.2f %9.1f %7.1f%% %12s %9s\n",
                (long long)c.seq, (long long)c.headDim,
                c.causal ? "causal" : "none", t * 1e3, rate,
                100 * rate * scale / 1e9 / peakGflops, naiveRate.c_str(),
                speedup.c_str());
    if (!c.causal)
      noneTime = t;
    else
      std::printf("%-8s %-5s %-7s causal is %.2fx faster than none\n", "", "",
                  "", noneTime / t);
  }
  if (!gpu)
    return runBf16(setting, handle, dotLib) &&
                   runRegions(setting, handle, lib, peakGflops) &&
                   runGrad(setting, handle, lib, peakGflops)
               ? 0
               : 1;
  return 0;
}
