//===- Passes.h - cp dialect passes -----------------------------*- C++ -*-===//
//
// Declarations and registration of the cp dialect's passes.
//
//===----------------------------------------------------------------------===//

#ifndef CP_DIALECT_CP_TRANSFORMS_PASSES_H
#define CP_DIALECT_CP_TRANSFORMS_PASSES_H

#include "cp/Dialect/CP/IR/CPDialect.h"
#include "cp/Dialect/CP/IR/SchemeOption.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
namespace cp {

#define GEN_PASS_DECL
#include "cp/Dialect/CP/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "cp/Dialect/CP/Transforms/Passes.h.inc"

} // namespace cp
} // namespace mlir

#endif // CP_DIALECT_CP_TRANSFORMS_PASSES_H
