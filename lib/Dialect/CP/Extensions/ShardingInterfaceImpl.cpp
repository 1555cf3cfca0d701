//===- ShardingInterfaceImpl.cpp - cp's local attention in upstream sharding =//
//
// upstream's ShardingInterface for cp.local_attention and
// cp.local_attention_grad over a whole sequence (offsets 0). Their one loop
// that may be sharded is the sequence: dim 2 of Q, K, V and the output and
// lse (and, for the backward, of dO, dQ, dK and dV), which context
// parallelism splits alike. sharding-propagation learns that from any of
// them; shard-partition replaces a sequence-sharded op by cp.attention
// (cp.attention_grad) on the shards, on the grid axes the sequence is split
// over, so that a cp scheme (cp-choose-scheme, cp-apply-scheme) moves K/V
// instead of the partitioner gathering every operand. The mod operands
// (segment ids and the like, read at global positions) stay whole on every
// process. docs/Sharding.md.
//
//===----------------------------------------------------------------------===//

#include "cp/Dialect/CP/Extensions/ShardingInterfaceImpl.h"
#include "cp/Dialect/CP/IR/CPOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Shard/Interfaces/ShardingInterface.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::cp;
using namespace mlir::shard;

namespace {

constexpr int64_t kSequenceDim = 2;

std::string axesText(ArrayRef<GridAxis> axes) {
  std::string text = "[";
  llvm::raw_string_ostream os(text);
  llvm::interleaveComma(axes, os);
  return text + "]";
}

/// The grid axes `sharding` splits the sequence dim over (empty when it is
/// not split); failure when it splits another dim (batch, heads or the head
/// dim, which cp.attention does not take split) or has halos. With `op`,
/// the failure is reported on it.
FailureOr<SmallVector<GridAxis>>
sequenceAxes(Operation *op, const Sharding &sharding, StringRef what) {
  auto reject = [&](const Twine &why) -> FailureOr<SmallVector<GridAxis>> {
    if (op)
      op->emitOpError("cannot be partitioned with ") << what << " " << why;
    return failure();
  };
  SmallVector<GridAxis> axes;
  for (auto [dim, split] : llvm::enumerate(sharding.getSplitAxes())) {
    ArrayRef<GridAxis> dimAxes = split.asArrayRef();
    if (dimAxes.empty())
      continue;
    if (static_cast<int64_t>(dim) != kSequenceDim)
      return reject("split along dim " + Twine(dim) + " (grid axes " +
                    axesText(dimAxes) +
                    "): context parallelism splits the sequence (dim 2) "
                    "only; shard batch or heads outside the attention");
    axes.assign(dimAxes.begin(), dimAxes.end());
  }
  if (!sharding.getStaticHaloSizes().empty() ||
      !sharding.getDynamicHaloSizes().empty() ||
      !sharding.getStaticShardedDimsOffsets().empty() ||
      !sharding.getDynamicShardedDimsOffsets().empty())
    return reject("given halos or uneven shard offsets; split the sequence "
                  "into equal shards");
  return axes;
}

/// What differs between the forward's and the backward's model: which
/// operands and results are split along the sequence (the leading ones; the
/// offsets, explicit mask and mod operands are not), their names in
/// diagnostics, and the sharded op that replaces a partitioned one.
template <typename LocalOp> struct ShardedForm;

template <> struct ShardedForm<LocalAttentionOp> {
  static constexpr const char *operands[] = {"Q", "K", "V"};
  static constexpr const char *results[] = {"the output", "the lse"};

  static Operation *create(OpBuilder &b, LocalAttentionOp op,
                           TypeRange resultTypes, ArrayRef<Value> sharded,
                           ValueRange modOperands, FlatSymbolRefAttr grid,
                           DenseI16ArrayAttr gridAxes) {
    MLIRContext *ctx = op->getContext();
    // Sinks are per head, never split along the sequence.
    Value sinks = op.getSinks()
                      ? sharded[op.getSinksMutable()[0].getOperandNumber()]
                      : Value();
    return AttentionOp::create(
        b, op->getLoc(), resultTypes, sharded[0], sharded[1], sharded[2],
        /*explicit_mask=*/Value(), sinks, modOperands, grid, gridAxes,
        op.getMaskAttr(),
        SequenceLayoutAttr::get(ctx, SequenceLayout::contiguous),
        QueryPlacementAttr::get(ctx, QueryPlacement::sharded),
        /*scheme=*/SchemeAttr(), op.getScaleAttr());
  }
};

template <> struct ShardedForm<LocalAttentionGradOp> {
  static constexpr const char *operands[] = {"Q",          "K",       "V",
                                             "the output", "the lse", "dO"};
  static constexpr const char *results[] = {"dQ", "dK", "dV"};

  static Operation *create(OpBuilder &b, LocalAttentionGradOp op,
                           TypeRange resultTypes, ArrayRef<Value> sharded,
                           ValueRange modOperands, FlatSymbolRefAttr grid,
                           DenseI16ArrayAttr gridAxes) {
    MLIRContext *ctx = op->getContext();
    return AttentionGradOp::create(
        b, op->getLoc(), resultTypes, sharded[0], sharded[1], sharded[2],
        sharded[3], sharded[4], sharded[5], /*explicit_mask=*/Value(),
        /*sinks=*/Value(), modOperands, grid, gridAxes, op.getMaskAttr(),
        SequenceLayoutAttr::get(ctx, SequenceLayout::contiguous),
        /*scheme=*/SchemeAttr(), op.getScaleAttr());
  }
};

template <typename LocalOp>
struct LocalAttentionSharding
    : public ShardingInterface::ExternalModel<LocalAttentionSharding<LocalOp>,
                                              LocalOp> {
  using Form = ShardedForm<LocalOp>;
  static constexpr unsigned kSequenceOperands = std::size(Form::operands);

  /// The operands split along the sequence; the offsets, the explicit mask
  /// and the mod operands are not.
  static bool isSequenceOperand(unsigned operandNumber) {
    return operandNumber < kSequenceOperands;
  }

  SmallVector<utils::IteratorType> getLoopIteratorTypes(Operation *) const {
    // batch, heads, sequence (queries, keys and values alike), head dim.
    return SmallVector<utils::IteratorType>(4, utils::IteratorType::parallel);
  }

  /// The one sequence sharding (grid, axes) of `shardings` (Q, K, V, then
  /// the results; null entries are ignored, replicated ones count as
  /// unsplit). With `op`, what cp.attention cannot take is reported on it.
  static FailureOr<std::pair<FlatSymbolRefAttr, SmallVector<GridAxis>>>
  commonSequenceSharding(Operation *op, ArrayRef<Sharding> operands,
                         ArrayRef<Sharding> results) {
    FlatSymbolRefAttr grid;
    SmallVector<GridAxis> axes;
    auto consider = [&](const Sharding &sharding,
                        StringRef what) -> LogicalResult {
      if (!sharding)
        return success();
      FailureOr<SmallVector<GridAxis>> seq = sequenceAxes(op, sharding, what);
      if (failed(seq))
        return failure();
      if (seq->empty())
        return success();
      if (grid && (grid != sharding.getGridAttr() || axes != *seq)) {
        if (op)
          op->emitOpError("needs one sequence sharding for Q, K, V and the "
                          "output; found @")
              << grid.getValue() << " " << axesText(axes) << " and @"
              << sharding.getGrid() << " " << axesText(*seq) << " (" << what
              << ")";
        return failure();
      }
      grid = sharding.getGridAttr();
      axes = *seq;
      return success();
    };
    for (unsigned i = 0; i < kSequenceOperands && i < operands.size(); ++i)
      if (failed(consider(operands[i], Form::operands[i])))
        return failure();
    for (auto [i, sharding] : llvm::enumerate(results))
      if (failed(consider(sharding, Form::results[i])))
        return failure();
    return std::make_pair(grid, axes);
  }

  /// Whether a sequence-split `attention` can become cp.attention: the
  /// whole attention (offsets 0, no head offset) without an explicit mask.
  /// With `report`, says why not on the op.
  static bool isWholeAttention(LocalOp attention, bool report) {
    auto fail = [&](StringRef why) {
      if (report)
        attention.emitOpError("is split along the sequence but ") << why;
      return false;
    };
    for (Value offset : {attention.getQOffset(), attention.getKvOffset()})
      if (!matchPattern(offset, m_Zero()))
        return fail("attends a block at nonzero or unknown offsets; "
                    "partition the whole attention (offsets 0, 0)");
    if (attention.getHeadOffset())
      return fail("has a head_offset; partition the whole attention");
    if (attention.getExplicitMask())
      return fail("has an explicit_mask; write the mask as a mask_mod (read "
                  "at global positions) to partition it");
    return true;
  }

  /// Propagation: the sequence sharding of any of Q, K, V and the results
  /// for all of them. A sharding cp.attention cannot take (another dim
  /// split, halos, Q, K, V split differently, a block at an offset, an
  /// explicit mask) gives the replicated option instead: shard-partition
  /// then gathers the operands and every process computes the whole
  /// attention, as upstream does for an op it cannot split.
  FailureOr<ShardingOption>
  getShardingOption(Operation *op, ArrayRef<Sharding> operandShardings,
                    ArrayRef<Sharding> resultShardings) const {
    FlatSymbolRefAttr grid;
    for (ArrayRef<Sharding> list : {operandShardings, resultShardings})
      for (const Sharding &sharding : list)
        if (sharding && !grid)
          grid = sharding.getGridAttr();
    if (!grid)
      return ShardingOption::makeEmpty();
    ShardingArray loops(4);
    auto common =
        commonSequenceSharding(nullptr, operandShardings, resultShardings);
    if (succeeded(common) && common->first &&
        isWholeAttention(cast<LocalOp>(op), /*report=*/false)) {
      loops[kSequenceDim] = common->second;
      grid = common->first;
    }
    return ShardingOption(loops, grid);
  }

  /// `grid` with the sequence dim of a rank-`rank` tensor split over `axes`
  /// (replicated when `axes` is empty).
  static Sharding sequenceSharding(MLIRContext *ctx, FlatSymbolRefAttr grid,
                                   ArrayRef<GridAxis> axes) {
    if (axes.empty())
      return Sharding::get(grid, {});
    SmallVector<GridAxesAttr> split(kSequenceDim, GridAxesAttr::get(ctx, {}));
    split.push_back(GridAxesAttr::get(ctx, axes));
    return Sharding::get(grid, split);
  }

  FailureOr<std::vector<Sharding>>
  getShardingAnnotations(Operation *op, const ShardingOption &option) const {
    MLIRContext *ctx = op->getContext();
    ArrayRef<GridAxis> axes;
    if (!option.empty && option.shardingArray.size() > kSequenceDim)
      axes = option.shardingArray[kSequenceDim];
    Sharding sequence = sequenceSharding(ctx, option.grid, axes);
    Sharding whole = sequenceSharding(ctx, option.grid, {});
    std::vector<Sharding> shardings;
    for (OpOperand &operand : op->getOpOperands()) {
      if (!isa<RankedTensorType>(operand.get().getType()))
        shardings.push_back(Sharding());
      else
        shardings.push_back(
            isSequenceOperand(operand.getOperandNumber()) ? sequence : whole);
    }
    for (unsigned i = 0; i < op->getNumResults(); ++i)
      shardings.push_back(sequence);
    return shardings;
  }

  LogicalResult addShardingAnnotations(Operation *op, OpBuilder &b,
                                       const ShardingOption &option) const {
    FailureOr<std::vector<Sharding>> shardings =
        getShardingAnnotations(op, option);
    if (failed(shardings))
      return failure();
    unsigned i = 0;
    for (OpOperand &operand : op->getOpOperands()) {
      if (Sharding sharding = (*shardings)[i++])
        maybeInsertSourceShardingAnnotation(sharding, operand, b);
    }
    for (OpResult result : op->getResults())
      maybeInsertTargetShardingAnnotation((*shardings)[i++], result, b);
    return success();
  }

  LogicalResult partition(Operation *op, ArrayRef<Value> partitionedOperands,
                          ArrayRef<Sharding> operandShardings,
                          ArrayRef<Sharding> resultShardings,
                          IRMapping &partitionMap,
                          SymbolTableCollection &symbolTable,
                          OpBuilder &builder) const {
    auto attention = cast<LocalOp>(op);
    auto common = commonSequenceSharding(op, operandShardings, resultShardings);
    if (failed(common))
      return failure();
    SmallVector<GridAxis> axes = common->second;
    if (!axes.empty() && !isWholeAttention(attention, /*report=*/true))
      return failure();
    if (axes.empty()) {
      partitionFullyReplicatedOperation(*op, partitionedOperands,
                                        operandShardings, resultShardings,
                                        partitionMap, symbolTable, builder);
      return success();
    }
    FlatSymbolRefAttr grid = common->first;
    GridOp gridOp = getGrid(op, grid, symbolTable);
    SmallVector<Type> resultTypes;
    for (auto [result, sharding] : llvm::zip(op->getResults(), resultShardings))
      resultTypes.push_back(shardType(result.getType(), gridOp, sharding));
    // Operands: the sequence ones, then (offsets, head_offset and
    // explicit_mask are absent or zero here) the mod operands.
    ValueRange modOperands = ValueRange(partitionedOperands)
                                 .take_back(attention.getModOperands().size());
    SmallVector<int16_t> gridAxes(axes.begin(), axes.end());
    Operation *sharded = Form::create(
        builder, attention, resultTypes, partitionedOperands, modOperands, grid,
        DenseI16ArrayAttr::get(op->getContext(), gridAxes));
    IRMapping regions;
    attention.getMaskMod().cloneInto(&sharded->getRegion(0), regions);
    attention.getScoreMod().cloneInto(&sharded->getRegion(1), regions);
    partitionMap.map(op->getResults(), sharded->getResults());
    return success();
  }
};

} // namespace

void mlir::cp::registerShardingInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, CPDialect *) {
    LocalAttentionOp::attachInterface<LocalAttentionSharding<LocalAttentionOp>>(
        *ctx);
    LocalAttentionGradOp::attachInterface<
        LocalAttentionSharding<LocalAttentionGradOp>>(*ctx);
  });
}
