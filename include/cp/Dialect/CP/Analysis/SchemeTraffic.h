//===- SchemeTraffic.h - bytes each CP scheme sends per rank ----*- C++ -*-===//
//
// DESIGN §2's table of bytes sent per rank for one attention forward. The
// cp-apply-scheme pass records it on rewritten ops, and the runtime's byte
// counters are checked against it.
//
//===----------------------------------------------------------------------===//

#ifndef CP_DIALECT_CP_ANALYSIS_SCHEMETRAFFIC_H
#define CP_DIALECT_CP_ANALYSIS_SCHEMETRAFFIC_H

#include "cp/Dialect/CP/IR/SchemeConstraints.h"

namespace mlir {
namespace cp {

/// Bytes one rank sends to other ranks for `scheme` on `shape`, with
/// `elementBytes` bytes per element. For head_tail this is the figure of a
/// rank with a distinct partner (the self-paired middle rank of an odd group
/// sends less). Ring and zigzag shift K/V only as far as `mask` lets any
/// rank see (P - 1 times without a mask, or for a null mask). Requires
/// every size in `shape` to be static. `withLse`: the op also returns the
/// f32 log-sum-exp, which the schemes that move the output move with it.
int64_t bytesSentPerRank(SchemeAttr scheme, const AttentionShape &shape,
                         int64_t elementBytes, MaskAttr mask = {},
                         bool withLse = false);

/// The same, for an op whose operands are in `layout`: when the scheme
/// computes in the other layout, Q, K, V go through cp.relayout and the
/// output comes back, and the busiest rank's share of that is added.
int64_t bytesSentPerRank(SchemeAttr scheme, const AttentionShape &shape,
                         int64_t elementBytes, SequenceLayout layout,
                         MaskAttr mask = {}, bool withLse = false);

/// Bytes per element of the tensors a backward moves: q, k, v and o
/// (`operand`), dO, dq, and dk/dv (what their partial sums travel in).
struct GradElementBytes {
  int64_t operand, gradOutput, gradQuery, gradKeyValue;
};

/// Bytes per rank of the sinks gradient's all-gather in the backward of an
/// op with attention sinks, the same under every scheme: each rank sends
/// its [H] f32 partial sums to the P - 1 others.
inline int64_t sinksGradientBytesPerRank(const AttentionShape &s) {
  return (s.groupSize - 1) * s.heads * 4;
}

/// Bytes the busiest rank sends in the backward (cp.attention_grad) of
/// `scheme` (docs/Training.md §3; for head_tail a rank with a distinct
/// partner, the middle rank of an odd group sends less). `kvReused`:
/// allgather reuses the forward's gathered K/V and sends only the
/// reduce-scatter. `mask`: ring and zigzag shift only as far as it lets
/// some rank see. Relayouts for an op in another layout than the scheme's
/// are added as for the forward.
int64_t backwardBytesSentPerRank(SchemeAttr scheme, const AttentionShape &shape,
                                 const GradElementBytes &bytes,
                                 SequenceLayout layout, bool kvReused = false,
                                 MaskAttr mask = {});

/// Bytes the busiest rank sends in a training step: the forward (returning
/// its lse) and its backward under one `scheme` in one function, where CSE
/// makes one op of each collective the backward repeats on the forward's
/// values: the K/V gathers (allgather, head_tail, hybrid's outer group),
/// Ulysses' all-to-alls of Q, K, V, head_tail's exchange of the Q tail,
/// the ring's first K/V shift (the later ones are in the steps' loop), and
/// the relayouts of Q, K, V into the zigzag layout. The forward's collective
/// is kept, so the forward's K/V stay alive until the backward has used
/// them.
int64_t trainingBytesSentPerRank(SchemeAttr scheme, const AttentionShape &shape,
                                 const GradElementBytes &bytes,
                                 SequenceLayout layout, MaskAttr mask = {});

/// How many of its two halves (of L/2 rows) group rank `rank` sends to
/// other ranks in a cp.relayout from `from` to `to` over `groupSize` ranks
/// (0 when the layouts are equal).
int64_t relayoutHalvesSent(int64_t groupSize, int64_t rank, SequenceLayout from,
                           SequenceLayout to);

} // namespace cp
} // namespace mlir

#endif // CP_DIALECT_CP_ANALYSIS_SCHEMETRAFFIC_H
