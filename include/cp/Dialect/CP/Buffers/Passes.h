//===- Passes.h - cp buffer passes ------------------------------*- C++ -*-===//
//
// Passes over bufferized cp (cp.buffer.* ops): sharing local attention
// kernels, overlapping and packing collectives, freeing buffers early.
//
//===----------------------------------------------------------------------===//

#ifndef CP_DIALECT_CP_BUFFERS_PASSES_H
#define CP_DIALECT_CP_BUFFERS_PASSES_H

#include "cp/Dialect/CP/IR/CPDialect.h"
#include "cp/Dialect/CP/IR/SchemeOption.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
namespace cp {

#define GEN_PASS_DECL
#include "cp/Dialect/CP/Buffers/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "cp/Dialect/CP/Buffers/Passes.h.inc"

} // namespace cp
} // namespace mlir

#endif // CP_DIALECT_CP_BUFFERS_PASSES_H
