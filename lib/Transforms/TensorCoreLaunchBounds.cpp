//===- TensorCoreLaunchBounds.cpp - registers over occupancy --------------===//
//
// Implements cp-tensor-core-launch-bounds: kernels that issue mma.sync ask
// for one resident block per SM (nvvm.minctasm = 1), so that ptxas does
// not trade their register-held tiles for a third block.
//
//===----------------------------------------------------------------------===//

#include "cp/Transforms/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Builders.h"

namespace mlir {
namespace cp {
#define GEN_PASS_DEF_TENSORCORELAUNCHBOUNDSPASS
#include "cp/Transforms/Passes.h.inc"
} // namespace cp
} // namespace mlir

using namespace mlir;

namespace {

struct TensorCoreLaunchBoundsPass
    : public cp::impl::TensorCoreLaunchBoundsPassBase<
          TensorCoreLaunchBoundsPass> {
  void runOnOperation() override {
    StringRef name = NVVM::NVVMDialect::getMinctasmAttrName();
    getOperation().walk([&](gpu::GPUFuncOp kernel) {
      if (!kernel.isKernel() || kernel->hasAttr(name))
        return;
      bool usesTensorCores =
          kernel.walk([](NVVM::MmaOp) { return WalkResult::interrupt(); })
              .wasInterrupted();
      if (usesTensorCores)
        kernel->setAttr(name, Builder(kernel).getI32IntegerAttr(1));
    });
  }
};

} // namespace
