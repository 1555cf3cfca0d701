//===- LowerLocalAttention.cpp - tiled online-softmax attention -----------===//
//
// Implements cp-lower-local-attention: cp.buffer.local_attention becomes a
// flash-attention loop nest in scf/vector/math/memref. The algorithm and
// the reasons for its shape are in docs/Lowering.md §2.
//
//===----------------------------------------------------------------------===//

#include "LocalAttentionLoops.h"
#include "cp/Conversion/AttentionCommon/LowerBufferAttentions.h"
#include "cp/Conversion/AttentionCommon/ModFunctions.h"
#include "cp/Conversion/Passes.h"
#include "cp/Dialect/CP/Analysis/StructuredMask.h"
#include "cp/Dialect/CP/IR/CPOps.h"
#include "cp/Dialect/CP/IR/ModRegions.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace cp {
#define GEN_PASS_DEF_LOWERLOCALATTENTIONPASS
#include "cp/Conversion/Passes.h.inc"
} // namespace cp
} // namespace mlir

using namespace mlir;
using namespace mlir::cp;
using namespace mlir::cp::detail;

void AttentionLowering::updateSoftmax(Value validQ, Value rowsInTile,
                                      const Scratch &s) {
  Value zero = vecConst(0.0), negInfLanes = splat(negInf);
  loop(idx(0), idx(t.tileQ), t.vectorWidth, [&](Value i) {
    Value oldMax = loadLanes(s.rowMax, {i});
    Value newMax = loop(idx(0), rowsInTile, idx(1), {oldMax},
                        [&](Value j, ValueRange m) -> SmallVector<Value> {
                          return {arith::MaximumFOp::create(
                              b, loc, m[0], loadLanes(s.st, {j, i}))};
                        })[0];
    // While a row has seen only masked scores its max is -inf; use 0 so
    // that exp(-inf - 0) = 0 rather than exp(-inf + inf) = NaN.
    Value isNegInf = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                           newMax, negInfLanes);
    Value safeMax = arith::SelectOp::create(b, loc, isNegInf, zero, newMax);
    Value alpha = math::ExpOp::create(
        b, loc, arith::SubFOp::create(b, loc, oldMax, safeMax));
    Value sum = loop(
        idx(0), rowsInTile, idx(1), {zero},
        [&](Value j, ValueRange acc) -> SmallVector<Value> {
          Value p = math::ExpOp::create(
              b, loc,
              arith::SubFOp::create(b, loc, loadLanes(s.st, {j, i}), safeMax));
          storeLanes(p, s.st, {j, i});
          return {arith::AddFOp::create(b, loc, acc[0], p)};
        })[0];
    Value oldSum = loadLanes(s.rowSum, {i});
    storeLanes(vector::FMAOp::create(b, loc, oldSum, alpha, sum), s.rowSum,
               {i});
    storeLanes(newMax, s.rowMax, {i});
    storeLanes(alpha, s.alpha, {i});
  });
  // Acc rows of the queries that exist: Acc[i, :] *= alpha[i].
  loop(idx(0), validQ, 1, [&](Value i) {
    Value alpha = splat(memref::LoadOp::create(b, loc, s.alpha, ValueRange{i}));
    loop(idx(0), valueLanes, t.vectorWidth, [&](Value dv) {
      Value acc = loadLanes(s.acc, {i, dv});
      storeLanes(arith::MulFOp::create(b, loc, acc, alpha), s.acc, {i, dv});
    });
  });
}

void AttentionLowering::writeOutputs(Value batch, Value head, Value q0,
                                     Value validQ, const Scratch &s) {
  Type outElt = op.getOutput().getType().getElementType();
  Value zero = f32Const(0.0), one = f32Const(1.0);
  loop(idx(0), validQ, 1, [&](Value i) {
    Value sum = memref::LoadOp::create(b, loc, s.rowSum, ValueRange{i});
    Value seen =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, sum, zero);
    Value inv = arith::SelectOp::create(
        b, loc, seen, arith::DivFOp::create(b, loc, one, sum), zero);
    Value row = add(q0, i);
    loop(idx(0), valueDim, 1, [&](Value dv) {
      Value acc = memref::LoadOp::create(b, loc, s.acc, ValueRange{i, dv});
      Value out = arith::MulFOp::create(b, loc, acc, inv);
      if (outElt != f32)
        out = arith::TruncFOp::create(b, loc, outElt, out);
      memref::StoreOp::create(b, loc, out, op.getOutput(),
                              ValueRange{batch, head, row, dv});
    });
    if (Value lse = op.getLse()) {
      Value max = memref::LoadOp::create(b, loc, s.rowMax, ValueRange{i});
      Value logSum = arith::AddFOp::create(
          b, loc, max,
          math::LogOp::create(b, loc,
                              arith::SelectOp::create(b, loc, seen, sum, one)));
      memref::StoreOp::create(
          b, loc, arith::SelectOp::create(b, loc, seen, logSum, negInf), lse,
          ValueRange{batch, head, row});
    }
  });
}

bool AttentionLowering::usesBf16Dot() {
  if (!t.bf16Dot)
    return false;
  auto typeOf = [](Value v) { return cast<MemRefType>(v.getType()); };
  MemRefType key = typeOf(op.getKey());
  int64_t d = op.getQuery().getType().getDimSize(3);
  // The option is about bf16 attention: other element types keep the f32
  // path without a word.
  if (!llvm::all_of(
          ValueRange{op.getQuery(), op.getKey(), op.getValue()},
          [&](Value v) { return typeOf(v).getElementType().isBF16(); }))
    return false;
  std::string reason;
  if (ShapedType::isDynamic(d) || d % 2 != 0)
    reason = "the head dim D is not a static even number";
  else if (!key.isLastDimUnitStride())
    reason = "K's rows are not contiguous";
  else if (t.tileKv % 2 != 0)
    reason = "tile-kv is odd";
  else if (t.vectorWidth != 4 && t.vectorWidth != 8 && t.vectorWidth != 16)
    reason = "vector-width is not 4, 8 or 16";
  if (reason.empty())
    return true;
  op.emitRemark("bf16-dot not used: ")
      << reason << "; the products widen to f32 FMAs";
  return false;
}

Value AttentionLowering::packValuePairPanels() {
  Value source = op.getValue();
  int64_t width = t.vectorWidth * t.microVectors;
  Type bf16 = b.getBF16Type();
  Value panels = arith::DivUIOp::create(b, loc, valueLanes, idx(width));
  Value rowPairs = arith::CeilDivUIOp::create(b, loc, lkv, idx(2));
  SmallVector<Value> sizes{dim(source, 0), dim(source, 1), panels, rowPairs};
  auto packedType =
      MemRefType::get({ShapedType::kDynamic, ShapedType::kDynamic,
                       ShapedType::kDynamic, ShapedType::kDynamic, 2 * width},
                      bf16);
  Value packed = memref::AllocOp::create(b, loc, packedType, sizes,
                                         b.getI64IntegerAttr(64));
  Value zero = arith::ConstantOp::create(b, loc, bf16, b.getZeroAttr(bf16));
  Value one = idx(1);
  scf::ParallelOp::create(
      b, loc, ValueRange{idx(0), idx(0), idx(0)},
      ValueRange{sizes[0], sizes[1], rowPairs}, ValueRange{one, one, one},
      [&](OpBuilder &, Location, ValueRange ivs) {
        Value batch = ivs[0], kvHead = ivs[1], pair = ivs[2];
        for (int64_t e = 0; e < 2; ++e) {
          Value row = add(mul(pair, idx(2)), idx(e));
          auto at = [&](Value d) {
            Value panel = arith::DivUIOp::create(b, loc, d, idx(width));
            Value lane = arith::RemUIOp::create(b, loc, d, idx(width));
            return SmallVector<Value>{batch, kvHead, panel, pair,
                                      add(mul(lane, idx(2)), idx(e))};
          };
          // Rows past the last (an odd Lkv) and lanes past Dv are zero.
          Value rowExists = lessThan(row, lkv);
          Value dEnd = select(rowExists, valueDim, idx(0));
          packRow(packed, dEnd, valueLanes, zero, at, [&](Value d) -> Value {
            return memref::LoadOp::create(b, loc, source,
                                          ValueRange{batch, kvHead, row, d});
          });
        }
      });
  return packed;
}

void AttentionLowering::packQueryPairs(Value batch, Value head, Value q0,
                                       Value validQ, const Scratch &s) {
  // Lanes past the last query row stay 0: their scores are never stored.
  int64_t vw = t.vectorWidth;
  auto pairLanes = VectorType::get({2 * vw}, b.getBF16Type());
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(pairLanes));
  Value halfD = arith::DivUIOp::create(b, loc, headDim, idx(2));
  loop(idx(0), halfD, 1, [&](Value p) {
    loop(idx(0), idx(2 * t.tileQ), 2 * vw, [&](Value i) {
      vector::StoreOp::create(b, loc, zero, s.qp, ValueRange{p, i});
    });
  });
  loop(idx(0), validQ, 1, [&](Value i) {
    Value row = add(q0, i);
    loop(idx(0), headDim, 1, [&](Value d) {
      Value x = memref::LoadOp::create(b, loc, op.getQuery(),
                                       ValueRange{batch, head, row, d});
      Value p = arith::DivUIOp::create(b, loc, d, idx(2));
      Value e = arith::RemUIOp::create(b, loc, d, idx(2));
      memref::StoreOp::create(b, loc, x, s.qp,
                              ValueRange{p, add(mul(i, idx(2)), e)});
    });
  });
}

void AttentionLowering::scoreTileBf16(Value batch, Value kvHead, Value k0,
                                      Value rows, const Scratch &s) {
  // St[j, i] = sum_p (K[k0 + j, 2p], K[k0 + j, 2p + 1]) . (Q[i, 2p],
  // Q[i, 2p + 1]), then scaled (Q is not rounded after scaling).
  bf16DotKernel(
      s.st, idx(0), rows, arith::DivUIOp::create(b, loc, headDim, idx(2)),
      idx(t.tileQ),
      [&](Value j, Value p) {
        return broadcastBf16Pair(key,
                                 {batch, kvHead, add(k0, j), mul(p, idx(2))});
      },
      [&](Value p, Value lane) {
        return vector::LoadOp::create(
            b, loc, VectorType::get({2 * t.vectorWidth}, b.getBF16Type()), s.qp,
            ValueRange{p, mul(lane, idx(2))});
      },
      /*accumulate=*/false, /*lanesOuter=*/false);
  Value scaleLanes = splat(scale);
  loop(idx(0), rows, 1, [&](Value j) {
    loop(idx(0), idx(t.tileQ), t.vectorWidth, [&](Value i) {
      storeLanes(
          arith::MulFOp::create(b, loc, loadLanes(s.st, {j, i}), scaleLanes),
          s.st, {j, i});
    });
  });
}

void AttentionLowering::packProbabilityPairs(Value rows, const Scratch &s) {
  // Pp[q, 2i + e] = bf16(P[2q + e, i]); a row past the tile's last is 0.
  int64_t vw = t.vectorWidth;
  auto halfLanes = VectorType::get({vw}, b.getBF16Type());
  Value zero = vecConst(0.0);
  loop(idx(0), arith::CeilDivUIOp::create(b, loc, rows, idx(2)), 1,
       [&](Value q) {
         Value even = mul(q, idx(2)), odd = add(even, idx(1));
         Value oddExists = lessThan(odd, rows);
         Value oddRow = select(oddExists, odd, even);
         loop(idx(0), idx(t.tileQ), vw, [&](Value i) {
           Value p0 = loadLanes(s.st, {even, i});
           Value p1 = select(oddExists, loadLanes(s.st, {oddRow, i}), zero);
           Value evenKeys = arith::TruncFOp::create(b, loc, halfLanes, p0);
           Value oddKeys = arith::TruncFOp::create(b, loc, halfLanes, p1);
           Value pairs =
               vector::InterleaveOp::create(b, loc, evenKeys, oddKeys);
           vector::StoreOp::create(b, loc, pairs, s.pp,
                                   ValueRange{q, mul(i, idx(2))});
         });
       });
}

void AttentionLowering::emitQueryTile(Value batch, Value head, Value kvHead,
                                      Value tile, const Scratch &s) {
  Value q0 = mul(tile, idx(t.tileQ));
  Value validQ = minIdx(idx(t.tileQ), sub(lq, q0));
  if (bf16Dot)
    packQueryPairs(batch, head, q0, validQ, s);
  else
    packQueries(batch, head, q0, validQ, s);
  // Each row starts from its sink when there is one: max = sinks[head] and
  // sum = exp(sinks[head] - max) = 1, so the denominator counts it once and
  // no value row goes with it. Otherwise max = -inf, sum = 0.
  Value firstMax = splat(negInf), zero = vecConst(0.0), firstSum = zero;
  if (Value sinks = op.getSinks()) {
    firstMax = splat(memref::LoadOp::create(b, loc, sinks, ValueRange{head}));
    firstSum = vecConst(1.0);
  }
  loop(idx(0), idx(t.tileQ), t.vectorWidth, [&](Value i) {
    storeLanes(firstMax, s.rowMax, {i});
    storeLanes(firstSum, s.rowSum, {i});
  });
  loop(idx(0), idx(t.tileQ), 1, [&](Value i) {
    loop(idx(0), valueLanes, t.vectorWidth, [&](Value dv) {
      storeLanes(zero, s.acc, {i, dv});
    });
  });

  // Key tiles this query tile can see, and the keys it sees in full: the
  // structured mask, narrowed by what a mask_mod is known to be.
  ModFunctions mods = modFunctionsOf(op);
  MaskAttr mask = mods.mask;
  Value qFirst = add(op.getQOffset(), q0);
  Value qLast = sub(add(qFirst, validQ), idx(1));
  Value kvOffset = op.getKvOffset();
  Value tileKv = idx(t.tileKv);
  Value globalHead = op.getHeadOffset() ? add(op.getHeadOffset(), head) : head;
  KeyTiles tiles =
      buildVisibleKeyTiles(b, loc, mask, qFirst, qLast, kvOffset, lkv, tileKv);
  // A document mask hides a key tile whose segment ids all differ from the
  // query tile's: their [min, max] ranges do not meet. A key tile whose ids
  // are all the query tile's one id needs no mask_mod, when the rest of it
  // is structured.
  std::pair<Value, Value> querySegments;
  if (segments)
    querySegments = rangeOf(op.getModOperands()[*mods.analysis.documentOperand],
                            qFirst, validQ);
  Value maskModNeeded;

  loop(tiles.first, tiles.end, 1, [&](Value kt) {
    Value k0 = mul(kt, tileKv);
    Value rows = minIdx(tileKv, sub(lkv, k0));
    OpBuilder::InsertionGuard guard(b);
    if (segments) {
      std::pair<Value, Value> keySegments = segmentRangeOfTile(segments, kt);
      Value meet = rangesMeet(querySegments, keySegments);
      auto ifOp = scf::IfOp::create(b, loc, meet, /*withElseRegion=*/false);
      b.setInsertionPointToStart(ifOp.thenBlock());
      if (mods.analysis.onlyDocumentAndStructured)
        maskModNeeded = arith::XOrIOp::create(
            b, loc, sameSingleSegment(querySegments, keySegments),
            arith::ConstantIntOp::create(b, loc, 1, 1));
    }
    // St[j, i] = sum_d K[k0 + j, d] * Qt[d, i]
    if (bf16Dot)
      scoreTileBf16(batch, kvHead, k0, rows, s);
    else
      broadcastFmaKernel(
          s.st, idx(0), rows, headDim, idx(t.tileQ),
          [&](Value j, Value d) {
            return loadF32(key, {batch, kvHead, add(k0, j), d});
          },
          [&](Value d, Value lane) {
            return loadLanes(s.qt, {d, lane});
          },
          /*accumulate=*/false, /*lanesOuter=*/false);
    Value kFirst = add(kvOffset, k0);
    if (mods.scoreMod)
      applyModFunction(mods.scoreMod, /*isMask=*/false, op.getModOperands(),
                       batch, globalHead, qFirst, validQ, kFirst, rows, s.st);
    if (Value cut = buildTileIsCut(b, loc, mask, tiles, kFirst,
                                   sub(add(kFirst, rows), idx(1))))
      scf::IfOp::create(b, loc, cut, [&](OpBuilder &, Location) {
        applyStructuredMask(mask, qFirst, kFirst, rows, s.st);
        scf::YieldOp::create(b, loc);
      });
    if (op.getExplicitMask())
      applyExplicitMask(op.getExplicitMask(), batch, head, q0, validQ, k0, rows,
                        s.st);
    if (mods.evaluatesMaskMod()) {
      auto apply = [&] {
        applyModFunction(mods.maskMod, /*isMask=*/true, op.getModOperands(),
                         batch, globalHead, qFirst, validQ, kFirst, rows, s.st);
      };
      if (maskModNeeded)
        scf::IfOp::create(b, loc, maskModNeeded, [&](OpBuilder &, Location) {
          apply();
          scf::YieldOp::create(b, loc);
        });
      else
        apply();
    }
    updateSoftmax(validQ, rows, s);
    // Acc[i, dv] += sum_j Pt[j, i] * V[k0 + j, dv]
    int64_t width = t.vectorWidth * t.microVectors;
    if (bf16Dot) {
      packProbabilityPairs(rows, s);
      Value firstPair = arith::DivUIOp::create(b, loc, k0, idx(2));
      bf16DotKernel(
          s.acc, idx(0), validQ,
          arith::CeilDivUIOp::create(b, loc, rows, idx(2)), valueLanes,
          [&](Value i, Value q) {
            return broadcastBf16Pair(s.pp, {q, mul(i, idx(2))});
          },
          [&](Value q, Value lane) {
            Value panel = arith::DivUIOp::create(b, loc, lane, idx(width));
            Value inPanel = arith::RemUIOp::create(b, loc, lane, idx(width));
            return vector::LoadOp::create(
                b, loc, VectorType::get({2 * t.vectorWidth}, b.getBF16Type()),
                value,
                ValueRange{batch, kvHead, panel, add(firstPair, q),
                           mul(inPanel, idx(2))});
          },
          /*accumulate=*/true, /*lanesOuter=*/true);
      return;
    }
    broadcastFmaKernel(
        s.acc, idx(0), validQ, rows, valueLanes,
        [&](Value i, Value j) {
          return memref::LoadOp::create(b, loc, s.st, ValueRange{j, i});
        },
        [&](Value j, Value lane) {
          Value panel = arith::DivUIOp::create(b, loc, lane, idx(width));
          Value inPanel = arith::RemUIOp::create(b, loc, lane, idx(width));
          return loadLanes(value, {batch, kvHead, panel, add(k0, j), inPanel});
        },
        /*accumulate=*/true, /*lanesOuter=*/true);
  });
  writeOutputs(batch, head, q0, validQ, s);
}

void AttentionLowering::build() {
  Value query = op.getQuery();
  lq = dim(query, 2);
  headDim = dim(query, 3);
  lkv = dim(op.getKey(), 2);
  valueDim = dim(op.getValue(), 3);
  kvGroup = arith::DivUIOp::create(b, loc, dim(query, 1), dim(op.getKey(), 1));
  scale = softmaxScale(op.getScaleAttr(), headDim);

  // K is read by scalars (dense f32), V by vectors of whole register blocks
  // (f32 panels, Dv padded to a multiple of the block).
  int64_t block = t.vectorWidth * t.microVectors;
  int64_t staticDv = op.getValue().getType().getDimSize(3);
  valueLanes = paddedLanes(valueDim);
  bf16Dot = usesBf16Dot();
  key = bf16Dot ? op.getKey() : packKeys();
  value = bf16Dot ? packValuePairPanels() : packValuePanels();

  // The segment range of every key tile of a document mask, once per call.
  ModFunctions mods = modFunctionsOf(op);
  if (mods.analysis.documentOperand)
    segments =
        tileSegmentRanges(op.getModOperands()[*mods.analysis.documentOperand],
                          op.getKvOffset(), lkv, t.tileKv);

  Value tiles = arith::CeilDivUIOp::create(b, loc, lq, idx(t.tileQ));
  Value pairs = arith::CeilDivUIOp::create(b, loc, tiles, idx(2));
  Value one = idx(1);
  scf::ParallelOp::create(
      b, loc, ValueRange{idx(0), idx(0), idx(0)},
      ValueRange{dim(query, 0), dim(query, 1), pairs},
      ValueRange{one, one, one}, [&](OpBuilder &, Location, ValueRange ivs) {
        // scf.parallel is an automatic allocation scope: the scratch below
        // lives for one iteration (one pair of query tiles).
        Value batch = ivs[0], head = ivs[1], pair = ivs[2];
        int64_t staticD = op.getQuery().getType().getDimSize(3);
        Scratch s;
        auto bf16Tile = [&](int64_t rows) {
          return memref::AllocaOp::create(
                     b, loc,
                     MemRefType::get({rows, 2 * t.tileQ}, b.getBF16Type()),
                     b.getI64IntegerAttr(64))
              .getResult();
        };
        if (bf16Dot) {
          s.qp = bf16Tile(staticD / 2);
          s.pp = bf16Tile(t.tileKv / 2);
        } else {
          s.qt = scratchTile(headDim, staticD, Value(), t.tileQ);
        }
        s.st = scratchTile(Value(), t.tileKv, Value(), t.tileQ);
        s.acc = scratchTile(Value(), t.tileQ, valueLanes,
                            ShapedType::isDynamic(staticDv)
                                ? ShapedType::kDynamic
                                : llvm::divideCeil(staticDv, block) * block);
        s.rowMax = scratchRow();
        s.rowSum = scratchRow();
        s.alpha = scratchRow();
        Value kvHead = arith::DivUIOp::create(b, loc, head, kvGroup);
        // Tiles `pair` and `tiles - 1 - pair`; one tile when they coincide.
        Value mirror = sub(sub(tiles, one), pair);
        Value distinct = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                               mirror, pair);
        Value count = arith::SelectOp::create(b, loc, distinct, idx(2), one);
        loop(idx(0), count, 1, [&](Value k) {
          Value isFirst = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::eq, k, idx(0));
          Value tile = arith::SelectOp::create(b, loc, isFirst, pair, mirror);
          emitQueryTile(batch, head, kvHead, tile, s);
        });
      });
  if (key != op.getKey())
    memref::DeallocOp::create(b, loc, key);
  memref::DeallocOp::create(b, loc, value);
  freeSegmentRanges(segments);
}

namespace {

struct LowerLocalAttentionPass
    : public cp::impl::LowerLocalAttentionPassBase<LowerLocalAttentionPass> {
  using Base::Base;

  void runOnOperation() override {
    TileSizes sizes{tileQ,     tileKv,       vectorWidth,
                    microRows, microVectors, bf16Dot};
    TileSizes gradSizes = sizes;
    gradSizes.tileKv = gradTileKv;
    if (sizes.tileQ <= 0 || sizes.tileKv <= 0 || gradSizes.tileKv <= 0 ||
        sizes.vectorWidth <= 0 || sizes.microRows <= 0 ||
        sizes.microVectors <= 0) {
      getOperation()->emitError("cp-lower-local-attention: tile-q, tile-kv, "
                                "grad-tile-kv, vector-width, micro-rows and "
                                "micro-vectors must be positive, got ")
          << sizes.tileQ << ", " << sizes.tileKv << ", " << gradSizes.tileKv
          << ", " << sizes.vectorWidth << ", " << sizes.microRows << ", "
          << sizes.microVectors;
      return signalPassFailure();
    }
    int64_t block = sizes.vectorWidth * sizes.microVectors;
    if (sizes.tileQ % block != 0) {
      getOperation()->emitError("cp-lower-local-attention: tile-q (")
          << sizes.tileQ << ") must be a multiple of vector-width * "
          << "micro-vectors (" << sizes.vectorWidth << " * "
          << sizes.microVectors << " = " << block << ")";
      return signalPassFailure();
    }
    auto lowerOne = [&](BufferLocalAttentionOp op) {
      AttentionLowering(op, sizes).build();
      return success();
    };
    auto lowerGrad = [&](BufferLocalAttentionGradOp op) {
      AttentionGradLowering(op, gradSizes).build();
      return success();
    };
    if (failed(lowerBufferAttentions(getOperation(), lowerOne, lowerGrad)))
      signalPassFailure();
  }
};

} // namespace
