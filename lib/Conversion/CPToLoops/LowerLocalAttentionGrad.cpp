//===- LowerLocalAttentionGrad.cpp - tiled FlashAttention-2 backward ------===//
//
// cp.buffer.local_attention_grad becomes the FlashAttention-2 backward loop
// nest of docs/Training.md §4: threads over (batch, KV head); per key tile,
// dK/dV accumulate in scratch over every query head of the group and every
// query tile that can see the tile, so each has one writer; dQ accumulates
// in an f32 buffer that only the thread of its KV head touches. Each tile
// pair recomputes P = exp(s - lse) from the forward's log-sum-exp; nothing
// of size Lq x Lkv is stored.
//
//===----------------------------------------------------------------------===//

#include "LocalAttentionLoops.h"
#include "cp/Conversion/AttentionCommon/ModFunctionLanes.h"
#include "cp/Conversion/AttentionCommon/ModFunctions.h"
#include "cp/Dialect/CP/Analysis/StructuredMask.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::cp;
using namespace mlir::cp::detail;

/// Per-thread scratch, all f32. Per query tile: the scaled queries
/// transposed Qt [D, Tq], the queries by row Qr [Tq, D'], dO transposed
/// dOt [Dv, Tq] and by row dOr [Tq, Dv'], the row's lse (+inf for rows that
/// saw nothing or do not exist, so that P = 0 there) and D_i =
/// rowsum(dO o O). Per tile pair: St (scores, then P), dPt (dP, then dT)
/// and, with a score_mod, Gt = m'(s), all [Tk, Tq]. Per key tile: the dK
/// and dV accumulators [Tk, D'] and [Tk, Dv'].
struct AttentionGradLowering::GradScratch {
  Value qt, qr, dot, dor, rowLse, rowDelta;
  Value st, dpt, gt;
  Value dk, dv;
};

void AttentionGradLowering::packQueryTile(Value batch, Value head, Value q0,
                                          Value validQ, const GradScratch &s) {
  Value zero = f32Const(0.0), zeroLanes = vecConst(0.0);
  Value posInf = f32Const(std::numeric_limits<double>::infinity());
  // Lanes of rows past the tile's end: no query, P = 0.
  loop(idx(0), headDim, 1, [&](Value d) {
    loop(idx(0), idx(t.tileQ), t.vectorWidth,
         [&](Value i) { storeLanes(zeroLanes, s.qt, {d, i}); });
  });
  loop(idx(0), valueDim, 1, [&](Value d) {
    loop(idx(0), idx(t.tileQ), t.vectorWidth,
         [&](Value i) { storeLanes(zeroLanes, s.dot, {d, i}); });
  });
  loop(idx(0), idx(t.tileQ), t.vectorWidth, [&](Value i) {
    storeLanes(splat(posInf), s.rowLse, {i});
    storeLanes(zeroLanes, s.rowDelta, {i});
  });
  loop(idx(0), validQ, 1, [&](Value i) {
    Value row = add(q0, i);
    loop(idx(0), keyLanes, 1, [&](Value d) {
      Value inside =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, d, headDim);
      auto ifOp = scf::IfOp::create(b, loc, TypeRange{f32}, inside,
                                    /*withElseRegion=*/true);
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(ifOp.thenBlock());
        Value x = loadF32(op.getQuery(), {batch, head, row, d});
        memref::StoreOp::create(
            b, loc, arith::MulFOp::create(b, loc, x, scale), s.qt,
            ValueRange{d, i});
        scf::YieldOp::create(b, loc, x);
        b.setInsertionPointToStart(ifOp.elseBlock());
        scf::YieldOp::create(b, loc, zero);
      }
      memref::StoreOp::create(b, loc, ifOp.getResult(0), s.qr,
                              ValueRange{i, d});
    });
    Value delta = loop(idx(0), valueLanes, idx(1), {zero},
                       [&](Value d, ValueRange acc) -> SmallVector<Value> {
                         Value inside = arith::CmpIOp::create(
                             b, loc, arith::CmpIPredicate::ult, d, valueDim);
                         auto ifOp = scf::IfOp::create(
                             b, loc, TypeRange{f32, f32}, inside,
                             /*withElseRegion=*/true);
                         {
                           OpBuilder::InsertionGuard guard(b);
                           b.setInsertionPointToStart(ifOp.thenBlock());
                           Value g = loadF32(op.getGradOutput(),
                                             {batch, head, row, d});
                           Value o =
                               loadF32(op.getOutput(), {batch, head, row, d});
                           memref::StoreOp::create(b, loc, g, s.dot,
                                                   ValueRange{d, i});
                           scf::YieldOp::create(
                               b, loc, ValueRange{g, math::FmaOp::create(b, loc, g, o,
                                                              acc[0])
                                                  .getResult()});
                           b.setInsertionPointToStart(ifOp.elseBlock());
                           scf::YieldOp::create(b, loc,
                                                ValueRange{zero, acc[0]});
                         }
                         memref::StoreOp::create(b, loc, ifOp.getResult(0),
                                                 s.dor, ValueRange{i, d});
                         return {ifOp.getResult(1)};
                       })[0];
    memref::StoreOp::create(b, loc, delta, s.rowDelta, ValueRange{i});
    Value lse = memref::LoadOp::create(b, loc, op.getLse(),
                                       ValueRange{batch, head, row});
    Value empty = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, lse,
                                        negInf);
    memref::StoreOp::create(
        b, loc, arith::SelectOp::create(b, loc, empty, posInf, lse), s.rowLse,
        ValueRange{i});
  });
}

void AttentionGradLowering::applyScoreMod(Value batch, Value head, Value qFirst,
                                          Value validQ, Value kFirst,
                                          Value rows, const GradScratch &s) {
  func::FuncOp scoreMod = op.getScoreModFunction();
  if (canEmitOnLanes(scoreMod, varyingModArguments(/*isMask=*/false,
                                                   op.getModOperands()))) {
    forScoreLanes(qFirst, validQ, rows, [&](Value j, Value i, Value qPos) {
      SmallVector<Value> args{loadLanes(s.st, {j, i}), batch, head, qPos,
                              add(kFirst, j)};
      llvm::append_range(args, op.getModOperands());
      auto [value, slope] =
          emitScoreModWithDerivative(b, scoreMod, args, t.vectorWidth);
      storeLanes(value, s.st, {j, i});
      storeLanes(slope, s.gt, {j, i});
    });
    return;
  }
  loop(idx(0), rows, 1, [&](Value j) {
    loop(idx(0), validQ, 1, [&](Value i) {
      Value score = memref::LoadOp::create(b, loc, s.st, ValueRange{j, i});
      SmallVector<Value> args{score, batch, head, add(qFirst, i),
                              add(kFirst, j)};
      llvm::append_range(args, op.getModOperands());
      auto [value, slope] = emitScoreModWithDerivative(b, scoreMod, args);
      memref::StoreOp::create(b, loc, value, s.st, ValueRange{j, i});
      memref::StoreOp::create(b, loc, slope, s.gt, ValueRange{j, i});
    });
  });
}

void AttentionGradLowering::emitTilePair(Value batch, Value head, Value kvHead,
                                         Value q0, Value validQ, Value k0,
                                         Value rows, const GradScratch &s) {
  ModFunctions mods = modFunctionsOf(op);
  Value qFirst = add(op.getQOffset(), q0);
  Value kFirst = add(op.getKvOffset(), k0);
  Value globalHead = op.getHeadOffset() ? add(op.getHeadOffset(), head) : head;
  packQueryTile(batch, head, q0, validQ, s);

  // St[j, i] = sum_d K[k0 + j, d] * scale * Q[q0 + i, d], then the score_mod
  // (with its derivative) and the masks, as in the forward.
  broadcastFmaKernel(
      s.st, idx(0), rows, headDim, idx(t.tileQ),
      [&](Value j, Value d) {
        return memref::LoadOp::create(b, loc, key,
                                      ValueRange{batch, kvHead, add(k0, j), d});
      },
      [&](Value d, Value lane) { return loadLanes(s.qt, {d, lane}); },
      /*accumulate=*/false, /*lanesOuter=*/false);
  if (mods.scoreMod)
    applyScoreMod(batch, globalHead, qFirst, validQ, kFirst, rows, s);
  Value qLast = sub(add(qFirst, validQ), idx(1));
  KeyTiles fullOnly;
  fullOnly.full = buildFullyVisibleKeyRange(b, loc, mods.mask, qFirst, qLast);
  if (Value cut = buildTileIsCut(b, loc, mods.mask, fullOnly, kFirst,
                                 sub(add(kFirst, rows), idx(1))))
    scf::IfOp::create(b, loc, cut, [&](OpBuilder &, Location) {
      applyStructuredMask(mods.mask, qFirst, kFirst, rows, s.st);
      scf::YieldOp::create(b, loc);
    });
  if (Value mask = op.getExplicitMask())
    applyExplicitMask(mask, batch, head, q0, validQ, k0, rows, s.st);
  if (mods.evaluatesMaskMod())
    applyModFunction(mods.maskMod, /*isMask=*/true, op.getModOperands(), batch,
                     globalHead, qFirst, validQ, kFirst, rows, s.st);

  // P = exp(s - lse): 0 where masked, for rows that saw nothing and for
  // lanes past the tile's rows (their lse is +inf).
  loop(idx(0), rows, 1, [&](Value j) {
    loop(idx(0), idx(t.tileQ), t.vectorWidth, [&](Value i) {
      Value p = math::ExpOp::create(
          b, loc,
          arith::SubFOp::create(b, loc, loadLanes(s.st, {j, i}),
                                loadLanes(s.rowLse, {i})));
      storeLanes(p, s.st, {j, i});
    });
  });
  // dV[j, :] += sum_i P[j, i] dO[i, :]
  broadcastFmaKernel(
      s.dv, idx(0), rows, validQ, valueLanes,
      [&](Value j, Value i) {
        return memref::LoadOp::create(b, loc, s.st, ValueRange{j, i});
      },
      [&](Value i, Value lane) { return loadLanes(s.dor, {i, lane}); },
      /*accumulate=*/true, /*lanesOuter=*/true);
  // dPt[j, i] = sum_dv V[k0 + j, dv] dO[i, dv]
  broadcastFmaKernel(
      s.dpt, idx(0), rows, valueDim, idx(t.tileQ),
      [&](Value j, Value dv) {
        return loadF32(op.getValue(), {batch, kvHead, add(k0, j), dv});
      },
      [&](Value dv, Value lane) { return loadLanes(s.dot, {dv, lane}); },
      /*accumulate=*/false, /*lanesOuter=*/false);
  // dT = P o (dP - D_i) o m'(s) * scale, in place of dP. Where P = 0 (masked,
  // or a row that saw nothing) dT is 0 even when the score_mod's slope is
  // not finite there.
  Value scaleLanes = splat(scale), zeroLanes = vecConst(0.0);
  loop(idx(0), rows, 1, [&](Value j) {
    loop(idx(0), idx(t.tileQ), t.vectorWidth, [&](Value i) {
      Value p = loadLanes(s.st, {j, i});
      Value ds = arith::MulFOp::create(
          b, loc, p,
          arith::SubFOp::create(b, loc, loadLanes(s.dpt, {j, i}),
                                loadLanes(s.rowDelta, {i})));
      Value dt = arith::MulFOp::create(b, loc, ds, scaleLanes);
      if (s.gt) {
        dt = arith::MulFOp::create(b, loc, dt, loadLanes(s.gt, {j, i}));
        Value hidden = arith::CmpFOp::create(
            b, loc, arith::CmpFPredicate::OEQ, p, zeroLanes);
        dt = arith::SelectOp::create(b, loc, hidden, zeroLanes, dt);
      }
      storeLanes(dt, s.dpt, {j, i});
    });
  });
  // dK[j, :] += sum_i dT[j, i] Q[i, :]
  broadcastFmaKernel(
      s.dk, idx(0), rows, validQ, keyLanes,
      [&](Value j, Value i) {
        return memref::LoadOp::create(b, loc, s.dpt, ValueRange{j, i});
      },
      [&](Value i, Value lane) { return loadLanes(s.qr, {i, lane}); },
      /*accumulate=*/true, /*lanesOuter=*/true);
  // dQ[q0 + i, :] += sum_j dT[j, i] K[k0 + j, :]
  broadcastFmaKernel(
      gradQuery, q0, add(q0, validQ), rows, keyLanes,
      [&](Value r, Value j) {
        return memref::LoadOp::create(b, loc, s.dpt, ValueRange{j, sub(r, q0)});
      },
      [&](Value j, Value lane) {
        return loadLanes(key, {batch, kvHead, add(k0, j), lane});
      },
      /*accumulate=*/true, /*lanesOuter=*/false, ValueRange{batch, head});
}

void AttentionGradLowering::emitKeyTile(Value batch, Value kvHead, Value k0,
                                        Value rows, const GradScratch &s) {
  Value zero = vecConst(0.0);
  loop(idx(0), idx(t.tileKv), 1, [&](Value j) {
    loop(idx(0), keyLanes, t.vectorWidth,
         [&](Value d) { storeLanes(zero, s.dk, {j, d}); });
    loop(idx(0), valueLanes, t.vectorWidth,
         [&](Value d) { storeLanes(zero, s.dv, {j, d}); });
  });
  ModFunctions mods = modFunctionsOf(op);
  Value kFirst = add(op.getKvOffset(), k0);
  Value kLast = sub(add(kFirst, rows), idx(1));
  // A document mask hides a query tile whose segment ids all differ from
  // the key tile's.
  std::pair<Value, Value> keySegments;
  if (querySegments)
    keySegments = rangeOf(op.getModOperands()[*mods.analysis.documentOperand],
                          kFirst, rows);
  Value queryTiles = arith::CeilDivUIOp::create(b, loc, lq, idx(t.tileQ));
  loop(idx(0), kvGroup, 1, [&](Value member) {
    Value head = add(mul(kvHead, kvGroup), member);
    loop(idx(0), queryTiles, 1, [&](Value tile) {
      Value q0 = mul(tile, idx(t.tileQ));
      Value validQ = minIdx(idx(t.tileQ), sub(lq, q0));
      Value qFirst = add(op.getQOffset(), q0);
      Value qLast = sub(add(qFirst, validQ), idx(1));
      OpBuilder::InsertionGuard guard(b);
      Value visible =
          buildBlockIsVisible(b, loc, mods.mask, qFirst, qLast, kFirst, kLast);
      if (querySegments) {
        Value meet =
            rangesMeet(segmentRangeOfTile(querySegments, tile), keySegments);
        visible =
            visible ? arith::AndIOp::create(b, loc, visible, meet) : meet;
      }
      if (visible) {
        auto ifOp = scf::IfOp::create(b, loc, visible, /*withElseRegion=*/false);
        b.setInsertionPointToStart(ifOp.thenBlock());
      }
      emitTilePair(batch, head, kvHead, q0, validQ, k0, rows, s);
    });
  });
  // The tile's dK and dV, summed over the group's heads, in storage type.
  for (auto [acc, result, width] :
       {std::tuple(s.dk, op.getGradKey(), headDim),
        std::tuple(s.dv, op.getGradValue(), valueDim)}) {
    Type elt = cast<MemRefType>(result.getType()).getElementType();
    loop(idx(0), rows, 1, [&](Value j) {
      loop(idx(0), width, 1, [&](Value d) {
        Value x = memref::LoadOp::create(b, loc, acc, ValueRange{j, d});
        if (elt != f32)
          x = arith::TruncFOp::create(b, loc, elt, x);
        memref::StoreOp::create(b, loc, x, result,
                                ValueRange{batch, kvHead, add(k0, j), d});
      });
    });
  }
}

void AttentionGradLowering::build() {
  Value query = op.getQuery();
  lq = dim(query, 2);
  headDim = dim(query, 3);
  lkv = dim(op.getKey(), 2);
  valueDim = dim(op.getValue(), 3);
  Value batches = dim(query, 0), heads = dim(query, 1);
  Value kvHeads = dim(op.getKey(), 1);
  kvGroup = arith::DivUIOp::create(b, loc, heads, kvHeads);
  scale = softmaxScale(op.getScaleAttr(), headDim);
  keyLanes = paddedLanes(headDim);
  valueLanes = paddedLanes(valueDim);
  auto alignment = b.getI64IntegerAttr(64);
  auto dynamic4 = MemRefType::get(SmallVector<int64_t>(4, ShapedType::kDynamic),
                                  f32);
  Value one = idx(1), zero = f32Const(0.0);

  // K as f32 rows padded with zeros to D' (read by scalars and by lanes).
  key = memref::AllocOp::create(b, loc, dynamic4,
                                ValueRange{batches, kvHeads, lkv, keyLanes},
                                alignment);
  scf::ParallelOp::create(
      b, loc, ValueRange{idx(0), idx(0), idx(0)},
      ValueRange{batches, kvHeads, lkv}, ValueRange{one, one, one},
      [&](OpBuilder &, Location, ValueRange ivs) {
        loop(idx(0), headDim, 1, [&](Value d) {
          SmallVector<Value> at{ivs[0], ivs[1], ivs[2], d};
          memref::StoreOp::create(b, loc, loadF32(op.getKey(), at), key, at);
        });
        loop(headDim, keyLanes, 1, [&](Value d) {
          memref::StoreOp::create(b, loc, zero, key,
                                  ValueRange{ivs[0], ivs[1], ivs[2], d});
        });
      });
  gradQuery = memref::AllocOp::create(
      b, loc, dynamic4, ValueRange{batches, heads, lq, keyLanes}, alignment);
  // The segment range of every query tile of a document mask, once per call.
  ModFunctions mods = modFunctionsOf(op);
  if (mods.analysis.documentOperand)
    querySegments =
        tileSegmentRanges(op.getModOperands()[*mods.analysis.documentOperand],
                          op.getQOffset(), lq, t.tileQ);

  scf::ParallelOp::create(
      b, loc, ValueRange{idx(0), idx(0)}, ValueRange{batches, kvHeads},
      ValueRange{one, one}, [&](OpBuilder &, Location, ValueRange ivs) {
        // scf.parallel is an automatic allocation scope: the scratch lives
        // for one (batch, KV head).
        Value batch = ivs[0], kvHead = ivs[1];
        int64_t staticD = op.getQuery().getType().getDimSize(3);
        int64_t staticDv = op.getValue().getType().getDimSize(3);
        int64_t block = t.vectorWidth * t.microVectors;
        auto padded = [&](int64_t size) {
          return ShapedType::isDynamic(size)
                     ? ShapedType::kDynamic
                     : llvm::divideCeil(size, block) * block;
        };
        GradScratch s;
        s.qt = scratchTile(headDim, staticD, Value(), t.tileQ);
        s.qr = scratchTile(Value(), t.tileQ, keyLanes, padded(staticD));
        s.dot = scratchTile(valueDim, staticDv, Value(), t.tileQ);
        s.dor = scratchTile(Value(), t.tileQ, valueLanes, padded(staticDv));
        s.rowLse = scratchRow();
        s.rowDelta = scratchRow();
        s.st = scratchTile(Value(), t.tileKv, Value(), t.tileQ);
        s.dpt = scratchTile(Value(), t.tileKv, Value(), t.tileQ);
        if (op.getScoreModAttr())
          s.gt = scratchTile(Value(), t.tileKv, Value(), t.tileQ);
        s.dk = scratchTile(Value(), t.tileKv, keyLanes, padded(staticD));
        s.dv = scratchTile(Value(), t.tileKv, valueLanes, padded(staticDv));

        Value zeroLanes = vecConst(0.0);
        loop(idx(0), kvGroup, 1, [&](Value member) {
          Value head = add(mul(kvHead, kvGroup), member);
          loop(idx(0), lq, 1, [&](Value i) {
            loop(idx(0), keyLanes, t.vectorWidth, [&](Value d) {
              storeLanes(zeroLanes, gradQuery, {batch, head, i, d});
            });
          });
        });
        Value keyTiles = arith::CeilDivUIOp::create(b, loc, lkv, idx(t.tileKv));
        loop(idx(0), keyTiles, 1, [&](Value kt) {
          Value k0 = mul(kt, idx(t.tileKv));
          Value rows = minIdx(idx(t.tileKv), sub(lkv, k0));
          emitKeyTile(batch, kvHead, k0, rows, s);
        });
        // The group's dQ rows, in storage type.
        Type elt = op.getGradQuery().getType().getElementType();
        loop(idx(0), kvGroup, 1, [&](Value member) {
          Value head = add(mul(kvHead, kvGroup), member);
          loop(idx(0), lq, 1, [&](Value i) {
            loop(idx(0), headDim, 1, [&](Value d) {
              Value x = memref::LoadOp::create(b, loc, gradQuery,
                                               ValueRange{batch, head, i, d});
              if (elt != f32)
                x = arith::TruncFOp::create(b, loc, elt, x);
              memref::StoreOp::create(b, loc, x, op.getGradQuery(),
                                      ValueRange{batch, head, i, d});
            });
          });
        });
      });
  memref::DeallocOp::create(b, loc, key);
  memref::DeallocOp::create(b, loc, gradQuery);
  freeSegmentRanges(querySegments);
}
