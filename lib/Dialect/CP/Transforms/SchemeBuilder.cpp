//===- SchemeBuilder.cpp - the ops that replace one cp.attention ----------===//
//
// The SchemeBuilder members every scheme shares beyond the one-op shorthand
// of SchemeBuilder.h: group indices, slices, layout conversions, local and
// partial attentions, and results rounded to the op's element type.
//
//===----------------------------------------------------------------------===//

#include "SchemeBuilder.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

#include <limits>

using namespace mlir;
using namespace mlir::cp;
using namespace mlir::cp::detail;

Value SchemeBuilder::groupIndex(FlatSymbolRefAttr grid, ArrayRef<int16_t> axes,
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

Value SchemeBuilder::slice(Value v, int64_t dim, OpFoldResult offset,
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

void SchemeBuilder::finish(const Group &g, Value out,
                           SequenceLayout computedIn) {
  if (computedIn != op.getLayout())
    out = relayout(g, out, kSeqDim, computedIn, op.getLayout());
  op.replaceAllUsesWith(out);
}

Value SchemeBuilder::localAttention(Value q, Value k, Value v, Value qOffset,
                                    Value kvOffset, Value mask) {
  RankedTensorType outType =
      withDim(withDim(op.getResult(), kSeqDim, dimOf(q, kSeqDim)), kHeadsDim,
              dimOf(q, kHeadsDim));
  auto out = LocalAttentionOp::create(
      b, loc, outType,
      /*lse=*/Type(), q, k, v, qOffset, kvOffset, headOffset, mask,
      op.getModOperands(), op.getMaskAttr(), op.getScaleAttr());
  mark(out);
  return out.getOutput();
}

void SchemeBuilder::mark(LocalAttentionOp attention) {
  attention->setAttr("cp.scheme", scheme);
  attention->setAttr("cp.bytes_per_rank", b.getI64IntegerAttr(bytesPerRank));
  IRMapping mapping;
  op.getMaskMod().cloneInto(&attention.getMaskMod(), mapping);
  op.getScoreMod().cloneInto(&attention.getScoreMod(), mapping);
}

SchemeBuilder::Partial SchemeBuilder::partialAttention(Value q, Value k,
                                                       Value v, Value qOffset,
                                                       Value kvOffset,
                                                       Value mask) {
  auto qType = cast<RankedTensorType>(q.getType());
  auto outType = RankedTensorType::get(
      {shape.batch, shape.heads, qType.getDimSize(kSeqDim), shape.valueDim},
      b.getF32Type());
  auto lseType = RankedTensorType::get(
      {shape.batch, shape.heads, qType.getDimSize(kSeqDim)}, b.getF32Type());
  auto attention = LocalAttentionOp::create(
      b, loc, outType, lseType, q, k, v, qOffset, kvOffset, headOffset, mask,
      op.getModOperands(), op.getMaskAttr(), op.getScaleAttr());
  mark(attention);
  return {attention.getOutput(), attention.getLse()};
}

SchemeBuilder::Partial SchemeBuilder::emptyPartial(Partial like) {
  auto fill = [&](Value shapeOf, double value) {
    auto type = cast<RankedTensorType>(shapeOf.getType());
    Value empty =
        tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
    Value constant = arith::ConstantOp::create(
        b, loc, b.getF32FloatAttr(static_cast<float>(value)));
    return linalg::FillOp::create(b, loc, constant, empty).getResult(0);
  };
  return {fill(like.out, 0.0),
          fill(like.lse, -std::numeric_limits<double>::infinity())};
}

Value SchemeBuilder::toStorageType(Value f32) {
  Type element = op.getType().getElementType();
  if (element.isF32())
    return f32;
  auto type = cast<RankedTensorType>(f32.getType());
  Value empty = tensor::EmptyOp::create(b, loc, type.getShape(), element);
  int64_t rank = type.getRank();
  SmallVector<AffineMap> maps(2, b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{empty.getType()}, ValueRange{f32},
             ValueRange{empty}, maps, iterators,
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               Value rounded =
                   arith::TruncFOp::create(nb, nloc, element, args[0]);
               linalg::YieldOp::create(nb, nloc, rounded);
             })
      .getResult(0);
}

Value SchemeBuilder::sliceGlobalMask(Value mask, OpFoldResult start,
                                     int64_t count, OpFoldResult h0,
                                     int64_t hCount) {
  int64_t rowDim = maskRowDim(mask);
  Value rows =
      dimOf(mask, rowDim) == count ? mask : slice(mask, rowDim, start, count);
  if (maskHasHeads(mask) && hCount != shape.heads)
    rows = slice(rows, kHeadsDim, h0, hCount);
  return rows;
}
