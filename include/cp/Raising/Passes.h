//===- Passes.h - cp-mlir raising passes ------------------------*- C++ -*-===//
//
// Attention written by front ends (linalg, tosa, torch-mlir, StableHLO
// forms) raised to cp.attention: cp-normalize-attention and
// cp-raise-attention.
//
//===----------------------------------------------------------------------===//

#ifndef CP_RAISING_PASSES_H
#define CP_RAISING_PASSES_H

#include "cp/Dialect/CP/IR/CPDialect.h"
#include "cp/Dialect/CP/IR/SchemeOption.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
namespace cp {

#define GEN_PASS_DECL
#include "cp/Raising/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "cp/Raising/Passes.h.inc"

} // namespace cp
} // namespace mlir

#endif // CP_RAISING_PASSES_H
