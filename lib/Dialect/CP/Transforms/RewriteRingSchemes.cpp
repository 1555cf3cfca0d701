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
  Value k = key, v = value;
  for (int64_t step = 0; step < steps; ++step) {
    // Issue the next step's shift first, so that it can overlap this
    // step's attention (cp-overlap-collectives).
    Value nextK, nextV;
    if (step + 1 < steps) {
      nextK = shift(cp, k);
      nextV = shift(cp, v);
    }
    Value source = cp.index;
    if (step != 0)
      source =
          arith::RemUIOp::create(b, loc, add(cp.index, p - step), index(p));
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
        // Visibility as a function of the rank: decided here when it is
        // the same on every rank, at run time (scf.if) otherwise.
        RingSchedule::Visibility visibility =
            schedule.visibility(op.getMask(), step, qc, kc);
        if (visibility == RingSchedule::Visibility::never)
          continue;
        Partial part;
        if (visibility == RingSchedule::Visibility::always) {
          part = attend();
        } else {
          Value visible = buildBlockIsVisible(
              b, loc, op.getMask(), qStart, last(qStart), kStart, last(kStart));
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
    k = nextK;
    v = nextV;
  }
  Value out = running[0].out;
  if (chunks == 2) {
    auto type = withDim(out, kSeqDim, len);
    out = tensor::ConcatOp::create(b, loc, type, kSeqDim,
                                   ValueRange{running[0].out, running[1].out});
  }
  return toStorageType(out);
}
