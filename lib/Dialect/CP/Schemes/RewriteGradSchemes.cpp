//===- RewriteGradSchemes.cpp - the backward of the CP schemes ------------===//
//
// cp.attention_grad under a scheme: each backward mirrors its forward
// (docs/Training.md §3). allgather re-gathers K/V (or reuses the forward's
// gather), takes the local gradient against every key and reduce-scatters
// dK/dV; ulysses trades the sequence split for a head split on q, k, v, o,
// dO and lse, and trades dq, dk, dv back; hybrid does Ulysses inside and
// allgather's backward across the outer group; head_tail trades the tail
// halves of q, o, dO and lse with the mirror rank, sends the tail's dq back
// and reduce-scatters dK/dV as allgather does; ring and zigzag pass K/V
// round the group as the forward does, with the dK/dV accumulators of the
// block travelling with it and one hop home at the end.
//
//===----------------------------------------------------------------------===//

#include "cp/Dialect/CP/Analysis/SchemeTraffic.h"
#include "cp/Dialect/CP/Schemes/SchemeBuilder.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::cp;

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
  if (op.getSinks())
    op.getGradSinks().replaceAllUsesWith(sinksGradient(g));
}

Value GradSchemeBuilder::sinksGradient(const Group &g) {
  MLIRContext *ctx = b.getContext();
  Type f32 = b.getF32Type();
  int64_t heads = dimOf(op.getSinks(), 0);
  auto headsType = RankedTensorType::get({heads}, f32);
  auto toF32 = [&](OpBuilder &nb, Location nloc, Value x) -> Value {
    return x.getType() == f32 ? x : arith::ExtFOp::create(nb, nloc, f32, x);
  };
  // Over (b, h, i, d): partial[h] -= exp(sinks[h] - lse[b, h, i]) *
  // dO[b, h, i, d] * O[b, h, i, d].
  AffineExpr db, dh, di, dd;
  bindDims(ctx, db, dh, di, dd);
  auto map = [&](ArrayRef<AffineExpr> results) {
    return AffineMap::get(4, 0, results, ctx);
  };
  SmallVector<AffineMap> maps{map({db, dh, di, dd}), map({db, dh, di, dd}),
                              map({db, dh, di}), map({dh}), map({dh})};
  SmallVector<utils::IteratorType> iterators{
      utils::IteratorType::reduction, utils::IteratorType::parallel,
      utils::IteratorType::reduction, utils::IteratorType::reduction};
  Value partial =
      linalg::GenericOp::create(
          b, loc, TypeRange{headsType},
          ValueRange{op.getGradOutput(), op.getOutput(), op.getLse(),
                     op.getSinks()},
          ValueRange{zeros(headsType)}, maps, iterators,
          [&](OpBuilder &nb, Location nloc, ValueRange args) {
            Value product = arith::MulFOp::create(
                nb, nloc, toF32(nb, nloc, args[0]), toF32(nb, nloc, args[1]));
            Value sinkProbability = math::ExpOp::create(
                nb, nloc, arith::SubFOp::create(nb, nloc, args[3], args[2]));
            Value term =
                arith::MulFOp::create(nb, nloc, sinkProbability, product);
            Value next = arith::SubFOp::create(nb, nloc, args[4], term);
            linalg::YieldOp::create(nb, nloc, next);
          })
          .getResult(0);
  // Summed over the group: each rank's [1, H] gathered into [P, H].
  Value row = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get({1, heads}, f32), partial,
      SmallVector<ReassociationIndices>{{0, 1}});
  Value gathered = allGather(g, row, 0);
  AffineExpr dp, dk;
  bindDims(ctx, dp, dk);
  SmallVector<AffineMap> sumMaps{AffineMap::get(2, 0, {dp, dk}, ctx),
                                 AffineMap::get(2, 0, {dk}, ctx)};
  return linalg::GenericOp::create(
             b, loc, TypeRange{headsType}, ValueRange{gathered},
             ValueRange{zeros(headsType)}, sumMaps,
             SmallVector<utils::IteratorType>{utils::IteratorType::reduction,
                                              utils::IteratorType::parallel},
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               Value sum = arith::AddFOp::create(nb, nloc, args[1], args[0]);
               linalg::YieldOp::create(nb, nloc, sum);
             })
      .getResult(0);
}

int64_t GradSchemeBuilder::trafficOf(bool kvReused) {
  auto bytes = [](Value v) {
    return cast<ShapedType>(v.getType()).getElementTypeBitWidth() / 8;
  };
  GradElementBytes sizes{bytes(op.getQuery()), bytes(op.getGradOutput()),
                         bytes(op.getGradQuery()), bytes(op.getGradKey())};
  return backwardBytesSentPerRank(scheme, shape, sizes, op.getLayout(),
                                  kvReused, op.getMask()) +
         (op.getSinks() ? sinksGradientBytesPerRank(shape) : 0);
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

/// Ring and zigzag backward: the forward's steps (RingSteps), each rank
/// keeping its q, o, dO, lse and a dq accumulator. At step s it holds the
/// K/V block of group rank (r - s) mod P together with that block's dK/dV
/// accumulators; each visible chunk pair adds its local gradient to dq and
/// to the step's dK/dV, which are added to the accumulators that arrived
/// with the block and sent on. The arriving accumulators are shifted at the
/// start of the step, with the next K/V, and only read after the step's
/// local gradients, so their transfer overlaps the step's work
/// (cp-overlap-collectives waits at the first use). After the last step the
/// accumulators are one hop from home (P - steps + 1 ranks on, mod P: one
/// rank when every step runs) and are shifted there. P is recomputed from
/// the forward's final lse, so the pairs' gradients add up to the full one
/// exactly.
GradSchemeBuilder::Grads GradSchemeBuilder::rewriteRing(const Group &cp,
                                                        bool zigzag,
                                                        const Operands &in) {
  RingSteps ring(*this, cp, op.getMask(), zigzag, unrollRing);
  auto gradType = [](Value like, Value result) {
    return cast<RankedTensorType>(like.getType())
        .clone(cast<RankedTensorType>(result.getType()).getElementType());
  };
  SmallVector<Type> gradTypes{gradType(in.q, op.getGradQuery()),
                                  gradType(in.k, op.getGradKey()),
                              gradType(in.v, op.getGradValue())};
  // A null gradient stands for zeros: dq before step 0's diagonal pair and
  // the step's dK/dV before its first visible pair.
  auto orZeros = [&](SmallVector<Value> grads) {
    for (auto [g, type] : llvm::zip(grads, gradTypes))
      if (!g)
        g = zeros(cast<RankedTensorType>(type));
    return grads;
  };
  // Carried: K, V, the block's dK and dV (not yet sent on), this rank's dq.
  SmallVector<Value> carried{in.k, in.v, Value(), Value(), Value()};
  carried = ring.run(carried, [&](Value source, std::optional<int64_t> step,
                                  bool last, ValueRange acc) {
    Value k = acc[0], v = acc[1];
    Value arrivedK = acc[2] ? shift(cp, acc[2]) : Value();
    Value arrivedV = acc[3] ? shift(cp, acc[3]) : Value();
    Value nextK = last ? k : shift(cp, k), nextV = last ? v : shift(cp, v);
    SmallVector<Value> grads{acc[4], Value(), Value()}; // dq, step dk, dv
    ring.forEachPair(source, step, [&](int64_t qc, int64_t kc, Value qStart,
                                       Value kStart, Value visible) {
      auto compute = [&]() -> SmallVector<Value> {
        Operands pair{ring.chunk(in.q, qc),   ring.chunk(k, kc),
                      ring.chunk(v, kc),      ring.chunk(in.o, qc),
                      ring.chunk(in.lse, qc), ring.chunk(in.dO, qc),
                      ring.maskBlock(in.mask, qc, qStart, kStart)};
        Grads part = localGrad(pair, qStart, kStart, Value());
        return {ring.addToChunk(grads[0], qc, part.dq),
                ring.addToChunk(grads[1], kc, part.dk),
                ring.addToChunk(grads[2], kc, part.dv)};
      };
      if (!visible) {
        grads = compute();
        return;
      }
      grads = ring.guarded(visible, gradTypes, compute,
                           [&] { return orZeros(grads); });
    });
    grads = orZeros(grads);
    Value dk = arrivedK ? addTensors(arrivedK, grads[1]) : grads[1];
    Value dv = arrivedV ? addTensors(arrivedV, grads[2]) : grads[2];
    return SmallVector<Value>{nextK, nextV, dk, dv, grads[0]};
  });
  Value dk = carried[2], dv = carried[3];
  if (ring.steps > 1) {
    int64_t home = cp.size - ring.steps + 1;
    dk = shift(cp, dk, home);
    dv = shift(cp, dv, home);
  }
  return {carried[4], dk, dv};
}
