//===- KernelChoice.cpp - which GPU attention kernel a pass emits ---------===//

#include "KernelChoice.h"
#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace mlir::cp::detail;

FailureOr<KernelOptions>
mlir::cp::detail::parseKernelOptions(Operation *root, StringRef pass,
                                     StringRef kernel, StringRef chip) {
  // sm_XY or sm_XYa: the compute capability XY.
  int64_t capability = 0;
  StringRef digits = chip.drop_front(3).rtrim('a');
  if (!chip.starts_with("sm_") || digits.getAsInteger(10, capability)) {
    root->emitError(pass) << ": chip must be sm_XY (for example sm_80 or "
                             "sm_90a), got '"
                          << chip << "'";
    return failure();
  }
  bool tensorCores = capability >= 80;
  if (kernel == "simt")
    return KernelOptions{KernelChoice::simt, capability};
  if (kernel == "auto")
    return KernelOptions{
        tensorCores ? KernelChoice::autoMma : KernelChoice::simt, capability};
  if (kernel == "mma") {
    if (tensorCores)
      return KernelOptions{KernelChoice::mma, capability};
    root->emitError(pass) << ": kernel=mma needs sm_80 or newer (cp.async, "
                             "ldmatrix and bf16 mma.sync), got chip="
                          << chip << "; use kernel=simt";
    return failure();
  }
  if (kernel == "wgmma") {
    root->emitError(pass)
        << ": kernel=wgmma (warpgroup MMA with TMA loads, sm_90a) is not "
           "implemented; kernel=mma runs mma.sync tensor cores on sm_90 too "
           "(docs/GPU.md, \"Why no wgmma kernel\")";
    return failure();
  }
  root->emitError(pass) << ": kernel must be auto, simt or mma, got '"
                        << kernel << "'";
  return failure();
}

int64_t mlir::cp::detail::maxDynamicSharedBytes(int64_t capability) {
  if (capability >= 90 && capability < 120)
    return 227 * 1024;
  if (capability == 80 || capability == 87)
    return 163 * 1024;
  return 99 * 1024;
}
