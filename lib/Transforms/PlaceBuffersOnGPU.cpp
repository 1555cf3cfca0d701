//===- PlaceBuffersOnGPU.cpp - device memory for the host program ---------===//
//
// Implements cp-place-buffers-on-gpu: outside kernels, memref.alloc,
// memref.dealloc and memref.copy become their gpu counterparts (strided
// copies become linalg.copy, which later turns into a kernel).
//
//===----------------------------------------------------------------------===//

#include "cp/Transforms/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"

namespace mlir {
namespace cp {
#define GEN_PASS_DEF_PLACEBUFFERSONGPUPASS
#include "cp/Transforms/Passes.h.inc"
} // namespace cp
} // namespace mlir

using namespace mlir;

namespace {

bool insideKernel(Operation *op) {
  return op->getParentOfType<gpu::LaunchOp>() ||
         op->getParentOfType<gpu::GPUModuleOp>();
}

/// Host memory the host may touch: constant globals (grid descriptions).
bool isHostConstant(Value buffer) {
  Operation *def = buffer.getDefiningOp();
  while (auto cast = dyn_cast_or_null<memref::CastOp>(def))
    def = cast.getSource().getDefiningOp();
  return isa_and_nonnull<memref::GetGlobalOp>(def);
}

struct PlaceBuffersOnGPUPass
    : public cp::impl::PlaceBuffersOnGPUPassBase<PlaceBuffersOnGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<Operation *> ops;
    bool failedAny = false;
    getOperation()->walk([&](Operation *op) {
      if (insideKernel(op))
        return;
      if (isa<memref::AllocOp, memref::DeallocOp, memref::CopyOp>(op))
        ops.push_back(op);
      auto hostAccess = [&](Value buffer) {
        if (isHostConstant(buffer))
          return;
        op->emitOpError("reads or writes a device buffer from host code; "
                        "GPU programs touch their buffers only in kernels");
        failedAny = true;
      };
      if (auto load = dyn_cast<memref::LoadOp>(op))
        hostAccess(load.getMemRef());
      if (auto store = dyn_cast<memref::StoreOp>(op))
        hostAccess(store.getMemRef());
    });
    if (failedAny)
      return signalPassFailure();
    for (Operation *op : ops) {
      OpBuilder b(op);
      Location loc = op->getLoc();
      if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
        auto device = gpu::AllocOp::create(
            b, loc, alloc.getType(), /*asyncToken=*/Type(),
            /*asyncDependencies=*/ValueRange{}, alloc.getDynamicSizes(),
            /*symbolOperands=*/ValueRange{}, /*hostShared=*/false);
        alloc.replaceAllUsesWith(device.getMemref());
      } else if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
        gpu::DeallocOp::create(b, loc, /*asyncToken=*/Type(), ValueRange{},
                               dealloc.getMemref());
      } else {
        auto copy = cast<memref::CopyOp>(op);
        auto from = cast<MemRefType>(copy.getSource().getType());
        auto to = cast<MemRefType>(copy.getTarget().getType());
        if (from.getLayout().isIdentity() && to.getLayout().isIdentity())
          gpu::MemcpyOp::create(b, loc, /*asyncToken=*/Type(), ValueRange{},
                                copy.getTarget(), copy.getSource());
        else
          linalg::CopyOp::create(b, loc, copy.getSource(), copy.getTarget());
      }
      op->erase();
    }
  }
};

} // namespace
