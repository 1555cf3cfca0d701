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

} // namespace mlir::cp::detail

#endif // CP_LIB_DIALECT_CP_TRANSFORMS_BUFFERROOTS_H
