//===- cp-bench-attention.cpp - local attention throughput ----------------===//
//
// Measures the compiled cp.local_attention (tiled online softmax) against
// two baselines in the same run: the machine's FMA peak, probed with
// independent AVX2 FMA chains on every core, and the naive full-score
// attention of ReferenceAttention.h. Like cp-run-attention it first emits
// the IR it measures (--emit-mlir), which bench/run.sh compiles with
// cp-compile; then it loads the result (--lib) and prints figures.
//
//===----------------------------------------------------------------------===//

#include "../tools/cp-run-attention/ReferenceAttention.h"

#include <dlfcn.h>
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

struct BenchCase {
  int64_t seq, headDim;
  bool causal;
  std::string name() const {
    return "la_s" + std::to_string(seq) + "_d" + std::to_string(headDim) +
           (causal ? "_causal" : "_none");
  }
};

constexpr int64_t kBatch = 1, kHeads = 4;

std::vector<BenchCase> cases() {
  std::vector<BenchCase> all;
  for (int64_t s : {1024, 2048, 4096})
    for (int64_t d : {64, 128})
      for (bool causal : {false, true})
        all.push_back({s, d, causal});
  return all;
}

void emitMlir() {
  std::printf("// cp-bench-attention: local attention, B=%lld H=%lld, f32\n",
              (long long)kBatch, (long long)kHeads);
  for (const BenchCase &c : cases()) {
    std::string t = "tensor<" + std::to_string(kBatch) + "x" +
                    std::to_string(kHeads) + "x" + std::to_string(c.seq) + "x" +
                    std::to_string(c.headDim) + "xf32>";
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
}

double seconds() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// Peak f32 FMA rate of all cores: each thread runs 12 independent
/// 8-lane FMA chains (enough to cover FMA latency times throughput). The
/// best of three runs, since the machines are shared.
double fmaPeakOnce(unsigned threads) {
  constexpr int64_t kIterations = 40'000'000;
  auto work = [](float *sink) {
    __m256 acc[12];
    for (int i = 0; i < 12; ++i)
      acc[i] = _mm256_set1_ps(static_cast<float>(i));
    const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
    for (int64_t it = 0; it < kIterations; ++it)
      for (int i = 0; i < 12; ++i)
        acc[i] = _mm256_fmadd_ps(acc[i], a, b);
    __m256 sum = acc[0];
    for (int i = 1; i < 12; ++i)
      sum = _mm256_add_ps(sum, acc[i]);
    *sink = _mm256_cvtss_f32(sum);
  };
  std::vector<float> sinks(threads);
  double start = seconds();
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back(work, &sinks[t]);
  for (std::thread &t : pool)
    t.join();
  double elapsed = seconds() - start;
  return threads * kIterations * 12.0 * 8 * 2 / elapsed / 1e9;
}

double fmaPeakGflops(unsigned threads) {
  double peak = 0;
  for (int run = 0; run < 3; ++run)
    peak = std::max(peak, fmaPeakOnce(threads));
  return peak;
}

template <int R> struct Descriptor {
  float *allocated, *aligned;
  int64_t offset, sizes[R], strides[R];
};

Descriptor<4> describe(std::vector<float> &data, int64_t s, int64_t d) {
  return {data.data(),
          data.data(),
          0,
          {kBatch, kHeads, s, d},
          {kHeads * s * d, s * d, d, 1}};
}

/// Dense-equivalent attention FLOPs (QK^T and PV, 2 per multiply-add) and
/// the FLOPs a causal mask leaves.
double denseFlops(const BenchCase &c) {
  return 4.0 * kBatch * kHeads * c.seq * c.seq * c.headDim;
}
double usefulFlops(const BenchCase &c) {
  return c.causal ? 4.0 * kBatch * kHeads * c.headDim * c.seq * (c.seq + 1) / 2
                  : denseFlops(c);
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
double naiveSeconds(const BenchCase &c, const std::vector<float> &q,
                    const std::vector<float> &k, const std::vector<float> &v,
                    unsigned threads) {
  std::vector<float> out(q.size());
  int64_t s = c.seq, d = c.headDim;
  return best(1, [&] {
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        for (int64_t h = t; h < kHeads; h += threads) {
          cp::reference::Shape one{1, 1, 1, s, s, d, d};
          int64_t off = h * s * d;
          cp::reference::attention<float>(
              one, q.data() + off, k.data() + off, v.data() + off,
              out.data() + off, 0, s, 1.0f / std::sqrt(float(d)),
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

} // namespace

int main(int argc, char **argv) {
  std::string lib;
  bool naive = true;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--emit-mlir") {
      emitMlir();
      return 0;
    }
    if (a == "--lib" && i + 1 < argc)
      lib = argv[++i];
    else if (a == "--no-naive")
      naive = false;
    else {
      std::fprintf(stderr, "usage: cp-bench-attention --emit-mlir | --lib "
                           "FILE.so [--no-naive]\n");
      return 2;
    }
  }
  if (lib.empty()) {
    std::fprintf(stderr, "cp-bench-attention: give --emit-mlir or --lib\n");
    return 2;
  }
  void *handle = dlopen(lib.c_str(), RTLD_NOW);
  if (!handle) {
    std::fprintf(stderr, "cp-bench-attention: %s\n", dlerror());
    return 1;
  }
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  if (const char *env = std::getenv("OMP_NUM_THREADS"))
    threads = std::max(1, std::atoi(env));
  double peak = fmaPeakGflops(threads);
  std::printf("FMA peak (f32, AVX2, %u threads): %.1f GFLOP/s\n", threads,
              peak);
  std::printf("local attention, B=%lld H=%lld, f32; GFLOP/s counts the "
              "FLOPs the mask leaves (causal: about half)\n",
              (long long)kBatch, (long long)kHeads);
  std::printf("%-8s %-5s %-7s %10s %9s %8s %12s %9s\n", "S_local", "D", "mask",
              "time_ms", "GFLOP/s", "of_peak", "naive_GFLOP/s", "speedup");
  std::vector<double> noneTime(cases().size(), 0);
  size_t index = 0;
  for (const BenchCase &c : cases()) {
    int64_t n = kBatch * kHeads * c.seq * c.headDim;
    std::vector<float> q(n), k(n), v(n), out(n);
    for (int64_t i = 0; i < n; ++i) {
      q[i] = std::sin(0.37 * i);
      k[i] = std::cos(0.11 * i);
      v[i] = std::sin(0.05 * i + 1);
    }
    auto entry = reinterpret_cast<void (*)(void *, void *, void *, void *)>(
        dlsym(handle, ("_mlir_ciface_" + c.name()).c_str()));
    if (!entry) {
      std::fprintf(stderr, "cp-bench-attention: %s not in %s\n",
                   c.name().c_str(), lib.c_str());
      return 1;
    }
    auto dq = describe(q, c.seq, c.headDim), dk = describe(k, c.seq, c.headDim),
         dv = describe(v, c.seq, c.headDim),
         dout = describe(out, c.seq, c.headDim);
    entry(&dq, &dk, &dv, &dout); // warm-up
    double t = best(3, [&] { entry(&dq, &dk, &dv, &dout); });
    double gflops = usefulFlops(c) / t / 1e9;
    std::string naiveRate = "-", speedup = "-";
    if (naive) {
      double tn = naiveSeconds(c, q, k, v, threads);
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.1f", usefulFlops(c) / tn / 1e9);
      naiveRate = buf;
      std::snprintf(buf, sizeof buf, "%.1fx", tn / t);
      speedup = buf;
    }
    std::printf("%-8lld %-5lld %-7s %10.2f %9.1f %7.1f%% %12s %9s\n",
                (long long)c.seq, (long long)c.headDim,
                c.causal ? "causal" : "none", t * 1e3, gflops,
                100 * gflops / peak, naiveRate.c_str(), speedup.c_str());
    if (!c.causal)
      noneTime[index] = t;
    else
      std::printf("%-8s %-5s %-7s causal is %.2fx faster than none\n", "", "",
                  "", noneTime[index - 1] / t);
    ++index;
  }
  return 0;
}
