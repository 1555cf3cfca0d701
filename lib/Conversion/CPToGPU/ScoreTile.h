//===- ScoreTile.h - what a GPU kernel does to one score --------*- C++ -*-===//
//
// Every GPU attention kernel (the SIMT and tensor-core forwards, the
// tensor-core backward) differs in which thread holds which (query, key)
// score; what is done to a score once Q.K is known is the same and lives
// here: the score_mod (with its derivative in a backward), the mask_mod
// where it says more than the structured mask, the structured mask on
// tiles it cuts, an explicit boolean mask or additive bias, and the bounds
// of the tile.
//
//===----------------------------------------------------------------------===//

#ifndef CP_LIB_CONVERSION_CPTOGPU_SCORETILE_H
#define CP_LIB_CONVERSION_CPTOGPU_SCORETILE_H

#include "cp/Conversion/AttentionCommon/ModFunctions.h"
#include "mlir/IR/Builders.h"

namespace mlir::cp::detail {

/// The tile a score belongs to and what its masks need.
struct ScoreTile {
  const ModFunctions *mods;
  /// The op's explicit mask or bias (null: none) and mod operands.
  Value explicitMask;
  ValueRange modOperands;
  Value batch, head;
  /// The head as the mod functions see it (head offset added).
  Value globalHead;
  /// The tile's first query and key: local indices into Q and K/V, and
  /// global positions.
  Value q0, qFirst, k0, kFirst;
  /// i1, true where the structured mask cuts this tile (null: it cuts no
  /// tile).
  Value cut;

  /// The tile of `op` (cp.buffer.local_attention or its gradient).
  template <typename AttentionOp>
  static ScoreTile of(AttentionOp op, const ModFunctions &mods, Value batch,
                      Value head, Value globalHead, Value q0, Value qFirst,
                      Value k0, Value kFirst, Value cut) {
    return {&mods, op.getExplicitMask(), op.getModOperands(), batch, head,
            globalHead, q0,    qFirst,  k0,     kFirst, cut};
  }

  /// Whether some score of a full tile the structured mask does not cut
  /// still needs work beyond the scale (mods, explicit mask or bias).
  bool masksEveryTile() const;

  /// The score of (q0 + row, k0 + key) after the score_mod, masks and bias:
  /// -inf where the pair is not allowed or out of bounds (`rowValid`,
  /// `keyValid`). Mod functions see in-bounds positions only: an
  /// out-of-bounds row or key evaluates them at the tile's first one.
  Value apply(OpBuilder &b, Location loc, Value score, Value row, Value key,
              Value rowValid, Value keyValid) const;

  /// apply, and the score_mod's derivative m'(s) at the score (null
  /// without a score_mod), for a backward's dS = P (dP - D) m'(s).
  std::pair<Value, Value> applyWithSlope(OpBuilder &b, Location loc,
                                         Value score, Value row, Value key,
                                         Value rowValid, Value keyValid) const;

private:
  std::pair<Value, Value> applyImpl(OpBuilder &b, Location loc, Value score,
                                    Value row, Value key, Value rowValid,
                                    Value keyValid, bool withSlope) const;
};

} // namespace mlir::cp::detail

#endif // CP_LIB_CONVERSION_CPTOGPU_SCORETILE_H
