//===- LocalAttentionKernels.cpp - register-blocked FMA kernels, packing --===//
//
// Where cp-lower-local-attention spends its time: the broadcast-FMA kernels
// behind every product of a tile (forward and backward), the masks applied
// to a score tile, and the forward's packing of Q, K and V into the layouts
// those kernels read.
//
//===----------------------------------------------------------------------===//

#include "LocalAttentionLoops.h"
#include "cp/Conversion/AttentionCommon/ModFunctionLanes.h"
#include "cp/Conversion/AttentionCommon/ModFunctions.h"
#include "cp/Dialect/CP/Analysis/StructuredMask.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "llvm/ADT/bit.h"

using namespace mlir;
using namespace mlir::cp;
using namespace mlir::cp::detail;

void TileKernels::forRowBlocks(Value begin, Value end,
                               function_ref<void(Value, int64_t)> block) {
  // Blocks of microRows rows, then what remains (fewer than microRows rows)
  // in blocks of descending powers of two, at most one of each: a remainder
  // of 4 rows is one block of 4, not four single rows, each of which would
  // have too few independent accumulators to hide the FMA latency.
  Value start = begin;
  for (int64_t rows = t.microRows; rows >= 1;
       rows = rows == t.microRows ? llvm::bit_floor(uint64_t(rows - 1))
                                  : rows / 2) {
    Value stop = end;
    if (rows > 1) {
      Value count = arith::DivUIOp::create(b, loc, sub(end, start), idx(rows));
      stop = add(start, mul(count, idx(rows)));
    }
    loop(start, stop, rows, [&](Value r0) { block(r0, rows); });
    start = stop;
  }
}

void TileKernels::broadcastFmaKernel(
    Value c, Value rowBegin, Value rowEnd, Value kCount, Value laneCount,
    function_ref<Value(Value r, Value k)> a,
    function_ref<Value(Value k, Value lane)> bLanes, bool accumulate,
    bool lanesOuter, ValueRange cPrefix) {
  auto broadcast = [&](Value r, Value k) { return splat(a(r, k)); };
  auto fma = [&](Value acc, Value x, Value y) {
    return vector::FMAOp::create(b, loc, x, y, acc).getResult();
  };
  blockedKernel(c, rowBegin, rowEnd, kCount, laneCount,
                LaneProduct{broadcast, bLanes, fma}, accumulate, lanesOuter,
                cPrefix);
}

Value TileKernels::broadcastBf16Pair(Value memref, ValueRange at) {
  int64_t vw = t.vectorWidth;
  auto pair = vector::LoadOp::create(
      b, loc, VectorType::get({2}, b.getBF16Type()), memref, at);
  Value word = vector::ExtractOp::create(
      b, loc,
      vector::BitCastOp::create(b, loc, VectorType::get({1}, b.getI32Type()),
                                pair),
      0);
  Value words = vector::BroadcastOp::create(
      b, loc, VectorType::get({vw}, b.getI32Type()), word);
  return vector::BitCastOp::create(
      b, loc, VectorType::get({2 * vw}, b.getBF16Type()), words);
}

void TileKernels::bf16DotKernel(Value c, Value rowBegin, Value rowEnd,
                                Value pairCount, Value laneCount,
                                function_ref<Value(Value r, Value k)> aPair,
                                function_ref<Value(Value k, Value lane)> bPairs,
                                bool accumulate, bool lanesOuter) {
  auto dot = [&](Value acc, Value x, Value y) {
    return x86vector::DotBF16Op::create(b, loc, acc.getType(), acc, x, y)
        .getResult();
  };
  blockedKernel(c, rowBegin, rowEnd, pairCount, laneCount,
                LaneProduct{aPair, bPairs, dot}, accumulate, lanesOuter, {});
}

void TileKernels::blockedKernel(Value c, Value rowBegin, Value rowEnd,
                                Value kCount, Value laneCount,
                                const LaneProduct &product, bool accumulate,
                                bool lanesOuter, ValueRange cPrefix) {
  int64_t laneBlock = t.vectorWidth * t.microVectors;
  auto block = [&](Value r0, int64_t rows, Value lane0) {
    registerBlock(c, cPrefix, r0, rows, lane0, kCount, product, accumulate);
  };
  if (lanesOuter) {
    loop(idx(0), laneCount, laneBlock, [&](Value lane0) {
      forRowBlocks(rowBegin, rowEnd,
                   [&](Value r0, int64_t rows) { block(r0, rows, lane0); });
    });
    return;
  }
  forRowBlocks(rowBegin, rowEnd, [&](Value r0, int64_t rows) {
    loop(idx(0), laneCount, laneBlock,
         [&](Value lane0) { block(r0, rows, lane0); });
  });
}

void TileKernels::registerBlock(Value c, ValueRange cPrefix, Value r0,
                                int64_t rows, Value lane0, Value kCount,
                                const LaneProduct &product, bool accumulate) {
  int64_t vw = t.vectorWidth, nv = t.microVectors;
  SmallVector<Value> laneIdx, rowIdx, init;
  for (int64_t v = 0; v < nv; ++v)
    laneIdx.push_back(add(lane0, idx(v * vw)));
  for (int64_t r = 0; r < rows; ++r)
    rowIdx.push_back(add(r0, idx(r)));
  auto at = [&](int64_t r, int64_t v) {
    SmallVector<Value> indices(cPrefix);
    indices.append({rowIdx[r], laneIdx[v]});
    return indices;
  };
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t v = 0; v < nv; ++v)
      init.push_back(accumulate ? loadLanes(c, at(r, v)) : vecConst(0.0));
  ValueRange result =
      loop(idx(0), kCount, idx(1), init, [&](Value k, ValueRange acc) {
        SmallVector<Value> bVec, next;
        for (int64_t v = 0; v < nv; ++v)
          bVec.push_back(product.bLanes(k, laneIdx[v]));
        for (int64_t r = 0; r < rows; ++r) {
          Value aVec = product.aLanes(rowIdx[r], k);
          for (int64_t v = 0; v < nv; ++v)
            next.push_back(product.step(acc[r * nv + v], aVec, bVec[v]));
        }
        return next;
      });
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t v = 0; v < nv; ++v)
      storeLanes(result[r * nv + v], c, at(r, v));
}

//===----------------------------------------------------------------------===//
// Masks on a score tile
//===----------------------------------------------------------------------===//

void TileKernels::applyStructuredMask(MaskAttr mask, Value qBase, Value k0,
                                      Value rowsInTile, Value st) {
  int64_t vw = t.vectorWidth;
  auto indexLanes = VectorType::get({vw}, b.getIndexType());
  Value iota = laneIota();
  Value negInfLanes = splat(negInf);
  loop(idx(0), rowsInTile, 1, [&](Value j) {
    Value kPos = vector::BroadcastOp::create(b, loc, indexLanes, add(k0, j));
    loop(idx(0), idx(t.tileQ), vw, [&](Value i) {
      Value qPos = arith::AddIOp::create(
          b, loc,
          vector::BroadcastOp::create(b, loc, indexLanes, add(qBase, i)), iota);
      Value allowed = buildMaskAllows(b, loc, mask, qPos, kPos);
      Value score = loadLanes(st, {j, i});
      storeLanes(arith::SelectOp::create(b, loc, allowed, score, negInfLanes),
                 st, {j, i});
    });
  });
}

void TileKernels::applyExplicitMask(Value mask, Value batch, Value head,
                                    Value q0, Value validQ, Value k0,
                                    Value rowsInTile, Value st) {
  auto maskType = cast<MemRefType>(mask.getType());
  int64_t rank = maskType.getRank();
  // A batch or head extent of 1 is broadcast.
  auto broadcastIndex = [&](int64_t d, Value i) {
    Value isOne = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                        dim(mask, d), idx(1));
    return arith::SelectOp::create(b, loc, isOne, idx(0), i).getResult();
  };
  SmallVector<Value> lead;
  if (rank == 4)
    lead = {broadcastIndex(0, batch), broadcastIndex(1, head)};
  bool isBool = maskType.getElementType().isInteger(1);
  loop(idx(0), rowsInTile, 1, [&](Value j) {
    loop(idx(0), validQ, 1, [&](Value i) {
      SmallVector<Value> at(lead);
      at.append({add(q0, i), add(k0, j)});
      Value score = memref::LoadOp::create(b, loc, st, ValueRange{j, i});
      Value masked;
      if (isBool) {
        Value allowed = memref::LoadOp::create(b, loc, mask, at);
        masked = arith::SelectOp::create(b, loc, allowed, score, negInf);
      } else {
        masked = arith::AddFOp::create(b, loc, score, loadF32(mask, at));
      }
      memref::StoreOp::create(b, loc, masked, st, ValueRange{j, i});
    });
  });
}

void TileKernels::applyModFunction(func::FuncOp function, bool isMask,
                                   ValueRange modOperands, Value batch,
                                   Value head, Value qFirst, Value validQ,
                                   Value kFirst, Value rowsInTile, Value st) {
  // A mask_mod's result selects between the score and -inf (on lanes when
  // the score is a vector).
  auto finish = [&](Value result, Value score) {
    if (!isMask)
      return result;
    Value hidden = isa<VectorType>(score.getType()) ? splat(negInf) : negInf;
    return arith::SelectOp::create(b, loc, result, score, hidden).getResult();
  };
  if (!canEmitOnLanes(function, varyingModArguments(isMask, modOperands))) {
    loop(idx(0), rowsInTile, 1, [&](Value j) {
      loop(idx(0), validQ, 1, [&](Value i) {
        Value score = memref::LoadOp::create(b, loc, st, ValueRange{j, i});
        SmallVector<Value> args;
        if (!isMask)
          args.push_back(score);
        args.append({batch, head, add(qFirst, i), add(kFirst, j)});
        llvm::append_range(args, modOperands);
        memref::StoreOp::create(
            b, loc, finish(emitModFunction(b, function, args), score), st,
            ValueRange{j, i});
      });
    });
    return;
  }
  forScoreLanes(qFirst, validQ, rowsInTile, [&](Value j, Value i, Value qPos) {
    Value score = loadLanes(st, {j, i});
    SmallVector<Value> args;
    if (!isMask)
      args.push_back(score);
    args.append({batch, head, qPos, add(kFirst, j)});
    llvm::append_range(args, modOperands);
    Value result =
        emitModFunctionOnLanes(b, loc, function, args, t.vectorWidth);
    storeLanes(finish(result, score), st, {j, i});
  });
}

SmallVector<bool> TileKernels::varyingModArguments(bool isMask,
                                                   ValueRange modOperands) {
  // The score and the query position differ between the lanes of a row of
  // St; batch, head, the key position and the mod operands do not.
  SmallVector<bool> varying;
  if (!isMask)
    varying.push_back(true);
  varying.append({false, false, true, false});
  varying.append(modOperands.size(), false);
  return varying;
}

void TileKernels::forScoreLanes(
    Value qFirst, Value validQ, Value rowsInTile,
    function_ref<void(Value j, Value i, Value qPos)> body) {
  int64_t vw = t.vectorWidth;
  auto indexLanes = VectorType::get({vw}, b.getIndexType());
  auto broadcast = [&](Value index) {
    return vector::BroadcastOp::create(b, loc, indexLanes, index).getResult();
  };
  Value validLanes = broadcast(validQ);
  Value zeroLanes = broadcast(idx(0));
  Value validEnd =
      mul(arith::CeilDivUIOp::create(b, loc, validQ, idx(vw)), idx(vw));
  loop(idx(0), validEnd, vw, [&](Value i) {
    // Lanes past the tile's last query evaluate at its first query: their
    // scores are never used, and their reads stay inside the operands.
    Value local = arith::AddIOp::create(b, loc, laneIota(), broadcast(i));
    Value inTile = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                         local, validLanes);
    Value qPos = arith::AddIOp::create(
        b, loc, broadcast(qFirst),
        arith::SelectOp::create(b, loc, inTile, local, zeroLanes));
    loop(idx(0), rowsInTile, 1, [&](Value j) { body(j, i, qPos); });
  });
}

SegmentRanges TileKernels::tileSegmentRanges(Value seg, Value first,
                                             Value length, int64_t tile) {
  Type element = cast<MemRefType>(seg.getType()).getElementType();
  Value count = arith::CeilDivUIOp::create(b, loc, length, idx(tile));
  auto type = MemRefType::get({ShapedType::kDynamic}, element);
  SegmentRanges ranges{memref::AllocOp::create(b, loc, type, count),
                       memref::AllocOp::create(b, loc, type, count)};
  loop(idx(0), count, 1, [&](Value index) {
    Value start = mul(index, idx(tile));
    Value size = minIdx(idx(tile), sub(length, start));
    auto [min, max] = rangeOf(seg, add(first, start), size);
    memref::StoreOp::create(b, loc, min, ranges.min, index);
    memref::StoreOp::create(b, loc, max, ranges.max, index);
  });
  return ranges;
}

//===----------------------------------------------------------------------===//
// Packing (forward)
//===----------------------------------------------------------------------===//

Value AttentionLowering::packKeys() {
  Value source = op.getKey();
  auto type = cast<MemRefType>(source.getType());
  if (type.getElementType() == f32 && type.getLayout().isIdentity())
    return source;
  SmallVector<Value> sizes{dim(source, 0), dim(source, 1), lkv, headDim};
  auto packedType =
      MemRefType::get(SmallVector<int64_t>(4, ShapedType::kDynamic), f32);
  Value packed = memref::AllocOp::create(b, loc, packedType, sizes,
                                         b.getI64IntegerAttr(64));
  Value one = idx(1);
  scf::ParallelOp::create(
      b, loc, ValueRange{idx(0), idx(0), idx(0)},
      ValueRange{sizes[0], sizes[1], sizes[2]}, ValueRange{one, one, one},
      [&](OpBuilder &, Location, ValueRange ivs) {
        loop(idx(0), headDim, 1, [&](Value d) {
          SmallVector<Value> at{ivs[0], ivs[1], ivs[2], d};
          memref::StoreOp::create(b, loc, loadF32(source, at), packed, at);
        });
      });
  return packed;
}

Value AttentionLowering::packValuePanels() {
  Value source = op.getValue();
  int64_t width = t.vectorWidth * t.microVectors;
  Value panels = arith::DivUIOp::create(b, loc, valueLanes, idx(width));
  SmallVector<Value> sizes{dim(source, 0), dim(source, 1), panels, lkv};
  auto packedType =
      MemRefType::get({ShapedType::kDynamic, ShapedType::kDynamic,
                       ShapedType::kDynamic, ShapedType::kDynamic, width},
                      f32);
  Value packed = memref::AllocOp::create(b, loc, packedType, sizes,
                                         b.getI64IntegerAttr(64));
  Value zero = f32Const(0.0), one = idx(1);
  scf::ParallelOp::create(
      b, loc, ValueRange{idx(0), idx(0), idx(0)},
      ValueRange{sizes[0], sizes[1], lkv}, ValueRange{one, one, one},
      [&](OpBuilder &, Location, ValueRange ivs) {
        Value batch = ivs[0], kvHead = ivs[1], row = ivs[2];
        auto at = [&](Value d) {
          Value panel = arith::DivUIOp::create(b, loc, d, idx(width));
          Value lane = arith::RemUIOp::create(b, loc, d, idx(width));
          return SmallVector<Value>{batch, kvHead, panel, row, lane};
        };
        packRow(packed, valueDim, valueLanes, zero, at, [&](Value d) {
          return loadF32(source, {batch, kvHead, row, d});
        });
      });
  return packed;
}

void AttentionLowering::packQueries(Value batch, Value head, Value q0,
                                    Value validQ, const Scratch &s) {
  // Lanes past the last query row stay 0: their scores are never stored.
  Value zero = vecConst(0.0);
  loop(idx(0), headDim, 1, [&](Value d) {
    loop(idx(0), idx(t.tileQ), t.vectorWidth, [&](Value i) {
      storeLanes(zero, s.qt, {d, i});
    });
  });
  loop(idx(0), validQ, 1, [&](Value i) {
    Value row = add(q0, i);
    loop(idx(0), headDim, 1, [&](Value d) {
      Value x = loadF32(op.getQuery(), {batch, head, row, d});
      memref::StoreOp::create(b, loc, arith::MulFOp::create(b, loc, x, scale),
                              s.qt, ValueRange{d, i});
    });
  });
}
