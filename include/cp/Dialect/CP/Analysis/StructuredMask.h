//===- StructuredMask.h - IR for #cp.mask predicates -------------*- C++
//-*-===//
//
// The one statement, as IR builders, of what a structured mask allows: the
// per-element predicate (used by cp.offset_mask's bufferization and the tiled
// attention lowering) and the range of visible key positions of a query
// block (used to skip tiles that are fully masked).
//
//===----------------------------------------------------------------------===//

#ifndef CP_DIALECT_CP_ANALYSIS_STRUCTUREDMASK_H
#define CP_DIALECT_CP_ANALYSIS_STRUCTUREDMASK_H

#include "cp/Dialect/CP/IR/CPDialect.h"
#include "mlir/IR/Builders.h"

namespace mlir {
namespace cp {

/// i1 (or vector of i1) that is true where `mask` lets the query at global
/// position `qPos` see the key at global position `kPos`. Both are signless
/// integers, index, or vectors of those, of one type. `mask` must not be
/// `none` (which allows everything).
Value buildMaskAllows(OpBuilder &b, Location loc, MaskAttr mask, Value qPos,
                      Value kPos);

/// A closed range [first, last] of global key positions, as index values; a
/// null bound is unbounded on that side.
struct KeyRange {
  Value first;
  Value last;
};

/// The keys that some query in the global rows [qFirst, qLast] may see under
/// `mask`: keys outside are masked for every one of those queries.
KeyRange buildVisibleKeyRange(OpBuilder &b, Location loc, MaskAttr mask,
                              Value qFirst, Value qLast);

/// The queries that may see some key in the global columns [kFirst, kLast]
/// under `mask` (the transpose of buildVisibleKeyRange): queries outside
/// see none of those keys. The backward's dK/dV loops over it.
KeyRange buildVisibleQueryRange(OpBuilder &b, Location loc, MaskAttr mask,
                                Value kFirst, Value kLast);

/// The keys that every query in [qFirst, qLast] may see under `mask` (empty
/// when first > last): a tile whose keys all lie there needs no masking.
KeyRange buildFullyVisibleKeyRange(OpBuilder &b, Location loc, MaskAttr mask,
                                   Value qFirst, Value qLast);

/// i1: some query in the global rows [qFirst, qLast] may see some key in
/// [kFirst, kLast]; false means the whole block is masked and need not be
/// computed. Null for mask none (every block is visible).
Value buildBlockIsVisible(OpBuilder &b, Location loc, MaskAttr mask,
                          Value qFirst, Value qLast, Value kFirst, Value kLast);

/// The same predicate on known positions.
bool blockIsVisible(MaskAttr mask, int64_t qFirst, int64_t qLast,
                    int64_t kFirst, int64_t kLast);

/// The (query, key) pairs `mask` lets through for the `rows` queries at
/// global positions [q0, q0 + rows) over the keys [0, keys), for queries
/// inside the key sequence (q0 + rows <= keys): the closed form of counting
/// blockIsVisible(mask, q, q, k, k) over every pair, which the cost model
/// needs at sizes where counting is too slow (test/Unit checks that the two
/// agree). In floating point, as the cost model computes.
double countVisiblePairs(MaskAttr mask, double q0, double rows, double keys);

/// The tiles of `tileKv` keys a query block visits: [first, end) over local
/// key tiles of a block of `numKeys` keys starting at global `kvOffset`,
/// for the queries [qFirst, qLast]; every tile when `mask` is none. `full`
/// is the range of keys every query sees, for buildTileIsCut.
struct KeyTiles {
  Value first, end;
  KeyRange full;
};
KeyTiles buildVisibleKeyTiles(OpBuilder &b, Location loc, MaskAttr mask,
                              Value qFirst, Value qLast, Value kvOffset,
                              Value numKeys, Value tileKv);

/// The tiles of `tileQ` queries that may see some key of the global
/// columns [kFirst, kLast] (the transpose of buildVisibleKeyTiles, for a
/// backward that holds a key block and visits query tiles): [first, end)
/// over local query tiles of a block of `numQueries` queries starting at
/// global `qOffset`; every tile when `mask` is none.
struct QueryTiles {
  Value first, end;
};
QueryTiles buildVisibleQueryTiles(OpBuilder &b, Location loc, MaskAttr mask,
                                  Value kFirst, Value kLast, Value qOffset,
                                  Value numQueries, Value tileQ);

/// i1: the keys [kFirst, kLast] of a tile are not all visible to every query
/// of the block, so the tile needs the mask applied. Null for mask none.
Value buildTileIsCut(OpBuilder &b, Location loc, MaskAttr mask,
                     const KeyTiles &tiles, Value kFirst, Value kLast);

} // namespace cp
} // namespace mlir

#endif // CP_DIALECT_CP_ANALYSIS_STRUCTUREDMASK_H
