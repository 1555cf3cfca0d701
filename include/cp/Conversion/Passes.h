//===- Passes.h - cp conversion passes --------------------------*- C++ -*-===//
//
// Declarations and registration of the conversions out of the cp dialect:
// the local attention to loops or GPU kernels, collectives to MPI or NCCL.
//
//===----------------------------------------------------------------------===//

#ifndef CP_CONVERSION_PASSES_H
#define CP_CONVERSION_PASSES_H

#include "cp/Dialect/CP/IR/CPDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
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
