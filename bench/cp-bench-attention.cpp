//===- cp-bench-attention.cpp - local attention throughput ----------------===//
//
// Measures the compiled cp.local_attention and its backward
// cp.local_attention_grad against baselines in the same run. On CPU
// (default): f32, against the ceilings MachinePeaks.h measures (the widest
// FMA the CPU has, bf16 dot products, memory bandwidth), and the naive
// full-score attention of ReferenceAttention.h. On GPU (--device gpu, a program
// from cp-compile --target=nvvm): bf16, next to the device's dense bf16 peak
// (CP_GPU_PEAK_TFLOPS, default the H200's 989). Like cp-run-attention it
// first emits the IR it measures (--emit-mlir), which bench/run.sh (or
// scripts/gpu-artifacts.sh) compiles; then it loads the result (--lib) and
// prints figures.
//
//===----------------------------------------------------------------------===//

#include "BenchCases.h"
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
using namespace cp::bench;

namespace {

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
  }
  emitGradMlir(s);
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
    Inputs in = makeInputs(setting, c, /*bf16=*/true);
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

/// Which tables a run prints (--tables forward,bf16,regions,backward).
struct Tables {
  bool forward = true, bf16 = true, regions = true, backward = true;
  /// Keeps only the comma-separated `list`; false on an unknown name.
  bool parse(const std::string &list) {
    forward = bf16 = regions = backward = false;
    size_t start = 0;
    while (start <= list.size()) {
      size_t end = std::min(list.find(',', start), list.size());
      std::string name = list.substr(start, end - start);
      if (name == "forward")
        forward = true;
      else if (name == "bf16")
        bf16 = true;
      else if (name == "regions")
        regions = true;
      else if (name == "backward")
        backward = true;
      else
        return false;
      start = end + 1;
    }
    return true;
  }
};

/// The forward table: every case of cases(), against the naive baseline
/// (CPU) or FlashAttention-3 (GPU).
bool runForward(const Setting &setting, void *handle, const std::string &lib,
                double peakGflops, bool naive, unsigned threads,
                double anchorNone, double anchorCausal) {
  bool gpu = setting.gpu;
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
    if (c.seq > setting.maxLength)
      continue;
    Inputs in = makeInputs(setting, c);
    auto entry = reinterpret_cast<void (*)(void *, void *, void *, void *)>(
        dlsym(handle, ("_mlir_ciface_" + c.name()).c_str()));
    if (!entry) {
      std::fprintf(stderr, "cp-bench-attention: %s not in %s\n",
                   c.name().c_str(), lib.c_str());
      return false;
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
  return true;
}

} // namespace

int main(int argc, char **argv) {
  std::string lib, dotLib;
  bool naive = true, gpu = false, emit = false;
  int64_t maxLength = 0;
  Tables tables;
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
    else if (a == "--max-length" && i + 1 < argc)
      maxLength = std::atoll(argv[++i]);
    else if (a == "--device" && i + 1 < argc)
      gpu = std::string(argv[++i]) == "gpu";
    else if (a == "--tables" && i + 1 < argc && tables.parse(argv[i + 1]))
      ++i;
    else {
      std::fprintf(stderr,
                   "usage: cp-bench-attention [--device cpu|gpu] "
                   "(--emit-mlir | --lib FILE.so [--bf16-dot-lib FILE.so] "
                   "[--no-naive] [--max-length S] "
                   "[--tables forward,bf16,regions,backward])\n");
      return 2;
    }
  }
  Setting setting = settingFor(gpu);
  if (maxLength > 0)
    setting.maxLength = maxLength;
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
  if (tables.forward && !runForward(setting, handle, lib, peakGflops, naive,
                                    threads, anchorNone, anchorCausal))
    return 1;
  if (gpu)
    return !tables.backward || runGrad(setting, handle, lib, peakGflops) ? 0
                                                                         : 1;
  bool ok = (!tables.bf16 || runBf16(setting, handle, dotLib)) &&
            (!tables.regions || runRegions(setting, handle, lib, peakGflops)) &&
            (!tables.backward || runGrad(setting, handle, lib, peakGflops));
  return ok ? 0 : 1;
}
