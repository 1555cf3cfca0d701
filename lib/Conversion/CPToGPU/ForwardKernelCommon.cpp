//===- ForwardKernelCommon.cpp - what both GPU forward kernels share ------===//

#include "ForwardKernelCommon.h"
#include "cp/Dialect/CP/Analysis/StructuredMask.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::cp;
using namespace mlir::cp::detail;

ForwardShape mlir::cp::detail::forwardShapeOf(OpBuilder &b, Location loc,
                                              BufferLocalAttentionOp op) {
  auto dim = [&](Value memref, int64_t d) -> Value {
    return memref::DimOp::create(b, loc, memref, d);
  };
  Value query = op.getQuery();
  int64_t headDim = op.getQuery().getType().getDimSize(3);
  double scale = op.getScaleAttr()
                     ? op.getScaleAttr().getValueAsDouble()
                     : 1.0 / std::sqrt(static_cast<double>(headDim));
  return {dim(query, 2), dim(op.getKey(), 2),
          arith::DivUIOp::create(b, loc, dim(query, 1), dim(op.getKey(), 1)),
          arith::ConstantOp::create(b, loc, b.getF32Type(),
                                    b.getF32FloatAttr(scale))};
}

RowEnd mlir::cp::detail::rowEnd(OpBuilder &b, Location loc, Value m, Value l,
                                Value sink) {
  auto f32 = [&](double v) -> Value {
    return arith::ConstantOp::create(b, loc, b.getF32Type(),
                                     b.getF32FloatAttr(v));
  };
  if (sink) {
    // m = -inf (no key seen) gives exp(m - m') = 0: output 0, lse = sink.
    // Both -inf (no key, a head without a sink): shift by 0 instead, so
    // that the sum is 0 and the row ends as one without a sink does.
    Value top = arith::MaximumFOp::create(b, loc, m, sink);
    Value none = arith::CmpFOp::create(
        b, loc, arith::CmpFPredicate::OEQ, top,
        f32(-std::numeric_limits<double>::infinity()));
    Value shift = arith::SelectOp::create(b, loc, none, f32(0.0), top);
    Value rescale =
        math::ExpOp::create(b, loc, arith::SubFOp::create(b, loc, m, shift));
    Value sum = arith::AddFOp::create(
        b, loc, arith::MulFOp::create(b, loc, l, rescale),
        math::ExpOp::create(b, loc,
                            arith::SubFOp::create(b, loc, sink, shift)));
    Value seen =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, sum, f32(0.0));
    Value safeSum = arith::SelectOp::create(b, loc, seen, sum, f32(1.0));
    return {arith::SelectOp::create(
                b, loc, seen, arith::DivFOp::create(b, loc, rescale, safeSum),
                f32(0.0)),
            arith::SelectOp::create(
                b, loc, seen,
                arith::AddFOp::create(b, loc, shift,
                                      math::LogOp::create(b, loc, safeSum)),
                f32(-std::numeric_limits<double>::infinity()))};
  }
  Value seen =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, l, f32(0.0));
  Value one = f32(1.0);
  Value inverse = arith::SelectOp::create(
      b, loc, seen, arith::DivFOp::create(b, loc, one, l), f32(0.0));
  Value logSum = arith::AddFOp::create(
      b, loc, m,
      math::LogOp::create(b, loc,
                          arith::SelectOp::create(b, loc, seen, l, one)));
  Value lse = arith::SelectOp::create(
      b, loc, seen, logSum, f32(-std::numeric_limits<double>::infinity()));
  return {inverse, lse};
}
