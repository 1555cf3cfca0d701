//===- ModFunctionLanes.h - mod functions on vector lanes -------*- C++ -*-===//
//
// A mask_mod or score_mod body evaluated for a vector of scores at once
// instead of once per score: values that differ between the lanes become
// vectors (the score, the query position and what is computed from them),
// values that do not (batch, head, the key position, constants) stay
// scalars and are broadcast where a vector op needs them. Reads of a mod
// operand at a position that differs between lanes become a vector.gather
// (a unit-stride last dimension) or one scalar load per lane.
//
//===----------------------------------------------------------------------===//

#ifndef CP_CONVERSION_ATTENTIONCOMMON_MODFUNCTIONLANES_H
#define CP_CONVERSION_ATTENTIONCOMMON_MODFUNCTIONLANES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::cp {

/// Whether every op of `function`'s body can run on lanes when the
/// arguments marked in `varying` differ between lanes: elementwise arith
/// and math ops and memref.load of a mod operand. Anything else keeps the
/// per-score evaluation.
bool canEmitOnLanes(func::FuncOp function, ArrayRef<bool> varying);

/// `v` on `width` lanes: itself when it is a vector, else broadcast.
Value lanesOf(OpBuilder &b, Location loc, Value v, int64_t width);

/// Emits one op of a mod body with its operands looked up in `mapping` and
/// maps its results: a clone when every operand is a scalar, else the op on
/// `width` lanes (scalar operands broadcast; a memref.load as a gather).
void emitOpOnLanes(OpBuilder &b, Location loc, Operation &op,
                   IRMapping &mapping, int64_t width);

/// Emits `function`'s body at `b`'s insertion point with `args` for its
/// arguments; a vector argument (of `width` lanes) is varying, a scalar one
/// the same for every lane. Returns the result as a vector of `width`
/// lanes. `function` must pass canEmitOnLanes. Every lane must evaluate
/// positions inside the operands' bounds: lanes that stand for no score
/// repeat a valid lane's positions.
Value emitModFunctionOnLanes(OpBuilder &b, Location loc, func::FuncOp function,
                             ValueRange args, int64_t width);

} // namespace mlir::cp

#endif // CP_CONVERSION_ATTENTIONCOMMON_MODFUNCTIONLANES_H
