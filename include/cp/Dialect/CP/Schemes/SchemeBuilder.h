//===- SchemeBuilder.h - the ops that replace one cp.attention --*- C++ -*-===//
//
// What schemes are built from: process groups, collectives, slices and
// local attentions at global offsets. A SchemeDefinition's rewrite receives
// a SchemeBuilder (or a GradSchemeBuilder) for one op; this header is the
// API plugins build their schemes with (docs/SchemePlugins.md). The
// rewrite* members are the built-in schemes, in RewriteGatherSchemes.cpp
// and RewriteRingSchemes.cpp; the backward's are in RewriteGradSchemes.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef CP_DIALECT_CP_TRANSFORMS_SCHEMEBUILDER_H
#define CP_DIALECT_CP_TRANSFORMS_SCHEMEBUILDER_H

#include "cp/Dialect/CP/Analysis/RingSchedule.h"
#include "cp/Dialect/CP/IR/CPOps.h"
#include "cp/Dialect/CP/IR/SchemeConstraints.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"

namespace mlir::cp {

constexpr int64_t kHeadsDim = 1;
constexpr int64_t kSeqDim = 2;

/// A process group: `axes` of the grid named `grid`, with `size` processes,
/// and this process's index in it (row-major over `axes`).
struct Group {
  FlatSymbolRefAttr grid;
  SmallVector<int16_t> axes;
  int64_t size;
  Value index;
};

/// The collectives, slices and index arithmetic every scheme rewrite (of
/// the forward or the backward) builds from, inserted before `op`.
class CollectiveBuilder {
public:
  /// For the sharded op `op` over the `shape.groupSize` processes of
  /// `axes` of `grid`.
  CollectiveBuilder(Operation *op, const AttentionShape &shape,
                    FlatSymbolRefAttr grid, ArrayRef<int16_t> axes)
      : b(op), loc(op->getLoc()), shape(shape),
        sharded(op), shardedGroup{grid, SmallVector<int16_t>(axes),
                                  shape.groupSize, Value()} {}

  /// The sharded op's CP group with this process's index in it (built on
  /// the first call, before the op).
  const Group &cpGroup();
  /// The CP group as hybrid(u) sees it, an `outer` group of P/u processes
  /// and an `inner` one of u, each with this process's index. Two grid
  /// axes are (outer, inner); a 1-D grid of size P is viewed through a
  /// derived `(P/u) x u` grid (created next to it) whose row-major index
  /// equals the 1-D one. Fails with a diagnostic on the op otherwise.
  LogicalResult hybridGroups(int64_t u, Group &outer, Group &inner);

  Value index(int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }
  Value mul(Value x, int64_t c) {
    return arith::MulIOp::create(b, loc, x, index(c));
  }
  Value add(Value x, int64_t c) {
    return arith::AddIOp::create(b, loc, x, index(c));
  }

  /// This process's index in `axes` of `grid` (0 for a group of size 1).
  Value groupIndex(FlatSymbolRefAttr grid, ArrayRef<int16_t> axes,
                   ArrayRef<int64_t> axisSizes);

  static RankedTensorType withDim(Value v, int64_t dim, int64_t size) {
    return withDim(cast<RankedTensorType>(v.getType()), dim, size);
  }
  static RankedTensorType withDim(RankedTensorType type, int64_t dim,
                                  int64_t size) {
    SmallVector<int64_t> shape(type.getShape());
    shape[dim] = size;
    return type.clone(shape);
  }
  /// The query-row dim of an explicit mask ([Lq, S] or [B, H, Lq, S]).
  static int64_t maskRowDim(Value mask) {
    return cast<RankedTensorType>(mask.getType()).getRank() - 2;
  }
  static int64_t dimOf(Value v, int64_t dim) {
    return cast<RankedTensorType>(v.getType()).getDimSize(dim);
  }

  /// `size` rows of `v` along `dim` starting at `offset`.
  Value slice(Value v, int64_t dim, OpFoldResult offset, int64_t size);

  Value allGather(const Group &g, Value v, int64_t dim) {
    return AllGatherOp::create(b, loc, withDim(v, dim, dimOf(v, dim) * g.size),
                               v, g.grid.getValue(), g.axes, dim);
  }
  Value reduceScatter(const Group &g, Value v, int64_t dim) {
    return ReduceScatterOp::create(b, loc,
                                   withDim(v, dim, dimOf(v, dim) / g.size), v,
                                   g.grid.getValue(), g.axes, dim);
  }
  Value allToAll(const Group &g, Value v, int64_t split, int64_t concat) {
    RankedTensorType type = withDim(withDim(v, split, dimOf(v, split) / g.size),
                                    concat, dimOf(v, concat) * g.size);
    return AllToAllOp::create(b, loc, type, v, g.grid.getValue(), g.axes, split,
                              concat);
  }
  Value exchangeMirror(const Group &g, Value v) {
    return ExchangeOp::create(b, loc, v, g.grid.getValue(), g.axes,
                              PartnerKind::mirror);
  }
  Value shift(const Group &g, Value v, int64_t offset = 1) {
    return ShiftOp::create(b, loc, v, g.grid.getValue(), g.axes, offset);
  }
  Value relayout(const Group &g, Value v, int64_t seqAxis, SequenceLayout from,
                 SequenceLayout to) {
    return RelayoutOp::create(b, loc, v, g.grid.getValue(), g.axes, seqAxis,
                              from, to);
  }
  /// Marks the local op `local` that a scheme built for the sharded op
  /// `sharded` with the scheme and its traffic, and gives it the sharded
  /// op's mask_mod and score_mod regions (both ops hold them as regions 0
  /// and 1): they are written on global positions, which the local op's
  /// offsets (and head offset) supply.
  void markLocal(Operation *local, Operation *sharded, SchemeAttr scheme,
                 int64_t bytesPerRank);

  /// `v` with element type `element` (an extf or truncf per element; `v`
  /// itself when it has it).
  Value convertElements(Value v, Type element);
  /// The elementwise sum of two tensors of one type.
  Value addTensors(Value x, Value y);
  /// A tensor of `type` (floating-point elements) filled with `value`.
  Value filled(RankedTensorType type, double value);
  /// A tensor of `type` filled with zeros.
  Value zeros(RankedTensorType type);

  /// Rows [start, start + count) of an explicit mask given with the global
  /// query extent, and heads [h0, h0 + hCount) when it has one per head.
  Value sliceGlobalMask(Value mask, OpFoldResult start, int64_t count,
                        OpFoldResult h0, int64_t hCount);
  bool maskHasHeads(Value mask) const {
    auto type = cast<RankedTensorType>(mask.getType());
    return type.getRank() == 4 && type.getDimSize(kHeadsDim) == shape.heads &&
           shape.heads != 1;
  }
  bool maskIsLocal(Value mask) const {
    return dimOf(mask, maskRowDim(mask)) == shape.localLen;
  }
  /// The mask of this rank's L query rows from `qOffset` against all S keys
  /// (allgather): a global one sliced, a local one as it is.
  Value gatheredKeysMask(Value mask, Value qOffset);
  /// The mask of Ulysses' local heads over `blockLen` query rows from
  /// `qOffset`: a local one traded for a head split (or gathered when it has
  /// no heads), a global one sliced.
  Value ulyssesMask(const Group &inner, Value mask, Value qOffset,
                    int64_t blockLen);

  OpBuilder b;
  Location loc;
  AttentionShape shape;
  /// The op being replaced.
  Operation *sharded;
  /// Its CP group; the index is null until cpGroup() builds it.
  Group shardedGroup;
};

/// The steps of ring and zigzag, shared by the forward and the backward
/// (RingSteps.cpp). Each rank's block is cut in chunks (one for ring; for
/// zigzag the chunks r and 2P-1-r); at step s this rank holds the K/V block
/// of group rank (r - s) mod P. Steps after the last one a mask lets any
/// rank see are not emitted.
class RingSteps {
public:
  RingSteps(CollectiveBuilder &builder, const Group &cp, MaskAttr mask,
            bool zigzag, bool unroll);

  int64_t chunks() const { return schedule.chunks(); }
  int64_t chunkRows() const { return schedule.chunkRows(); }
  /// Chunk `c` of the rows (dim 2) of a local tensor: q, k, v, o, dO, lse.
  Value chunk(Value x, int64_t c);
  /// The accumulator `acc` with `part` added to its chunk `c`; a null `acc`
  /// stands for zeros (so the first addition costs nothing on one chunk).
  Value addToChunk(Value acc, int64_t c, Value part);
  /// The explicit mask's entries for query chunk `qc` (at global `qStart`)
  /// against the key chunk at global `kStart`; null without a mask.
  Value maskBlock(Value mask, int64_t qc, Value qStart, Value kStart);

  /// Calls `visit` for each (query chunk, key chunk) pair the step on the
  /// block of group rank `source` may attend, the diagonal pair of a query
  /// chunk first. `step` is the step where it is a constant (visibility is
  /// decided here where it is the same on every rank), std::nullopt inside
  /// the loop. `visible` is null where the pair is visible on every rank,
  /// else an i1 computed at run time.
  void forEachPair(Value source, std::optional<int64_t> step,
                   function_ref<void(int64_t qc, int64_t kc, Value qStart,
                                     Value kStart, Value visible)>
                       visit);
  /// `compute()`'s values (of `types`) where `visible` holds and
  /// `skipped()`'s elsewhere (one scf.if); `compute()`'s alone when
  /// `visible` is null.
  SmallVector<Value> guarded(Value visible, TypeRange types,
                             function_ref<SmallVector<Value>()> compute,
                             function_ref<SmallVector<Value>()> skipped);

  using StepBody =
      function_ref<SmallVector<Value>(Value source, std::optional<int64_t> step,
                                      bool last, ValueRange carried)>;
  /// Emits the steps: the first and the last on their own (the step a
  /// constant), the ones between as one scf.for carrying `carried` (or,
  /// unrolled, each on its own), so that the IR does not grow with P.
  /// `body` emits one step on the block of group rank `source` and returns
  /// what the next step carries (`last`: no step follows). Returns what the
  /// last step returned.
  SmallVector<Value> run(SmallVector<Value> carried, StepBody body);

  RingSchedule schedule;
  /// The steps that attend anything on some rank (shifts needed + 1).
  int64_t steps;

private:
  /// The global first row of each chunk group rank `rank` holds.
  SmallVector<Value> chunkStarts(Value rank);
  /// The group rank whose block this rank holds at `step`.
  Value sourceAt(Value step);

  CollectiveBuilder &cb;
  const Group &cp;
  MaskAttr mask;
  bool unroll;
  SmallVector<Value> qStarts;
};

/// Builds the ops that replace one cp.attention. One instance per op.
class SchemeBuilder : public CollectiveBuilder {
public:
  SchemeBuilder(AttentionOp op, const AttentionShape &shape)
      : CollectiveBuilder(op, shape, op.getGridAttr(), op.getGridAxes()),
        op(op), query(op.getQuery()), key(op.getKey()), value(op.getValue()),
        mask(op.getExplicitMask()), sinks(op.getSinks()) {}

  /// The operands in the scheme's layout: Q, K, V and a mask with a local
  /// query extent are converted when the op's layout differs.
  void convertOperandsTo(const Group &g, SequenceLayout to);
  /// What a scheme computes for the op: this rank's output (the op's type)
  /// and, when the op returns one, its lse (else null).
  struct Result {
    Value out, lse;
  };
  /// Replaces the op with `result`, converted back to the op's layout.
  void finish(const Group &g, Result result, SequenceLayout computedIn);
  /// The op returns the log-sum-exp of its rows.
  bool wantsLse() { return static_cast<bool>(op.getLse()); }

  /// Local attention of `q` against `k`/`v` at global offsets, carrying the
  /// op's mask kind and scale and `sinks` (the heads of `q`), marked with
  /// the scheme and its traffic; with the lse when the op returns one.
  Result localAttention(Value q, Value k, Value v, Value qOffset,
                        Value kvOffset, Value mask);
  /// Marks a local attention with the scheme, its traffic and the op's
  /// regions (markLocal).
  void mark(LocalAttentionOp attention) {
    markLocal(attention, op, scheme, bytesPerRank);
  }
  bool hasModRegions() {
    return !op.getMaskMod().empty() || !op.getScoreMod().empty();
  }

  /// A partial result: the f32 output and log-sum-exp of some queries
  /// against some keys. `withSinks`: the one partial of each query row that
  /// counts the op's sinks (cp.merge then counts them once).
  struct Partial {
    Value out, lse;
  };
  Partial partialAttention(Value q, Value k, Value v, Value qOffset,
                           Value kvOffset, Value mask, bool withSinks);
  /// What a fully masked block contributes: output 0, lse -inf.
  Partial emptyPartial(Partial like);
  Partial merge(Partial a, Partial c) {
    auto merged = MergeOp::create(b, loc, a.out, a.lse, c.out, c.lse);
    return {merged.getOutput(), merged.getLse()};
  }
  /// `f32` rounded to the op's element type (a no-op for f32).
  Value toStorageType(Value f32);

  Result rewriteAllGather(const Group &cp);
  Result rewriteUlysses(const Group &inner, const Group *outer);
  Result rewriteHeadTail(const Group &cp);
  Result rewriteRing(const Group &cp, bool zigzag);
  /// The schemes for replicated queries (a decode against a sharded KV
  /// cache); allgather handles them itself.
  Result rewriteUlyssesReplicated(const Group &cp);
  Result rewriteRingReplicated(const Group &cp);

  AttentionOp op;
  SchemeAttr scheme;
  /// Ring and zigzag emit every step instead of looping over the middle
  /// ones (cp-apply-scheme{unroll-ring}).
  bool unrollRing = false;
  int64_t bytesPerRank = 0;
  /// The op's operands, in the layout the scheme computes in; `sinks` for
  /// the heads local attentions compute (null without sinks).
  Value query, key, value, mask, sinks;
  /// The global index of the first head local attentions compute, for mod
  /// regions (null: 0).
  Value headOffset;
};

/// Builds the ops that replace one cp.attention_grad
/// (RewriteGradSchemes.cpp). Each scheme's backward mirrors its forward and
/// returns the op's three gradients.
class GradSchemeBuilder : public CollectiveBuilder {
public:
  GradSchemeBuilder(AttentionGradOp op, const AttentionShape &shape)
      : CollectiveBuilder(op, shape, op.getGridAttr(), op.getGridAxes()),
        op(op) {}

  struct Grads {
    Value dq, dk, dv;
  };
  /// The op's operands in the scheme's layout, as the rewrites use them.
  struct Operands {
    Value q, k, v, o, lse, dO, mask;
  };

  /// cp.local_attention_grad of `in` at global offsets, with the op's mask
  /// kind, scale and regions, marked with the scheme and its traffic
  /// (`kvReused`: allgather reuses the forward's gathered K/V). The
  /// gradients have the op's gradient element types (what the schemes send
  /// and sum across ranks).
  Grads localGrad(const Operands &in, Value qOffset, Value kvOffset,
                  Value headOffset, bool kvReused = false);
  /// The op's operands, converted from the op's layout to `to`.
  Operands operandsIn(const Group &g, SequenceLayout to);
  /// Replaces the op with `grads`, converted back to the op's layout and
  /// element types, and (with sinks) its grad_sinks with sinksGradient(g).
  void finish(const Group &g, Grads grads, SequenceLayout computedIn);
  /// The sinks' gradient, the same on every rank of `g` (the whole CP
  /// group): -sum over rows of exp(sinks[h] - lse) * rowsum(dO * O), over
  /// this rank's rows of the op's own operands, then summed over `g` by an
  /// all-gather of the [H] partial sums. Every scheme shares it: the lse
  /// already counts the sinks, so dq, dk and dv need nothing else.
  Value sinksGradient(const Group &g);

  /// The backward's bytes per rank (SchemeTraffic), recorded on the local
  /// gradient ops.
  int64_t trafficOf(bool kvReused);

  Grads rewriteAllGather(const Group &cp, const Operands &in);
  Grads rewriteUlysses(const Group &inner, const Group *outer,
                       const Operands &in);
  Grads rewriteHeadTail(const Group &cp, const Operands &in);
  Grads rewriteRing(const Group &cp, bool zigzag, const Operands &in);

  AttentionGradOp op;
  SchemeAttr scheme;
  /// As for the forward (cp-apply-scheme{unroll-ring}).
  bool unrollRing = false;
};

} // namespace mlir::cp

#endif // CP_DIALECT_CP_TRANSFORMS_SCHEMEBUILDER_H
