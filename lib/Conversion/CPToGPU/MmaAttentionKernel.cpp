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

/// Elements per 16-byte cp.async copy and row padding of the tiles.
constexpr int64_t kChunk = 8;
constexpr int64_t kThreads = kMmaWarps * mma::kWarpSize;
static_assert(kMmaTileQ == kMmaWarps * mma::kM, "a warp owns 16 query rows");
static_assert(kMmaTileQ == kMmaTileKv,
              "copyTileAsync copies Q and K/V tiles of the same height");

/// An index value with the arithmetic MmaFragments.h's templates use, so
/// that they emit IR here and compute ints in the CPU test.
struct IndexExpr {
  OpBuilder *b;
  Location loc;
  Value v;

  IndexExpr make(Value r) const { return {b, loc, r}; }
  Value c(int64_t x) const {
    return arith::ConstantIndexOp::create(*b, loc, x);
  }
  friend IndexExpr operator/(IndexExpr x, int64_t y) {
    return x.make(arith::DivUIOp::create(*x.b, x.loc, x.v, x.c(y)));
  }
  friend IndexExpr operator%(IndexExpr x, int64_t y) {
    return x.make(arith::RemUIOp::create(*x.b, x.loc, x.v, x.c(y)));
  }
  friend IndexExpr operator*(IndexExpr x, int64_t y) {
    return x.make(arith::MulIOp::create(*x.b, x.loc, x.v, x.c(y)));
  }
  friend IndexExpr operator+(IndexExpr x, IndexExpr y) {
    return x.make(arith::AddIOp::create(*x.b, x.loc, x.v, y.v));
  }
  friend IndexExpr operator+(IndexExpr x, int64_t y) {
    return x.make(arith::AddIOp::create(*x.b, x.loc, x.v, x.c(y)));
  }
};

/// The 4 f32 accumulators of one 16x8 tile in this lane.
using Accumulator = SmallVector<Value, 4>;

class MmaAttentionLowering : AttentionBuilder {
public:
  explicit MmaAttentionLowering(BufferLocalAttentionOp op)
      : AttentionBuilder(op), op(op),
        headDim(op.getQuery().getType().getDimSize(3)),
        valueDim(op.getValue().getType().getDimSize(3)),
        elt(op.getQuery().getType().getElementType()) {}

  void build();

private:
  IndexExpr expr(Value v) { return {&b, loc, v}; }

  /// Max or sum of `v` over the 4 lanes of this lane's quad.
  Value quadReduce(Value v, bool isMax) {
    for (int offset : mma::kRowReduceMasks) {
      Value other = gpu::ShuffleOp::create(b, loc, v, offset, mma::kWarpSize,
                                           gpu::ShuffleMode::XOR)
                        .getShuffleResult();
      v = isMax ? fmax(v, other) : fadd(v, other);
    }
    return v;
  }

  /// cp.async copies of the `rows` (64) x `cols` tile of `src[batch, h]`
  /// starting at row `r0` into `dst[prefix..., i, j]`; rows at or past
  /// `validRows` are zero-filled (a copy of 0 source bytes) and address
  /// row 0, so nothing outside `src` is read.
  void copyTileAsync(Value src, Value h, Value r0, Value validRows, Value dst,
                     ValueRange prefix, int64_t cols);
  /// Ends the group of copies issued since the last one.
  void commitCopies() { NVVM::CpAsyncCommitGroupOp::create(b, loc); }
  /// Waits until at most `pending` groups of copies are in flight.
  void waitCopies(int pending) {
    NVVM::CpAsyncWaitGroupOp::create(b, loc, b.getI32IntegerAttr(pending));
  }
  /// ldmatrix.x4 from `tile[prefix..., row, col]`: four 8x8 matrices, one
  /// 2-element register each.
  SmallVector<Value, 4> ldmatrix(Value tile, ValueRange prefix, Value row,
                                 Value col, bool transpose);
  /// One mma.sync.m16n8k16: `c` + `a` (4 registers) x `bFrag` (2).
  Accumulator mmaSync(ArrayRef<Value> a, ArrayRef<Value> bFrag,
                      ArrayRef<Value> c);
  /// The 2-element register of f16/bf16 holding `x` and `y`.
  Value pack(Value x, Value y) {
    auto pairType = VectorType::get({2}, elt);
    return vector::FromElementsOp::create(
        b, loc, pairType,
        ValueRange{arith::TruncFOp::create(b, loc, elt, x),
                   arith::TruncFOp::create(b, loc, elt, y)});
  }

  void emitKernelBody(gpu::LaunchOp launch);

  BufferLocalAttentionOp op;
  int64_t headDim, valueDim;
  Type elt;
  // Host values used by the kernel.
  ForwardShape shape;
  // Kernel values.
  Value tid, batch, head, kvHead, qs, ks, vs;
};

void MmaAttentionLowering::copyTileAsync(Value src, Value h, Value r0,
                                         Value validRows, Value dst,
                                         ValueRange prefix, int64_t cols) {
  int64_t chunksPerRow = cols / kChunk;
  int64_t perThread = kMmaTileKv * chunksPerRow / kThreads;
  auto tokenType = nvgpu::DeviceAsyncTokenType::get(b.getContext());
  for (int64_t j = 0; j < perThread; ++j) {
    Value chunk = add(tid, idx(j * kThreads));
    Value row = arith::DivUIOp::create(b, loc, chunk, idx(chunksPerRow));
    Value col = mul(arith::RemUIOp::create(b, loc, chunk, idx(chunksPerRow)),
                    idx(kChunk));
    Value valid = lessThan(row, validRows);
    Value srcRow = select(valid, add(r0, row), idx(0));
    Value srcElements = select(valid, idx(kChunk), idx(0));
    SmallVector<Value> dstAt(prefix);
    dstAt.append({row, col});
    nvgpu::DeviceAsyncCopyOp::create(
        b, loc, tokenType, dst, dstAt, src, ValueRange{batch, h, srcRow, col},
        b.getIndexAttr(kChunk), srcElements, /*bypassL1=*/b.getUnitAttr());
  }
}

SmallVector<Value, 4> MmaAttentionLowering::ldmatrix(Value tile,
                                                     ValueRange prefix,
                                                     Value row, Value col,
                                                     bool transpose) {
  SmallVector<Value> at(prefix);
  at.append({row, col});
  auto fragments = VectorType::get({4, 2}, elt);
  Value all = nvgpu::LdMatrixOp::create(b, loc, fragments, tile, at,
                                        b.getBoolAttr(transpose),
                                        b.getI32IntegerAttr(4));
  SmallVector<Value, 4> regs;
  for (int64_t i = 0; i < 4; ++i)
    regs.push_back(vector::ExtractOp::create(b, loc, all, i));
  return regs;
}

Accumulator MmaAttentionLowering::mmaSync(ArrayRef<Value> a,
                                          ArrayRef<Value> bFrag,
                                          ArrayRef<Value> c) {
  bool bf16 = elt.isBF16();
  // bf16 pairs travel as i32 registers (the NVVM op's operand type for
  // bf16); f16 pairs as vector<2xf16>.
  auto operand = [&](Value pair) -> Value {
    if (!bf16)
      return pair;
    return LLVM::BitcastOp::create(b, loc, b.getI32Type(), pair);
  };
  SmallVector<Value> aOps, bOps;
  for (Value v : a)
    aOps.push_back(operand(v));
  for (Value v : bFrag)
    bOps.push_back(operand(v));
  auto type = bf16 ? NVVM::MMATypes::bf16 : NVVM::MMATypes::f16;
  Type result =
      LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32});
  Value d = NVVM::MmaOp::create(
      b, loc, result, aOps, bOps, c, {mma::kM, mma::kN, mma::kK},
      /*b1Op=*/std::nullopt, /*intOverflow=*/std::nullopt,
      std::array<NVVM::MMATypes, 2>{type, type},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  Accumulator out;
  for (int64_t i = 0; i < 4; ++i)
    out.push_back(LLVM::ExtractValueOp::create(b, loc, d, i));
  return out;
}

void MmaAttentionLowering::emitKernelBody(gpu::LaunchOp launch) {
  constexpr int64_t scoreTiles = kMmaTileKv / mma::kN;
  const int64_t outTiles = valueDim / mma::kN;
  tid = launch.getThreadIds().x;
  Value warp = arith::DivUIOp::create(b, loc, tid, idx(mma::kWarpSize));
  IndexExpr lane =
      expr(arith::RemUIOp::create(b, loc, tid, idx(mma::kWarpSize)));
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
    copyTileAsync(op.getKey(), kvHead, k0, rows, ks, stage, headDim);
    copyTileAsync(op.getValue(), kvHead, k0, rows, vs, stage, valueDim);
  };

  // Prologue: Q, then the first key tile into stage 0; Q's group is done
  // when at most one group is pending.
  copyTileAsync(op.getQuery(), head, q0, validQ, qs, {}, headDim);
  commitCopies();
  scf::IfOp::create(b, loc, lessThan(tiles.first, tiles.end),
                    [&](OpBuilder &, Location) {
                      copyKeyTile(tiles.first, idx(0));
                      scf::YieldOp::create(b, loc);
                    });
  commitCopies();
  waitCopies(1);
  gpu::BarrierOp::create(b, loc);
  mma::PositionOf<IndexExpr> aAt = mma::ldmatrixAddressA(lane);
  SmallVector<SmallVector<Value, 4>> qFragments;
  for (int64_t slab = 0; slab < headDim / mma::kK; ++slab)
    qFragments.push_back(ldmatrix(qs, {}, add(warpRow0, aAt.row.v),
                                  add(aAt.col.v, idx(slab * mma::kK)),
                                  /*transpose=*/false));

  // Carried: row max and this lane's partial row sum for both rows, then
  // the output accumulators.
  SmallVector<Value> init{negInf, negInf, zero, zero};
  init.append(outTiles * 4, zero);
  mma::PositionOf<IndexExpr> kAt = mma::ldmatrixAddressBRows(lane);
  mma::PositionOf<IndexExpr> vAt = mma::ldmatrixAddressBColumnsTrans(lane);
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
    for (int64_t slab = 0; slab < headDim / mma::kK; ++slab)
      for (int64_t pair = 0; pair < scoreTiles / 2; ++pair) {
        SmallVector<Value, 4> kb =
            ldmatrix(ks, stage, add(kAt.row.v, idx(pair * 2 * mma::kN)),
                     add(kAt.col.v, idx(slab * mma::kK)),
                     /*transpose=*/false);
        s[2 * pair] = mmaSync(qFragments[slab], {kb[0], kb[1]}, s[2 * pair]);
        s[2 * pair + 1] =
            mmaSync(qFragments[slab], {kb[2], kb[3]}, s[2 * pair + 1]);
      }
    for (Accumulator &tile : s)
      for (Value &v : tile)
        v = fmul(v, shape.scale);

    // Masks on the tiles that need them.
    Value k0 = mul(kt, tileKv), rows0 = keyRows(kt);
    Value kFirst = add(kvOffset, k0);
    Value cut = buildTileIsCut(b, loc, mods.mask, tiles, kFirst,
                               sub(add(kFirst, rows0), idx(1)));
    ScoreTile scoreTile{op, &mods,  batch, head,   globalHead,
                        q0, qFirst, k0,    kFirst, cut};
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
    SmallVector<Value> p(scores.size());
    SmallVector<Value, 2> partSum{zero, zero};
    for (int64_t n = 0; n < scoreTiles; ++n)
      for (int i = 0; i < 4; ++i) {
        Value e =
            exp(arith::SubFOp::create(b, loc, score(n, i), safeMax[i / 2]));
        p[n * 4 + i] = e;
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
    for (int64_t t = 0; t < kMmaTileKv / mma::kK; ++t) {
      auto pReg = [&](int i) {
        mma::AccumulatorSlot slot = mma::accumulatorForA(i);
        return p[(2 * t + slot.nTile) * 4 + slot.reg];
      };
      SmallVector<Value, 4> pa{pack(pReg(0), pReg(1)), pack(pReg(2), pReg(3)),
                               pack(pReg(4), pReg(5)), pack(pReg(6), pReg(7))};
      for (int64_t pair = 0; pair < outTiles / 2; ++pair) {
        SmallVector<Value, 4> vb =
            ldmatrix(vs, stage, add(vAt.row.v, idx(t * mma::kK)),
                     add(vAt.col.v, idx(pair * 2 * mma::kN)),
                     /*transpose=*/true);
        o[2 * pair] = mmaSync(pa, {vb[0], vb[1]}, o[2 * pair]);
        o[2 * pair + 1] = mmaSync(pa, {vb[2], vb[3]}, o[2 * pair + 1]);
      }
    }
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
  for (int half = 0; half < 2; ++half) {
    RowEnd end = rowEnd(b, loc, state[half],
                        quadReduce(state[2 + half], /*isMax=*/false));
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
  Value one = idx(1);
  int64_t bytes = mmaKernelSharedBytes(headDim, valueDim);
  Value sharedBytes = arith::ConstantIntOp::create(b, loc, bytes, 32);
  auto launch = gpu::LaunchOp::create(
      b, loc, blocks, dim(query, 1), dim(query, 0), idx(kThreads), one, one,
      sharedBytes, /*asyncTokenType=*/nullptr, /*asyncDependencies=*/{});
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&launch.getBody().front());

  // One dynamic buffer viewed as Q [64][D+8], K [2][64][D+8] and
  // V [2][64][Dv+8].
  auto workgroup =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  Value shared = gpu::DynamicSharedMemoryOp::create(
      b, loc,
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                      MemRefLayoutAttrInterface(), workgroup));
  int64_t eltBytes = elt.getIntOrFloatBitWidth() / 8;
  int64_t offset = 0;
  auto view = [&](ArrayRef<int64_t> shape) {
    auto type =
        MemRefType::get(shape, elt, MemRefLayoutAttrInterface(), workgroup);
    Value v =
        memref::ViewOp::create(b, loc, type, shared, idx(offset), ValueRange{});
    offset += type.getNumElements() * eltBytes;
    return v;
  };
  qs = view({kMmaTileQ, headDim + kChunk});
  ks = view({2, kMmaTileKv, headDim + kChunk});
  vs = view({2, kMmaTileKv, valueDim + kChunk});
  emitKernelBody(launch);
  gpu::TerminatorOp::create(b, loc);
}

} // namespace

int64_t mlir::cp::detail::mmaKernelSharedBytes(int64_t d, int64_t dv) {
  return 2 * (kMmaTileQ * (d + kChunk) + 2 * kMmaTileKv * (d + kChunk) +
              2 * kMmaTileKv * (dv + kChunk));
}

std::string
mlir::cp::detail::mmaKernelUnsupportedReason(BufferLocalAttentionOp op) {
  auto q = op.getQuery().getType(), k = op.getKey().getType(),
       v = op.getValue().getType();
  Type elt = q.getElementType();
  std::string reason;
  llvm::raw_string_ostream os(reason);
  if (!elt.isF16() && !elt.isBF16()) {
    os << "Q is " << elt << "; mma.sync takes f16 or bf16";
    return reason;
  }
  if (k.getElementType() != elt || v.getElementType() != elt) {
    os << "Q, K and V differ in element type (" << elt << ", "
       << k.getElementType() << ", " << v.getElementType()
       << "); mma.sync takes one";
    return reason;
  }
  int64_t d = q.getDimSize(3), dv = v.getDimSize(3);
  if (ShapedType::isDynamic(d) || ShapedType::isDynamic(dv)) {
    os << "D or Dv is dynamic; the kernel's tiles need them static";
    return reason;
  }
  if (d % mma::kK != 0 || dv % mma::kK != 0 || d > kMmaMaxHeadDim ||
      dv > kMmaMaxHeadDim) {
    os << "D = " << d << " and Dv = " << dv
       << " must be multiples of 16 and at most " << kMmaMaxHeadDim;
    return reason;
  }
  // cp.async copies 16 aligned bytes: rows must be contiguous and start
  // at multiples of 8 elements from the (aligned) base.
  for (auto [name, type] :
       {std::pair{"Q", q}, std::pair{"K", k}, std::pair{"V", v}}) {
    SmallVector<int64_t> strides;
    int64_t offset;
    bool aligned = succeeded(type.getStridesAndOffset(strides, offset)) &&
                   strides.back() == 1 && !ShapedType::isDynamic(offset) &&
                   offset % kChunk == 0;
    for (int64_t stride : ArrayRef<int64_t>(strides).drop_back())
      aligned &= !ShapedType::isDynamic(stride) && stride % kChunk == 0;
    if (!aligned) {
      os << name << " has layout " << type.getLayout()
         << "; cp.async copies 16-byte rows: the last dim must be "
            "contiguous, and the offset and the other strides static "
            "multiples of 8 elements";
      return reason;
    }
  }
  return reason;
}

void mlir::cp::detail::lowerLocalAttentionToMmaKernel(
    BufferLocalAttentionOp op) {
  MmaAttentionLowering(op).build();
}
