//===- LowerBufferAttentions.cpp - the attention lowerings' driver --------===//
//
// Collects the ops first: lowering one inserts loops that a walk would
// otherwise visit, and several ops may share one mod function, which is
// erased only once none of them names it.
//
//===----------------------------------------------------------------------===//

#include "cp/Conversion/AttentionCommon/LowerBufferAttentions.h"
#include "cp/Conversion/AttentionCommon/ModFunctions.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::cp;

LogicalResult mlir::cp::lowerBufferAttentions(
    Operation *root,
    function_ref<LogicalResult(BufferLocalAttentionOp)> lowerOne) {
  SmallVector<BufferLocalAttentionOp> ops;
  root->walk([&](BufferLocalAttentionOp op) { ops.push_back(op); });
  llvm::SetVector<func::FuncOp> modFunctions;
  for (BufferLocalAttentionOp op : ops)
    for (func::FuncOp f : {op.getMaskModFunction(), op.getScoreModFunction()})
      if (f)
        modFunctions.insert(f);
  for (BufferLocalAttentionOp op : ops)
    if (failed(verifyModFunctionBodies(op)))
      return failure();
  for (BufferLocalAttentionOp op : ops) {
    if (failed(lowerOne(op)))
      return failure();
    op.erase();
  }
  for (func::FuncOp f : modFunctions) {
    Operation *symbolTable = f->getParentWithTrait<OpTrait::SymbolTable>();
    if (symbolTable && SymbolTable::symbolKnownUseEmpty(f, symbolTable))
      f.erase();
  }
  return success();
}
