//===- HostData.h - cp-run-attention's inputs and masks ---------*- C++ -*-===//
//
// What every rank builds the same from global positions alone: Q, K, V and
// the explicit masks in the storage type, the segment ids, and the masks and
// score transforms the reference applies.
//
//===----------------------------------------------------------------------===//

#ifndef CP_TOOLS_CPRUNATTENTION_HOSTDATA_H
#define CP_TOOLS_CPRUNATTENTION_HOSTDATA_H

#include "RunConfig.h"

#include <cstdint>
#include <vector>

namespace cp::run {

/// A value in [-1, 1) for element `index` of tensor `id`.
double uniform(uint64_t id, uint64_t index);

/// A tensor in the storage type, with its values as seen by the compiled
/// code (after rounding) in double for the reference.
struct HostTensor {
  std::vector<int64_t> shape;
  std::vector<unsigned char> bytes;
  std::vector<double> values;
  int64_t elementBytes = 4;

  int64_t size() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
};

/// A zero tensor of `shape` in `type`.
HostTensor makeTensor(std::vector<int64_t> shape, ElementType type);
/// Element `i` of `t` := `value` rounded to `type`; its value for the
/// reference is the rounded one.
void store(HostTensor &t, int64_t i, double value, ElementType type);
/// Element `i` of `t`'s bytes, read as `type` (what the program wrote).
double load(const HostTensor &t, int64_t i, ElementType type);

/// Explicit masks as functions of global positions. Some rows see nothing,
/// so fully masked rows are always exercised.
bool explicitAllows(int64_t h, int64_t q, int64_t k);
double explicitBias(int64_t q, int64_t k);

/// Segment ids of the global sequence for document masks: non-decreasing,
/// documents of 1 to ~60 tokens.
std::vector<int32_t> segmentIds(int64_t length);

/// What the case's score_mod does to a scaled score, in double.
double modifiedScore(const Case &c, int64_t heads, double score, int64_t h,
                     int64_t q, int64_t k);

/// The derivative of modifiedScore with respect to the score.
double modifiedScoreSlope(const Case &c, double score);

/// Whether the structured mask of `c` lets query `q` see key `k`.
bool structuredAllows(const Case &c, int64_t q, int64_t k);

} // namespace cp::run

#endif // CP_TOOLS_CPRUNATTENTION_HOSTDATA_H
