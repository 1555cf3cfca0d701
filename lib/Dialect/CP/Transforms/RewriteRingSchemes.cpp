//===- RewriteRingSchemes.cpp - ring and zigzag attention -----------------===//
//
// The schemes that pass K/V round the group one shift a step, merging
// partial results by log-sum-exp, and skip the blocks a mask hides.
//
//===----------------------------------------------------------------------===//

#include "SchemeBuilder.h"
#include "cp/Dialect/CP/Analysis/RingSchedule.h"
#include "cp/Dialect/CP/Analysis/StructuredMask.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::cp;
using namespace mlir::cp::detail;

/// Ring attention: P steps; at step s this rank holds the K/V of group rank
/// (r - s) mod P, attends its queries to it with the log-sum-exp, and merges
/// the partial result into a running one, while the K/V for step s + 1 are
/// already being shifted one rank on. The local block is cut in chunks (one
/// for ring, the two zigzag chunks r and 2P-1-r for zigzag); each pair of
/// query and key chunks that the mask may leave visible is attended at its
/// global offsets, and a pair it masks entirely is skipped.
///
/// The first and the last step are emitted on their own, where the step is
/// a constant and a pair's visibility on every rank is known here; the
/// steps between them are one scf.for whose body decides visibility at run
/// time, so the IR and the compile time do not grow with P (or, with
/// unrollRing, one copy each).
Value SchemeBuilder::rewriteRing(const Group &cp, bool zigzag) {
  int64_t p = cp.size, len = shape.localLen;
  int64_t chunks = zigzag ? 2 : 1, rows = len / chunks;
  /// Global position of the first row of each chunk that `rank` holds.
  auto chunkStarts = [&](Value rank) -> SmallVector<Value> {
    if (!zigzag)
      return {mul(rank, len)};
    Value mirror = arith::SubIOp::create(b, loc, index(2 * p - 1), rank);
    return {mul(rank, rows), mul(mirror, rows)};
  };
  auto chunk = [&](Value x, int64_t c) {
    return chunks == 1 ? x : slice(x, kSeqDim, b.getIndexAttr(c * rows), rows);
  };
  /// The explicit mask's entries for query chunk `qc` (at global `qStart`)
  /// and the key chunk at global `kStart`.
  auto maskBlock = [&](int64_t qc, Value qStart, Value kStart) -> Value {
    if (!mask)
      return Value();
    int64_t rowDim = maskRowDim(mask);
    Value m = maskIsLocal(mask)
                  ? (chunks == 1
                         ? mask
                         : slice(mask, rowDim, b.getIndexAttr(qc * rows), rows))
                  : slice(mask, rowDim, qStart, rows);
    return slice(m, rowDim + 1, kStart, rows);
  };
  auto last = [&](Value start) { return add(start, rows - 1); };

  // Steps after the last one a mask lets any rank see are not emitted, nor
  // the shifts that would feed them.
  RingSchedule schedule{p, len, zigzag};
  int64_t steps = schedule.shiftsNeeded(op.getMask()) + 1;
  SmallVector<Value> qStarts = chunkStarts(cp.index);
  SmallVector<Partial> running(chunks);

  /// Attends every chunk pair of one step to the block (`k`, `v`) of group
  /// rank `source` and merges it into `running`. `step` is the step when it
  /// is a constant (visibility decided here where it is the same on every
  /// rank), std::nullopt inside the loop (decided at run time).
  auto attendStep = [&](Value source, std::optional<int64_t> step, Value k,
                        Value v) {
    SmallVector<Value> kStarts = chunkStarts(source);
    for (int64_t qc = 0; qc < chunks; ++qc) {
      // The diagonal chunk first: it is never fully masked, so it starts
      // the running result.
      for (int64_t kc : {qc, 1 - qc}) {
        if (kc >= chunks)
          continue;
        Value qStart = qStarts[qc], kStart = kStarts[kc];
        auto attend = [&] {
          return partialAttention(chunk(query, qc), chunk(k, kc), chunk(v, kc),
                                  qStart, kStart,
                                  maskBlock(qc, qStart, kStart));
        };
        if (step == 0 && kc == qc) {
          running[qc] = attend();
          continue;
        }
        RingSchedule::Visibility visibility =
            step ? schedule.visibility(op.getMask(), *step, qc, kc)
                 : RingSchedule::Visibility::depends;
        if (visibility == RingSchedule::Visibility::never)
          continue;
        Value visible;
        if (visibility == RingSchedule::Visibility::depends)
          visible = buildBlockIsVisible(b, loc, op.getMask(), qStart,
                                        last(qStart), kStart, last(kStart));
        Partial part;
        if (!visible) {
          part = attend();
        } else {
          Partial shapeOf = running[qc];
          auto ifOp = scf::IfOp::create(
              b, loc, TypeRange{shapeOf.out.getType(), shapeOf.lse.getType()},
              visible, /*withElseRegion=*/true);
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(ifOp.thenBlock());
          Partial computed = attend();
          scf::YieldOp::create(b, loc, ValueRange{computed.out, computed.lse});
          b.setInsertionPointToStart(ifOp.elseBlock());
          Partial skipped = emptyPartial(shapeOf);
          scf::YieldOp::create(b, loc, ValueRange{skipped.out, skipped.lse});
          part = {ifOp.getResult(0), ifOp.getResult(1)};
        }
        running[qc] = merge(running[qc], part);
      }
    }
  };
  /// The group rank whose block this rank holds at `step`: (r - step) mod P.
  auto sourceAt = [&](Value step) {
    Value back = arith::SubIOp::create(b, loc, index(p), step);
    return arith::RemUIOp::create(
               b, loc, arith::AddIOp::create(b, loc, cp.index, back), index(p))
        .getResult();
  };

  // Step 0 on the local block; the shift for step 1 is issued first, so
  // that it can overlap this step's attention (cp-overlap-collectives).
  Value k = key, v = value;
  if (steps > 1) {
    Value nextK = shift(cp, k), nextV = shift(cp, v);
    attendStep(cp.index, 0, k, v);
    k = nextK;
    v = nextV;
  } else {
    attendStep(cp.index, 0, k, v);
  }

  // Steps 1 .. steps - 2: one loop, carrying the block and the running
  // result of each chunk; unrolled, each step on its own.
  for (int64_t step = 1; unrollRing && step + 1 < steps; ++step) {
    Value nextK = shift(cp, k), nextV = shift(cp, v);
    attendStep(sourceAt(index(step)), step, k, v);
    k = nextK;
    v = nextV;
  }
  if (!unrollRing && steps > 2) {
    SmallVector<Value> carried{k, v};
    for (const Partial &partial : running) {
      carried.push_back(partial.out);
      carried.push_back(partial.lse);
    }
    auto loop = scf::ForOp::create(
        b, loc, index(1), index(steps - 1), index(1), carried,
        [&](OpBuilder &nested, Location, Value step, ValueRange args) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToEnd(nested.getInsertionBlock());
          for (int64_t c = 0; c < chunks; ++c)
            running[c] = {args[2 + 2 * c], args[3 + 2 * c]};
          Value nextK = shift(cp, args[0]), nextV = shift(cp, args[1]);
          attendStep(sourceAt(step), std::nullopt, args[0], args[1]);
          SmallVector<Value> yielded{nextK, nextV};
          for (const Partial &partial : running) {
            yielded.push_back(partial.out);
            yielded.push_back(partial.lse);
          }
          scf::YieldOp::create(b, loc, yielded);
        });
    k = loop.getResult(0);
    v = loop.getResult(1);
    for (int64_t c = 0; c < chunks; ++c)
      running[c] = {loop.getResult(2 + 2 * c), loop.getResult(3 + 2 * c)};
  }

  // The last step: nothing is shifted after it.
  if (steps > 1)
    attendStep(sourceAt(index(steps - 1)), steps - 1, k, v);

  Value out = running[0].out;
  if (chunks == 2) {
    auto type = withDim(out, kSeqDim, len);
    out = tensor::ConcatOp::create(b, loc, type, kSeqDim,
                                   ValueRange{running[0].out, running[1].out});
  }
  return toStorageType(out);
}
