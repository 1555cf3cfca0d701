//===- SchemeTraffic.cpp - bytes each CP scheme sends per rank ------------===//
//
// DESIGN §2's "bytes sent per rank" table: what leaves one rank for other
// ranks, counted at the collective API, for one attention forward.
//
//===----------------------------------------------------------------------===//

#include "cp/Dialect/CP/IR/SchemeTraffic.h"
#include "llvm/Support/ErrorHandling.h"

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

int64_t mlir::cp::bytesSentPerRank(SchemeAttr scheme, const AttentionShape &s,
                                   int64_t elementBytes) {
  int64_t p = s.groupSize;
  int64_t allGatherKV = kvShardElements(s) * (p - 1);
  switch (scheme.getKind()) {
  case SchemeKind::allgather:
  case SchemeKind::ring:
  case SchemeKind::zigzag:
    return allGatherKV * elementBytes;
  case SchemeKind::ulysses:
    return qkvoShardElements(s) * (p - 1) / p * elementBytes;
  case SchemeKind::hybrid: {
    int64_t u = scheme.getUlyssesDegree(), outer = p / u;
    return (qkvoShardElements(s) * (u - 1) / u +
            kvShardElements(s) * (outer - 1)) *
           elementBytes;
  }
  case SchemeKind::head_tail: {
    int64_t half = s.localLen / 2;
    int64_t qTail = s.batch * half * s.heads * s.headDim;
    int64_t oBack = s.batch * half * s.heads * s.valueDim;
    int64_t exchanged = p > 1 ? qTail + oBack : 0;
    return (exchanged + allGatherKV) * elementBytes;
  }
  case SchemeKind::automatic:
    break;
  }
  llvm_unreachable("auto is resolved to a concrete scheme before costing");
}
