//===- HostData.cpp - cp-run-attention's inputs and masks -----------------===//
//
// Hashes of positions, not a random generator, so that every rank computes
// the same global data and its own shard of it with no communication.
//
//===----------------------------------------------------------------------===//

#include "HostData.h"
#include "cp/TestSupport/Bf16.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

namespace cp::run {
using cp::tools::fromBf16;
using cp::tools::toBf16;
namespace {

uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  return x ^ (x >> 33);
}

uint64_t hash(uint64_t a, uint64_t b, uint64_t c, uint64_t d) {
  return mix(mix(mix(mix(a) ^ b) ^ c) ^ d);
}

} // namespace

double uniform(uint64_t id, uint64_t index) {
  return static_cast<double>(hash(id, index, 17, 29) >> 11) * 0x1.0p-52 - 1.0;
}

HostTensor makeTensor(std::vector<int64_t> shape, ElementType type) {
  HostTensor t;
  t.shape = std::move(shape);
  t.elementBytes = type == ElementType::f32 ? 4 : 2;
  t.values.assign(t.size(), 0.0);
  t.bytes.assign(t.size() * t.elementBytes, 0);
  return t;
}

void store(HostTensor &t, int64_t i, double value, ElementType type) {
  float f = static_cast<float>(value);
  if (type == ElementType::f32) {
    std::memcpy(&t.bytes[i * 4], &f, 4);
    t.values[i] = f;
  } else if (type == ElementType::f16) {
    _Float16 h = static_cast<_Float16>(f);
    std::memcpy(&t.bytes[i * 2], &h, 2);
    t.values[i] = static_cast<double>(h);
  } else {
    uint16_t h = toBf16(f);
    std::memcpy(&t.bytes[i * 2], &h, 2);
    t.values[i] = fromBf16(h);
  }
}

double load(const HostTensor &t, int64_t i, ElementType type) {
  if (type == ElementType::f32) {
    float f;
    std::memcpy(&f, &t.bytes[i * 4], 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, &t.bytes[i * 2], 2);
  if (type == ElementType::bf16)
    return fromBf16(h);
  _Float16 x;
  std::memcpy(&x, &h, 2);
  return static_cast<double>(x);
}

bool explicitAllows(int64_t h, int64_t q, int64_t k) {
  if (q % 13 == 7)
    return false;
  return hash(3, h, q, k) % 4 != 0;
}
double explicitBias(int64_t q, int64_t k) {
  uint64_t x = hash(5, 0, q, k);
  if (q % 11 == 4 || x % 9 == 0)
    return -std::numeric_limits<double>::infinity();
  return (static_cast<double>(x % 7) - 3.0) * 0.25;
}

std::vector<int32_t> segmentIds(int64_t length) {
  std::vector<int32_t> ids(length);
  int32_t id = 0;
  for (int64_t i = 0; i < length; ++i) {
    if (i > 0 && hash(7, i, 0, 0) % 23 == 0)
      ++id;
    ids[i] = id;
  }
  return ids;
}

double modifiedScore(const Case &c, int64_t heads, double score, int64_t h,
                     int64_t q, int64_t k) {
  if (c.softcap > 0)
    score = std::tanh(score / c.softcap) * c.softcap;
  if (c.alibi)
    score += std::exp2(-8.0 * (h + 1) / heads) * double(k - q);
  return score;
}

double modifiedScoreSlope(const Case &c, double score) {
  // ALiBi adds a constant; soft-capping is C tanh(s / C).
  if (c.softcap <= 0)
    return 1.0;
  double t = std::tanh(score / c.softcap);
  return 1.0 - t * t;
}

bool structuredAllows(const Case &c, int64_t q, int64_t k) {
  if (c.structured == "causal")
    return k <= q;
  if (c.structured == "window")
    return k <= q && q - c.window < k;
  return true;
}

} // namespace cp::run
