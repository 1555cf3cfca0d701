//===- AttentionBuilder.h - shorthand for the attention lowerings -*- C++
//-*-===//
//
// The builder vocabulary that cp-lower-local-attention (CPU loops) and
// cp-lower-local-attention-to-gpu (a gpu.launch) share: index and f32
// constants, index arithmetic, element loads widened to f32, and scf.for
// loops written as lambdas. Each lowering derives from it and adds its own
// (vector lanes on CPU, shuffles and workgroup memory on GPU).
//
//===----------------------------------------------------------------------===//

#ifndef CP_CONVERSION_ATTENTIONCOMMON_ATTENTIONBUILDER_H
#define CP_CONVERSION_ATTENTIONCOMMON_ATTENTIONBUILDER_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

namespace mlir::cp::detail {

class AttentionBuilder {
protected:
  explicit AttentionBuilder(Operation *op)
      : b(op), loc(op->getLoc()), f32(Float32Type::get(op->getContext())) {}

  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value f32Const(double v) {
    return arith::ConstantOp::create(b, loc, f32, b.getF32FloatAttr(v));
  }
  Value fadd(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value fmul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value fmax(Value x, Value y) {
    return arith::MaximumFOp::create(b, loc, x, y);
  }
  Value exp(Value x) { return math::ExpOp::create(b, loc, x); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value lessThan(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x, y);
  }
  Value andI(Value x, Value y) { return arith::AndIOp::create(b, loc, x, y); }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y);
  }
  Value dim(Value memref, int64_t d) {
    return memref::DimOp::create(b, loc, memref, d);
  }
  /// Scalar load widened to f32 (operands may be f16 or bf16).
  Value loadF32(Value memref, ValueRange at) {
    Value v = memref::LoadOp::create(b, loc, memref, at);
    return v.getType() == f32 ? v : arith::ExtFOp::create(b, loc, f32, v);
  }

  /// [min, max] of the integer memref `seg` over [first, first + count),
  /// count > 0: the segment ids a document mask reads for a tile.
  std::pair<Value, Value> rangeOf(Value seg, Value first, Value count) {
    Value v0 = memref::LoadOp::create(b, loc, seg, ValueRange{first});
    ValueRange range = loop(idx(1), count, idx(1), {v0, v0},
                            [&](Value i, ValueRange mm) -> SmallVector<Value> {
                              Value v = memref::LoadOp::create(
                                  b, loc, seg, ValueRange{add(first, i)});
                              return {arith::MinSIOp::create(b, loc, mm[0], v),
                                      arith::MaxSIOp::create(b, loc, mm[1], v)};
                            });
    return {range[0], range[1]};
  }
  /// i1: the segment ranges [qMin, qMax] and [kMin, kMax] meet (a document
  /// mask may let some query of the one see some key of the other).
  Value rangesMeet(std::pair<Value, Value> q, std::pair<Value, Value> k) {
    Value apart = arith::OrIOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, q.second,
                              k.first),
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, k.second,
                              q.first));
    return arith::XOrIOp::create(b, loc, apart,
                                 arith::ConstantIntOp::create(b, loc, 1, 1));
  }
  /// i1: both ranges hold one and the same segment id, so a document mask
  /// lets every query of the one see every key of the other.
  Value sameSingleSegment(std::pair<Value, Value> q,
                          std::pair<Value, Value> k) {
    auto eq = [&](Value x, Value y) {
      return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, y)
          .getResult();
    };
    return andI(andI(eq(q.first, q.second), eq(k.first, k.second)),
                eq(q.first, k.first));
  }

  /// scf.for over [lb, ub) by `step`; `body` returns the yielded values.
  ValueRange loop(Value lb, Value ub, Value step, ValueRange init,
                  function_ref<SmallVector<Value>(Value, ValueRange)> body) {
    auto forOp = scf::ForOp::create(
        b, loc, lb, ub, step, init,
        [&](OpBuilder &, Location, Value iv, ValueRange args) {
          scf::YieldOp::create(b, loc, body(iv, args));
        });
    return forOp.getResults();
  }
  /// scf.for without loop-carried values.
  void loop(Value lb, Value ub, Value step, function_ref<void(Value)> body) {
    loop(lb, ub, step, {}, [&](Value iv, ValueRange) {
      body(iv);
      return SmallVector<Value>{};
    });
  }

  OpBuilder b;
  Location loc;
  Type f32;
};

} // namespace mlir::cp::detail

#endif // CP_CONVERSION_ATTENTIONCOMMON_ATTENTIONBUILDER_H
