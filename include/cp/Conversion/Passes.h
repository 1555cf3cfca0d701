//===- Passes.h - cp conversion passes --------------------------*- C++ -*-===//
//
// Declarations and registration of the conversions out of the cp dialect.
//
//===----------------------------------------------------------------------===//

#ifndef CP_CONVERSION_PASSES_H
#define CP_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
namespace cp {

#define GEN_PASS_DECL
#include "cp/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "cp/Conversion/Passes.h.inc"

} // namespace cp
} // namespace mlir

#endif // CP_CONVERSION_PASSES_H
