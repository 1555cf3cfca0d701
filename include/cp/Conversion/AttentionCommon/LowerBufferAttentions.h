//===- LowerBufferAttentions.h - the attention lowerings' driver -*- C++
//-*-===//
//
// Both lowerings of cp.buffer.local_attention (CPU loops, GPU kernels) run
// (and its gradient's) the same way: check every op's mod functions, lower each op, erase it,
// then erase the mod functions nothing names any more.
//
//===----------------------------------------------------------------------===//

#ifndef CP_CONVERSION_ATTENTIONCOMMON_LOWERBUFFERATTENTIONS_H
#define CP_CONVERSION_ATTENTIONCOMMON_LOWERBUFFERATTENTIONS_H

#include "cp/Dialect/CP/IR/CPOps.h"

namespace mlir::cp {

/// Lowers every cp.buffer.local_attention under `root` with `lowerOne` and
/// every cp.buffer.local_attention_grad with `lowerGrad`, each building the
/// replacement before the op; the op is then erased. A null lowering leaves
/// its ops (and the mod functions they name) to another pass. Fails, with the
/// diagnostic on the op, when a mod function body is not one the lowerings
/// can inline (or differentiate) or when a lowering fails (ops lowered
/// before it stay lowered).
LogicalResult lowerBufferAttentions(
    Operation *root,
    function_ref<LogicalResult(BufferLocalAttentionOp)> lowerOne,
    function_ref<LogicalResult(BufferLocalAttentionGradOp)> lowerGrad);

} // namespace mlir::cp

#endif // CP_CONVERSION_ATTENTIONCOMMON_LOWERBUFFERATTENTIONS_H
