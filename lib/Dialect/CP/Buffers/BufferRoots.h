//===- BufferRoots.h - the buffer a memref value views ----------*- C++ -*-===//
//
// cp-overlap-collectives and cp-free-buffers-early compare buffers by the
// allocation (or block argument) they view, so that a use of any view of a
// buffer counts as a use of the buffer.
//
//===----------------------------------------------------------------------===//

#ifndef CP_LIB_DIALECT_CP_TRANSFORMS_BUFFERROOTS_H
#define CP_LIB_DIALECT_CP_TRANSFORMS_BUFFERROOTS_H

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::cp::detail {

/// The allocation (or block argument) `buffer` is a view of, through views
/// (transposes included) and casts.
inline Value rootBuffer(Value buffer) {
  while (true) {
    if (auto view = buffer.getDefiningOp<ViewLikeOpInterface>())
      buffer = view.getViewSource();
    else if (auto cast = buffer.getDefiningOp<memref::CastOp>())
      buffer = cast.getSource();
    else if (auto transpose = buffer.getDefiningOp<memref::TransposeOp>())
      buffer = transpose.getIn(); // a view, without ViewLikeOpInterface
    else
      return buffer;
  }
}

/// Whether `op` returns a memref that may alias one of its memref operands
/// in a way rootBuffer does not see through (an arith.select of two
/// buffers, a call, an op with regions yielding one).
inline bool makesHiddenAlias(Operation *op) {
  if (isa<ViewLikeOpInterface, memref::CastOp, memref::TransposeOp>(op))
    return false;
  auto isMemRef = [](Value v) { return isa<BaseMemRefType>(v.getType()); };
  return llvm::any_of(op->getResults(), isMemRef) &&
         llvm::any_of(op->getOperands(), isMemRef);
}

/// `buffer` and every value that may view or alias it: results of ops that
/// take one of them and return a memref (views, casts, selects, calls), and
/// results of the ops whose regions yield one.
inline llvm::DenseSet<Value> aliasesOf(Value buffer) {
  llvm::DenseSet<Value> aliases{buffer};
  SmallVector<Value> work{buffer};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (Operation *user : v.getUsers()) {
      Operation *producer = user;
      if (user->hasTrait<OpTrait::IsTerminator>())
        producer = user->getParentOp();
      if (!producer)
        continue;
      for (Value result : producer->getResults())
        if (isa<BaseMemRefType>(result.getType()) &&
            aliases.insert(result).second)
          work.push_back(result);
    }
  }
  return aliases;
}

} // namespace mlir::cp::detail

#endif // CP_LIB_DIALECT_CP_TRANSFORMS_BUFFERROOTS_H
