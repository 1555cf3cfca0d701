//===- SchemeBuilder.cpp - the ops that replace one cp.attention ----------===//
//
// The SchemeBuilder members every scheme shares beyond the one-op shorthand
// of SchemeBuilder.h: group indices, slices, layout conversions, local and
// partial attentions, and results rounded to the op's element type.
//
//===----------------------------------------------------------------------===//

#include "cp/Dialect/CP/Schemes/SchemeBuilder.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

#include <limits>

using namespace mlir;
using namespace mlir::cp;

Value CollectiveBuilder::groupIndex(FlatSymbolRefAttr grid, ArrayRef<int16_t> axes,
                                ArrayRef<int64_t> axisSizes) {
  if (llvm::all_of(axisSizes, [](int64_t s) { return s == 1; }))
    return index(0);
  auto multi = shard::ProcessMultiIndexOp::create(
      b, loc, grid.getValue(), SmallVector<shard::GridAxis>(axes));
  Value linear = multi.getResult()[0];
  for (auto [i, coordinate] : llvm::enumerate(multi.getResult().drop_front()))
    linear = arith::AddIOp::create(b, loc, mul(linear, axisSizes[i + 1]),
                                   coordinate);
  return linear;
}

const Group &CollectiveBuilder::cpGroup() {
  if (shardedGroup.index)
    return shardedGroup;
  auto grid = SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(
      sharded, shardedGroup.grid);
  SmallVector<int64_t> axisSizes;
  for (int16_t axis : shardedGroup.axes)
    axisSizes.push_back(grid.getShape()[axis]);
  shardedGroup.index =
      groupIndex(shardedGroup.grid, shardedGroup.axes, axisSizes);
  return shardedGroup;
}

LogicalResult CollectiveBuilder::hybridGroups(int64_t u, Group &outer,
                                              Group &inner) {
  FlatSymbolRefAttr gridAttr = shardedGroup.grid;
  ArrayRef<int16_t> axes = shardedGroup.axes;
  auto grid =
      SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(sharded, gridAttr);
  if (axes.size() == 2) {
    int64_t innerSize = grid.getShape()[axes[1]];
    if (innerSize != u)
      return sharded->emitOpError("hybrid(")
             << u << ") on grid_axes [" << axes[0] << ", " << axes[1]
             << "] needs the inner axis " << axes[1]
             << " to have size u = " << u << ", got " << innerSize;
    outer = {gridAttr, {axes[0]}, grid.getShape()[axes[0]], Value()};
    inner = {gridAttr, {axes[1]}, u, Value()};
  } else if (grid.getRank() == 1 && axes.size() == 1) {
    int64_t p = grid.getShape()[0], rows = p / u;
    std::string name =
        (grid.getSymName() + "_hybrid_" + Twine(rows) + "x" + Twine(u)).str();
    auto derived = SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(
        sharded, StringAttr::get(sharded->getContext(), name));
    if (derived && derived.getShape() != ArrayRef<int64_t>{rows, u})
      return sharded->emitOpError("hybrid(")
             << u << ") needs grid @" << name << " to have shape " << rows
             << "x" << u << ", but a grid of that name has another shape";
    if (!derived) {
      OpBuilder gridBuilder(grid);
      gridBuilder.setInsertionPointAfter(grid);
      derived = shard::GridOp::create(gridBuilder, grid.getLoc(), name,
                                      ArrayRef<int64_t>{rows, u});
    }
    auto ref = FlatSymbolRefAttr::get(derived.getSymNameAttr());
    outer = {ref, {0}, rows, Value()};
    inner = {ref, {1}, u, Value()};
  } else {
    return sharded->emitOpError(
               "hybrid needs a 1-D grid or two grid axes (outer, "
               "inner); got grid_axes of size ")
           << axes.size() << " on a rank-" << grid.getRank() << " grid";
  }
  outer.index = groupIndex(outer.grid, outer.axes, {outer.size});
  inner.index = groupIndex(inner.grid, inner.axes, {inner.size});
  return success();
}

Value CollectiveBuilder::slice(Value v, int64_t dim, OpFoldResult offset,
                           int64_t size) {
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes, strides(type.getRank(), b.getIndexAttr(1));
  for (int64_t d = 0; d < type.getRank(); ++d)
    sizes.push_back(b.getIndexAttr(d == dim ? size : type.getDimSize(d)));
  offsets[dim] = offset;
  return tensor::ExtractSliceOp::create(b, loc, withDim(v, dim, size), v,
                                        offsets, sizes, strides);
}

void SchemeBuilder::convertOperandsTo(const Group &g, SequenceLayout to) {
  SequenceLayout from = op.getLayout();
  if (from == to)
    return;
  query = relayout(g, query, kSeqDim, from, to);
  key = relayout(g, key, kSeqDim, from, to);
  value = relayout(g, value, kSeqDim, from, to);
  if (mask && maskIsLocal(mask))
    mask = relayout(g, mask, maskRowDim(mask), from, to);
}

void SchemeBuilder::finish(const Group &g, Result result,
                           SequenceLayout computedIn) {
  if (computedIn != op.getLayout()) {
    result.out = relayout(g, result.out, kSeqDim, computedIn, op.getLayout());
    if (result.lse)
      result.lse = relayout(g, result.lse, kSeqDim, computedIn, op.getLayout());
  }
  op.getResult().replaceAllUsesWith(result.out);
  if (result.lse)
    op.getLse().replaceAllUsesWith(result.lse);
}

SchemeBuilder::Result SchemeBuilder::localAttention(Value q, Value k, Value v,
                                                    Value qOffset,
                                                    Value kvOffset,
                                                    Value mask) {
  RankedTensorType outType =
      withDim(withDim(op.getResult(), kSeqDim, dimOf(q, kSeqDim)), kHeadsDim,
              dimOf(q, kHeadsDim));
  Type lseType;
  if (wantsLse())
    lseType = RankedTensorType::get(outType.getShape().drop_back(),
                                    b.getF32Type());
  auto out = LocalAttentionOp::create(
      b, loc, outType, lseType, q, k, v, qOffset, kvOffset, headOffset, mask,
      sinks, op.getModOperands(), op.getMaskAttr(), op.getScaleAttr());
  mark(out);
  return {out.getOutput(), out.getLse()};
}

void CollectiveBuilder::markLocal(Operation *local, Operation *sharded,
                                  SchemeAttr scheme, int64_t bytesPerRank) {
  local->setAttr("cp.scheme", scheme);
  local->setAttr("cp.bytes_per_rank", b.getI64IntegerAttr(bytesPerRank));
  for (unsigned r = 0; r < 2; ++r) {
    IRMapping mapping;
    sharded->getRegion(r).cloneInto(&local->getRegion(r), mapping);
  }
}

SchemeBuilder::Partial SchemeBuilder::partialAttention(Value q, Value k,
                                                       Value v, Value qOffset,
                                                       Value kvOffset,
                                                       Value mask,
                                                       bool withSinks) {
  auto qType = cast<RankedTensorType>(q.getType());
  auto outType = RankedTensorType::get(
      {shape.batch, shape.heads, qType.getDimSize(kSeqDim), shape.valueDim},
      b.getF32Type());
  auto lseType = RankedTensorType::get(
      {shape.batch, shape.heads, qType.getDimSize(kSeqDim)}, b.getF32Type());
  auto attention = LocalAttentionOp::create(
      b, loc, outType, lseType, q, k, v, qOffset, kvOffset, headOffset, mask,
      withSinks ? sinks : Value(), op.getModOperands(), op.getMaskAttr(),
      op.getScaleAttr());
  mark(attention);
  return {attention.getOutput(), attention.getLse()};
}

SchemeBuilder::Partial SchemeBuilder::emptyPartial(Partial like) {
  return {zeros(cast<RankedTensorType>(like.out.getType())),
          filled(cast<RankedTensorType>(like.lse.getType()),
                 -std::numeric_limits<double>::infinity())};
}

Value CollectiveBuilder::convertElements(Value v, Type element) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getElementType() == element)
    return v;
  bool widen = element.getIntOrFloatBitWidth() >
               type.getElementType().getIntOrFloatBitWidth();
  Value empty = tensor::EmptyOp::create(b, loc, type.getShape(), element);
  int64_t rank = type.getRank();
  SmallVector<AffineMap> maps(2, b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{empty.getType()}, ValueRange{v},
             ValueRange{empty}, maps, iterators,
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               Value converted =
                   widen ? arith::ExtFOp::create(nb, nloc, element, args[0])
                               .getResult()
                         : arith::TruncFOp::create(nb, nloc, element, args[0])
                               .getResult();
               linalg::YieldOp::create(nb, nloc, converted);
             })
      .getResult(0);
}

Value CollectiveBuilder::addTensors(Value x, Value y) {
  auto type = cast<RankedTensorType>(x.getType());
  Value empty = tensor::EmptyOp::create(b, loc, type.getShape(),
                                        type.getElementType());
  int64_t rank = type.getRank();
  SmallVector<AffineMap> maps(3, b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{type}, ValueRange{x, y}, ValueRange{empty},
             maps, iterators,
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               linalg::YieldOp::create(
                   nb, nloc,
                   arith::AddFOp::create(nb, nloc, args[0], args[1])
                       .getResult());
             })
      .getResult(0);
}

Value SchemeBuilder::toStorageType(Value f32) {
  return convertElements(f32, op.getResult().getType().getElementType());
}

Value CollectiveBuilder::filled(RankedTensorType type, double value) {
  Value empty = tensor::EmptyOp::create(b, loc, type.getShape(),
                                        type.getElementType());
  Value constant = arith::ConstantOp::create(
      b, loc, b.getFloatAttr(type.getElementType(), value));
  return linalg::FillOp::create(b, loc, constant, empty).getResult(0);
}

Value CollectiveBuilder::zeros(RankedTensorType type) {
  return filled(type, 0.0);
}

Value CollectiveBuilder::sliceGlobalMask(Value mask, OpFoldResult start,
                                     int64_t count, OpFoldResult h0,
                                     int64_t hCount) {
  int64_t rowDim = maskRowDim(mask);
  Value rows =
      dimOf(mask, rowDim) == count ? mask : slice(mask, rowDim, start, count);
  if (maskHasHeads(mask) && hCount != shape.heads)
    rows = slice(rows, kHeadsDim, h0, hCount);
  return rows;
}

Value CollectiveBuilder::gatheredKeysMask(Value mask, Value qOffset) {
  if (!mask || maskIsLocal(mask))
    return mask;
  return sliceGlobalMask(mask, qOffset, shape.localLen, b.getIndexAttr(0),
                         shape.heads);
}

Value CollectiveBuilder::ulyssesMask(const Group &inner, Value mask,
                                     Value qOffset, int64_t blockLen) {
  if (!mask)
    return mask;
  int64_t localHeads = shape.heads / inner.size;
  if (maskIsLocal(mask)) {
    int64_t rows = maskRowDim(mask);
    return maskHasHeads(mask) ? allToAll(inner, mask, kHeadsDim, rows)
                              : allGather(inner, mask, rows);
  }
  return sliceGlobalMask(mask, qOffset, blockLen, mul(inner.index, localHeads),
                         localHeads);
}
