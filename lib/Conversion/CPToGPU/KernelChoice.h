//===- KernelChoice.h - which GPU attention kernel a pass emits -*- C++ -*-===//
//
// Both GPU attention lowerings (the forward's and the backward's) take the
// same `kernel` and `chip` options: simt, mma (mma.sync tensor cores, sm_80
// and newer) or auto (mma where the chip and the op allow it). The options'
// rules, their diagnostics and the chip's workgroup-memory limit are here,
// once.
//
//===----------------------------------------------------------------------===//

#ifndef CP_LIB_CONVERSION_CPTOGPU_KERNELCHOICE_H
#define CP_LIB_CONVERSION_CPTOGPU_KERNELCHOICE_H

#include "mlir/IR/Operation.h"

namespace mlir::cp::detail {

/// simt; mma (the tensor-core kernel where an op allows it, a remark where
/// it does not); autoMma (the same without remarks).
enum class KernelChoice { simt, mma, autoMma };

struct KernelOptions {
  KernelChoice choice;
  /// The chip's compute capability (sm_90a: 90).
  int64_t capability;
};

/// Parses `kernel` and `chip`; on a bad value, an error on `root` that names
/// `pass`, the value and what is accepted.
FailureOr<KernelOptions> parseKernelOptions(Operation *root, StringRef pass,
                                            StringRef kernel, StringRef chip);

/// The most dynamic workgroup memory one block may opt into on a chip of
/// compute `capability` (CUDA's per-block maximum: 227 KiB on sm_90, 163 KiB
/// on sm_80 and sm_87, 99 KiB on sm_86, sm_89 and sm_120).
int64_t maxDynamicSharedBytes(int64_t capability);

} // namespace mlir::cp::detail

#endif // CP_LIB_CONVERSION_CPTOGPU_KERNELCHOICE_H
