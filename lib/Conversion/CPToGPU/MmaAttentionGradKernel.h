//===- MmaAttentionGradKernel.h - tensor-core FlashAttention-2 backward -*- C++
//-*-//
//
// The `kernel=mma` variant of cp-lower-local-attention-grad-to-gpu: the
// backward of cp.buffer.local_attention_grad as FlashAttention-2's kernels
// on mma.sync.m16n8k16 (f16/bf16 in, f32 accumulate). docs/GPU.md, "The
// tensor-core backward", has the design.
//
//===----------------------------------------------------------------------===//

#ifndef CP_LIB_CONVERSION_CPTOGPU_MMAATTENTIONGRADKERNEL_H
#define CP_LIB_CONVERSION_CPTOGPU_MMAATTENTIONGRADKERNEL_H

#include "cp/Dialect/CP/IR/CPOps.h"

#include <string>

namespace mlir::cp::detail {

/// How dQ is computed: by f32 atomics from the dK/dV kernel, or by a second
/// kernel per query tile that recomputes S and dP (deterministic).
enum class GradQueryMode { atomic, recompute };

/// Bytes of dynamic workgroup memory of the dK/dV kernel for head dim `d`
/// and value dim `dv`: the K and V tiles, two stages of Q, dO, lse and
/// D_i, and (atomic dQ) the dS tile.
int64_t mmaGradKernelSharedBytes(int64_t d, int64_t dv, GradQueryMode mode);

/// Why the tensor-core backward cannot lower `op` for a chip of compute
/// `capability`, as a sentence naming the numbers; empty when it can.
std::string mmaGradKernelUnsupportedReason(BufferLocalAttentionGradOp op,
                                           int64_t capability,
                                           GradQueryMode mode);

/// Emits the backward's launches before `op` (the caller erases it). `op`
/// must be supported (mmaGradKernelUnsupportedReason empty).
void lowerLocalAttentionGradToMmaKernels(BufferLocalAttentionGradOp op,
                                         GradQueryMode mode);

} // namespace mlir::cp::detail

#endif // CP_LIB_CONVERSION_CPTOGPU_MMAATTENTIONGRADKERNEL_H
