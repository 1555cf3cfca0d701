//===- Passes.h - cp scheme passes ------------------------------*- C++ -*-===//
//
// How a sharded cp.attention becomes collectives and local attention:
// cp-choose-scheme, cp-outline-attention-layers and cp-apply-scheme.
//
//===----------------------------------------------------------------------===//

#ifndef CP_DIALECT_CP_SCHEMES_PASSES_H
#define CP_DIALECT_CP_SCHEMES_PASSES_H

#include "cp/Dialect/CP/IR/CPDialect.h"
#include "cp/Dialect/CP/IR/SchemeOption.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
namespace cp {

#define GEN_PASS_DECL
#include "cp/Dialect/CP/Schemes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "cp/Dialect/CP/Schemes/Passes.h.inc"

} // namespace cp
} // namespace mlir

#endif // CP_DIALECT_CP_SCHEMES_PASSES_H
