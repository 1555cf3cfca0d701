//===- KernelOperands.cpp - the operand types kernels are built for -------===//

#include "cp/Dialect/CP/IR/KernelOperands.h"
#include "cp/Dialect/CP/IR/CPOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

Type cp::withDynamicOffset(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref)
    return type;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(memref.getStridesAndOffset(strides, offset)))
    return type;
  auto layout = StridedLayoutAttr::get(type.getContext(), ShapedType::kDynamic,
                                       strides);
  return MemRefType::get(memref.getShape(), memref.getElementType(), layout,
                         memref.getMemorySpace());
}

SmallVector<Type> cp::kernelOperandTypes(Operation *op) {
  OperandRange modOperands =
      isa<BufferLocalAttentionOp>(op)
          ? cast<BufferLocalAttentionOp>(op).getModOperands()
          : cast<BufferLocalAttentionGradOp>(op).getModOperands();
  unsigned modBegin = modOperands.empty() ? op->getNumOperands()
                                          : modOperands.getBeginOperandIndex();
  unsigned modEnd = modBegin + modOperands.size();
  SmallVector<Type> types;
  for (OpOperand &operand : op->getOpOperands()) {
    unsigned index = operand.getOperandNumber();
    Type type = operand.get().getType();
    bool isModOperand = index >= modBegin && index < modEnd;
    types.push_back(isModOperand ? type : withDynamicOffset(type));
  }
  return types;
}

void cp::castToKernelOperandTypes(OpBuilder &b, Operation *op) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(op);
  for (auto [operand, type] :
       llvm::zip_equal(op->getOpOperands(), kernelOperandTypes(op)))
    if (operand.get().getType() != type)
      operand.set(
          memref::CastOp::create(b, op->getLoc(), type, operand.get()));
}
