//===- CPOps.h - cp dialect operations --------------------------*- C++ -*-===//
//
// Declares the cp dialect operations.
//
//===----------------------------------------------------------------------===//

#ifndef CP_DIALECT_CP_IR_CPOPS_H
#define CP_DIALECT_CP_IR_CPOPS_H

#include "cp/Dialect/CP/IR/CPDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "cp/Dialect/CP/IR/CPOps.h.inc"

#endif // CP_DIALECT_CP_IR_CPOPS_H
