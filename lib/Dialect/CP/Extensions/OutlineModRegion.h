//===- OutlineModRegion.h - mod regions as private functions ---*- C++ -*-===//
//
// Bufferization turns the mask_mod / score_mod regions of
// cp.local_attention into the private functions cp.buffer.local_attention
// names, with the mod operands' tensors read as buffers.
//
//===----------------------------------------------------------------------===//

#ifndef CP_LIB_DIALECT_CP_TRANSFORMS_OUTLINEMODREGION_H
#define CP_LIB_DIALECT_CP_TRANSFORMS_OUTLINEMODREGION_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::cp {

/// Outlines a mod region as a private function next to the function that
/// holds `user`, with arguments of `argTypes` (mod operands as buffers):
/// reads of a tensor argument become memref.load. Returns the function.
func::FuncOp outlineModRegion(OpBuilder &b, Region &from, Operation *user,
                              StringRef name, TypeRange argTypes);

} // namespace mlir::cp

#endif // CP_LIB_DIALECT_CP_TRANSFORMS_OUTLINEMODREGION_H
