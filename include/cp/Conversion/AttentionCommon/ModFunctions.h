//===- ModFunctions.h - mod functions in the attention lowerings -*- C++
//-*-===//
//
// What the CPU and GPU lowerings of cp.buffer.local_attention need of the
// mask_mod / score_mod functions the op names: the functions, what the
// mask_mod is known to be, a check of their bodies, and their bodies
// emitted inline at each score.
//
//===----------------------------------------------------------------------===//

#ifndef CP_CONVERSION_ATTENTIONCOMMON_MODFUNCTIONS_H
#define CP_CONVERSION_ATTENTIONCOMMON_MODFUNCTIONS_H

#include "cp/Dialect/CP/IR/CPOps.h"
#include "cp/Dialect/CP/IR/ModRegions.h"
#include "mlir/IR/Builders.h"

namespace mlir::cp {

/// The mod functions of one cp.buffer.local_attention, what the mask_mod
/// is known to be, and the op's structured mask narrowed by it.
struct ModFunctions {
  func::FuncOp maskMod, scoreMod;
  MaskModAnalysis analysis;
  MaskAttr mask;
  /// The mask_mod must be evaluated per element (`mask` does not say it
  /// all).
  bool evaluatesMaskMod() const { return maskMod && !analysis.onlyStructured; }
};
ModFunctions modFunctionsOf(BufferLocalAttentionOp op);
ModFunctions modFunctionsOf(BufferLocalAttentionGradOp op);

/// Emits the body of a mod function at `b`'s insertion point with `args`
/// for its arguments and returns the value it returns.
Value emitModFunction(OpBuilder &b, func::FuncOp function, ValueRange args);

/// Emits the body of a score_mod function like emitModFunction, together
/// with its derivative with respect to the score (args[0]), forward mode:
/// returns (value, derivative). The body must pass
/// verifyDifferentiableScoreMod. With `width` > 0 the body runs on that
/// many lanes (emitModFunctionOnLanes; vector args vary between lanes) and
/// both results are vectors.
std::pair<Value, Value> emitScoreModWithDerivative(OpBuilder &b,
                                                   func::FuncOp function,
                                                   ValueRange args,
                                                   int64_t width = 0);

/// verifyModFunction with the body rules on both functions `op` names: the
/// lowerings' check before they inline them. The gradient's score_mod must
/// also be differentiable.
LogicalResult verifyModFunctionBodies(BufferLocalAttentionOp op);
LogicalResult verifyModFunctionBodies(BufferLocalAttentionGradOp op);

} // namespace mlir::cp

#endif // CP_CONVERSION_ATTENTIONCOMMON_MODFUNCTIONS_H
