//===- PlaceBuffersOnGPU.cpp - device memory for the host program ---------===//
//
// Implements cp-place-buffers-on-gpu: outside kernels, memref.alloc,
// memref.dealloc and memref.copy become their gpu counterparts (strided
// copies become linalg.copy, which later turns into a kernel). Host
// bookkeeping buffers (see isHostBookkeeping) stay in host memory.
//
//===----------------------------------------------------------------------===//

#include "cp/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseSet.h"

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

/// Whether every use of `buffer` (through casts) is host bookkeeping: a
/// scalar load or store, a dim, a dealloc, or a call operand, with at least
/// one access (load, store or call). Buffer deallocation's ownership arrays
/// (pointers and flags handed to its dealloc_helper) are such buffers: no
/// kernel, copy or collective ever touches them, so they belong in host
/// memory. A buffer that is only allocated and freed stays a device one.
bool onlyHostUses(Value buffer, SmallVectorImpl<func::CallOp> &calls,
                  bool &accessed) {
  for (OpOperand &use : buffer.getUses()) {
    Operation *user = use.getOwner();
    if (insideKernel(user))
      return false; // kernels capture device buffers
    if (auto cast = dyn_cast<memref::CastOp>(user)) {
      if (!onlyHostUses(cast.getResult(), calls, accessed))
        return false;
      continue;
    }
    if (auto store = dyn_cast<memref::StoreOp>(user)) {
      if (use.get() != store.getMemRef())
        return false; // the buffer itself is stored as a value
      accessed = true;
      continue;
    }
    if (auto call = dyn_cast<func::CallOp>(user)) {
      calls.push_back(call);
      accessed = true;
      continue;
    }
    if (isa<memref::LoadOp>(user)) {
      accessed = true;
      continue;
    }
    if (!isa<memref::DimOp, memref::DeallocOp>(user))
      return false;
  }
  return true;
}

bool isBookkeeping(Value buffer, SmallVectorImpl<func::CallOp> &calls) {
  bool accessed = false;
  return onlyHostUses(buffer, calls, accessed) && accessed;
}

/// The host bookkeeping of a module: allocations with only host uses, and
/// the arguments of private functions, where every buffer handed to a call
/// lands in such an argument and every call site passes such a buffer (a
/// fixpoint: one device buffer in a call excludes the callee's argument,
/// and with it every buffer passed there). Host loads and stores of these
/// are allowed, and their allocation and deallocation stay memref ops.
struct HostBookkeeping {
  llvm::DenseSet<Value> buffers;

  HostBookkeeping(Operation *root) {
    SymbolTableCollection symbols;
    // The calls each candidate buffer is handed to.
    llvm::DenseMap<Value, SmallVector<func::CallOp>> callsWith;
    llvm::DenseMap<func::FuncOp, SmallVector<func::CallOp>> callsOf;
    root->walk([&](func::CallOp call) {
      if (auto callee = symbols.lookupNearestSymbolFrom<func::FuncOp>(
              call, call.getCalleeAttr()))
        callsOf[callee].push_back(call);
    });
    root->walk([&](Operation *op) {
      if (insideKernel(op) || !isa<memref::AllocOp, memref::AllocaOp>(op))
        return;
      SmallVector<func::CallOp> calls;
      if (isBookkeeping(op->getResult(0), calls)) {
        buffers.insert(op->getResult(0));
        callsWith[op->getResult(0)] = std::move(calls);
      }
    });
    for (auto &[callee, calls] : callsOf) {
      if (callee.isPublic() || callee.isExternal())
        continue;
      for (BlockArgument arg : callee.getArguments()) {
        SmallVector<func::CallOp> nested;
        if (isa<MemRefType>(arg.getType()) && isBookkeeping(arg, nested)) {
          buffers.insert(arg);
          callsWith[arg] = std::move(nested);
        }
      }
    }
    // Drop candidates until consistent.
    for (bool changed = true; changed;) {
      changed = false;
      for (Value buffer : SmallVector<Value>(buffers.begin(), buffers.end())) {
        bool keep = llvm::all_of(callsWith[buffer], [&](func::CallOp call) {
          auto callee = symbols.lookupNearestSymbolFrom<func::FuncOp>(
              call, call.getCalleeAttr());
          if (!callee || callee.isExternal())
            return false;
          for (auto [i, operand] : llvm::enumerate(call.getOperands()))
            if (holds(operand, buffer) &&
                !buffers.contains(callee.getArgument(i)))
              return false;
          return true;
        });
        if (auto arg = dyn_cast<BlockArgument>(buffer)) {
          auto callee = cast<func::FuncOp>(arg.getOwner()->getParentOp());
          keep = keep && llvm::all_of(callsOf[callee], [&](func::CallOp call) {
                   return holds(call.getOperand(arg.getArgNumber()));
                 });
        }
        if (!keep) {
          buffers.erase(buffer);
          changed = true;
        }
      }
    }
  }

  /// Whether `value` is (a cast of) `buffer`.
  static bool holds(Value value, Value buffer) {
    while (auto cast = value.getDefiningOp<memref::CastOp>())
      value = cast.getSource();
    return value == buffer;
  }

  /// Whether `value` is (a cast of) a bookkeeping buffer.
  bool holds(Value value) const {
    while (auto cast = value.getDefiningOp<memref::CastOp>())
      value = cast.getSource();
    return buffers.contains(value);
  }
};

struct PlaceBuffersOnGPUPass
    : public cp::impl::PlaceBuffersOnGPUPassBase<PlaceBuffersOnGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    HostBookkeeping host(getOperation());
    SmallVector<Operation *> ops;
    bool failedAny = false;
    getOperation()->walk([&](Operation *op) {
      if (insideKernel(op))
        return;
      if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
        if (!host.holds(alloc.getResult()))
          ops.push_back(op);
      } else if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
        if (!host.holds(dealloc.getMemref()))
          ops.push_back(op);
      } else if (isa<memref::CopyOp>(op)) {
        ops.push_back(op);
      }
      auto hostAccess = [&](Value buffer) {
        if (isHostConstant(buffer) || host.holds(buffer))
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
