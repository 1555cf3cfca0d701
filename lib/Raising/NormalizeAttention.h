//===- NormalizeAttention.h - front-end attention forms, normalized -*- C++ -*-===//
//
// Rewrites that bring the attention other front ends emit into the forms
// AttentionMatcher accepts, each exact (the rewritten IR computes the same
// values): batched matmuls over reshaped operands lifted to the operands'
// rank, reshapes that return to their source dropped, keepdim row
// statistics reduced without their unit dim, unused results of generics
// (torch's argmax) dropped, plus the canonicalization and folding of the
// dialects involved (tosa.add of zeros, tosa.reciprocal of a constant).
// docs/Raising.md ("Normalization") lists them.
//
//===----------------------------------------------------------------------===//

#ifndef CP_LIB_DIALECT_CP_TRANSFORMS_NORMALIZEATTENTION_H
#define CP_LIB_DIALECT_CP_TRANSFORMS_NORMALIZEATTENTION_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/MapVector.h"

#include <string>

namespace mlir {
namespace cp {

/// How often each normalization applied, by a short name of the source
/// form ("batch matmul over reshapes", "keepdim statistic", ...).
using NormalizationLog = llvm::MapVector<StringRef, unsigned>;

/// Normalizes the attention forms under `root` (a function) in place.
/// Fails only when the rewrite driver does not converge.
LogicalResult normalizeAttentionForms(Operation *root,
                                      NormalizationLog *log = nullptr);

/// The operand `add` repeats when it is a broadcast written as an add of
/// float zeros of the result's shape to a narrower operand of the same
/// rank (what front ends write for GQA); null otherwise.
Value repeatedByAddOfZeros(Operation *add);

/// "batch matmul over reshapes x2, keepdim statistic x1" (empty when
/// nothing applied).
std::string describe(const NormalizationLog &log);

} // namespace cp
} // namespace mlir

#endif // CP_LIB_DIALECT_CP_TRANSFORMS_NORMALIZEATTENTION_H
