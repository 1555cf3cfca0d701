//===- ModFunctions.cpp - mod functions in the attention lowerings --------===//
//
// The mod functions a cp.buffer.local_attention names, checked and emitted
// inline by the CPU and GPU lowerings.
//
//===----------------------------------------------------------------------===//

#include "cp/Conversion/AttentionCommon/ModFunctions.h"
#include "cp/Conversion/AttentionCommon/ModFunctionLanes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::cp;

template <typename BufferAttentionOp>
static ModFunctions modFunctionsOfOp(BufferAttentionOp op) {
  ModFunctions mods;
  mods.maskMod = op.getMaskModFunction();
  mods.scoreMod = op.getScoreModFunction();
  mods.analysis = analyzeMaskMod(mods.maskMod);
  mods.mask =
      intersectMasks(op.getContext(), op.getMask(), mods.analysis.structured);
  return mods;
}

ModFunctions mlir::cp::modFunctionsOf(BufferLocalAttentionOp op) {
  return modFunctionsOfOp(op);
}

ModFunctions mlir::cp::modFunctionsOf(BufferLocalAttentionGradOp op) {
  return modFunctionsOfOp(op);
}

Value mlir::cp::emitModFunction(OpBuilder &b, func::FuncOp function,
                                ValueRange args) {
  Block &body = function.getBody().front();
  IRMapping mapping;
  mapping.map(body.getArguments(), args);
  for (Operation &op : body.without_terminator())
    b.clone(op, mapping);
  return mapping.lookup(modBodyResult(body));
}

template <typename BufferAttentionOp>
static LogicalResult verifyBodies(BufferAttentionOp op) {
  if (func::FuncOp f = op.getMaskModFunction())
    if (failed(verifyModFunction(op, f, /*isMask=*/true, op.getModOperands())))
      return failure();
  if (func::FuncOp f = op.getScoreModFunction())
    if (failed(verifyModFunction(op, f, /*isMask=*/false, op.getModOperands())))
      return failure();
  return success();
}

LogicalResult mlir::cp::verifyModFunctionBodies(BufferLocalAttentionOp op) {
  return verifyBodies(op);
}

LogicalResult mlir::cp::verifyModFunctionBodies(BufferLocalAttentionGradOp op) {
  if (failed(verifyBodies(op)))
    return failure();
  if (func::FuncOp f = op.getScoreModFunction())
    return verifyDifferentiableScoreMod(op, f.getBody().front());
  return success();
}

std::pair<Value, Value>
mlir::cp::emitScoreModWithDerivative(OpBuilder &b, func::FuncOp function,
                                     ValueRange args, int64_t width) {
  Block &body = function.getBody().front();
  IRMapping mapping;
  mapping.map(body.getArguments(), args);
  Location loc = function.getLoc();
  Type f32 = b.getF32Type();
  // On lanes (width > 0) every derivative op works on vectors: its
  // operands are broadcast where they are scalars.
  auto lanes = [&](Value v) {
    return width > 0 ? lanesOf(b, loc, v, width) : v;
  };
  auto constant = [&](double x) {
    return lanes(arith::ConstantOp::create(b, loc, f32, b.getF32FloatAttr(x)));
  };
  // tangent[x] = dx/dscore for the values that depend on the score.
  DenseMap<Value, Value> tangent;
  tangent[body.getArgument(0)] = constant(1.0);
  Value zero;
  auto tangentOf = [&](Value original) -> Value {
    if (Value t = tangent.lookup(original))
      return t;
    if (!zero)
      zero = constant(0.0);
    return zero;
  };
  for (Operation &op : body.without_terminator()) {
    if (width > 0)
      emitOpOnLanes(b, loc, op, mapping, width);
    else
      b.clone(op, mapping);
    if (llvm::none_of(op.getOperands(),
                      [&](Value v) { return tangent.contains(v); }) ||
        isa<arith::CmpFOp>(op))
      continue;
    Location at = op.getLoc();
    auto value = [&](unsigned i) {
      return lanes(mapping.lookup(op.getOperand(i)));
    };
    auto d = [&](unsigned i) { return tangentOf(op.getOperand(i)); };
    auto mul = [&](Value x, Value y) {
      return arith::MulFOp::create(b, at, x, y).getResult();
    };
    Value result = lanes(mapping.lookup(op.getResult(0))), dr;
    if (isa<arith::AddFOp>(op)) {
      dr = arith::AddFOp::create(b, at, d(0), d(1));
    } else if (isa<arith::SubFOp>(op)) {
      dr = arith::SubFOp::create(b, at, d(0), d(1));
    } else if (isa<arith::NegFOp>(op)) {
      dr = arith::NegFOp::create(b, at, d(0));
    } else if (isa<arith::MulFOp>(op)) {
      dr = arith::AddFOp::create(b, at, mul(d(0), value(1)),
                                 mul(value(0), d(1)));
    } else if (isa<arith::DivFOp>(op)) {
      // (x / y)' = (x' - (x / y) y') / y
      Value num = arith::SubFOp::create(b, at, d(0), mul(result, d(1)));
      dr = arith::DivFOp::create(b, at, num, value(1));
    } else if (isa<arith::SelectOp>(op)) {
      dr = arith::SelectOp::create(b, at, mapping.lookup(op.getOperand(0)),
                                   d(1), d(2));
    } else if (isa<arith::MaximumFOp, arith::MinimumFOp>(op)) {
      auto predicate = isa<arith::MaximumFOp>(op) ? arith::CmpFPredicate::OGE
                                                  : arith::CmpFPredicate::OLE;
      Value first =
          arith::CmpFOp::create(b, at, predicate, value(0), value(1));
      dr = arith::SelectOp::create(b, at, first, d(0), d(1));
    } else if (isa<math::ExpOp>(op)) {
      dr = mul(result, d(0));
    } else if (isa<math::TanhOp>(op)) {
      // tanh' = 1 - tanh^2
      Value slope =
          arith::SubFOp::create(b, at, constant(1.0), mul(result, result));
      dr = mul(slope, d(0));
    } else {
      llvm_unreachable("verifyDifferentiableScoreMod admits no other op");
    }
    tangent[op.getResult(0)] = dr;
  }
  Value result = modBodyResult(body);
  return {lanes(mapping.lookup(result)), tangentOf(result)};
}
