//===- ForwardKernelCommon.h - what both GPU forward kernels share -*- C++ -*-//
//
// The SIMT kernel (LowerLocalAttentionToGPU.cpp) and the tensor-core kernel
// (MmaAttentionKernel.cpp) differ in which thread holds which (row, key);
// this is what they share:
//
//  - the host values a launch needs (lengths, KV group, scale);
//  - a row's end: 1 / l (0 for a row that saw no key) and its lse.
//
// What is done to one score once Q.K is known is ScoreTile.h's, shared
// with the backward.
//
//===----------------------------------------------------------------------===//

#ifndef CP_LIB_CONVERSION_CPTOGPU_FORWARDKERNELCOMMON_H
#define CP_LIB_CONVERSION_CPTOGPU_FORWARDKERNELCOMMON_H

#include "cp/Conversion/AttentionCommon/ModFunctions.h"
#include "cp/Dialect/CP/IR/CPOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::cp::detail {

/// Host values of a forward launch: the query and key lengths, query heads
/// per KV head, and the softmax scale (the op's, else 1/sqrt(D)) as f32.
struct ForwardShape {
  Value lq, lkv, kvGroup, scale;
};
ForwardShape forwardShapeOf(OpBuilder &b, Location loc,
                            BufferLocalAttentionOp op);

/// The end of a row whose online softmax ended at max `m` and sum `l`:
/// the factor of its output (1 / l, 0 when it saw no key) and its lse
/// (m + log l, -inf when it saw no key). With the row's `sink` logit, the
/// sink joins the sum once first: m' = max(m, sink), l' = l exp(m - m') +
/// exp(sink - m'), the factor exp(m - m') / l' and the lse m' + log l'.
struct RowEnd {
  Value inverseSum, lse;
};
RowEnd rowEnd(OpBuilder &b, Location loc, Value m, Value l,
              Value sink = Value());

} // namespace mlir::cp::detail

#endif // CP_LIB_CONVERSION_CPTOGPU_FORWARDKERNELCOMMON_H
