//===- RingSteps.cpp - the steps of ring and zigzag -----------------------===//
//
// What the forward and the backward of ring and zigzag share: the chunks of
// a rank's block and their global rows, which chunk pairs a step attends
// (decided here on constant steps, at run time inside the loop), and the
// step sequence as a first step, one scf.for and a last step.
//
//===----------------------------------------------------------------------===//

#include "cp/Dialect/CP/Analysis/StructuredMask.h"
#include "cp/Dialect/CP/Schemes/SchemeBuilder.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::cp;

RingSteps::RingSteps(CollectiveBuilder &builder, const Group &cp,
                     MaskAttr mask, bool zigzag, bool unroll)
    : schedule{cp.size, builder.shape.localLen, zigzag},
      steps(schedule.shiftsNeeded(mask) + 1), cb(builder), cp(cp), mask(mask),
      unroll(unroll) {
  qStarts = chunkStarts(cp.index);
}

SmallVector<Value> RingSteps::chunkStarts(Value rank) {
  if (!schedule.zigzag)
    return {cb.mul(rank, schedule.localLen)};
  Value mirror =
      arith::SubIOp::create(cb.b, cb.loc, cb.index(2 * cp.size - 1), rank);
  return {cb.mul(rank, chunkRows()), cb.mul(mirror, chunkRows())};
}

Value RingSteps::chunk(Value x, int64_t c) {
  if (chunks() == 1)
    return x;
  return cb.slice(x, kSeqDim, cb.b.getIndexAttr(c * chunkRows()), chunkRows());
}

Value RingSteps::addToChunk(Value acc, int64_t c, Value part) {
  if (chunks() == 1)
    return acc ? cb.addTensors(acc, part) : part;
  if (!acc) {
    auto partType = cast<RankedTensorType>(part.getType());
    SmallVector<int64_t> shape(partType.getShape());
    shape[kSeqDim] *= chunks();
    acc = cb.zeros(partType.clone(shape));
  }
  Value sum = cb.addTensors(chunk(acc, c), part);
  auto type = cast<RankedTensorType>(acc.getType());
  SmallVector<OpFoldResult> offsets(type.getRank(), cb.b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes, strides(type.getRank(),
                                           cb.b.getIndexAttr(1));
  for (int64_t d = 0; d < type.getRank(); ++d)
    sizes.push_back(cb.b.getIndexAttr(d == kSeqDim ? chunkRows()
                                                   : type.getDimSize(d)));
  offsets[kSeqDim] = cb.b.getIndexAttr(c * chunkRows());
  return tensor::InsertSliceOp::create(cb.b, cb.loc, sum, acc, offsets, sizes,
                                       strides);
}

Value RingSteps::maskBlock(Value explicitMask, int64_t qc, Value qStart,
                           Value kStart) {
  if (!explicitMask)
    return Value();
  int64_t rowDim = cb.maskRowDim(explicitMask);
  int64_t rows = chunkRows();
  Value m = explicitMask;
  if (!cb.maskIsLocal(explicitMask))
    m = cb.slice(explicitMask, rowDim, qStart, rows);
  else if (chunks() == 2)
    m = cb.slice(explicitMask, rowDim, cb.b.getIndexAttr(qc * rows), rows);
  return cb.slice(m, rowDim + 1, kStart, rows);
}

void RingSteps::forEachPair(
    Value source, std::optional<int64_t> step,
    function_ref<void(int64_t, int64_t, Value, Value, Value)> visit) {
  SmallVector<Value> kStarts = chunkStarts(source);
  auto last = [&](Value start) { return cb.add(start, chunkRows() - 1); };
  for (int64_t qc = 0; qc < chunks(); ++qc) {
    // The diagonal chunk first: it is never fully masked at step 0.
    for (int64_t kc : {qc, 1 - qc}) {
      if (kc >= chunks())
        continue;
      Value qStart = qStarts[qc], kStart = kStarts[kc];
      if (step == 0 && kc == qc) {
        visit(qc, kc, qStart, kStart, Value());
        continue;
      }
      RingSchedule::Visibility visibility =
          step ? schedule.visibility(mask, *step, qc, kc)
               : RingSchedule::Visibility::depends;
      if (visibility == RingSchedule::Visibility::never)
        continue;
      Value visible;
      if (visibility == RingSchedule::Visibility::depends)
        visible = buildBlockIsVisible(cb.b, cb.loc, mask, qStart, last(qStart),
                                      kStart, last(kStart));
      visit(qc, kc, qStart, kStart, visible);
    }
  }
}

SmallVector<Value>
RingSteps::guarded(Value visible, TypeRange types,
                   function_ref<SmallVector<Value>()> compute,
                   function_ref<SmallVector<Value>()> skipped) {
  if (!visible)
    return compute();
  OpBuilder &b = cb.b;
  auto ifOp = scf::IfOp::create(b, cb.loc, types, visible,
                                /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  scf::YieldOp::create(b, cb.loc, compute());
  b.setInsertionPointToStart(ifOp.elseBlock());
  scf::YieldOp::create(b, cb.loc, skipped());
  return SmallVector<Value>(ifOp.getResults());
}

Value RingSteps::sourceAt(Value step) {
  OpBuilder &b = cb.b;
  Value back = arith::SubIOp::create(b, cb.loc, cb.index(cp.size), step);
  return arith::RemUIOp::create(
             b, cb.loc, arith::AddIOp::create(b, cb.loc, cp.index, back),
             cb.index(cp.size))
      .getResult();
}

SmallVector<Value> RingSteps::run(SmallVector<Value> carried, StepBody body) {
  if (steps == 1)
    return body(cp.index, 0, /*last=*/true, carried);
  carried = body(cp.index, 0, /*last=*/false, carried);
  for (int64_t step = 1; unroll && step + 1 < steps; ++step)
    carried = body(sourceAt(cb.index(step)), step, /*last=*/false, carried);
  if (!unroll && steps > 2) {
    OpBuilder &b = cb.b;
    auto loop = scf::ForOp::create(
        b, cb.loc, cb.index(1), cb.index(steps - 1), cb.index(1), carried,
        [&](OpBuilder &nested, Location, Value step, ValueRange args) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToEnd(nested.getInsertionBlock());
          SmallVector<Value> next =
              body(sourceAt(step), std::nullopt, /*last=*/false, args);
          scf::YieldOp::create(b, cb.loc, next);
        });
    carried = SmallVector<Value>(loop.getResults());
  }
  return body(sourceAt(cb.index(steps - 1)), steps - 1, /*last=*/true,
              carried);
}
