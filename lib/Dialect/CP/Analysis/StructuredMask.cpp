//===- StructuredMask.cpp - IR for #cp.mask predicates --------------------===//
//
// causal:             key k visible to query q iff k <= q
// sliding_window(W):  iff q - W < k <= q
//
//===----------------------------------------------------------------------===//

#include "cp/Dialect/CP/Analysis/StructuredMask.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/Support/ErrorHandling.h"

using namespace mlir;
using namespace mlir::cp;

/// `value` as a constant of `type` (a splat for vector types).
static Value constantLike(OpBuilder &b, Location loc, Type type,
                          int64_t value) {
  Type element = getElementTypeOrSelf(type);
  TypedAttr scalar = element.isIndex()
                         ? TypedAttr(b.getIndexAttr(value))
                         : TypedAttr(b.getIntegerAttr(element, value));
  if (auto vector = dyn_cast<VectorType>(type))
    return arith::ConstantOp::create(b, loc, vector,
                                     DenseElementsAttr::get(vector, scalar));
  return arith::ConstantOp::create(b, loc, type, scalar);
}

Value mlir::cp::buildMaskAllows(OpBuilder &b, Location loc, MaskAttr mask,
                                Value qPos, Value kPos) {
  Value notFuture =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, kPos, qPos);
  switch (mask.getKind()) {
  case MaskKind::causal:
    return notFuture;
  case MaskKind::sliding_window: {
    // q - W < k  <=>  q < k + W
    Value kPlusW = arith::AddIOp::create(
        b, loc, kPos, constantLike(b, loc, kPos.getType(), mask.getWindow()));
    Value inWindow =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, qPos, kPlusW);
    return arith::AndIOp::create(b, loc, notFuture, inWindow);
  }
  case MaskKind::none:
    break;
  }
  llvm_unreachable("mask = none allows everything and has no predicate");
}

static Value addConstant(OpBuilder &b, Location loc, Value x, int64_t c) {
  return arith::AddIOp::create(b, loc, x, constantLike(b, loc, x.getType(), c));
}

KeyRange mlir::cp::buildVisibleKeyRange(OpBuilder &b, Location loc,
                                        MaskAttr mask, Value qFirst,
                                        Value qLast) {
  switch (mask.getKind()) {
  case MaskKind::none:
    return {};
  case MaskKind::causal:
    return {Value(), qLast};
  case MaskKind::sliding_window:
    return {addConstant(b, loc, qFirst, 1 - mask.getWindow()), qLast};
  }
  llvm_unreachable("unknown mask kind");
}

KeyRange mlir::cp::buildVisibleQueryRange(OpBuilder &b, Location loc,
                                          MaskAttr mask, Value kFirst,
                                          Value kLast) {
  // Query q sees key k when k <= q (causal) and also q - W < k (window).
  switch (mask.getKind()) {
  case MaskKind::none:
    return {};
  case MaskKind::causal:
    return {kFirst, Value()};
  case MaskKind::sliding_window:
    return {kFirst, addConstant(b, loc, kLast, mask.getWindow() - 1)};
  }
  llvm_unreachable("unknown mask kind");
}

KeyRange mlir::cp::buildFullyVisibleKeyRange(OpBuilder &b, Location loc,
                                             MaskAttr mask, Value qFirst,
                                             Value qLast) {
  // A key every row sees is >= the last row's window start and <= the first
  // row's causal bound: the visible range with the two rows swapped.
  return buildVisibleKeyRange(b, loc, mask, /*qFirst=*/qLast,
                              /*qLast=*/qFirst);
}

Value mlir::cp::buildBlockIsVisible(OpBuilder &b, Location loc, MaskAttr mask,
                                    Value qFirst, Value qLast, Value kFirst,
                                    Value kLast) {
  if (mask.isNone())
    return Value();
  KeyRange visible = buildVisibleKeyRange(b, loc, mask, qFirst, qLast);
  Value any = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, kFirst,
                                    visible.last);
  if (visible.first)
    any = arith::AndIOp::create(b, loc, any,
                                arith::CmpIOp::create(b, loc,
                                                      arith::CmpIPredicate::sge,
                                                      kLast, visible.first));
  return any;
}

bool mlir::cp::blockIsVisible(MaskAttr mask, int64_t qFirst, int64_t qLast,
                              int64_t kFirst, int64_t kLast) {
  switch (mask.getKind()) {
  case MaskKind::none:
    return true;
  case MaskKind::causal:
    return kFirst <= qLast;
  case MaskKind::sliding_window:
    return kFirst <= qLast && kLast >= qFirst + 1 - mask.getWindow();
  }
  llvm_unreachable("unknown mask kind");
}

KeyTiles mlir::cp::buildVisibleKeyTiles(OpBuilder &b, Location loc,
                                        MaskAttr mask, Value qFirst,
                                        Value qLast, Value kvOffset,
                                        Value numKeys, Value tileKv) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  KeyTiles tiles;
  tiles.first = zero;
  tiles.end = arith::CeilDivUIOp::create(b, loc, numKeys, tileKv);
  if (mask.isNone())
    return tiles;
  // Local key columns [lo, hi) that some query may see.
  KeyRange visible = buildVisibleKeyRange(b, loc, mask, qFirst, qLast);
  Value lo = zero;
  if (visible.first)
    lo = arith::MaxSIOp::create(
        b, loc, zero, arith::SubIOp::create(b, loc, visible.first, kvOffset));
  Value hi = arith::MinSIOp::create(
      b, loc, numKeys,
      addConstant(b, loc, arith::SubIOp::create(b, loc, visible.last, kvOffset),
                  1));
  tiles.first = arith::DivUIOp::create(b, loc, lo, tileKv);
  Value any = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, hi, lo);
  tiles.end = arith::SelectOp::create(
      b, loc, any, arith::CeilDivSIOp::create(b, loc, hi, tileKv), tiles.first);
  tiles.full = buildFullyVisibleKeyRange(b, loc, mask, qFirst, qLast);
  return tiles;
}

QueryTiles mlir::cp::buildVisibleQueryTiles(OpBuilder &b, Location loc,
                                            MaskAttr mask, Value kFirst,
                                            Value kLast, Value qOffset,
                                            Value numQueries, Value tileQ) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  QueryTiles tiles{zero,
                   arith::CeilDivUIOp::create(b, loc, numQueries, tileQ)};
  if (mask.isNone())
    return tiles;
  // Local query rows [lo, hi) that may see some key.
  KeyRange visible = buildVisibleQueryRange(b, loc, mask, kFirst, kLast);
  Value lo = zero, hi = numQueries;
  if (visible.first)
    lo = arith::MaxSIOp::create(
        b, loc, zero, arith::SubIOp::create(b, loc, visible.first, qOffset));
  if (visible.last)
    hi = arith::MinSIOp::create(
        b, loc, hi,
        addConstant(b, loc,
                    arith::SubIOp::create(b, loc, visible.last, qOffset), 1));
  tiles.first = arith::DivUIOp::create(b, loc, lo, tileQ);
  Value any = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, hi, lo);
  tiles.end = arith::SelectOp::create(
      b, loc, any, arith::CeilDivSIOp::create(b, loc, hi, tileQ), tiles.first);
  return tiles;
}

Value mlir::cp::buildTileIsCut(OpBuilder &b, Location loc, MaskAttr mask,
                               const KeyTiles &tiles, Value kFirst,
                               Value kLast) {
  if (mask.isNone())
    return Value();
  Value cut = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, kLast,
                                    tiles.full.last);
  if (tiles.full.first)
    cut = arith::OrIOp::create(b, loc, cut,
                               arith::CmpIOp::create(b, loc,
                                                     arith::CmpIPredicate::slt,
                                                     kFirst, tiles.full.first));
  return cut;
}

/// Sum of min(cap, t) for t in [a, b] (integers, a <= b).
static double sumMin(double cap, double a, double b) {
  if (b <= cap)
    return (a + b) * (b - a + 1) / 2;
  if (a > cap)
    return cap * (b - a + 1);
  return (a + cap) * (cap - a + 1) / 2 + cap * (b - cap);
}

double mlir::cp::countVisiblePairs(MaskAttr mask, double q0, double rows,
                                   double keys) {
  // Query q sees min(q + 1, keys) keys under causal, min(q + 1, W) under a
  // window of W.
  switch (mask.getKind()) {
  case MaskKind::none:
    return rows * keys;
  case MaskKind::causal:
    return sumMin(keys, q0 + 1, q0 + rows);
  case MaskKind::sliding_window:
    return sumMin(static_cast<double>(mask.getWindow()), q0 + 1, q0 + rows);
  }
  return rows * keys;
}
