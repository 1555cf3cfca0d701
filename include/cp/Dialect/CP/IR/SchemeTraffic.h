//===- SchemeTraffic.h - bytes each CP scheme sends per rank ----*- C++ -*-===//
//
// DESIGN §2's table of bytes sent per rank for one attention forward. The
// cp-apply-scheme pass records it on rewritten ops, and the runtime's byte
// counters are checked against it.
//
//===----------------------------------------------------------------------===//

#ifndef CP_DIALECT_CP_IR_SCHEMETRAFFIC_H
#define CP_DIALECT_CP_IR_SCHEMETRAFFIC_H

#include "cp/Dialect/CP/IR/SchemeConstraints.h"

namespace mlir {
namespace cp {

/// Bytes one rank sends to other ranks for `scheme` on `shape`, with
/// `elementBytes` bytes per element. For head_tail this is the figure of a
/// rank with a distinct partner (the self-paired middle rank of an odd group
/// sends less). Requires every size in `shape` to be static.
int64_t bytesSentPerRank(SchemeAttr scheme, const AttentionShape &shape,
                         int64_t elementBytes);

} // namespace cp
} // namespace mlir

#endif // CP_DIALECT_CP_IR_SCHEMETRAFFIC_H
