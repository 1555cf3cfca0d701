//===- ModFunctions.cpp - mod functions in the attention lowerings --------===//
//
// The mod functions a cp.buffer.local_attention names, checked and emitted
// inline by the CPU and GPU lowerings.
//
//===----------------------------------------------------------------------===//

#include "cp/Conversion/AttentionCommon/ModFunctions.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::cp;

ModFunctions mlir::cp::modFunctionsOf(BufferLocalAttentionOp op) {
  ModFunctions mods;
  mods.maskMod = op.getMaskModFunction();
  mods.scoreMod = op.getScoreModFunction();
  mods.analysis = analyzeMaskMod(mods.maskMod);
  mods.mask =
      intersectMasks(op.getContext(), op.getMask(), mods.analysis.structured);
  return mods;
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

LogicalResult mlir::cp::verifyModFunctionBodies(BufferLocalAttentionOp op) {
  if (func::FuncOp f = op.getMaskModFunction())
    if (failed(verifyModFunction(op, f, /*isMask=*/true, op.getModOperands())))
      return failure();
  if (func::FuncOp f = op.getScoreModFunction())
    if (failed(verifyModFunction(op, f, /*isMask=*/false, op.getModOperands())))
      return failure();
  return success();
}
