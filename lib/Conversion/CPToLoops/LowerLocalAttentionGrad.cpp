//===- LowerLocalAttentionGrad.cpp - tiled FlashAttention-2 backward ------===//
//
// cp.buffer.local_attention_grad becomes the FlashAttention-2 backward loop
// nest of docs/Training.md §4: threads over (batch, KV head), so every dK,
// dV and dQ row has one writer. Per query head of the group, that head's
// queries are packed once per call into the layouts the kernels read
// (QueryPack); then every key tile meets every query tile it can see, and
// each tile pair recomputes P = exp(s - lse) from the forward's log-sum-exp
// and adds its products to f32 accumulators of dK, dV (over the whole group)
// and dQ. Nothing of size Lq x Lkv is stored.
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

/// One query head's operands as the tile kernels read them, packed once
/// per (call, head) on the heap of the thread that owns the head, all f32.
/// For query tile t (rows t Tq to t Tq + Tq - 1; rows past Lq are padding):
/// the scaled queries transposed Qt [T, D, Tq] and dO transposed dOt [T, Dv,
/// Tq], whose lanes are a tile's rows; by row, the queries Qr [T Tq, D'] and
/// dO dOr [T Tq, Dv'] zero padded to whole register blocks; per row the
/// lse (+inf for rows that saw nothing and for padding, so that P = 0
/// there), D_i = rowsum(dO o O), and the dQ accumulator [T Tq, D'].
struct AttentionGradLowering::QueryPack {
  Value qt, dot, qr, dor, rowLse, rowDelta, dq;
};

/// Per tile pair, on the thread's stack: St (scores, then P), dPt (dP, then
/// dT) and, with a score_mod, Gt = m'(s), all [Tk, Tq]; St[j, i] belongs to
/// key row j and query row i of the pair.
struct AttentionGradLowering::PairScratch {
  Value st, dpt, gt;
};

void AttentionGradLowering::packQueries(Value batch, Value head,
                                        const QueryPack &p) {
  Value zero = f32Const(0.0);
  Value posInf = f32Const(std::numeric_limits<double>::infinity());
  Value tileQ = idx(t.tileQ);
  auto store = [&](Value v, Value memref, ValueRange at) {
    memref::StoreOp::create(b, loc, v, memref, at);
  };
  auto rowsOf = [&](Value memref, Value row, Value count, Value padded,
                    function_ref<Value(Value)> value) {
    packRow(
        memref, count, padded, zero,
        [&](Value d) {
          return SmallVector<Value>{row, d};
        },
        value);
  };
  Value paddedRows = mul(arith::CeilDivUIOp::create(b, loc, lq, tileQ), tileQ);
  loop(idx(0), paddedRows, 1, [&](Value row) {
    Value tile = arith::DivUIOp::create(b, loc, row, tileQ);
    Value lane = arith::RemUIOp::create(b, loc, row, tileQ);
    Value exists =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row, lq);
    auto ifOp = scf::IfOp::create(b, loc, exists, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    // A query row: its values, and zeros past D and Dv.
    b.setInsertionPointToStart(ifOp.thenBlock());
    rowsOf(p.qr, row, headDim, keyLanes, [&](Value d) {
      Value x = loadF32(op.getQuery(), {batch, head, row, d});
      store(fmul(x, scale), p.qt, {tile, d, lane});
      return x;
    });
    rowsOf(p.dor, row, valueDim, valueLanes, [&](Value d) {
      Value g = loadF32(op.getGradOutput(), {batch, head, row, d});
      store(g, p.dot, {tile, d, lane});
      return g;
    });
    Value delta = loop(
        idx(0), valueDim, idx(1), {zero},
        [&](Value d, ValueRange acc) -> SmallVector<Value> {
          Value o = loadF32(op.getOutput(), {batch, head, row, d});
          Value g = memref::LoadOp::create(b, loc, p.dor, ValueRange{row, d});
          return {math::FmaOp::create(b, loc, g, o, acc[0]).getResult()};
        })[0];
    store(delta, p.rowDelta, {row});
    Value lse = memref::LoadOp::create(b, loc, op.getLse(),
                                       ValueRange{batch, head, row});
    Value empty =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, lse, negInf);
    store(select(empty, posInf, lse), p.rowLse, {row});
    rowsOf(p.dq, row, idx(0), keyLanes, [&](Value) { return zero; });
    // Padding past the last query: lanes that score 0 and get P = 0.
    b.setInsertionPointToStart(ifOp.elseBlock());
    loop(idx(0), headDim, 1, [&](Value d) {
      store(zero, p.qt, {tile, d, lane});
    });
    loop(idx(0), valueDim, 1, [&](Value d) {
      store(zero, p.dot, {tile, d, lane});
    });
    store(zero, p.rowDelta, {row});
    store(posInf, p.rowLse, {row});
  });
}

void AttentionGradLowering::applyScoreMod(Value batch, Value head, Value qFirst,
                                          Value validQ, Value kFirst,
                                          Value rows, const PairScratch &s) {
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
                                         Value tile, Value validQ, Value k0,
                                         Value rows, const QueryPack &p,
                                         const PairScratch &s) {
  ModFunctions mods = modFunctionsOf(op);
  Value q0 = mul(tile, idx(t.tileQ));
  Value qFirst = add(op.getQOffset(), q0);
  Value kFirst = add(op.getKvOffset(), k0);
  Value kEnd = add(k0, rows);
  Value globalHead = op.getHeadOffset() ? add(op.getHeadOffset(), head) : head;

  // St[j, i] = sum_d K[k0 + j, d] * scale * Q[q0 + i, d], then the score_mod
  // (with its derivative) and the masks, as in the forward.
  broadcastFmaKernel(
      s.st, idx(0), rows, headDim, idx(t.tileQ),
      [&](Value j, Value d) {
        return memref::LoadOp::create(b, loc, key,
                                      ValueRange{batch, kvHead, add(k0, j), d});
      },
      [&](Value d, Value lane) {
        return loadLanes(p.qt, {tile, d, lane});
      },
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
      Value prob = math::ExpOp::create(
          b, loc,
          arith::SubFOp::create(b, loc, loadLanes(s.st, {j, i}),
                                loadLanes(p.rowLse, {add(q0, i)})));
      storeLanes(prob, s.st, {j, i});
    });
  });
  // dV[k0 + j, :] += sum_i P[j, i] dO[q0 + i, :]
  broadcastFmaKernel(
      gradValue, k0, kEnd, validQ, valueLanes,
      [&](Value r, Value i) {
        return memref::LoadOp::create(b, loc, s.st, ValueRange{sub(r, k0), i});
      },
      [&](Value i, Value lane) {
        return loadLanes(p.dor, {add(q0, i), lane});
      },
      /*accumulate=*/true, /*lanesOuter=*/true);
  // dPt[j, i] = sum_dv V[k0 + j, dv] dO[q0 + i, dv]
  broadcastFmaKernel(
      s.dpt, idx(0), rows, valueDim, idx(t.tileQ),
      [&](Value j, Value dv) {
        return memref::LoadOp::create(
            b, loc, value, ValueRange{batch, kvHead, add(k0, j), dv});
      },
      [&](Value dv, Value lane) {
        return loadLanes(p.dot, {tile, dv, lane});
      },
      /*accumulate=*/false, /*lanesOuter=*/false);
  // dT = P o (dP - D_i) o m'(s) * scale, in place of dP. Where P = 0 (masked,
  // or a row that saw nothing) dT is 0 even when the score_mod's slope is
  // not finite there.
  Value scaleLanes = splat(scale), zeroLanes = vecConst(0.0);
  loop(idx(0), rows, 1, [&](Value j) {
    loop(idx(0), idx(t.tileQ), t.vectorWidth, [&](Value i) {
      Value prob = loadLanes(s.st, {j, i});
      Value ds = arith::MulFOp::create(
          b, loc, prob,
          arith::SubFOp::create(b, loc, loadLanes(s.dpt, {j, i}),
                                loadLanes(p.rowDelta, {add(q0, i)})));
      Value dt = arith::MulFOp::create(b, loc, ds, scaleLanes);
      if (s.gt) {
        dt = arith::MulFOp::create(b, loc, dt, loadLanes(s.gt, {j, i}));
        Value hidden = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                             prob, zeroLanes);
        dt = arith::SelectOp::create(b, loc, hidden, zeroLanes, dt);
      }
      storeLanes(dt, s.dpt, {j, i});
    });
  });
  // dK[k0 + j, :] += sum_i dT[j, i] Q[q0 + i, :]
  broadcastFmaKernel(
      gradKey, k0, kEnd, validQ, keyLanes,
      [&](Value r, Value i) {
        return memref::LoadOp::create(b, loc, s.dpt, ValueRange{sub(r, k0), i});
      },
      [&](Value i, Value lane) {
        return loadLanes(p.qr, {add(q0, i), lane});
      },
      /*accumulate=*/true, /*lanesOuter=*/true);
  // dQ[q0 + i, :] += sum_j dT[j, i] K[k0 + j, :]
  broadcastFmaKernel(
      p.dq, q0, add(q0, validQ), rows, keyLanes,
      [&](Value r, Value j) {
        return memref::LoadOp::create(b, loc, s.dpt, ValueRange{j, sub(r, q0)});
      },
      [&](Value j, Value lane) {
        return loadLanes(key, {batch, kvHead, add(k0, j), lane});
      },
      /*accumulate=*/true, /*lanesOuter=*/false);
}

void AttentionGradLowering::emitKeyTile(Value batch, Value head, Value kvHead,
                                        Value k0, Value rows,
                                        const QueryPack &p,
                                        const PairScratch &s) {
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
      visible = visible ? arith::AndIOp::create(b, loc, visible, meet) : meet;
    }
    if (visible) {
      auto ifOp = scf::IfOp::create(b, loc, visible, /*withElseRegion=*/false);
      b.setInsertionPointToStart(ifOp.thenBlock());
    }
    emitTilePair(batch, head, kvHead, tile, validQ, k0, rows, p, s);
  });
}

void AttentionGradLowering::storeRows(Value from, Value to, Value batch,
                                      Value head, Value count, Value width) {
  Type elt = cast<MemRefType>(to.getType()).getElementType();
  loop(idx(0), count, 1, [&](Value row) {
    loop(idx(0), width, 1, [&](Value d) {
      Value x = memref::LoadOp::create(b, loc, from, ValueRange{row, d});
      if (elt != f32)
        x = arith::TruncFOp::create(b, loc, elt, x);
      memref::StoreOp::create(b, loc, x, to, ValueRange{batch, head, row, d});
    });
  });
}

Value AttentionGradLowering::packRows(Value source, Value width, Value padded) {
  Value batches = dim(source, 0), kvHeads = dim(source, 1);
  Value packed = memref::AllocOp::create(
      b, loc,
      MemRefType::get(SmallVector<int64_t>(4, ShapedType::kDynamic), f32),
      ValueRange{batches, kvHeads, lkv, padded}, b.getI64IntegerAttr(64));
  Value one = idx(1), zero = f32Const(0.0);
  scf::ParallelOp::create(
      b, loc, ValueRange{idx(0), idx(0), idx(0)},
      ValueRange{batches, kvHeads, lkv}, ValueRange{one, one, one},
      [&](OpBuilder &, Location, ValueRange ivs) {
        packRow(
            packed, width, padded, zero,
            [&](Value d) {
              return SmallVector<Value>{ivs[0], ivs[1], ivs[2], d};
            },
            [&](Value d) {
              return loadF32(source, {ivs[0], ivs[1], ivs[2], d});
            });
      });
  return packed;
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
  Value one = idx(1);

  // K as f32 rows padded with zeros to D' (read by scalars and by lanes),
  // and V as f32 rows where it is stored narrower (read by scalars).
  key = packRows(op.getKey(), headDim, keyLanes);
  value = op.getValue();
  if (cast<MemRefType>(value.getType()).getElementType() != f32)
    value = packRows(value, valueDim, valueDim);
  // The segment range of every query tile of a document mask, once per call.
  ModFunctions mods = modFunctionsOf(op);
  if (mods.analysis.documentOperand)
    querySegments =
        tileSegmentRanges(op.getModOperands()[*mods.analysis.documentOperand],
                          op.getQOffset(), lq, t.tileQ);

  int64_t staticD = op.getQuery().getType().getDimSize(3);
  int64_t staticDv = op.getValue().getType().getDimSize(3);
  int64_t tq = t.tileQ;
  scf::ParallelOp::create(
      b, loc, ValueRange{idx(0), idx(0)}, ValueRange{batches, kvHeads},
      ValueRange{one, one}, [&](OpBuilder &, Location, ValueRange ivs) {
        Value batch = ivs[0], kvHead = ivs[1];
        int64_t dyn = ShapedType::kDynamic;
        auto heap = [&](ArrayRef<int64_t> shape, ValueRange sizes) {
          return memref::AllocOp::create(b, loc, MemRefType::get(shape, f32),
                                         sizes, alignment)
              .getResult();
        };
        Value queryTiles = arith::CeilDivUIOp::create(b, loc, lq, idx(tq));
        Value paddedRows = mul(queryTiles, idx(tq));
        auto sized = [&](int64_t staticSize, Value size) {
          return ShapedType::isDynamic(staticSize) ? SmallVector<Value>{size}
                                                   : SmallVector<Value>{};
        };
        SmallVector<Value> tilesAndD{queryTiles}, tilesAndDv{queryTiles};
        llvm::append_range(tilesAndD, sized(staticD, headDim));
        llvm::append_range(tilesAndDv, sized(staticDv, valueDim));
        QueryPack p;
        p.qt = heap({dyn, staticD, tq}, tilesAndD);
        p.dot = heap({dyn, staticDv, tq}, tilesAndDv);
        p.qr = heap({dyn, dyn}, {paddedRows, keyLanes});
        p.dor = heap({dyn, dyn}, {paddedRows, valueLanes});
        p.dq = heap({dyn, dyn}, {paddedRows, keyLanes});
        p.rowLse = heap({dyn}, {paddedRows});
        p.rowDelta = heap({dyn}, {paddedRows});
        // dK and dV of the KV head, summed over the group's query heads.
        gradKey = heap({dyn, dyn}, {lkv, keyLanes});
        gradValue = heap({dyn, dyn}, {lkv, valueLanes});
        Value zeroLanes = vecConst(0.0);
        loop(idx(0), lkv, 1, [&](Value j) {
          loop(idx(0), keyLanes, t.vectorWidth, [&](Value d) {
            storeLanes(zeroLanes, gradKey, {j, d});
          });
          loop(idx(0), valueLanes, t.vectorWidth, [&](Value d) {
            storeLanes(zeroLanes, gradValue, {j, d});
          });
        });
        // scf.parallel is an automatic allocation scope: the tile pair's
        // scratch lives for one (batch, KV head).
        PairScratch s;
        s.st = scratchTile(Value(), t.tileKv, Value(), tq);
        s.dpt = scratchTile(Value(), t.tileKv, Value(), tq);
        if (op.getScoreModAttr())
          s.gt = scratchTile(Value(), t.tileKv, Value(), tq);

        Value keyTiles = arith::CeilDivUIOp::create(b, loc, lkv, idx(t.tileKv));
        loop(idx(0), kvGroup, 1, [&](Value member) {
          Value head = add(mul(kvHead, kvGroup), member);
          packQueries(batch, head, p);
          loop(idx(0), keyTiles, 1, [&](Value kt) {
            Value k0 = mul(kt, idx(t.tileKv));
            Value rows = minIdx(idx(t.tileKv), sub(lkv, k0));
            emitKeyTile(batch, head, kvHead, k0, rows, p, s);
          });
          storeRows(p.dq, op.getGradQuery(), batch, head, lq, headDim);
        });
        storeRows(gradKey, op.getGradKey(), batch, kvHead, lkv, headDim);
        storeRows(gradValue, op.getGradValue(), batch, kvHead, lkv, valueDim);
        for (Value buffer : {p.qt, p.dot, p.qr, p.dor, p.dq, p.rowLse,
                             p.rowDelta, gradKey, gradValue})
          memref::DeallocOp::create(b, loc, buffer);
      });
  memref::DeallocOp::create(b, loc, key);
  if (value != op.getValue())
    memref::DeallocOp::create(b, loc, value);
  freeSegmentRanges(querySegments);
}
