//===- RingSchedule.cpp - where ring and zigzag blocks sit ----------------===//

#include "cp/Dialect/CP/Analysis/RingSchedule.h"
#include "cp/Dialect/CP/Analysis/StructuredMask.h"

using namespace mlir;
using namespace mlir::cp;

int64_t RingSchedule::chunkStart(int64_t rank, int64_t chunk) const {
  if (!zigzag)
    return rank * localLen;
  return (chunk == 0 ? rank : 2 * groupSize - 1 - rank) * chunkRows();
}

int64_t RingSchedule::sourceOf(int64_t rank, int64_t step) const {
  return ((rank - step) % groupSize + groupSize) % groupSize;
}

RingSchedule::Visibility RingSchedule::visibility(MaskAttr mask, int64_t step,
                                                  int64_t qc,
                                                  int64_t kc) const {
  if (!mask || mask.isNone())
    return Visibility::always;
  if (groupSize > kExactRanks)
    return Visibility::depends;
  int64_t rows = chunkRows();
  bool any = false, all = true;
  for (int64_t r = 0; r < groupSize; ++r) {
    int64_t q0 = chunkStart(r, qc), k0 = chunkStart(sourceOf(r, step), kc);
    bool visible =
        !mask || blockIsVisible(mask, q0, q0 + rows - 1, k0, k0 + rows - 1);
    any |= visible;
    all &= visible;
  }
  return all   ? Visibility::always
         : any ? Visibility::depends
               : Visibility::never;
}

int64_t RingSchedule::shiftsNeeded(MaskAttr mask) const {
  // Without a mask every step is visible; under causal too, on the rank
  // whose queries come last (ring: rank P-1 sees block 0 at step P-1;
  // zigzag: chunk 2P-1-r comes after every chunk a source can hold).
  if (!mask || mask.getKind() != MaskKind::sliding_window ||
      groupSize > kExactRanks)
    return groupSize - 1;
  int64_t last = 0;
  for (int64_t step = 1; step < groupSize; ++step)
    for (int64_t qc = 0; qc < chunks(); ++qc)
      for (int64_t kc = 0; kc < chunks(); ++kc)
        if (visibility(mask, step, qc, kc) != Visibility::never)
          last = step;
  return last;
}
