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
