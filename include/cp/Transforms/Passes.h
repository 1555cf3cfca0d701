//===- Passes.h - passes over upstream dialects -----------------*- C++ -*-===//
//
// Declarations and registration of the pipeline steps that touch only
// upstream dialects (cp-approximate-math, cp-export-c-interface,
// cp-map-parallel-loops-to-gpu, cp-place-buffers-on-gpu).
//
//===----------------------------------------------------------------------===//

#ifndef CP_TRANSFORMS_PASSES_H
#define CP_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
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
#include "cp/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "cp/Transforms/Passes.h.inc"

} // namespace cp
} // namespace mlir

#endif // CP_TRANSFORMS_PASSES_H
