//===- SchemeTraffic.cpp - bytes each CP scheme sends per rank ------------===//
//
// DESIGN §2's "bytes sent per rank" table: what leaves one rank for other
// ranks, counted at the collective API, for one attention forward, and
// docs/Training.md §3's for the backward.
//
//===----------------------------------------------------------------------===//

#include "cp/Dialect/CP/Analysis/SchemeTraffic.h"
#include "cp/Dialect/CP/Analysis/RingSchedule.h"
#include "cp/Dialect/CP/IR/SchemeDefinition.h"
#include "llvm/Support/ErrorHandling.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::cp;

/// Elements of one rank's K and V shards: L * Hkv * (D + Dv) per batch.
static int64_t kvShardElements(const AttentionShape &s) {
  return s.batch * s.localLen * s.kvHeads * (s.headDim + s.valueDim);
}

/// Elements of one rank's Q, K, V and O shards, which Ulysses all-to-alls.
static int64_t qkvoShardElements(const AttentionShape &s) {
  return s.batch * s.localLen *
         (s.heads * s.headDim + s.kvHeads * s.headDim + s.kvHeads * s.valueDim +
          s.heads * s.valueDim);
}

/// The registered definition of a plugin scheme; the op verifier has
/// rejected any scheme without one before bytes are counted.
static const SchemeDefinition &pluginDefinition(SchemeAttr scheme) {
  const SchemeDefinition *definition = lookupScheme(scheme);
  assert(definition && "plugin scheme checked by findSchemeViolation first");
  return *definition;
}

/// The K/V shifts a ring or zigzag run needs under `mask` (fewer than P - 1
/// when a window ends the ring early); the forward and backward count them.
static int64_t ringShifts(SchemeAttr scheme, const AttentionShape &s,
                          MaskAttr mask) {
  // Replicated queries sit at rows 0..Lq-1 whatever the rank: the ring
  // runs every step.
  if (s.replicatedQueries)
    return s.groupSize - 1;
  RingSchedule ring{s.groupSize, s.localLen,
                    scheme.getKind() == SchemeKind::zigzag};
  return ring.shiftsNeeded(mask);
}

int64_t mlir::cp::bytesSentPerRank(SchemeAttr scheme, const AttentionShape &s,
                                   int64_t elementBytes, MaskAttr mask,
                                   bool withLse) {
  int64_t p = s.groupSize;
  int64_t allGatherKV = kvShardElements(s) * (p - 1);
  // The f32 lse of this rank's rows, where the output travels.
  int64_t lseBytes = withLse ? s.batch * s.localLen * s.heads * 4 : 0;
  switch (scheme.getKind()) {
  case SchemeKind::plugin:
    return pluginDefinition(scheme).bytesSentPerRank(scheme, s, elementBytes,
                                                     mask, withLse);
  case SchemeKind::allgather:
    return allGatherKV * elementBytes;
  case SchemeKind::ring:
  case SchemeKind::zigzag:
    return kvShardElements(s) * ringShifts(scheme, s, mask) * elementBytes;
  case SchemeKind::ulysses:
    if (s.replicatedQueries) {
      // K/V traded for heads; this rank's heads of O (and lse) gathered.
      int64_t localOut = s.batch * s.queryLen * s.heads / p;
      return (kvShardElements(s) / p * (p - 1) +
              localOut * s.valueDim * (p - 1)) *
                 elementBytes +
             (withLse ? localOut * 4 * (p - 1) : 0);
    }
    return qkvoShardElements(s) * (p - 1) / p * elementBytes +
           lseBytes / p * (p - 1);
  case SchemeKind::hybrid: {
    int64_t u = scheme.getUlyssesDegree(), outer = p / u;
    return (qkvoShardElements(s) * (u - 1) / u +
            kvShardElements(s) * (outer - 1)) *
               elementBytes +
           lseBytes / u * (u - 1);
  }
  case SchemeKind::head_tail: {
    int64_t half = s.localLen / 2;
    int64_t qTail = s.batch * half * s.heads * s.headDim;
    int64_t oBack = s.batch * half * s.heads * s.valueDim;
    int64_t exchanged = p > 1 ? (qTail + oBack) * elementBytes + lseBytes / 2
                              : 0;
    return exchanged + allGatherKV * elementBytes;
  }
  case SchemeKind::automatic:
    break;
  }
  llvm_unreachable("auto is resolved to a concrete scheme before costing");
}

/// The rank that holds global chunk `chunk` (of 2P) in `layout`.
static int64_t ownerOfChunk(int64_t p, int64_t chunk, SequenceLayout layout) {
  if (layout == SequenceLayout::contiguous)
    return chunk / 2;
  return chunk < p ? chunk : 2 * p - 1 - chunk;
}

/// The global chunk that is half `half` of rank `rank`'s shard in `layout`.
static int64_t chunkOfHalf(int64_t p, int64_t rank, int64_t half,
                           SequenceLayout layout) {
  if (layout == SequenceLayout::contiguous)
    return 2 * rank + half;
  return half == 0 ? rank : 2 * p - 1 - rank;
}

int64_t mlir::cp::relayoutHalvesSent(int64_t groupSize, int64_t rank,
                                     SequenceLayout from, SequenceLayout to) {
  if (from == to)
    return 0;
  int64_t sent = 0;
  for (int64_t half = 0; half < 2; ++half)
    sent += ownerOfChunk(groupSize, chunkOfHalf(groupSize, rank, half, from),
                         to) != rank;
  return sent;
}

/// The busiest rank's bytes for relayouts into the scheme's layout of
/// tensors with `inRowBytes` per sequence row and back of `outRowBytes`.
static int64_t relayoutBytes(const AttentionShape &s, SequenceLayout layout,
                             SequenceLayout computed, int64_t inRowBytes,
                             int64_t outRowBytes) {
  if (computed == layout)
    return 0;
  int64_t half = s.batch * (s.localLen / 2);
  // Beyond a few ranks some rank moves both halves each way (only ranks 0
  // and about 2P/3 keep a chunk): the busiest is that, without visiting
  // every rank.
  if (s.groupSize > 64)
    return 2 * (inRowBytes + outRowBytes) * half;
  int64_t busiest = 0;
  for (int64_t r = 0; r < s.groupSize; ++r)
    busiest = std::max(
        busiest,
        relayoutHalvesSent(s.groupSize, r, layout, computed) * inRowBytes +
            relayoutHalvesSent(s.groupSize, r, computed, layout) * outRowBytes);
  return busiest * half;
}

int64_t mlir::cp::bytesSentPerRank(SchemeAttr scheme, const AttentionShape &s,
                                   int64_t elementBytes, SequenceLayout layout,
                                   MaskAttr mask, bool withLse) {
  // Q, K, V move in halves of L/2 rows into the scheme's layout, O (and
  // the lse) back.
  int64_t inRow = s.heads * s.headDim + s.kvHeads * (s.headDim + s.valueDim);
  int64_t outRow = s.heads * s.valueDim;
  return bytesSentPerRank(scheme, s, elementBytes, mask, withLse) +
         relayoutBytes(s, layout, schemeLayout(scheme), inRow * elementBytes,
                       outRow * elementBytes + (withLse ? s.heads * 4 : 0));
}

int64_t mlir::cp::backwardBytesSentPerRank(SchemeAttr scheme,
                                           const AttentionShape &s,
                                           const GradElementBytes &bytes,
                                           SequenceLayout layout,
                                           bool kvReused, MaskAttr mask) {
  int64_t b = bytes.operand, g = bytes.gradOutput, dq = bytes.gradQuery,
          a = bytes.gradKeyValue;
  int64_t p = s.groupSize;
  int64_t rows = s.batch * s.localLen;
  int64_t q = rows * s.heads * s.headDim, o = rows * s.heads * s.valueDim;
  int64_t k = rows * s.kvHeads * s.headDim, v = rows * s.kvHeads * s.valueDim;
  int64_t lse = rows * s.heads;
  // An all-to-all over g ranks sends (g - 1)/g of each tensor it trades.
  auto traded = [](int64_t bytes, int64_t g) { return bytes / g * (g - 1); };
  auto ulysses = [&](int64_t n) {
    int64_t in = 0;
    for (int64_t x : {q * b, k * b, v * b, o * b, o * g, lse * 4})
      in += traded(x, n);
    int64_t back = 0;
    for (int64_t x : {q * dq, k * a, v * a})
      back += traded(x, n);
    return in + back;
  };
  // allgather's backward over g ranks: K/V gathered (unless the forward's
  // gather is reused), dK/dV reduce-scattered.
  auto gathered = [&](int64_t n, bool reused) {
    return (reused ? 0 : (k + v) * (n - 1) * b) + (k + v) * (n - 1) * a;
  };
  int64_t base = 0;
  switch (scheme.getKind()) {
  case SchemeKind::allgather:
    base = gathered(p, kvReused);
    break;
  case SchemeKind::ulysses:
    base = ulysses(p);
    break;
  case SchemeKind::hybrid: {
    int64_t u = scheme.getUlyssesDegree();
    base = ulysses(u) + gathered(p / u, /*reused=*/false);
    break;
  }
  case SchemeKind::head_tail: {
    // The tail halves of q, o, dO (b) and lse go to the mirror rank, the
    // tail's dq (a) comes back; a rank paired with itself sends nothing.
    int64_t exchanged =
        p > 1 ? q / 2 * b + o / 2 * (b + g) + lse / 2 * 4 + q / 2 * dq : 0;
    base = exchanged + gathered(p, /*reused=*/false);
    break;
  }
  case SchemeKind::ring:
  case SchemeKind::zigzag: {
    // K/V shifted before each step after the first; the block's dK/dV
    // after each step but the last, then one hop home.
    int64_t shifts = ringShifts(scheme, s, mask);
    base = (k + v) * shifts * b + (shifts > 0 ? (k + v) * (shifts + 1) * a : 0);
    break;
  }
  case SchemeKind::plugin:
    base = pluginDefinition(scheme).backwardBytesSentPerRank(scheme, s, bytes,
                                                             mask);
    break;
  default:
    llvm_unreachable("auto is resolved before its bytes are counted");
  }
  // q, k, v, o, dO and lse into the scheme's layout; dq, dk, dv back.
  int64_t inRow = (s.heads * (s.headDim + s.valueDim) +
                   s.kvHeads * (s.headDim + s.valueDim)) *
                      b +
                  s.heads * s.valueDim * g + s.heads * 4;
  int64_t outRow = s.heads * s.headDim * dq +
                   s.kvHeads * (s.headDim + s.valueDim) * a;
  return base + relayoutBytes(s, layout, schemeLayout(scheme), inRow, outRow);
}

int64_t mlir::cp::trainingBytesSentPerRank(SchemeAttr scheme,
                                           const AttentionShape &s,
                                           const GradElementBytes &bytes,
                                           SequenceLayout layout,
                                           MaskAttr mask) {
  int64_t b = bytes.operand, p = s.groupSize;
  int64_t rows = s.batch * s.localLen;
  int64_t q = rows * s.heads * s.headDim;
  int64_t kv = kvShardElements(s);
  int64_t forward =
      bytesSentPerRank(scheme, s, b, layout, mask, /*withLse=*/true);
  int64_t backward =
      backwardBytesSentPerRank(scheme, s, bytes, layout, /*kvReused=*/false,
                               mask);
  // The collectives both passes run on the same values, sent once.
  int64_t shared = 0;
  switch (scheme.getKind()) {
  case SchemeKind::allgather:
    shared = kv * (p - 1) * b;
    break;
  case SchemeKind::ulysses:
    shared = (q + kv) * b / p * (p - 1);
    break;
  case SchemeKind::hybrid: {
    int64_t u = scheme.getUlyssesDegree();
    shared = (q + kv) * b / u * (u - 1) + kv * (p / u - 1) * b;
    break;
  }
  case SchemeKind::head_tail:
    shared = kv * (p - 1) * b + (p > 1 ? q / 2 * b : 0);
    break;
  case SchemeKind::ring:
  case SchemeKind::zigzag:
    shared = ringShifts(scheme, s, mask) > 0 ? kv * b : 0;
    shared += relayoutBytes(
        s, layout, schemeLayout(scheme),
        (s.heads * s.headDim + s.kvHeads * (s.headDim + s.valueDim)) * b, 0);
    break;
  case SchemeKind::plugin:
    // A plugin scheme states no sharing: both passes are counted whole.
    break;
  case SchemeKind::automatic:
    llvm_unreachable("auto is resolved before its bytes are counted");
  }
  return forward + backward - shared;
}
