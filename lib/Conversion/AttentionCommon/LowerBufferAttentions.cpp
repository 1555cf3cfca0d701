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

#include <type_traits>

using namespace mlir;
using namespace mlir::cp;

LogicalResult mlir::cp::lowerBufferAttentions(
    Operation *root,
    function_ref<LogicalResult(BufferLocalAttentionOp)> lowerOne,
    function_ref<LogicalResult(BufferLocalAttentionGradOp)> lowerGrad) {
  SmallVector<Operation *> ops;
  root->walk([&](Operation *op) {
    if ((lowerOne && isa<BufferLocalAttentionOp>(op)) ||
        (lowerGrad && isa<BufferLocalAttentionGradOp>(op)))
      ops.push_back(op);
  });
  llvm::SetVector<func::FuncOp> modFunctions;
  auto collect = [&](auto op) {
    for (func::FuncOp f : {op.getMaskModFunction(), op.getScoreModFunction()})
      if (f)
        modFunctions.insert(f);
    return verifyModFunctionBodies(op);
  };
  // `fn` on `op` as the buffer attention op it is.
  auto visit = [](Operation *op, auto &&fn) -> LogicalResult {
    if (auto forward = dyn_cast<BufferLocalAttentionOp>(op))
      return fn(forward);
    return fn(cast<BufferLocalAttentionGradOp>(op));
  };
  for (Operation *op : ops)
    if (failed(visit(op, collect)))
      return failure();
  auto lower = [&](auto op) -> LogicalResult {
    if constexpr (std::is_same_v<decltype(op), BufferLocalAttentionOp>)
      return lowerOne(op);
    else
      return lowerGrad(op);
  };
  for (Operation *op : ops) {
    if (failed(visit(op, lower)))
      return failure();
    op->erase();
  }
  for (func::FuncOp f : modFunctions) {
    Operation *symbolTable = f->getParentWithTrait<OpTrait::SymbolTable>();
    if (symbolTable && SymbolTable::symbolKnownUseEmpty(f, symbolTable))
      f.erase();
  }
  return success();
}
