//===- ScoreTile.cpp - what a GPU kernel does to one score ----------------===//

#include "ScoreTile.h"
#include "cp/Dialect/CP/Analysis/StructuredMask.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <limits>
#include <tuple>

using namespace mlir;
using namespace mlir::cp;
using namespace mlir::cp::detail;

bool ScoreTile::masksEveryTile() const {
  return mods->scoreMod || mods->evaluatesMaskMod() || explicitMask;
}

Value ScoreTile::apply(OpBuilder &b, Location loc, Value score, Value row,
                       Value key, Value rowValid, Value keyValid) const {
  return applyImpl(b, loc, score, row, key, rowValid, keyValid,
                   /*withSlope=*/false)
      .first;
}

std::pair<Value, Value>
ScoreTile::applyWithSlope(OpBuilder &b, Location loc, Value score, Value row,
                          Value key, Value rowValid, Value keyValid) const {
  return applyImpl(b, loc, score, row, key, rowValid, keyValid,
                   /*withSlope=*/true);
}

std::pair<Value, Value> ScoreTile::applyImpl(OpBuilder &b, Location loc,
                                             Value score, Value row, Value key,
                                             Value rowValid, Value keyValid,
                                             bool withSlope) const {
  auto idx = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto add = [&](Value x, Value y) -> Value {
    return arith::AddIOp::create(b, loc, x, y);
  };
  auto andI = [&](Value x, Value y) -> Value {
    return arith::AndIOp::create(b, loc, x, y);
  };
  auto select = [&](Value c, Value x, Value y) -> Value {
    return arith::SelectOp::create(b, loc, c, x, y);
  };
  auto guarded = [&](Value inBounds, function_ref<Value()> then,
                     Value otherwise) -> Value {
    auto ifOp = scf::IfOp::create(
        b, loc, inBounds,
        [&](OpBuilder &, Location) { scf::YieldOp::create(b, loc, then()); },
        [&](OpBuilder &, Location) {
          scf::YieldOp::create(b, loc, otherwise);
        });
    return ifOp.getResult(0);
  };
  Type f32 = b.getF32Type();
  Value negInf = arith::ConstantOp::create(
      b, loc, f32, b.getF32FloatAttr(-std::numeric_limits<float>::infinity()));

  Value allowed = andI(rowValid, keyValid);
  auto modArgs = [&]() {
    Value qPos = add(qFirst, select(rowValid, row, idx(0)));
    Value kPos = add(kFirst, select(keyValid, key, idx(0)));
    SmallVector<Value> args{batch, globalHead, qPos, kPos};
    llvm::append_range(args, modOperands);
    return args;
  };
  Value slope;
  if (mods->scoreMod) {
    SmallVector<Value> args{score};
    llvm::append_range(args, modArgs());
    if (withSlope)
      std::tie(score, slope) =
          emitScoreModWithDerivative(b, mods->scoreMod, args);
    else
      score = emitModFunction(b, mods->scoreMod, args);
  }
  if (mods->evaluatesMaskMod())
    allowed = andI(allowed, emitModFunction(b, mods->maskMod, modArgs()));
  if (cut) {
    Value structured =
        buildMaskAllows(b, loc, mods->mask, add(qFirst, row), add(kFirst, key));
    Value uncut = arith::XOrIOp::create(
        b, loc, cut, arith::ConstantIntOp::create(b, loc, 1, 1));
    allowed = andI(allowed, arith::OrIOp::create(b, loc, uncut, structured));
  }
  if (explicitMask) {
    auto maskType = cast<MemRefType>(explicitMask.getType());
    SmallVector<Value> at;
    if (maskType.getRank() == 4) {
      // A mask dim of 1 broadcasts over batches or heads.
      auto broadcast = [&](int64_t d, Value i) {
        Value isOne = arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::eq,
            memref::DimOp::create(b, loc, explicitMask, d), idx(1));
        return select(isOne, idx(0), i);
      };
      at = {broadcast(0, batch), broadcast(1, head)};
    }
    at.append({add(q0, row), add(k0, key)});
    Value inBounds = andI(rowValid, keyValid);
    auto read = [&]() -> Value {
      return memref::LoadOp::create(b, loc, explicitMask, at);
    };
    if (maskType.getElementType().isInteger(1)) {
      allowed =
          andI(allowed, guarded(inBounds, read,
                                arith::ConstantIntOp::create(b, loc, 0, 1)));
    } else {
      auto readF32 = [&]() -> Value {
        Value v = read();
        return v.getType() == f32 ? v : arith::ExtFOp::create(b, loc, f32, v);
      };
      Value zero =
          arith::ConstantOp::create(b, loc, f32, b.getF32FloatAttr(0.0));
      score = arith::AddFOp::create(b, loc, score,
                                    guarded(inBounds, readF32, zero));
    }
  }
  return {select(allowed, score, negInf), slope};
}
