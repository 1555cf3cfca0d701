//===- OpVerification.h - rules the cp op verifiers share -------*- C++ -*-===//
//
// Size comparisons that let dynamic sizes pass, and the process-group check
// behind the verifySymbolUses of every op that names a grid.
//
//===----------------------------------------------------------------------===//

#ifndef CP_LIB_DIALECT_CP_IR_OPVERIFICATION_H
#define CP_LIB_DIALECT_CP_IR_OPVERIFICATION_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::cp::detail {

inline bool isStatic(int64_t size) { return !ShapedType::isDynamic(size); }

/// True when both sizes are known and differ.
inline bool knownDifferent(int64_t a, int64_t b) {
  return isStatic(a) && isStatic(b) && a != b;
}

/// Resolves `grid` and checks `axes` against it. Returns the group size
/// (kDynamic when a named axis is dynamic), or failure after a diagnostic.
FailureOr<int64_t> verifyGroup(Operation *op, FlatSymbolRefAttr gridRef,
                               ArrayRef<int16_t> axes,
                               SymbolTableCollection &symbolTable);

} // namespace mlir::cp::detail

#endif // CP_LIB_DIALECT_CP_IR_OPVERIFICATION_H
