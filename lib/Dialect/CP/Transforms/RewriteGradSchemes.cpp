//===- RewriteGradSchemes.cpp - the backward of the CP schemes ------------===//
//
// cp.attention_grad under a scheme: each backward mirrors its forward
// (docs/Training.md §3). allgather re-gathers K/V (or reuses the forward's
// gather), takes the local gradient against every key and reduce-scatters
// dK/dV; ulysses trades the sequence split for a head split on q, k, v, o,
// dO and lse, and trades dq, dk, dv back; hybrid does Ulysses inside and
// allgather's backward across the outer group; head_tail trades the tail
// halves of q, o, dO and lse with the mirror rank, sends the tail's dq back
// and reduce-scatters dK/dV as allgather does.
//
//===----------------------------------------------------------------------===//

#include "SchemeBuilder.h"
#include "cp/Dialect/CP/Analysis/SchemeTraffic.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::cp;
using namespace mlir::cp::detail;

GradSchemeBuilder::Operands GradSchemeBuilder::operandsIn(const Group &g,
                                                          SequenceLayout to) {
  Operands in{op.getQuery(),      op.getKey(), op.getValue(),
              op.getOutput(),     op.getLse(), op.getGradOutput(),
              op.getExplicitMask()};
  SequenceLayout from = op.getLayout();
  if (from == to)
    return in;
  for (Value *v : {&in.q, &in.k, &in.v, &in.o, &in.lse, &in.dO})
    *v = relayout(g, *v, kSeqDim, from, to);
  if (in.mask && maskIsLocal(in.mask))
    in.mask = relayout(g, in.mask, maskRowDim(in.mask), from, to);
  return in;
}

void GradSchemeBuilder::finish(const Group &g, Grads grads,
                               SequenceLayout computedIn) {
  Value results[3] = {grads.dq, grads.dk, grads.dv};
  for (auto [result, grad] : llvm::zip(op.getResults(), results)) {
    Value converted = convertElements(
        grad, cast<RankedTensorType>(result.getType()).getElementType());
    if (computedIn != op.getLayout())
      converted = relayout(g, converted, kSeqDim, computedIn, op.getLayout());
    result.replaceAllUsesWith(converted);
  }
}

int64_t GradSchemeBuilder::trafficOf(bool kvReused) {
  auto bytes = [](Value v) {
    return cast<ShapedType>(v.getType()).getElementTypeBitWidth() / 8;
  };
  GradElementBytes sizes{bytes(op.getQuery()), bytes(op.getGradOutput()),
                         bytes(op.getGradQuery()), bytes(op.getGradKey())};
  return backwardBytesSentPerRank(scheme, shape, sizes, op.getLayout(),
                                  kvReused);
}

GradSchemeBuilder::Grads
GradSchemeBuilder::localGrad(const Operands &in, Value qOffset, Value kvOffset,
                             Value headOffset, bool kvReused) {
  auto gradType = [&](Value like, Type element) {
    return cast<RankedTensorType>(like.getType()).clone(element);
  };
  // The gradients in the element types the op returns: what the schemes
  // send and sum (f32 partial sums when the op asks for f32 gradients).
  auto grad = LocalAttentionGradOp::create(
      b, loc, gradType(in.q, op.getGradQuery().getType().getElementType()),
      gradType(in.k, op.getGradKey().getType().getElementType()),
      gradType(in.v, op.getGradValue().getType().getElementType()), in.q, in.k, in.v, in.o, in.lse, in.dO,
      qOffset, kvOffset, headOffset, in.mask, op.getModOperands(),
      op.getMaskAttr(), op.getScaleAttr());
  markLocal(grad, op, scheme, trafficOf(kvReused));
  return {grad.getGradQuery(), grad.getGradKey(), grad.getGradValue()};
}

/// The forward's all-gather of `shard` over `g`, when the function still
/// has one before `op` in its block: the backward reuses it instead of
/// sending K/V again.
static Value findGathered(Operation *op, Value shard, const Group &g) {
  for (Operation *user : shard.getUsers()) {
    auto gather = dyn_cast<AllGatherOp>(user);
    if (gather && gather->getBlock() == op->getBlock() &&
        gather->isBeforeInBlock(op) && gather.getGatherAxis() == kSeqDim &&
        gather.getGridAttr() == g.grid &&
        gather.getGridAxes() == ArrayRef<int16_t>(g.axes))
      return gather.getResult();
  }
  return Value();
}

GradSchemeBuilder::Grads
GradSchemeBuilder::rewriteAllGather(const Group &cp, const Operands &in) {
  Operands gathered = in;
  Value k = findGathered(op, in.k, cp), v = findGathered(op, in.v, cp);
  bool reused = k && v;
  gathered.k = reused ? k : allGather(cp, in.k, kSeqDim);
  gathered.v = reused ? v : allGather(cp, in.v, kSeqDim);
  Value qOffset = mul(cp.index, shape.localLen);
  gathered.mask = gatheredKeysMask(in.mask, qOffset);
  Grads local = localGrad(gathered, qOffset, index(0), Value(), reused);
  local.dk.getDefiningOp()->setAttr(
      "cp.backward_kv", b.getStringAttr(reused ? "reused" : "regathered"));
  // Every rank's contributions to every key, summed; each keeps its rows.
  return {local.dq, reduceScatter(cp, local.dk, kSeqDim),
          reduceScatter(cp, local.dv, kSeqDim)};
}

GradSchemeBuilder::Grads
GradSchemeBuilder::rewriteUlysses(const Group &inner, const Group *outer,
                                  const Operands &in) {
  Operands heads = in;
  for (Value *x : {&heads.q, &heads.k, &heads.v, &heads.o, &heads.lse,
                   &heads.dO})
    *x = allToAll(inner, *x, kHeadsDim, kSeqDim);
  int64_t blockLen = inner.size * shape.localLen;
  Value qOffset = index(0);
  if (outer) {
    heads.k = allGather(*outer, heads.k, kSeqDim);
    heads.v = allGather(*outer, heads.v, kSeqDim);
    qOffset = mul(outer->index, blockLen);
  }
  heads.mask = ulyssesMask(inner, in.mask, qOffset, blockLen);
  int64_t localHeads = shape.heads / inner.size;
  Value headOffset;
  if (!op.getMaskMod().empty() || !op.getScoreMod().empty())
    headOffset = mul(inner.index, localHeads);
  Grads local = localGrad(heads, qOffset, index(0), headOffset);
  if (outer) {
    local.dk = reduceScatter(*outer, local.dk, kSeqDim);
    local.dv = reduceScatter(*outer, local.dv, kSeqDim);
  }
  auto toSequence = [&](Value x) {
    return allToAll(inner, x, kSeqDim, kHeadsDim);
  };
  return {toSequence(local.dq), toSequence(local.dk), toSequence(local.dv)};
}

GradSchemeBuilder::Grads
GradSchemeBuilder::rewriteHeadTail(const Group &cp, const Operands &in) {
  int64_t len = shape.localLen, half = len / 2;
  Value peer = arith::SubIOp::create(b, loc, index(cp.size - 1), cp.index);
  Value keepOffset = mul(cp.index, len);
  Value peerOffset = add(mul(peer, len), half);
  // This rank computes its head half and its partner's tail half, as in the
  // forward: the tail's q, o, dO and lse come over, its dq goes back.
  auto head = [&](Value x) { return slice(x, kSeqDim, b.getIndexAttr(0), half); };
  auto tail = [&](Value x) {
    return exchangeMirror(cp, slice(x, kSeqDim, b.getIndexAttr(half), half));
  };
  Operands keep = in, other = in;
  for (auto [k, o, x] : {std::tuple(&keep.q, &other.q, in.q),
                         std::tuple(&keep.o, &other.o, in.o),
                         std::tuple(&keep.lse, &other.lse, in.lse),
                         std::tuple(&keep.dO, &other.dO, in.dO)}) {
    *k = head(x);
    *o = tail(x);
  }
  Value k = allGather(cp, in.k, kSeqDim), v = allGather(cp, in.v, kSeqDim);
  keep.k = other.k = k;
  keep.v = other.v = v;
  if (in.mask) {
    int64_t rows = maskRowDim(in.mask);
    if (maskIsLocal(in.mask)) {
      keep.mask = slice(in.mask, rows, b.getIndexAttr(0), half);
      other.mask = exchangeMirror(
          cp, slice(in.mask, rows, b.getIndexAttr(half), half));
    } else {
      keep.mask = slice(in.mask, rows, keepOffset, half);
      other.mask = slice(in.mask, rows, peerOffset, half);
    }
  }
  Grads mine = localGrad(keep, keepOffset, index(0), Value());
  Grads theirs = localGrad(other, peerOffset, index(0), Value());
  Value tailDq = exchangeMirror(cp, theirs.dq);
  Value dq = tensor::ConcatOp::create(
      b, loc, withDim(mine.dq, kSeqDim, len), kSeqDim,
      ValueRange{mine.dq, tailDq});
  // Both halves' contributions to every key, then every rank's, summed.
  return {dq, reduceScatter(cp, addTensors(mine.dk, theirs.dk), kSeqDim),
          reduceScatter(cp, addTensors(mine.dv, theirs.dv), kSeqDim)};
}
