//===- LocalAttentionKernels.cpp - register-blocked FMA kernels, packing --===//
//
// Where cp-lower-local-attention spends its time: the broadcast-FMA kernels
// behind both products of a tile (scores, output), and the packing of Q, K
// and V into the layouts those kernels read.
//
//===----------------------------------------------------------------------===//

#include "LocalAttentionLoops.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::cp;
using namespace mlir::cp::detail;

void AttentionLowering::forRowBlocks(Value begin, Value end,
                                     function_ref<void(Value, int64_t)> block) {
  int64_t mr = t.microRows;
  Value fullEnd = end;
  if (mr > 1) {
    Value count = sub(end, begin);
    Value full = mul(arith::DivUIOp::create(b, loc, count, idx(mr)), idx(mr));
    fullEnd = add(begin, full);
  }
  loop(begin, fullEnd, mr, [&](Value r0) { block(r0, mr); });
  if (mr > 1)
    loop(fullEnd, end, 1, [&](Value r0) { block(r0, 1); });
}

void AttentionLowering::broadcastFmaKernel(
    Value c, Value rowBegin, Value rowEnd, Value kCount, Value laneCount,
    function_ref<Value(Value r, Value k)> a,
    function_ref<Value(Value k, Value lane)> bLanes, bool accumulate,
    bool lanesOuter) {
  int64_t laneBlock = t.vectorWidth * t.microVectors;
  auto block = [&](Value r0, int64_t rows, Value lane0) {
    registerBlock(c, r0, rows, lane0, kCount, a, bLanes, accumulate);
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

void AttentionLowering::registerBlock(
    Value c, Value r0, int64_t rows, Value lane0, Value kCount,
    function_ref<Value(Value r, Value k)> a,
    function_ref<Value(Value k, Value lane)> bLanes, bool accumulate) {
  int64_t vw = t.vectorWidth, nv = t.microVectors;
  SmallVector<Value> laneIdx, rowIdx, init;
  for (int64_t v = 0; v < nv; ++v)
    laneIdx.push_back(add(lane0, idx(v * vw)));
  for (int64_t r = 0; r < rows; ++r)
    rowIdx.push_back(add(r0, idx(r)));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t v = 0; v < nv; ++v)
      init.push_back(accumulate ? loadLanes(c, {rowIdx[r], laneIdx[v]})
                                : vecConst(0.0));
  ValueRange result =
      loop(idx(0), kCount, idx(1), init, [&](Value k, ValueRange acc) {
        SmallVector<Value> bVec, next;
        for (int64_t v = 0; v < nv; ++v)
          bVec.push_back(bLanes(k, laneIdx[v]));
        for (int64_t r = 0; r < rows; ++r) {
          Value aVec = splat(a(rowIdx[r], k));
          for (int64_t v = 0; v < nv; ++v)
            next.push_back(
                vector::FMAOp::create(b, loc, aVec, bVec[v], acc[r * nv + v]));
        }
        return next;
      });
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t v = 0; v < nv; ++v)
      storeLanes(result[r * nv + v], c, {rowIdx[r], laneIdx[v]});
}

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
        loop(idx(0), valueDim, 1, [&](Value d) {
          Value v = loadF32(source, {batch, kvHead, row, d});
          memref::StoreOp::create(b, loc, v, packed, at(d));
        });
        loop(valueDim, valueLanes, 1, [&](Value d) {
          memref::StoreOp::create(b, loc, zero, packed, at(d));
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
