//===- CPDialect.cpp - cp dialect registration ----------------------------===//
//
// Registers the cp dialect's operations, attributes and types.
//
//===----------------------------------------------------------------------===//

#include "cp/Dialect/CP/IR/CPDialect.h"
#include "cp/Dialect/CP/IR/CPOps.h"
#include "cp/Dialect/CP/IR/SchemeDefinition.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::cp;

#include "cp/Dialect/CP/IR/CPOpsDialect.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "cp/Dialect/CP/IR/CPOpsTypes.cpp.inc"

void CPDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "cp/Dialect/CP/IR/CPOpsTypes.cpp.inc"
      >();
}

void CPDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "cp/Dialect/CP/IR/CPOps.cpp.inc"
      >();
  registerAttributes();
  registerTypes();
  // Implemented in CPExtensions
  // (registerBufferizableOpInterfaceExternalModels).
  declarePromisedInterfaces<bufferization::BufferizableOpInterface, AttentionOp,
                            LocalAttentionOp, AllGatherOp, AllToAllOp,
                            ReduceScatterOp, ExchangeOp, ShiftOp, RelayoutOp, MergeOp,
                            OffsetMaskOp>();
}
