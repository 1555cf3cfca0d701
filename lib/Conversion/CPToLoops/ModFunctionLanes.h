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

#ifndef CP_LIB_CONVERSION_CPTOLOOPS_MODFUNCTIONLANES_H
#define CP_LIB_CONVERSION_CPTOLOOPS_MODFUNCTIONLANES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::cp::detail {

/// Whether every op of `function`'s body can run on lanes when the
/// arguments marked in `varying` differ between lanes: elementwise arith
/// and math ops and memref.load of a mod operand. Anything else keeps the
/// per-score evaluation.
bool canEmitOnLanes(func::FuncOp function, ArrayRef<bool> varying);

/// Emits `function`'s body at `b`'s insertion point with `args` for its
/// arguments; a vector argument (of `width` lanes) is varying, a scalar one
/// the same for every lane. Returns the result as a vector of `width`
/// lanes. `function` must pass canEmitOnLanes. Every lane must evaluate
/// positions inside the operands' bounds: lanes that stand for no score
/// repeat a valid lane's positions.
Value emitModFunctionOnLanes(OpBuilder &b, Location loc, func::FuncOp function,
                             ValueRange args, int64_t width);

} // namespace mlir::cp::detail

#endif // CP_LIB_CONVERSION_CPTOLOOPS_MODFUNCTIONLANES_H
