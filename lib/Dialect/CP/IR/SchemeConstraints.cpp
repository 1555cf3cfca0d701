//===- SchemeConstraints.cpp - what each CP scheme requires ---------------===//
//
// DESIGN §2's applicability rules, stated once. Messages name the scheme,
// the rule, the numbers, and what would make the input valid.
//
//===----------------------------------------------------------------------===//

#include "cp/Dialect/CP/IR/SchemeConstraints.h"
#include "cp/Dialect/CP/IR/SchemeDefinition.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::cp;

static bool known(int64_t size) { return !ShapedType::isDynamic(size); }

AttentionShape AttentionShape::fromTypes(RankedTensorType query,
                                         RankedTensorType key,
                                         RankedTensorType value,
                                         int64_t groupSize,
                                         QueryPlacement queries) {
  return AttentionShape{query.getDimSize(0),
                        query.getDimSize(1),
                        key.getDimSize(1),
                        key.getDimSize(2),
                        query.getDimSize(3),
                        value.getDimSize(3),
                        groupSize,
                        queries == QueryPlacement::replicated,
                        query.getDimSize(2)};
}

int64_t AttentionShape::globalLen() const {
  int64_t len = 0;
  if (!known(localLen) || !known(groupSize) ||
      llvm::MulOverflow(localLen, groupSize, len))
    return ShapedType::kDynamic;
  return len;
}

/// "<scheme> needs <what> (<n>) divisible by <by-what> (<d>)", when both are
/// known and d does not divide n.
static std::optional<std::string> needDivisible(StringRef scheme,
                                                StringRef what, int64_t n,
                                                StringRef byWhat, int64_t d,
                                                StringRef fix) {
  if (!known(n) || !known(d) || d == 0 || n % d == 0)
    return std::nullopt;
  return llvm::formatv("{0} needs {1} ({2}) divisible by {3} ({4}); {5}",
                       scheme, what, n, byWhat, d, fix)
      .str();
}

static std::optional<std::string> checkUlysses(const AttentionShape &s) {
  int64_t p = s.groupSize;
  if (auto v = needDivisible("ulysses", "H", s.heads, "the CP group size", p,
                             "use allgather, or hybrid(u) with u dividing H"))
    return v;
  return needDivisible("ulysses", "Hkv", s.kvHeads, "the CP group size", p,
                       "use allgather, or hybrid(u) with u dividing Hkv");
}

static std::optional<std::string> checkHybrid(const AttentionShape &s,
                                              int64_t u) {
  int64_t p = s.groupSize;
  if (known(p) && !(1 < u && u < p))
    return llvm::formatv("hybrid needs 1 < u < P, got u = {0} with P = {1}; "
                         "use ulysses for u = P",
                         u, p)
        .str();
  if (auto v = needDivisible("hybrid", "the CP group size P", p,
                             "the Ulysses degree u", u, "choose u dividing P"))
    return v;
  if (auto v = needDivisible("hybrid", "H", s.heads, "the Ulysses degree u", u,
                             "choose u dividing H"))
    return v;
  return needDivisible("hybrid", "Hkv", s.kvHeads, "the Ulysses degree u", u,
                       "choose u dividing Hkv");
}

static std::optional<std::string>
checkEvenLocalLength(StringRef scheme, const AttentionShape &s) {
  if (!known(s.localLen) || s.localLen % 2 == 0)
    return std::nullopt;
  std::string pad =
      known(s.groupSize)
          ? llvm::formatv("a multiple of 2 * P = {0}", 2 * s.groupSize).str()
          : std::string("a multiple of 2 * P");
  return llvm::formatv("{0} splits each local shard in two halves and needs "
                       "an even local length L, got L = {1}; pad the "
                       "sequence to {2}",
                       scheme, s.localLen, pad)
      .str();
}

const SchemeDefinition *mlir::cp::lookupScheme(SchemeAttr scheme) {
  if (scheme.isPlugin())
    return lookupPluginScheme(scheme.getContext(), scheme.getName());
  return lookupBuiltinScheme(scheme.getContext(),
                             stringifySchemeKind(scheme.getKind()));
}

SequenceLayout mlir::cp::schemeLayout(SchemeKind scheme) {
  return scheme == SchemeKind::zigzag ? SequenceLayout::zigzag
                                      : SequenceLayout::contiguous;
}

SequenceLayout mlir::cp::schemeLayout(SchemeAttr scheme) {
  if (!scheme.isPlugin())
    return schemeLayout(scheme.getKind());
  const SchemeDefinition *definition = lookupScheme(scheme);
  return definition ? definition->getLayout(scheme)
                    : SequenceLayout::contiguous;
}

/// A plugin scheme's constraints, each message naming the plugin.
static std::optional<std::string>
findPluginViolation(SchemeAttr scheme, const AttentionShape &shape) {
  const SchemeDefinition *definition = lookupScheme(scheme);
  if (!definition)
    return llvm::formatv("no scheme '{0}' is registered; load the plugin "
                         "that provides it (--load-dialect-plugin)",
                         scheme.getName())
        .str();
  std::optional<std::string> violation =
      definition->checkParameter(scheme.getParameter());
  if (!violation)
    violation = definition->findViolation(scheme, shape);
  if (!violation)
    return std::nullopt;
  return llvm::formatv("{0}: {1}", definition->describe(), *violation).str();
}

std::optional<std::string>
mlir::cp::findSchemeViolation(SchemeAttr scheme, const AttentionShape &shape) {
  SchemeKind kind = scheme.getKind();
  if (kind == SchemeKind::plugin)
    return findPluginViolation(scheme, shape);
  if (shape.replicatedQueries &&
      (kind == SchemeKind::hybrid || kind == SchemeKind::head_tail ||
       kind == SchemeKind::zigzag))
    return llvm::formatv("{0} splits the queries' sequence, but with "
                         "queries = replicated every process holds the same "
                         "{1} queries and only K/V are sharded; use "
                         "allgather, ulysses or ring",
                         stringifySchemeKind(kind), shape.queryLen)
        .str();
  switch (kind) {
  case SchemeKind::allgather:
  case SchemeKind::ring:
  case SchemeKind::automatic:
    return std::nullopt;
  case SchemeKind::ulysses:
    return checkUlysses(shape);
  case SchemeKind::hybrid:
    return checkHybrid(shape, scheme.getUlyssesDegree());
  case SchemeKind::head_tail:
    return checkEvenLocalLength("head_tail", shape);
  case SchemeKind::zigzag:
    return checkEvenLocalLength("zigzag", shape);
  case SchemeKind::plugin:
    break;
  }
  llvm_unreachable("unknown scheme kind");
}
