//===- NormalizePatterns.h - cp-normalize-attention's patterns -*- C++ -*-===//
//
// The rewrite patterns behind normalizeAttentionForms, in three groups: the
// contractions (NormalizeContractions.cpp), the generics around them
// (NormalizeGenerics.cpp) and broadcasts written as arithmetic
// (NormalizeBroadcasts.cpp). Each pattern counts its applications in the
// NormalizationLog under the name of the source form it rewrites.
//
//===----------------------------------------------------------------------===//

#ifndef CP_LIB_DIALECT_CP_TRANSFORMS_NORMALIZEPATTERNS_H
#define CP_LIB_DIALECT_CP_TRANSFORMS_NORMALIZEPATTERNS_H

#include "NormalizeAttention.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace cp {
namespace normalize {

/// A pattern that records in `log` each time it applies, as `form`.
template <typename Base>
struct Logged : Base {
  Logged(MLIRContext *ctx, NormalizationLog *log, StringRef form)
      : Base(ctx), log(log), form(form) {}
  void record() const {
    if (log)
      ++(*log)[form];
  }
  NormalizationLog *log;
  StringRef form;
};

/// `op` reads `value` through `map` where it read `input`.
inline void readInputAs(PatternRewriter &rewriter, linalg::GenericOp op,
                        OpOperand *input, Value value, AffineMap map) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  maps[input->getOperandNumber()] = map;
  rewriter.modifyOpInPlace(op, [&] {
    input->set(value);
    op.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
  });
}

inline ArrayRef<int64_t> shapeOf(Value v) {
  return cast<ShapedType>(v.getType()).getShape();
}

/// Batched matmuls over reshapes lifted to the reshapes' rank, and reshape
/// round trips dropped.
void populateContractionPatterns(RewritePatternSet &patterns,
                                 NormalizationLog *log);

/// Keepdim statistics, unit-dim reshapes and constant-0 reads, copy and
/// fill generics, unused generic results.
void populateGenericPatterns(RewritePatternSet &patterns,
                             NormalizationLog *log);

/// Broadcasts written as an add of zeros of the wider shape.
void populateBroadcastPatterns(RewritePatternSet &patterns,
                               NormalizationLog *log);

} // namespace normalize
} // namespace cp
} // namespace mlir

#endif // CP_LIB_DIALECT_CP_TRANSFORMS_NORMALIZEPATTERNS_H
