//===- StructuredMask.cpp - IR for #cp.mask predicates --------------------===//
//
// causal:             key k visible to query q iff k <= q
// sliding_window(W):  iff q - W < k <= q
//
//===----------------------------------------------------------------------===//

#include "cp/Dialect/CP/IR/StructuredMask.h"
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

KeyRange mlir::cp::buildFullyVisibleKeyRange(OpBuilder &b, Location loc,
                                             MaskAttr mask, Value qFirst,
                                             Value qLast) {
  switch (mask.getKind()) {
  case MaskKind::none:
    return {};
  case MaskKind::causal:
    return {Value(), qFirst};
  case MaskKind::sliding_window:
    return {addConstant(b, loc, qLast, 1 - mask.getWindow()), qFirst};
  }
  llvm_unreachable("unknown mask kind");
}
