//===- ModFunctionLanes.cpp - mod functions on vector lanes ---------------===//

#include "cp/Conversion/AttentionCommon/ModFunctionLanes.h"
#include "cp/Dialect/CP/IR/ModRegions.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace mlir::cp;

/// An op that computes lane by lane: an elementwise arith or math op on
/// scalars.
static bool isLaneOp(Operation &op) {
  Dialect *dialect = op.getDialect();
  StringRef name = dialect ? dialect->getNamespace() : StringRef();
  return (name == "arith" || name == "math") && op.getNumRegions() == 0 &&
         op.hasTrait<OpTrait::Elementwise>() &&
         llvm::all_of(op.getOperandTypes(),
                      [](Type t) { return t.isIntOrIndexOrFloat(); }) &&
         llvm::all_of(op.getResultTypes(),
                      [](Type t) { return t.isIntOrIndexOrFloat(); });
}

bool mlir::cp::canEmitOnLanes(func::FuncOp function, ArrayRef<bool> varying) {
  Block &body = function.getBody().front();
  llvm::DenseSet<Value> differs;
  for (auto [arg, isVarying] : llvm::zip(body.getArguments(), varying))
    if (isVarying)
      differs.insert(arg);
  for (Operation &op : body.without_terminator()) {
    if (llvm::none_of(op.getOperands(),
                      [&](Value v) { return differs.contains(v); }))
      continue; // The same on every lane: emitted once, as a scalar.
    auto load = dyn_cast<memref::LoadOp>(op);
    if (load ? differs.contains(load.getMemref()) : !isLaneOp(op))
      return false;
    for (Value result : op.getResults())
      differs.insert(result);
  }
  return true;
}

/// `memref[indices]` on every lane, where some indices are vectors.
static Value loadOnLanes(OpBuilder &b, Location loc, Value memref,
                         ValueRange indices, int64_t width) {
  auto type = cast<MemRefType>(memref.getType());
  auto resultType = VectorType::get({width}, type.getElementType());
  auto isLanes = [](Value v) { return isa<VectorType>(v.getType()); };
  // Only the last index differs, over a unit-stride dimension: a gather
  // (each lane's index offsets that dimension from the other indices).
  if (llvm::none_of(indices.drop_back(), isLanes) &&
      type.isLastDimUnitStride()) {
    SmallVector<Value> offsets(indices.drop_back());
    offsets.push_back(arith::ConstantIndexOp::create(b, loc, 0));
    Value all = arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(VectorType::get({width}, b.getI1Type()), true));
    Value none = arith::ConstantOp::create(b, loc, b.getZeroAttr(resultType));
    return vector::GatherOp::create(b, loc, resultType, memref, offsets,
                                    indices.back(), all, none);
  }
  // Otherwise one scalar load per lane.
  SmallVector<Value> elements;
  for (int64_t lane = 0; lane < width; ++lane) {
    SmallVector<Value> at;
    for (Value index : indices)
      at.push_back(
          isLanes(index)
              ? vector::ExtractOp::create(b, loc, index, lane).getResult()
              : index);
    elements.push_back(memref::LoadOp::create(b, loc, memref, at));
  }
  return vector::FromElementsOp::create(b, loc, resultType, elements);
}

Value mlir::cp::lanesOf(OpBuilder &b, Location loc, Value v, int64_t width) {
  if (isa<VectorType>(v.getType()))
    return v;
  return vector::BroadcastOp::create(b, loc,
                                     VectorType::get({width}, v.getType()), v);
}

void mlir::cp::emitOpOnLanes(OpBuilder &b, Location loc, Operation &op,
                             IRMapping &mapping, int64_t width) {
  auto isLanes = [](Value v) { return isa<VectorType>(v.getType()); };
  SmallVector<Value> operands = llvm::map_to_vector(
      op.getOperands(), [&](Value v) { return mapping.lookup(v); });
  if (llvm::none_of(operands, isLanes)) {
    b.clone(op, mapping);
    return;
  }
  if (auto load = dyn_cast<memref::LoadOp>(op)) {
    mapping.map(load.getResult(),
                loadOnLanes(b, loc, operands.front(),
                            ArrayRef(operands).drop_front(), width));
    return;
  }
  // The same op on vectors: scalar operands broadcast, results widened.
  SmallVector<Value> lanes = llvm::map_to_vector(
      operands, [&](Value v) { return lanesOf(b, loc, v, width); });
  Operation *copy = b.clone(op, mapping);
  copy->setOperands(lanes);
  for (Value result : copy->getResults())
    result.setType(VectorType::get({width}, result.getType()));
}

Value mlir::cp::emitModFunctionOnLanes(OpBuilder &b, Location loc,
                                       func::FuncOp function, ValueRange args,
                                       int64_t width) {
  Block &body = function.getBody().front();
  IRMapping mapping;
  mapping.map(body.getArguments(), args);
  for (Operation &op : body.without_terminator())
    emitOpOnLanes(b, loc, op, mapping, width);
  return lanesOf(b, loc, mapping.lookup(modBodyResult(body)), width);
}
