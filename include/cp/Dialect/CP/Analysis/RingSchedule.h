//===- RingSchedule.h - where ring and zigzag blocks sit ---------*- C++
//-*-===//
//
// Ring attention's schedule on known sizes: which global rows each chunk of
// a rank's block holds, whose block a rank holds at each step, and which
// (query chunk, key chunk) pairs a structured mask leaves visible on some
// or every rank. cp-apply-scheme uses it to emit only the pairs and shifts
// that matter; SchemeTraffic and the cost model use it to count them.
//
//===----------------------------------------------------------------------===//

#ifndef CP_DIALECT_CP_ANALYSIS_RINGSCHEDULE_H
#define CP_DIALECT_CP_ANALYSIS_RINGSCHEDULE_H

#include "cp/Dialect/CP/IR/CPDialect.h"

namespace mlir {
namespace cp {

struct RingSchedule {
  /// Groups up to this size are analysed rank by rank (O(P^2) for all
  /// steps); larger ones get the conservative answer (every step shifts, a
  /// masked pair is checked at run time), which is exact for causal.
  static constexpr int64_t kExactRanks = 4096;

  int64_t groupSize; // P
  int64_t localLen;  // L
  bool zigzag;       // two chunks r and 2P-1-r instead of one

  int64_t chunks() const { return zigzag ? 2 : 1; }
  int64_t chunkRows() const { return localLen / chunks(); }
  /// The first global row of chunk `chunk` of rank `rank`'s block.
  int64_t chunkStart(int64_t rank, int64_t chunk) const;
  /// The rank whose K/V block rank `rank` holds at step `step`.
  int64_t sourceOf(int64_t rank, int64_t step) const;

  enum class Visibility { always, never, depends };
  /// Whether query chunk `qc` sees key chunk `kc` at step `step` under
  /// `mask`, on every rank, on none, or on some.
  Visibility visibility(MaskAttr mask, int64_t step, int64_t qc,
                        int64_t kc) const;
  /// The last step that attends anything on some rank: the number of K/V
  /// shifts the schedule needs (P - 1 unless a window hides far blocks).
  int64_t shiftsNeeded(MaskAttr mask) const;
};

} // namespace cp
} // namespace mlir

#endif // CP_DIALECT_CP_ANALYSIS_RINGSCHEDULE_H
