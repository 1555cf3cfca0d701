//===- RewriteGatherSchemes.cpp - allgather, ulysses, hybrid, head_tail ---===//
//
// The schemes that attend to the whole K/V at once, gathered (allgather,
// head_tail, hybrid's outer group) or traded for a head split (ulysses).
//
//===----------------------------------------------------------------------===//

#include "cp/Dialect/CP/Schemes/SchemeBuilder.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::cp;

SchemeBuilder::Result SchemeBuilder::rewriteAllGather(const Group &cp) {
  Value k = allGather(cp, key, kSeqDim);
  Value v = allGather(cp, value, kSeqDim);
  // Replicated queries start at global row 0 and their mask is [Lq, S].
  if (shape.replicatedQueries)
    return localAttention(query, k, v, index(0), index(0), mask);
  Value qOffset = mul(cp.index, shape.localLen);
  return localAttention(query, k, v, qOffset, index(0),
                        gatheredKeysMask(mask, qOffset));
}

/// Ulysses with replicated queries: each rank already holds every query,
/// so it slices its heads' queries instead of trading them, trades K/V
/// from sequence to heads, and the ranks' heads of the output (and lse)
/// are all-gathered, since every rank returns every head.
SchemeBuilder::Result SchemeBuilder::rewriteUlyssesReplicated(const Group &cp) {
  int64_t localHeads = shape.heads / cp.size;
  Value firstHead = mul(cp.index, localHeads);
  Value q = slice(query, kHeadsDim, firstHead, localHeads);
  Value k = allToAll(cp, key, kHeadsDim, kSeqDim);
  Value v = allToAll(cp, value, kHeadsDim, kSeqDim);
  Value m = mask && maskHasHeads(mask)
                ? slice(mask, kHeadsDim, firstHead, localHeads)
                : mask;
  if (sinks)
    sinks = slice(sinks, 0, firstHead, localHeads);
  if (hasModRegions())
    headOffset = firstHead;
  Result local = localAttention(q, k, v, index(0), index(0), m);
  Result result{allGather(cp, local.out, kHeadsDim), Value()};
  if (local.lse)
    result.lse = allGather(cp, local.lse, kHeadsDim);
  return result;
}

/// Ulysses over `inner`; with `outer` (hybrid), K/V are then all-gathered
/// across `outer` and the local queries start at outer.index * u * L.
SchemeBuilder::Result SchemeBuilder::rewriteUlysses(const Group &inner,
                                                     const Group *outer) {
  auto toHeads = [&](Value x) {
    return allToAll(inner, x, kHeadsDim, kSeqDim);
  };
  Value q = toHeads(query);
  Value k = toHeads(key);
  Value v = toHeads(value);
  int64_t blockLen = inner.size * shape.localLen;
  Value qOffset = index(0);
  if (outer) {
    k = allGather(*outer, k, kSeqDim);
    v = allGather(*outer, v, kSeqDim);
    qOffset = mul(outer->index, blockLen);
  }
  int64_t localHeads = shape.heads / inner.size;
  Value m = ulyssesMask(inner, mask, qOffset, blockLen);
  if (sinks)
    sinks = slice(sinks, 0, mul(inner.index, localHeads), localHeads);
  if (hasModRegions())
    headOffset = mul(inner.index, localHeads);
  Result local = localAttention(q, k, v, qOffset, index(0), m);
  Result result{allToAll(inner, local.out, kSeqDim, kHeadsDim), Value()};
  if (local.lse)
    result.lse = allToAll(inner, local.lse, kSeqDim, kHeadsDim);
  return result;
}

SchemeBuilder::Result SchemeBuilder::rewriteHeadTail(const Group &cp) {
  int64_t len = shape.localLen, half = len / 2;
  Value peer = arith::SubIOp::create(b, loc, index(cp.size - 1), cp.index);
  Value keepOffset = mul(cp.index, len);
  Value peerOffset = add(mul(peer, len), half);

  Value keepQ = slice(query, kSeqDim, b.getIndexAttr(0), half);
  Value peerQ =
      exchangeMirror(cp, slice(query, kSeqDim, b.getIndexAttr(half), half));
  Value k = allGather(cp, key, kSeqDim);
  Value v = allGather(cp, value, kSeqDim);

  Value keepMask, peerMask;
  if (mask) {
    int64_t rows = maskRowDim(mask);
    if (maskIsLocal(mask)) {
      keepMask = slice(mask, rows, b.getIndexAttr(0), half);
      peerMask =
          exchangeMirror(cp, slice(mask, rows, b.getIndexAttr(half), half));
    } else {
      keepMask = slice(mask, rows, keepOffset, half);
      peerMask = slice(mask, rows, peerOffset, half);
    }
  }
  Result keep = localAttention(keepQ, k, v, keepOffset, index(0), keepMask);
  Result peerPart =
      localAttention(peerQ, k, v, peerOffset, index(0), peerMask);
  // The peer's tail rows go back to it; this rank's tail comes from it.
  auto rejoin = [&](Value kept, Value computedForPeer) {
    Value tail = exchangeMirror(cp, computedForPeer);
    return tensor::ConcatOp::create(b, loc, withDim(kept, kSeqDim, len),
                                    kSeqDim, ValueRange{kept, tail})
        .getResult();
  };
  Result result{rejoin(keep.out, peerPart.out), Value()};
  if (keep.lse)
    result.lse = rejoin(keep.lse, peerPart.lse);
  return result;
}
