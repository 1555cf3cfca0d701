//===- StructuredMaskPairs.cpp - the cost model's pair count vs. the mask -===//
//
// The cost model counts visible (query, key) pairs with a closed form
// (countVisiblePairs); the lowerings and the ring schedule decide
// visibility with blockIsVisible. Both state what a #cp.mask allows, so
// this checks, pair by pair, that they agree: for every mask kind, several
// windows, and query blocks at the start, middle and end of the sequence.
// Prints one line per mismatch and a summary; exits 1 on any mismatch.
//
//===----------------------------------------------------------------------===//

#include "cp/Dialect/CP/Analysis/StructuredMask.h"
#include "cp/Dialect/CP/IR/CPDialect.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::cp;

int main() {
  MLIRContext context;
  context.loadDialect<CPDialect>();
  SmallVector<MaskAttr> masks = {MaskAttr::get(&context, MaskKind::none),
                                 MaskAttr::get(&context, MaskKind::causal)};
  for (int64_t window : {1, 2, 3, 7, 16, 63, 64, 65, 200})
    masks.push_back(
        MaskAttr::get(&context, MaskKind::sliding_window, window));

  int cases = 0, mismatches = 0;
  for (int64_t keys : {1, 5, 64, 97, 130})
    for (MaskAttr mask : masks)
      for (int64_t q0 = 0; q0 < keys; q0 += std::max<int64_t>(1, keys / 7))
        for (int64_t rows = 1; q0 + rows <= keys;
             rows += std::max<int64_t>(1, keys / 5)) {
          int64_t counted = 0;
          for (int64_t q = q0; q < q0 + rows; ++q)
            for (int64_t k = 0; k < keys; ++k)
              counted += blockIsVisible(mask, q, q, k, k);
          double formula = countVisiblePairs(mask, q0, rows, keys);
          ++cases;
          if (formula != static_cast<double>(counted)) {
            ++mismatches;
            llvm::outs() << "mismatch: " << mask << " queries [" << q0 << ", "
                         << q0 + rows << ") keys " << keys << ": counted "
                         << counted << ", countVisiblePairs " << formula
                         << "\n";
          }
        }
  llvm::outs() << "structured mask pairs: " << cases << " cases, "
               << mismatches << " mismatches\n";
  return mismatches == 0 ? 0 : 1;
}
