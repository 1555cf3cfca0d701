//===- FreeBuffersEarly.cpp - deallocate buffers right after last use -----===//
//
// Implements cp-free-buffers-early: a dealloc of a buffer made in the same
// block moves to just after the last op of the block that uses the buffer,
// a view or other alias of it (a select of two buffers), or (for a started
// shift) waits for its transfer.
//
//===----------------------------------------------------------------------===//

#include "BufferRoots.h"
#include "cp/Dialect/CP/IR/CPOps.h"
#include "cp/Dialect/CP/Buffers/Passes.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir {
namespace cp {
#define GEN_PASS_DEF_FREEBUFFERSEARLYPASS
#include "cp/Dialect/CP/Buffers/Passes.h.inc"
} // namespace cp
} // namespace mlir

using namespace mlir;
using namespace mlir::cp;
using mlir::cp::detail::aliasesOf;

namespace {

/// Whether `op` or an op nested in it uses one of `aliases` (a buffer, its
/// views and whatever else may alias it: aliasesOf), counting a wait as a
/// use of its shift's buffers.
bool uses(Operation *op, const llvm::DenseSet<Value> &aliases) {
  WalkResult result = op->walk([&](Operation *nested) {
    if (auto wait = dyn_cast<BufferWaitOp>(nested))
      if (auto start = wait.getRequest().getDefiningOp<BufferShiftStartOp>())
        if (aliases.contains(start.getInput()) ||
            aliases.contains(start.getOutput()))
          return WalkResult::interrupt();
    for (Value operand : nested->getOperands())
      if (aliases.contains(operand))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return result.wasInterrupted();
}

/// A dealloc that can move: the buffer it frees, produced in its block by
/// an allocation or by an op with regions (an scf.if yielding fresh
/// buffers, freed through the base of its strided metadata), and the ops
/// that move with it.
struct Release {
  Value buffer;
  SmallVector<Operation *, 2> ops;
};

std::optional<Release> releaseOf(Operation *op) {
  Value freed;
  if (auto dealloc = dyn_cast<memref::DeallocOp>(op))
    freed = dealloc.getMemref();
  else if (auto dealloc = dyn_cast<gpu::DeallocOp>(op);
           dealloc && !dealloc.getAsyncToken())
    freed = dealloc.getMemref();
  if (!freed || !freed.getDefiningOp() ||
      freed.getDefiningOp()->getBlock() != op->getBlock())
    return std::nullopt;
  Operation *def = freed.getDefiningOp();
  if (isa<memref::AllocOp, gpu::AllocOp>(def))
    return Release{freed, {op}};
  auto metadata = dyn_cast<memref::ExtractStridedMetadataOp>(def);
  if (!metadata || !freed.hasOneUse() ||
      llvm::any_of(metadata->getResults().drop_front(),
                   [](Value v) { return !v.use_empty(); }))
    return std::nullopt;
  Value buffer = metadata.getSource();
  Operation *producer = buffer.getDefiningOp();
  if (!producer || producer->getBlock() != op->getBlock() ||
      producer->getNumRegions() == 0)
    return std::nullopt;
  return Release{buffer, {metadata, op}};
}

struct FreeBuffersEarlyPass
    : public cp::impl::FreeBuffersEarlyPassBase<FreeBuffersEarlyPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<Operation *> deallocs;
    getOperation()->walk([&](Operation *op) {
      if (releaseOf(op))
        deallocs.push_back(op);
    });
    for (Operation *dealloc : deallocs) {
      Release release = *releaseOf(dealloc);
      Operation *first = release.ops.front();
      Operation *lastUse = release.buffer.getDefiningOp();
      llvm::DenseSet<Value> aliases = aliasesOf(release.buffer);
      for (Operation *op = lastUse->getNextNode(); op != first;
           op = op->getNextNode())
        if (uses(op, aliases))
          lastUse = op;
      for (Operation *op : llvm::reverse(release.ops))
        op->moveAfter(lastUse);
    }
  }
};

} // namespace
