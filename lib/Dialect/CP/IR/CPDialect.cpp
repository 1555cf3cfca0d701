//===- CPDialect.cpp - cp dialect registration ----------------------------===//
//
// Registers the cp dialect's operations and attributes.
//
//===----------------------------------------------------------------------===//

#include "cp/Dialect/CP/IR/CPDialect.h"
#include "cp/Dialect/CP/IR/CPOps.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"

using namespace mlir;
using namespace mlir::cp;

#include "cp/Dialect/CP/IR/CPOpsDialect.cpp.inc"

void CPDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "cp/Dialect/CP/IR/CPOps.cpp.inc"
      >();
  registerAttributes();
  // Implemented in CPTransforms
  // (registerBufferizableOpInterfaceExternalModels).
  declarePromisedInterfaces<bufferization::BufferizableOpInterface, AttentionOp,
                            LocalAttentionOp, AllGatherOp, AllToAllOp,
                            ExchangeOp, ShiftOp, MergeOp, OffsetMaskOp>();
}
