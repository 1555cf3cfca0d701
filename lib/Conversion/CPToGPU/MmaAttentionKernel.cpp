//===- MmaAttentionKernel.cpp - tensor-core flash attention ---------------===//
//
// The forward kernel of `kernel=mma` (docs/GPU.md, "The tensor-core
// kernel"). A workgroup of 4 warps owns 64 query rows, 16 per warp, for the
// whole key loop:
//
//  - Q (64 x D) is copied once into workgroup memory by cp.async and loaded
//    into registers as A fragments (ldmatrix.x4), one per k16 slab of D;
//  - K and V tiles of 64 keys are copied by cp.async two stages deep: the
//    copy of tile t + 1 is issued before tile t is used;
//  - S = Q K^T: per warp 8 n8 tiles of scores over D / 16 slabs, K's B
//    fragments from ldmatrix.x4 (keys x D is Kt's columns: no .trans);
//  - the scale, then the masks per score (ForwardKernelCommon.h) on the tiles
//  that
//    need them; tiles the structured mask hides are never visited;
//  - online softmax on the accumulators: a row's 64 scores sit in the 4
//    lanes of a quad, reduced by two xor shuffles;
//  - O += P V: the score accumulators, rounded to f16/bf16 in registers,
//    are P's A fragments directly (MmaFragments.h, accumulatorForA); V's B
//    fragments come from ldmatrix.x4.trans.
//
// Which lane holds which element is MmaFragments.h's: the same template
// functions the CPU test (test/Unit/MmaFragments.cpp) checks against the
// PTX ISA's layouts, instantiated here on IR index values.
//
// Workgroup memory is dynamic (one i8 buffer viewed as the three tiles):
// 87040 bytes at D = Dv = 128, over the 48 KiB of static shared memory; the
// runtime's mgpuLaunchKernel opts the kernel into it. Rows are padded by 8
// elements (16 bytes), so the 8 rows one ldmatrix reads fall in distinct
// banks and every row stays 16-byte aligned for cp.async. In global
// memory, D and Dv multiples of 16 keep every row 16-byte aligned when the
// buffer's base is, as the pipeline's device buffers (cuMemAlloc) are.
//
//===----------------------------------------------------------------------===//

#include "MmaAttentionKernel.h"
#include "ForwardKernelCommon.h"
#include "ScoreTile.h"
#include "MmaKernelBuilder.h"
#include "cp/Conversion/AttentionCommon/AttentionBuilder.h"
#include "cp/Conversion/AttentionCommon/MmaFragments.h"
#include "cp/Conversion/AttentionCommon/ModFunctions.h"
#include "cp/Dialect/CP/Analysis/StructuredMask.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>

using namespace mlir;
using namespace mlir::cp;
using namespace mlir::cp::detail;

namespace {

constexpr int64_t kMmaTileQ = kMmaTileRows, kMmaTileKv = kMmaTileRows;

class MmaAttentionLowering : MmaKernelBuilder {
public:
  explicit MmaAttentionLowering(BufferLocalAttentionOp op)
      : MmaKernelBuilder(op, op.getQuery().getType().getElementType()), op(op),
        headDim(op.getQuery().getType().getDimSize(3)),
        valueDim(op.getValue().getType().getDimSize(3)) {}

  void build();

private:
  void emitKernelBody(gpu::LaunchOp launch);

  BufferLocalAttentionOp op;
  int64_t headDim, valueDim;
  // Host values used by the kernel.
  ForwardShape shape;
  // Kernel values.
  Value batch, head, kvHead, qs, ks, vs;
};

void MmaAttentionLowering::emitKernelBody(gpu::LaunchOp launch) {
  constexpr int64_t scoreTiles = kMmaTileKv / mma::kN;
  const int64_t outTiles = valueDim / mma::kN;
  IndexExpr lane = this->lane();
  Value tileIndex = launch.getBlockIds().x;
  head = launch.getBlockIds().y;
  batch = launch.getBlockIds().z;
  kvHead = arith::DivUIOp::create(b, loc, head, shape.kvGroup);
  Value q0 = mul(tileIndex, idx(kMmaTileQ));
  Value validQ =
      arith::MinSIOp::create(b, loc, idx(kMmaTileQ), sub(shape.lq, q0));
  Value warpRow0 = mul(warp, idx(mma::kM));
  Value negInf = f32Const(-std::numeric_limits<double>::infinity());
  Value zero = f32Const(0.0);

  // This lane's two rows of every accumulator (registers 0-1 and 2-3).
  SmallVector<Value, 2> rows, rowValid;
  for (int half = 0; half < 2; ++half) {
    rows.push_back(
        add(warpRow0, mma::accumulatorPosition(lane, 2 * half).row.v));
    rowValid.push_back(lessThan(rows.back(), validQ));
  }
  Value laneCol = mma::accumulatorPosition(lane, 0).col.v;

  // The visible key tiles, as in the SIMT kernel.
  ModFunctions mods = modFunctionsOf(op);
  Value globalHead = op.getHeadOffset() ? add(op.getHeadOffset(), head) : head;
  Value qFirst = add(op.getQOffset(), q0);
  Value qLast = sub(add(qFirst, validQ), idx(1));
  Value kvOffset = op.getKvOffset();
  Value tileKv = idx(kMmaTileKv);
  KeyTiles tiles = buildVisibleKeyTiles(b, loc, mods.mask, qFirst, qLast,
                                        kvOffset, shape.lkv, tileKv);
  auto keyRows = [&](Value kt) {
    return arith::MinSIOp::create(b, loc, tileKv,
                                  sub(shape.lkv, mul(kt, tileKv)))
        .getResult();
  };
  auto copyKeyTile = [&](Value kt, Value stage) {
    Value k0 = mul(kt, tileKv), rows = keyRows(kt);
    copyTileAsync(op.getKey(), batch, kvHead, k0, rows, ks, stage, headDim);
    copyTileAsync(op.getValue(), batch, kvHead, k0, rows, vs, stage, valueDim);
  };

  // Prologue: Q, then the first key tile into stage 0; Q's group is done
  // when at most one group is pending.
  copyTileAsync(op.getQuery(), batch, head, q0, validQ, qs, {}, headDim);
  commitCopies();
  scf::IfOp::create(b, loc, lessThan(tiles.first, tiles.end),
                    [&](OpBuilder &, Location) {
                      copyKeyTile(tiles.first, idx(0));
                      scf::YieldOp::create(b, loc);
                    });
  commitCopies();
  waitCopies(1);
  gpu::BarrierOp::create(b, loc);
  SmallVector<Fragment> qFragments = loadA(qs, {}, warpRow0, headDim);

  // Carried: row max and this lane's partial row sum for both rows, then
  // the output accumulators.
  SmallVector<Value> init{negInf, negInf, zero, zero};
  init.append(outTiles * 4, zero);
  auto keyTile = [&](Value kt, ValueRange carried) -> SmallVector<Value> {
    Value stage = arith::RemUIOp::create(b, loc, sub(kt, tiles.first), idx(2));
    Value nextStage = sub(idx(1), stage);
    Value next = add(kt, idx(1));
    // Issue the next tile's copies (none past the last tile), then wait
    // for this tile's.
    scf::IfOp::create(b, loc, lessThan(next, tiles.end),
                      [&](OpBuilder &, Location) {
                        copyKeyTile(next, nextStage);
                        scf::YieldOp::create(b, loc);
                      });
    commitCopies();
    waitCopies(1);
    gpu::BarrierOp::create(b, loc);

    // S = Q K^T, two n8 tiles per ldmatrix.x4 of K.
    SmallVector<Accumulator> s(scoreTiles, Accumulator(4, zero));
    mmaColumns(qFragments, ks, stage, s);
    for (Accumulator &tile : s)
      for (Value &v : tile)
        v = fmul(v, shape.scale);

    // Masks on the tiles that need them.
    Value k0 = mul(kt, tileKv), rows0 = keyRows(kt);
    Value kFirst = add(kvOffset, k0);
    Value cut = buildTileIsCut(b, loc, mods.mask, tiles, kFirst,
                               sub(add(kFirst, rows0), idx(1)));
    ScoreTile scoreTile = ScoreTile::of(op, mods, batch, head, globalHead, q0,
                                         qFirst, k0, kFirst, cut);
    auto masked = [&]() {
      SmallVector<Value> out;
      for (int64_t n = 0; n < scoreTiles; ++n)
        for (int i = 0; i < 4; ++i) {
          Value key = add(idx(n * mma::kN + i % 2), laneCol);
          out.push_back(scoreTile.apply(b, loc, s[n][i], rows[i / 2], key,
                                        rowValid[i / 2], lessThan(key, rows0)));
        }
      return out;
    };
    SmallVector<Value> scores;
    if (scoreTile.masksEveryTile()) {
      scores = masked();
    } else {
      Value partial = lessThan(rows0, tileKv);
      Value needed = cut ? arith::OrIOp::create(b, loc, partial, cut) : partial;
      SmallVector<Value> plain;
      for (Accumulator &tile : s)
        plain.append(tile.begin(), tile.end());
      auto ifOp = scf::IfOp::create(b, loc, TypeRange(ValueRange(plain)),
                                    needed, /*withElseRegion=*/true);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      scf::YieldOp::create(b, loc, masked());
      b.setInsertionPointToStart(ifOp.elseBlock());
      scf::YieldOp::create(b, loc, plain);
      scores.assign(ifOp.getResults().begin(), ifOp.getResults().end());
    }
    auto score = [&](int64_t n, int i) { return scores[n * 4 + i]; };

    // Online softmax per row (half 0: registers 0-1, half 1: 2-3).
    SmallVector<Value> nextState;
    SmallVector<Value, 2> alpha, safeMax, newMax;
    for (int half = 0; half < 2; ++half) {
      Value tileMax = score(0, 2 * half);
      for (int64_t n = 0; n < scoreTiles; ++n)
        for (int i = 2 * half; i < 2 * half + 2; ++i)
          tileMax = fmax(tileMax, score(n, i));
      newMax.push_back(fmax(carried[half], quadReduce(tileMax, true)));
      Value isNegInf = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                             newMax.back(), negInf);
      safeMax.push_back(select(isNegInf, zero, newMax.back()));
      alpha.push_back(
          exp(arith::SubFOp::create(b, loc, carried[half], safeMax.back())));
    }
    SmallVector<Accumulator> p(scoreTiles, Accumulator(4));
    SmallVector<Value, 2> partSum{zero, zero};
    for (int64_t n = 0; n < scoreTiles; ++n)
      for (int i = 0; i < 4; ++i) {
        Value e =
            exp(arith::SubFOp::create(b, loc, score(n, i), safeMax[i / 2]));
        p[n][i] = e;
        partSum[i / 2] = fadd(partSum[i / 2], e);
      }

    // O = alpha O + P V; P's A fragment for keys 16t..16t+15 is the
    // accumulators of score tiles 2t and 2t + 1 (accumulatorForA).
    SmallVector<Accumulator> o;
    for (int64_t n = 0; n < outTiles; ++n) {
      Accumulator tile;
      for (int i = 0; i < 4; ++i)
        tile.push_back(fmul(carried[4 + n * 4 + i], alpha[i / 2]));
      o.push_back(tile);
    }
    mmaRowsTrans(accumulatorsAsA(p), vs, stage, idx(0), 0, o);
    // The next iteration's copies overwrite this stage.
    gpu::BarrierOp::create(b, loc);
    for (int half = 0; half < 2; ++half)
      nextState.push_back(newMax[half]);
    for (int half = 0; half < 2; ++half)
      nextState.push_back(math::FmaOp::create(b, loc, carried[2 + half],
                                              alpha[half], partSum[half]));
    for (Accumulator &tile : o)
      nextState.append(tile.begin(), tile.end());
    return nextState;
  };
  ValueRange state = loop(tiles.first, tiles.end, idx(1), init, keyTile);
  // Nothing may be left in flight when the kernel ends.
  waitCopies(0);

  // Normalize and store; lanes 0 of each quad write the lse.
  Type outElt = op.getOutput().getType().getElementType();
  Value firstOfQuad = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                            mma::indexInGroup(lane).v, idx(0));
  Value sink;
  if (Value sinks = op.getSinks())
    sink = memref::LoadOp::create(b, loc, sinks, ValueRange{head});
  for (int half = 0; half < 2; ++half) {
    RowEnd end = rowEnd(b, loc, state[half],
                        quadReduce(state[2 + half], /*isMax=*/false), sink);
    Value outRow = add(q0, rows[half]);
    scf::IfOp::create(b, loc, rowValid[half], [&](OpBuilder &, Location) {
      for (int64_t n = 0; n < outTiles; ++n)
        for (int i = 2 * half; i < 2 * half + 2; ++i) {
          Value out = fmul(state[4 + n * 4 + i], end.inverseSum);
          if (outElt != f32)
            out = arith::TruncFOp::create(b, loc, outElt, out);
          Value col = add(laneCol, idx(n * mma::kN + i % 2));
          memref::StoreOp::create(b, loc, out, op.getOutput(),
                                  ValueRange{batch, head, outRow, col});
        }
      if (Value lse = op.getLse()) {
        scf::IfOp::create(b, loc, firstOfQuad, [&](OpBuilder &, Location) {
          memref::StoreOp::create(b, loc, end.lse, lse,
                                  ValueRange{batch, head, outRow});
          scf::YieldOp::create(b, loc);
        });
      }
      scf::YieldOp::create(b, loc);
    });
  }
}

void MmaAttentionLowering::build() {
  Value query = op.getQuery();
  shape = forwardShapeOf(b, loc, op);
  Value blocks = arith::CeilDivUIOp::create(b, loc, shape.lq, idx(kMmaTileQ));
  OpBuilder::InsertionGuard guard(b);
  gpu::LaunchOp launch = launchWarps(blocks, dim(query, 1), dim(query, 0),
                                     mmaKernelSharedBytes(headDim, valueDim));
  // One dynamic buffer viewed as Q [64][D+8], K [2][64][D+8] and
  // V [2][64][Dv+8].
  SharedViews views(*this);
  qs = views.next({kMmaTileQ, headDim + kMmaChunk});
  ks = views.next({2, kMmaTileKv, headDim + kMmaChunk});
  vs = views.next({2, kMmaTileKv, valueDim + kMmaChunk});
  emitKernelBody(launch);
  gpu::TerminatorOp::create(b, loc);
}

} // namespace

int64_t mlir::cp::detail::mmaKernelSharedBytes(int64_t d, int64_t dv) {
  return 2 * (kMmaTileQ * (d + kMmaChunk) + 2 * kMmaTileKv * (d + kMmaChunk) +
              2 * kMmaTileKv * (dv + kMmaChunk));
}

std::string
mlir::cp::detail::mmaKernelUnsupportedReason(BufferLocalAttentionOp op) {
  auto q = op.getQuery().getType(), k = op.getKey().getType(),
       v = op.getValue().getType();
  return mmaOperandsUnsupportedReason({"Q", "K", "V"}, {q, k, v},
                                      q.getDimSize(3), v.getDimSize(3));
}

void mlir::cp::detail::lowerLocalAttentionToMmaKernel(
    BufferLocalAttentionOp op) {
  MmaAttentionLowering(op).build();
}
