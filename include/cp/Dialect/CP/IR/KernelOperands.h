//===- KernelOperands.h - the operand types kernels are built for -*- C++ -*-===//
//
// A buffer-level local attention (forward or backward) is compiled into a
// kernel for its operand types. Its memrefs are usually views of a larger
// buffer (a zigzag chunk, a ring step's half of a stacked block) whose
// static offsets differ from op to op while nothing else does; a kernel
// built for dynamic offsets serves all of them.
//
//===----------------------------------------------------------------------===//

#ifndef CP_DIALECT_CP_IR_KERNELOPERANDS_H
#define CP_DIALECT_CP_IR_KERNELOPERANDS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Operation.h"

namespace mlir::cp {

/// `type` with a dynamic offset when it is a strided memref (shape, strides,
/// element type and memory space kept); any other type unchanged.
Type withDynamicOffset(Type type);

/// The types a kernel for `op` (a cp.buffer.local_attention or
/// cp.buffer.local_attention_grad) takes its operands as: every memref with
/// a dynamic offset, except the mod operands, which the mask_mod and
/// score_mod functions take as they are.
SmallVector<Type> kernelOperandTypes(Operation *op);

/// Casts (memref.cast, before `op`) every operand of `op` whose type is not
/// its kernel operand type, and makes `op` use the casts.
void castToKernelOperandTypes(OpBuilder &b, Operation *op);

} // namespace mlir::cp

#endif // CP_DIALECT_CP_IR_KERNELOPERANDS_H
