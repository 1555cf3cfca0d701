//===- OutlineModRegion.cpp - mod regions as private functions ------------===//
//
// The function bufferization makes of a mask_mod / score_mod region: the
// region's body cloned, with tensor reads of mod operands as memref loads.
//
//===----------------------------------------------------------------------===//

#include "OutlineModRegion.h"
#include "cp/Dialect/CP/IR/ModRegions.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;

func::FuncOp mlir::cp::outlineModRegion(OpBuilder &b, Region &from,
                                        Operation *user, StringRef name,
                                        TypeRange argTypes) {
  Block &source = from.front();
  OpBuilder::InsertionGuard guard(b);
  auto within = user->getParentOfType<FunctionOpInterface>();
  auto module = within->getParentWithTrait<OpTrait::SymbolTable>();
  Type result = modBodyResult(source).getType();
  // Built detached, then inserted before `within` under a unique name.
  b.clearInsertionPoint();
  auto function = func::FuncOp::create(b, from.getLoc(), name,
                                       b.getFunctionType(argTypes, {result}));
  function.setPrivate();
  SymbolTable(module).insert(function, within->getIterator());
  if (auto *listener =
          dyn_cast_if_present<OpBuilder::Listener>(b.getListener()))
    listener->notifyOperationInserted(function, /*previous=*/{});
  Block *target = function.addEntryBlock();
  b.setInsertionPointToStart(target);
  IRMapping mapping;
  mapping.map(source.getArguments(), target->getArguments());
  for (Operation &op : source.without_terminator()) {
    // One-shot bufferization may have visited the region's reads first:
    // `to_buffer %arg` is the argument's buffer itself.
    if (op.getName().getStringRef() == "bufferization.to_buffer" &&
        isa<BaseMemRefType>(mapping.lookup(op.getOperand(0)).getType())) {
      mapping.map(op.getResult(0), mapping.lookup(op.getOperand(0)));
      continue;
    }
    auto extract = dyn_cast<tensor::ExtractOp>(op);
    if (extract &&
        isa<BaseMemRefType>(mapping.lookup(extract.getTensor()).getType())) {
      SmallVector<Value> indices;
      for (Value i : extract.getIndices())
        indices.push_back(mapping.lookup(i));
      Value loaded = memref::LoadOp::create(
          b, op.getLoc(), mapping.lookup(extract.getTensor()), indices);
      mapping.map(extract.getResult(), loaded);
      continue;
    }
    b.clone(op, mapping);
  }
  func::ReturnOp::create(b, from.getLoc(),
                         mapping.lookup(modBodyResult(source)));
  return function;
}
