//===- ForwardKernelCommon.h - what both GPU forward kernels share -*- C++ -*-//
//
// The SIMT kernel (LowerLocalAttentionToGPU.cpp) and the tensor-core kernel
// (MmaAttentionKernel.cpp) differ in which thread holds which (row, key);
// this is what they share:
//
//  - the host values a launch needs (lengths, KV group, scale);
//  - what is done to one score once Q.K is known: the score_mod, the
//    mask_mod where it says more than the structured mask, the structured
//    mask on tiles it cuts, an explicit boolean mask or additive bias, and
//    the bounds of the tile;
//  - a row's end: 1 / l (0 for a row that saw no key) and its lse.
//
//===----------------------------------------------------------------------===//

#ifndef CP_LIB_CONVERSION_CPTOGPU_FORWARDKERNELCOMMON_H
#define CP_LIB_CONVERSION_CPTOGPU_FORWARDKERNELCOMMON_H

#include "cp/Conversion/AttentionCommon/ModFunctions.h"
#include "cp/Dialect/CP/IR/CPOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::cp::detail {

/// Host values of a forward launch: the query and key lengths, query heads
/// per KV head, and the softmax scale (the op's, else 1/sqrt(D)) as f32.
struct ForwardShape {
  Value lq, lkv, kvGroup, scale;
};
ForwardShape forwardShapeOf(OpBuilder &b, Location loc,
                            BufferLocalAttentionOp op);

/// The end of a row whose online softmax ended at max `m` and sum `l`:
/// the factor of its output (1 / l, 0 when it saw no key) and its lse
/// (m + log l, -inf when it saw no key).
struct RowEnd {
  Value inverseSum, lse;
};
RowEnd rowEnd(OpBuilder &b, Location loc, Value m, Value l);

/// The tile a score belongs to and what its masks need.
struct ScoreTile {
  mutable BufferLocalAttentionOp op;
  const ModFunctions *mods;
  Value batch, head;
  /// The head as the mod functions see it (head offset added).
  Value globalHead;
  /// The tile's first query and key: local indices into Q and K/V, and
  /// global positions.
  Value q0, qFirst, k0, kFirst;
  /// i1, true where the structured mask cuts this tile (null: it cuts no
  /// tile).
  Value cut;

  /// Whether some score of a full tile the structured mask does not cut
  /// still needs work beyond the scale (mods, explicit mask or bias).
  bool masksEveryTile() const;

  /// The score of (q0 + row, k0 + key) after the score_mod, masks and bias:
  /// -inf where the pair is not allowed or out of bounds (`rowValid`,
  /// `keyValid`). Mod functions see in-bounds positions only: an
  /// out-of-bounds row or key evaluates them at the tile's first one.
  Value apply(OpBuilder &b, Location loc, Value score, Value row, Value key,
              Value rowValid, Value keyValid) const;
};

} // namespace mlir::cp::detail

#endif // CP_LIB_CONVERSION_CPTOGPU_FORWARDKERNELCOMMON_H
