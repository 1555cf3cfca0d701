//===- RewriteRingSchemes.cpp - ring and zigzag attention -----------------===//
//
// The schemes that pass K/V round the group one shift a step, merging
// partial results by log-sum-exp, and skip the blocks a mask hides.
//
//===----------------------------------------------------------------------===//

#include "cp/Dialect/CP/Schemes/SchemeBuilder.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::cp;

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
/// unrollRing, one copy each): RingSteps.
/// Ring with replicated queries: the queries stay, the K/V blocks travel
/// round the group, and every rank merges all P blocks into the same
/// output. Whether a structured mask hides a block depends on the block's
/// position against rows 0..Lq-1, which the local attention applies at
/// the block's global offset; every step is run (a fully hidden block
/// gives lse -inf, which the merge ignores). Step 0's partial counts the
/// sinks.
SchemeBuilder::Result SchemeBuilder::rewriteRingReplicated(const Group &cp) {
  RingSteps ring(*this, cp, MaskAttr::get(b.getContext(), MaskKind::none),
                 /*zigzag=*/false, unrollRing);
  SmallVector<Value> carried{key, value, Value(), Value()};
  carried = ring.run(carried, [&](Value source, std::optional<int64_t>,
                                  bool last, ValueRange in) {
    Value k = in[0], v = in[1];
    Value nextK = last ? k : shift(cp, k), nextV = last ? v : shift(cp, v);
    Value kStart = mul(source, shape.localLen);
    Value m = mask ? slice(mask, maskRowDim(mask) + 1, kStart, shape.localLen)
                   : Value();
    Partial acc{in[2], in[3]};
    Partial part = partialAttention(query, k, v, index(0), kStart, m,
                                    /*withSinks=*/!acc.out);
    acc = acc.out ? merge(acc, part) : part;
    return SmallVector<Value>{nextK, nextV, acc.out, acc.lse};
  });
  return {toStorageType(carried[2]), wantsLse() ? carried[3] : Value()};
}

SchemeBuilder::Result SchemeBuilder::rewriteRing(const Group &cp, bool zigzag) {
  if (shape.replicatedQueries)
    return rewriteRingReplicated(cp);
  RingSteps ring(*this, cp, op.getMask(), zigzag, unrollRing);
  int64_t chunks = ring.chunks();
  // Carried from step to step: the K/V block, then each query chunk's
  // running output and lse (null until step 0's diagonal pair starts it).
  SmallVector<Value> carried{key, value};
  carried.append(2 * chunks, Value());
  carried = ring.run(carried, [&](Value source, std::optional<int64_t> step,
                                  bool last, ValueRange in) {
    Value k = in[0], v = in[1];
    SmallVector<Partial> running;
    for (int64_t c = 0; c < chunks; ++c)
      running.push_back({in[2 + 2 * c], in[3 + 2 * c]});
    // The next step's block is shifted first, so that the shift can
    // overlap this step's attention (cp-overlap-collectives).
    Value nextK = last ? k : shift(cp, k), nextV = last ? v : shift(cp, v);
    ring.forEachPair(source, step, [&](int64_t qc, int64_t kc, Value qStart,
                                       Value kStart, Value visible) {
      auto attend = [&](bool withSinks) {
        return partialAttention(ring.chunk(query, qc), ring.chunk(k, kc),
                                ring.chunk(v, kc), qStart, kStart,
                                ring.maskBlock(mask, qc, qStart, kStart),
                                withSinks);
      };
      // A chunk's first partial (step 0's diagonal pair) counts the sinks.
      Partial &acc = running[qc];
      if (!acc.out) {
        acc = attend(/*withSinks=*/true);
        return;
      }
      SmallVector<Value> part = ring.guarded(
          visible, TypeRange{acc.out.getType(), acc.lse.getType()},
          [&]() -> SmallVector<Value> {
            Partial computed = attend(/*withSinks=*/false);
            return {computed.out, computed.lse};
          },
          [&]() -> SmallVector<Value> {
            Partial skipped = emptyPartial(acc);
            return {skipped.out, skipped.lse};
          });
      acc = merge(acc, {part[0], part[1]});
    });
    SmallVector<Value> next{nextK, nextV};
    for (const Partial &partial : running) {
      next.push_back(partial.out);
      next.push_back(partial.lse);
    }
    return next;
  });

  // Each chunk's merged output and lse, rejoined into the local block.
  auto rejoin = [&](int64_t first) -> Value {
    if (chunks == 1)
      return carried[first];
    auto type = withDim(carried[first], kSeqDim, shape.localLen);
    return tensor::ConcatOp::create(b, loc, type, kSeqDim,
                                    ValueRange{carried[first],
                                               carried[first + 2]})
        .getResult();
  };
  return {toStorageType(rejoin(2)), wantsLse() ? rejoin(3) : Value()};
}
