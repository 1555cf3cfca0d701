//===- OverlapCollectives.cpp - start shifts early, wait late -------------===//
//
// Implements cp-overlap-collectives: a cp.buffer.shift becomes a
// cp.buffer.shift_start where it was and a cp.buffer.wait just before the
// first later op of its block that touches its buffers in a way that needs
// the transfer finished. Buffers are compared by their root allocation
// (through views), so a later use of any view of the output counts; an op
// that hands a buffer on (a loop's iter_args, a yield, a call) counts too.
//
//===----------------------------------------------------------------------===//

#include "BufferRoots.h"
#include "cp/Dialect/CP/IR/CPOps.h"
#include "cp/Dialect/CP/Buffers/Passes.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir {
namespace cp {
#define GEN_PASS_DEF_OVERLAPCOLLECTIVESPASS
#include "cp/Dialect/CP/Buffers/Passes.h.inc"
} // namespace cp
} // namespace mlir

using namespace mlir;
using namespace mlir::cp;
using mlir::cp::detail::rootBuffer;

namespace {

/// The buffers of one transfer in flight: the output may not be touched,
/// the input may be read but not written or freed.
struct Transfer {
  Value input, output;

  bool mayConflict(Operation *op) const {
    // Completing another transfer is no access to these buffers unless
    // that transfer shares them.
    if (auto wait = dyn_cast<BufferWaitOp>(op)) {
      auto other = wait.getRequest().getDefiningOp<BufferShiftStartOp>();
      Transfer them{rootBuffer(other.getInput()),
                    rootBuffer(other.getOutput())};
      return them.output == output || them.output == input ||
             them.input == output;
    }
    if (handsOn(op))
      return true;
    if (auto effects = dyn_cast<MemoryEffectOpInterface>(op)) {
      SmallVector<MemoryEffects::EffectInstance> instances;
      effects.getEffects(instances);
      for (const MemoryEffects::EffectInstance &effect : instances) {
        bool writes =
            isa<MemoryEffects::Write, MemoryEffects::Free>(effect.getEffect());
        Value value = effect.getValue();
        if (!value) {
          if (writes)
            return true; // writes memory it does not name
          continue;
        }
        Value root = rootBuffer(value);
        if (root == output || (root == input && writes))
          return true;
      }
      return op->hasTrait<OpTrait::HasRecursiveMemoryEffects>() &&
             nestedConflict(op);
    }
    if (op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
      return nestedConflict(op);
    return true; // effects unknown
  }

  /// Whether `op` passes one of the buffers on as an operand where other
  /// values then alias it: into a region (a loop's iter_args), out of the
  /// block (a yield), into a call or into a result that is no view (an
  /// arith.select of two buffers). Those uses are not visible through the
  /// buffer's views, so the transfer must be finished first.
  bool handsOn(Operation *op) const {
    if (!isa<RegionBranchOpInterface, CallOpInterface>(op) &&
        !op->hasTrait<OpTrait::IsTerminator>() &&
        !cp::detail::makesHiddenAlias(op))
      return false;
    return llvm::any_of(op->getOperands(), [&](Value operand) {
      if (!isa<BaseMemRefType>(operand.getType()))
        return false;
      Value root = rootBuffer(operand);
      return root == output || root == input;
    });
  }

  bool nestedConflict(Operation *op) const {
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (Operation &nested : block)
          if (mayConflict(&nested))
            return true;
    return false;
  }
};

/// Splits `shift`; leaves it alone when nothing could run in between.
void overlap(BufferShiftOp shift) {
  Transfer transfer{rootBuffer(shift.getInput()),
                    rootBuffer(shift.getOutput())};
  Operation *stop = shift->getNextNode();
  Operation *first = stop;
  while (!stop->hasTrait<OpTrait::IsTerminator>() &&
         !transfer.mayConflict(stop))
    stop = stop->getNextNode();
  if (stop == first)
    return;
  OpBuilder b(shift);
  auto start = BufferShiftStartOp::create(
      b, shift.getLoc(), b.getType<RequestType>(), /*asyncToken=*/Type(),
      /*asyncDependencies=*/ValueRange{}, shift.getInput(), shift.getOutput(),
      shift.getGridAttr(), shift.getGridAxesAttr(), shift.getOffsetAttr());
  b.setInsertionPoint(stop);
  BufferWaitOp::create(b, shift.getLoc(), /*asyncToken=*/Type(),
                       /*asyncDependencies=*/ValueRange{}, start.getRequest());
  shift.erase();
}

struct OverlapCollectivesPass
    : public cp::impl::OverlapCollectivesPassBase<OverlapCollectivesPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<BufferShiftOp> shifts;
    getOperation()->walk([&](BufferShiftOp shift) {
      if (!shift.getAsyncToken() && shift.getAsyncDependencies().empty())
        shifts.push_back(shift);
    });
    for (BufferShiftOp shift : shifts)
      overlap(shift);
  }
};

} // namespace
