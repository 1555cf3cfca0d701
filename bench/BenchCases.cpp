//===- BenchCases.cpp - cp-bench-attention's shapes, inputs and timing ----===//

#include "BenchCases.h"
#include "cp/TestSupport/Bf16.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

namespace cp::bench {

using cp::tools::denseDescriptor;
using cp::tools::toBf16;

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

double usefulFlops(const Setting &s, const BenchCase &c) {
  double perHead = 4.0 * c.headDim;
  double pairs =
      c.causal ? c.seq * (c.seq + 1) / 2.0 : static_cast<double>(c.seq) * c.seq;
  return perHead * pairs * s.batch * s.heads;
}

double usefulGradFlops(const Setting &s, const BenchCase &c) {
  return usefulFlops(s, c) / (4.0 * c.headDim) * 10.0 * c.headDim;
}

double seconds() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

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

Operands describe(Inputs &in, const Setting &s, const BenchCase &c) {
  int64_t sizes[4] = {s.batch, s.heads, c.seq, c.headDim};
  return {denseDescriptor<4>(in.qBytes.data(), sizes),
          denseDescriptor<4>(in.kBytes.data(), sizes),
          denseDescriptor<4>(in.vBytes.data(), sizes),
          denseDescriptor<4>(in.outBytes.data(), sizes)};
}

Inputs makeInputs(const Setting &s, const BenchCase &c, bool bf16) {
  int64_t n = s.batch * s.heads * c.seq * c.headDim;
  int64_t bytesPer = bf16 ? 2 : 4;
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
    bytes.resize(n * bytesPer);
    for (int64_t i = 0; i < n; ++i) {
      if (bf16) {
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
  in.outBytes.resize(n * bytesPer);
  return in;
}

} // namespace cp::bench
