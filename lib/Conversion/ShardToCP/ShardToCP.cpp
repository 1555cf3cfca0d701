//===- ShardToCP.cpp - upstream shard collectives as cp collectives -------===//
//
// Implements convert-shard-to-cp: the collectives upstream's shard-partition
// emits become cp's, which lower to MPI (convert-cp-to-mpi) and NCCL
// (convert-cp-to-nccl). Group semantics are the same (grid_axes of a
// shard.grid, ranked row-major); shard.shift moves data the opposite way to
// cp.shift and is rewritten with the offset negated. A collective cp has no
// counterpart for is reported on the op.
//
//===----------------------------------------------------------------------===//

#include "cp/Conversion/Passes.h"
#include "cp/Dialect/CP/IR/CPOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir {
namespace cp {
#define GEN_PASS_DEF_CONVERTSHARDTOCPPASS
#include "cp/Conversion/Passes.h.inc"
} // namespace cp
} // namespace mlir

using namespace mlir;

namespace {

int64_t axisOf(const APInt &axis) { return axis.getSExtValue(); }

/// shard.shift along `shift_axis` by `offset`: device r receives the input of
/// device r + offset (upstream's example: offset 2 on 4 devices gives device
/// 0 the input of device 2). cp.shift gives rank r the input of rank
/// r - offset. So the same movement is cp.shift on the group of
/// `shift_axis` alone (the other grid axes pick the group) with offset
/// -offset, normalized to [0, P). Without `rotate` the devices with no
/// source get an undefined result; the rotation is one such result.
LogicalResult convertShift(shard::ShiftOp op, shard::GridOp grid,
                           IRRewriter &rewriter) {
  int64_t axis = axisOf(op.getShiftAxis());
  if (!llvm::is_contained(op.getGridAxes(), axis))
    return op.emitOpError("shift_axis ")
           << axis << " is not one of grid_axes; shard-to-cp shifts within "
           << "the groups grid_axes define";
  int64_t size = grid.getShape()[axis];
  if (ShapedType::isDynamic(size))
    return op.emitOpError("shifts along grid axis ")
           << axis << " of @" << grid.getSymName()
           << ", whose size is dynamic; cp.shift needs a static group size";
  // Upstream's grid verifier takes a size 0; the offset is taken modulo the
  // size below.
  if (size < 1)
    return op.emitOpError("shifts along grid axis ")
           << axis << " of @" << grid.getSymName() << ", which has size "
           << size << "; a CP group needs at least one process on every "
           << "axis it uses";
  // The offset attribute reads back unsigned: take it as the signed value.
  // -offset modulo size, in [0, size), with no intermediate that overflows
  // (any int64 offset, any size up to INT64_MAX).
  int64_t shardOffset = static_cast<int64_t>(op.getOffset());
  int64_t rest = shardOffset % size;
  int64_t offset = rest <= 0 ? -rest : size - rest;
  rewriter.setInsertionPoint(op);
  rewriter.replaceOpWithNewOp<cp::ShiftOp>(
      op, op.getResult().getType(), op.getInput(), op.getGridAttr(),
      rewriter.getDenseI16ArrayAttr({static_cast<int16_t>(axis)}),
      rewriter.getI64IntegerAttr(offset));
  return success();
}

/// Without grid axes a collective's group is its own process: the result
/// is the input.
template <typename ShardOp>
bool foldAlone(Operation *op, IRRewriter &rewriter) {
  auto collective = dyn_cast<ShardOp>(op);
  if (!collective || !collective.getGridAxes().empty() ||
      collective.getInput().getType() != collective.getResult().getType())
    return false;
  rewriter.replaceOp(op, collective.getInput());
  return true;
}

LogicalResult convert(Operation *op, IRRewriter &rewriter,
                      SymbolTableCollection &symbols) {
  rewriter.setInsertionPoint(op);
  if (foldAlone<shard::AllGatherOp>(op, rewriter) ||
      foldAlone<shard::AllToAllOp>(op, rewriter) ||
      foldAlone<shard::ReduceScatterOp>(op, rewriter))
    return success();
  if (auto gather = dyn_cast<shard::AllGatherOp>(op)) {
    rewriter.replaceOpWithNewOp<cp::AllGatherOp>(
        gather, gather.getResult().getType(), gather.getInput(),
        gather.getGridAttr(), gather.getGridAxesAttr(),
        rewriter.getI64IntegerAttr(axisOf(gather.getGatherAxis())));
    return success();
  }
  if (auto allToAll = dyn_cast<shard::AllToAllOp>(op)) {
    rewriter.replaceOpWithNewOp<cp::AllToAllOp>(
        allToAll, allToAll.getResult().getType(), allToAll.getInput(),
        allToAll.getGridAttr(), allToAll.getGridAxesAttr(),
        rewriter.getI64IntegerAttr(axisOf(allToAll.getSplitAxis())),
        rewriter.getI64IntegerAttr(axisOf(allToAll.getConcatAxis())));
    return success();
  }
  if (auto scatter = dyn_cast<shard::ReduceScatterOp>(op)) {
    if (scatter.getReduction() != shard::ReductionKind::Sum)
      return scatter.emitOpError("reduces with '")
             << shard::stringifyReductionKind(scatter.getReduction())
             << "'; cp.reduce_scatter sums only, so shard-to-cp converts "
             << "reduction = sum";
    rewriter.replaceOpWithNewOp<cp::ReduceScatterOp>(
        scatter, scatter.getResult().getType(), scatter.getInput(),
        scatter.getGridAttr(), scatter.getGridAxesAttr(),
        rewriter.getI64IntegerAttr(axisOf(scatter.getScatterAxis())));
    return success();
  }
  if (auto shift = dyn_cast<shard::ShiftOp>(op)) {
    shard::GridOp grid = shard::getGrid(shift, symbols);
    if (!grid)
      return shift.emitOpError("names no shard.grid @") << shift.getGrid();
    return convertShift(shift, grid, rewriter);
  }
  return op->emitOpError("has no cp counterpart: convert-shard-to-cp "
                         "converts shard.all_gather, shard.all_to_all, "
                         "shard.reduce_scatter (sum) and shard.shift; "
                         "express this collective with those, or lower it "
                         "through upstream's shard-to-mpi");
}

/// Upstream's collectives, the ops this pass converts or reports.
bool isShardCollective(Operation *op) {
  return isa<shard::AllGatherOp, shard::AllReduceOp, shard::AllSliceOp,
             shard::AllToAllOp, shard::BroadcastOp, shard::GatherOp,
             shard::RecvOp, shard::ReduceOp, shard::ReduceScatterOp,
             shard::ScatterOp, shard::SendOp, shard::ShiftOp>(op);
}

struct ConvertShardToCPPass
    : public cp::impl::ConvertShardToCPPassBase<ConvertShardToCPPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<Operation *> collectives;
    getOperation()->walk([&](Operation *op) {
      if (isShardCollective(op))
        collectives.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    SymbolTableCollection symbols;
    bool failed = false;
    for (Operation *op : collectives)
      failed |= mlir::failed(convert(op, rewriter, symbols));
    if (failed)
      signalPassFailure();
  }
};

} // namespace
