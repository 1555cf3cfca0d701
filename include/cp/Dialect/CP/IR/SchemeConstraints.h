//===- SchemeConstraints.h - what each CP scheme requires -------*- C++ -*-===//
//
// The single statement of DESIGN §2's scheme constraints (head divisibility,
// Ulysses degree range, even local length). The cp.attention verifier, the
// cp-apply-scheme pass and the runtime checks all ask this file.
//
//===----------------------------------------------------------------------===//

#ifndef CP_DIALECT_CP_IR_SCHEMECONSTRAINTS_H
#define CP_DIALECT_CP_IR_SCHEMECONSTRAINTS_H

#include "cp/Dialect/CP/IR/CPDialect.h"
#include <optional>
#include <string>

namespace mlir {
namespace cp {

class SchemeDefinition;

/// The definition registered for `scheme` (by kind for a built-in, by name
/// for a plugin scheme); null when none is.
const SchemeDefinition *lookupScheme(SchemeAttr scheme);

/// The sizes a scheme's applicability depends on. Any field may be
/// ShapedType::kDynamic; a rule over an unknown size is not checked here
/// (it becomes a runtime check).
struct AttentionShape {
  int64_t batch;
  int64_t heads;     // H
  int64_t kvHeads;   // Hkv
  int64_t localLen;  // L = S / P (of K and V; of Q too unless replicated)
  int64_t headDim;   // D
  int64_t valueDim;  // Dv
  int64_t groupSize; // P
  /// The queries are the same on every process (decode against a sharded
  /// KV cache); queryLen is their number Lq. Otherwise queryLen = L.
  bool replicatedQueries = false;
  int64_t queryLen = 0; // Lq

  /// Reads B, H, Hkv, L, Lq, D, Dv from BHSD query/key/value types.
  static AttentionShape
  fromTypes(RankedTensorType query, RankedTensorType key,
            RankedTensorType value, int64_t groupSize,
            QueryPlacement queries = QueryPlacement::sharded);
  int64_t globalLen() const;
};

/// The sequence layout `scheme` computes in: zigzag for zigzag, contiguous
/// for every other scheme. An op in the other layout is converted with
/// cp.relayout around the scheme.
SequenceLayout schemeLayout(SchemeKind scheme);
/// The same for any scheme: a plugin scheme's layout is its definition's.
SequenceLayout schemeLayout(SchemeAttr scheme);

/// Returns the first constraint of `scheme` that `shape` violates, as a
/// sentence naming the scheme, the rule, the numbers and a fix; or
/// std::nullopt when the scheme applies. A plugin scheme's come from its
/// registered definition and name the plugin (or say none is registered).
std::optional<std::string> findSchemeViolation(SchemeAttr scheme,
                                               const AttentionShape &shape);

} // namespace cp
} // namespace mlir

#endif // CP_DIALECT_CP_IR_SCHEMECONSTRAINTS_H
