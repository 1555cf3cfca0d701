//===- MmaAttentionKernel.h - tensor-core flash attention -------*- C++ -*-===//
//
// The `kernel=mma` variant of cp-lower-local-attention-to-gpu: the forward
// of cp.buffer.local_attention as one gpu.launch whose Q.K^T and P.V run on
// mma.sync.m16n8k16 (f16/bf16 in, f32 accumulate). docs/GPU.md,
// "The tensor-core kernel", has the design.
//
//===----------------------------------------------------------------------===//

#ifndef CP_LIB_CONVERSION_CPTOGPU_MMAATTENTIONKERNEL_H
#define CP_LIB_CONVERSION_CPTOGPU_MMAATTENTIONKERNEL_H

#include "cp/Dialect/CP/IR/CPOps.h"

#include <string>

namespace mlir::cp::detail {

/// Why the tensor-core kernel cannot lower `op`, as a sentence naming the
/// numbers; empty when it can.
std::string mmaKernelUnsupportedReason(BufferLocalAttentionOp op);

/// Bytes of dynamic workgroup memory the kernel uses for head dim `d` and
/// value dim `dv`: the Q tile and two stages of K and V tiles.
int64_t mmaKernelSharedBytes(int64_t d, int64_t dv);

/// Replaces `op` with the kernel's gpu.launch. `op` must be supported
/// (mmaKernelUnsupportedReason empty).
void lowerLocalAttentionToMmaKernel(BufferLocalAttentionOp op);

} // namespace mlir::cp::detail

#endif // CP_LIB_CONVERSION_CPTOGPU_MMAATTENTIONKERNEL_H
