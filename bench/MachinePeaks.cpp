//===- MachinePeaks.cpp - FMA, bf16 and bandwidth probes ------------------===//
//
// Each kernel is compiled for its ISA with a target attribute and called
// only when the CPU reports that ISA (__builtin_cpu_supports), so the
// benchmark runs on any x86-64 machine. Independent accumulator chains
// cover the FMA latency times its throughput (12 chains for ymm, 24 for
// the 32 zmm registers); the chains are unrolled so that every accumulator
// stays in a register.
//
//===----------------------------------------------------------------------===//

#include "MachinePeaks.h"

#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

namespace cp::bench {
namespace {

constexpr int64_t kIterations = 20'000'000;

double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// Seconds for `threads` threads each running `work` once; best of three.
double bestSeconds(unsigned threads, const std::function<void(float *)> &work) {
  double best = 1e300;
  for (int run = 0; run < 3; ++run) {
    std::vector<float> sinks(threads);
    double start = now();
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back(work, &sinks[t]);
    for (std::thread &t : pool)
      t.join();
    best = std::min(best, now() - start);
  }
  return best;
}

__attribute__((target("avx2,fma"))) void fma256(float *sink) {
  __m256 acc[12];
  for (int i = 0; i < 12; ++i)
    acc[i] = _mm256_set1_ps(static_cast<float>(i));
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (int64_t it = 0; it < kIterations; ++it)
#pragma GCC unroll 12
    for (int i = 0; i < 12; ++i)
      acc[i] = _mm256_fmadd_ps(acc[i], a, b);
  __m256 sum = acc[0];
  for (int i = 1; i < 12; ++i)
    sum = _mm256_add_ps(sum, acc[i]);
  *sink = _mm256_cvtss_f32(sum);
}

/// The sum of 24 zmm accumulators' lanes, so that no chain is dead code.
__attribute__((target("avx512f"))) void storeSum(const __m512 *acc,
                                                 float *sink) {
  __m512 sum = acc[0];
  for (int i = 1; i < 24; ++i)
    sum = _mm512_add_ps(sum, acc[i]);
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, sum);
  float total = 0;
  for (float lane : lanes)
    total += lane;
  *sink = total;
}

__attribute__((target("avx512f"))) void fma512(float *sink) {
  __m512 acc[24];
  for (int i = 0; i < 24; ++i)
    acc[i] = _mm512_set1_ps(static_cast<float>(i));
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (int64_t it = 0; it < kIterations; ++it)
#pragma GCC unroll 24
    for (int i = 0; i < 24; ++i)
      acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  storeSum(acc, sink);
}

__attribute__((target("avx512f,avx512bf16"))) void dpbf16(float *sink) {
  __m512 acc[24];
  for (int i = 0; i < 24; ++i)
    acc[i] = _mm512_set1_ps(static_cast<float>(i));
  const __m512bh a = _mm512_cvtne2ps_pbh(_mm512_set1_ps(0.5f),
                                         _mm512_set1_ps(0.25f));
  const __m512bh b = _mm512_cvtne2ps_pbh(_mm512_set1_ps(1e-7f),
                                         _mm512_set1_ps(1e-7f));
  for (int64_t it = 0; it < kIterations; ++it)
#pragma GCC unroll 24
    for (int i = 0; i < 24; ++i)
      acc[i] = _mm512_dpbf16_ps(acc[i], a, b);
  storeSum(acc, sink);
}

} // namespace

Peak f32Fma256Peak(unsigned threads) {
  double s = bestSeconds(threads, fma256);
  return {"AVX2 (ymm FMA)", threads * kIterations * 12.0 * 8 * 2 / s / 1e9};
}

Peak f32FmaPeak(unsigned threads) {
  if (!__builtin_cpu_supports("avx512f"))
    return f32Fma256Peak(threads);
  double s = bestSeconds(threads, fma512);
  return {"AVX-512F (zmm FMA)",
          threads * kIterations * 24.0 * 16 * 2 / s / 1e9};
}

std::optional<Peak> bf16DotPeak(unsigned threads) {
  if (!__builtin_cpu_supports("avx512bf16"))
    return std::nullopt;
  double s = bestSeconds(threads, dpbf16);
  // Each vdpbf16ps: 16 lanes, 2 products each, a multiply and an add.
  return Peak{"AVX512_BF16 (zmm vdpbf16ps)",
              threads * kIterations * 24.0 * 16 * 2 * 2 / s / 1e9};
}

double triadBandwidthGBs(unsigned threads) {
  constexpr int64_t kElements = 32 << 20; // 3 arrays of 128 MiB
  std::vector<float> a(kElements), b(kElements, 1.0f), c(kElements, 2.0f);
  int64_t chunk = (kElements + threads - 1) / threads;
  double best = 1e300;
  for (int run = 0; run < 3; ++run) {
    double start = now();
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        int64_t begin = t * chunk, end = std::min(kElements, begin + chunk);
        for (int64_t i = begin; i < end; ++i)
          a[i] = b[i] + 3.0f * c[i];
      });
    for (std::thread &t : pool)
      t.join();
    best = std::min(best, now() - start);
  }
  volatile float keep = a[kElements / 2];
  (void)keep;
  return 3.0 * 4 * kElements / best / 1e9;
}

} // namespace cp::bench
