//===- LowerLocalAttentionGradToGPU.h - attention backward kernels -*- C++ -*-//
//
// The GPU lowering of cp.buffer.local_attention_grad, used by
// cp-lower-local-attention-to-gpu.
//
//===----------------------------------------------------------------------===//

#ifndef CP_LIB_CONVERSION_CPTOGPU_LOWERLOCALATTENTIONGRADTOGPU_H
#define CP_LIB_CONVERSION_CPTOGPU_LOWERLOCALATTENTIONGRADTOGPU_H

#include "cp/Dialect/CP/IR/CPOps.h"

namespace mlir::cp {

/// Emits the dK/dV and dQ kernels of `op` before it, as gpu.launch ops of
/// `threadsPerBlock` threads per block (the caller erases `op`). Fails with
/// a diagnostic on the op when D or Dv is dynamic.
LogicalResult lowerLocalAttentionGradToGPU(BufferLocalAttentionGradOp op,
                                           int64_t threadsPerBlock);

} // namespace mlir::cp

#endif // CP_LIB_CONVERSION_CPTOGPU_LOWERLOCALATTENTIONGRADTOGPU_H
