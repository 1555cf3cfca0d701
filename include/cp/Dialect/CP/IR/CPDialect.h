//===- CPDialect.h - cp dialect ---------------------------------*- C++ -*-===//
//
// Declares the cp dialect, its attributes and its enums.
//
//===----------------------------------------------------------------------===//

#ifndef CP_DIALECT_CP_IR_CPDIALECT_H
#define CP_DIALECT_CP_IR_CPDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dialect.h"

#include <memory>
#include <vector>

namespace mlir::cp {
class SchemeDefinition;
} // namespace mlir::cp

#include "cp/Dialect/CP/IR/CPOpsDialect.h.inc"

#include "cp/Dialect/CP/IR/CPEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "cp/Dialect/CP/IR/CPAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "cp/Dialect/CP/IR/CPOpsTypes.h.inc"

#endif // CP_DIALECT_CP_IR_CPDIALECT_H
