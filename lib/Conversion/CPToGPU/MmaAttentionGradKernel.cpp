//===- MmaAttentionGradKernel.cpp - tensor-core FlashAttention-2 backward -===//
//
// The backward of `kernel=mma` (docs/GPU.md, "The tensor-core backward"):
//
//  - prepare: a thread per query row writes D_i = rowsum(dO o O) and the
//    row's lse into f32 scratch padded to whole 64-row tiles (+inf for a
//    row that saw no key and for the padding, so that P = exp(s - lse) is 0
//    there), and zeroes the f32 dQ the atomics add to;
//  - dK/dV: a workgroup of 4 warps per (key tile of 64, KV head, batch). K
//    and V of the tile are copied once into workgroup memory; the loop
//    visits the group's query heads and the query tiles the structured mask
//    lets see the keys, with Q, dO, lse and D_i staged by cp.async two
//    stages deep. Each warp owns 16 keys and computes, on mma.sync:
//      S^T  = K Q^T          (K's A fragments by ldmatrix, Q's rows as B)
//      P^T  = exp(S^T - lse) (masks and score_mod per score, ScoreTile.h)
//      dV  += P^T dO         (P^T's accumulators are its A fragments,
//                             dO by ldmatrix.trans)
//      dP^T = V dO^T
//      dS^T = P^T o (dP^T - D) scale m'(s)
//      dK  += dS^T Q         (Q by ldmatrix.trans)
//    dK and dV stay in registers over the whole loop (a GQA group's heads
//    summed there) and are written once;
//  - dQ, atomic (default): dS^T is written transposed into workgroup
//    memory, each warp loads 16 query rows of it as A fragments and
//    multiplies them by the K tile, adding the products to the f32 dQ with
//    atomics; a last launch rounds dQ to dq's type when that is not f32 (an
//    f32 dq is the accumulator itself);
//  - dQ, recompute: a workgroup per (query tile, head, batch) visits the
//    key tiles the query tile may see, as the forward kernel does, and
//    recomputes S and dP to accumulate dQ += dS K in registers.
//
// Which lane holds which element is MmaFragments.h's (through
// MmaKernelBuilder), the same functions the CPU test checks against the PTX
// ISA.
//
// One file (about 750 lines) because the four launches are one lowering:
// they share its host values (lse, D_i and dQ scratch, the GQA group) and
// the per-pair arithmetic (pairTerms) that must stay identical between the
// dK/dV and dQ kernels.
//
//===----------------------------------------------------------------------===//

#include "MmaAttentionGradKernel.h"
#include "KernelChoice.h"
#include "MmaKernelBuilder.h"
#include "ScoreTile.h"
#include "cp/Conversion/AttentionCommon/MmaFragments.h"
#include "cp/Conversion/AttentionCommon/ModFunctions.h"
#include "cp/Dialect/CP/Analysis/StructuredMask.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::cp;
using namespace mlir::cp::detail;

namespace {

constexpr int64_t kTile = kMmaTileRows;
/// The 16-bit elements both kernels keep in workgroup memory: one resident
/// 64-row tile D wide and one Dv wide (K and V, or Q and dO), and two
/// stages of the two they stream (Q and dO, or K and V). Rows are padded
/// by kMmaChunk.
int64_t tileElements(int64_t d, int64_t dv) {
  return 3 * kTile * (d + kMmaChunk) + 3 * kTile * (dv + kMmaChunk);
}
/// The scores of a pair of tiles are computed a slice of 32 columns (the
/// other tile's rows) at a time: a warp's S, dP, P and dS are then 16
/// registers each rather than 32, which keeps the dK/dV kernel (whose dK
/// and dV stay in registers) under 255 registers without spills.
constexpr int64_t kSlice = 32;
/// n8 tiles of scores of one slice.
constexpr int64_t kScoreTiles = kSlice / mma::kN;
/// Threads per block of the prepare and finish launches.
constexpr int64_t kRowThreads = kMmaThreads;

/// P and dS of one warp's 16 x 64 scores, as n8-tile accumulators.
struct PairTerms {
  SmallVector<Accumulator> p, ds;
};

class MmaAttentionGradLowering : MmaKernelBuilder {
public:
  MmaAttentionGradLowering(BufferLocalAttentionGradOp op, GradQueryMode mode)
      : MmaKernelBuilder(op, op.getQuery().getType().getElementType()),
        op(op), mode(mode),
        headDim(op.getQuery().getType().getDimSize(3)),
        valueDim(op.getValue().getType().getDimSize(3)),
        mods(modFunctionsOf(op)) {}

  void build();

private:
  /// Where the element of register `i` of n-tile `n` of a warp's 16 x 64
  /// score tile sits: its query and key (local to their tiles) and whether
  /// both are in bounds.
  struct ScorePosition {
    Value query, key, queryValid, keyValid;
  };
  using PositionFn = function_ref<ScorePosition(int64_t n, int i)>;
  using RowValueFn = function_ref<Value(int64_t n, int i)>;

  void emitPrepareKernel();
  void emitKeyValueKernel();
  void emitQueryKernel();
  void emitFinishKernel();

  /// P = exp(s - lse) and dS = P (dP - D) scale m'(s) of the warp's tile,
  /// given its raw scores `s` (scaled here) and `dp`, the masks that apply
  /// (`needed`: the tile is cut or partial; every tile when scoreTile
  /// masksEveryTile), and `lse`, `delta` of each element's query row. Both
  /// products are computed first so that nothing else (the score_mod's
  /// slopes) stays live beside them.
  PairTerms pairTerms(const ScoreTile &scoreTile, ArrayRef<Accumulator> s,
                      ArrayRef<Accumulator> dp, Value needed,
                      PositionFn position, RowValueFn lse, RowValueFn delta);
  /// dst[batch, h, r0 + row, col] = acc (rounded to dst's type) for the
  /// rows of this lane below `validRows`.
  void storeAccumulators(ArrayRef<Accumulator> acc, Value dst, Value batch,
                         Value h, Value r0, Value warpRow0, Value validRows);
  /// The accumulators carried by a loop, flattened, and back.
  static SmallVector<Value> flatten(ArrayRef<Accumulator> tiles);
  static SmallVector<Accumulator> unflatten(ValueRange values, int64_t tiles);
  SmallVector<Accumulator> zeroTiles(int64_t n) {
    return SmallVector<Accumulator>(n, Accumulator(4, f32Const(0.0)));
  }
  /// The head the mod functions see for `head`.
  Value globalHeadOf(Value head) {
    return op.getHeadOffset() ? add(op.getHeadOffset(), head) : head;
  }
  /// i1: a document mask_mod lets some query of [qFirst, qFirst + queries)
  /// see some key of `keySegments` (null without a document mask).
  Value documentsMeet(Value qFirst, Value queries,
                      std::pair<Value, Value> keySegments) {
    if (!keySegments.first)
      return Value();
    return rangesMeet(rangeOf(documentSegments(), qFirst, queries),
                      keySegments);
  }
  Value documentSegments() {
    return op.getModOperands()[*mods.analysis.documentOperand];
  }
  /// Runs `body` when `condition` holds.
  void whenThen(Value condition, function_ref<void()> body) {
    scf::IfOp::create(b, loc, condition, [&](OpBuilder &, Location) {
      body();
      scf::YieldOp::create(b, loc);
    });
  }
  /// `body()` when `condition` (null: always) holds, else `carried`.
  SmallVector<Value> when(Value condition, ValueRange carried,
                          function_ref<SmallVector<Value>()> body);

  BufferLocalAttentionGradOp op;
  GradQueryMode mode;
  int64_t headDim, valueDim;
  ModFunctions mods;
  // Host values.
  Value lq, lkv, kvGroup, scale, rowLse, rowDelta, dqAccum;
};

SmallVector<Value>
MmaAttentionGradLowering::flatten(ArrayRef<Accumulator> tiles) {
  SmallVector<Value> out;
  for (const Accumulator &tile : tiles)
    out.append(tile.begin(), tile.end());
  return out;
}

SmallVector<Accumulator>
MmaAttentionGradLowering::unflatten(ValueRange values, int64_t tiles) {
  SmallVector<Accumulator> out;
  for (int64_t n = 0; n < tiles; ++n) {
    ValueRange tile = values.slice(4 * n, 4);
    out.push_back(Accumulator(tile.begin(), tile.end()));
  }
  return out;
}

SmallVector<Value>
MmaAttentionGradLowering::when(Value condition, ValueRange carried,
                               function_ref<SmallVector<Value>()> body) {
  if (!condition)
    return body();
  auto ifOp = scf::IfOp::create(b, loc, TypeRange(carried), condition,
                                /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  scf::YieldOp::create(b, loc, body());
  b.setInsertionPointToStart(ifOp.elseBlock());
  scf::YieldOp::create(b, loc, carried);
  return llvm::to_vector_of<Value>(ifOp.getResults());
}

PairTerms MmaAttentionGradLowering::pairTerms(const ScoreTile &scoreTile,
                                              ArrayRef<Accumulator> s,
                                              ArrayRef<Accumulator> dp,
                                              Value needed, PositionFn position,
                                              RowValueFn lse, RowValueFn delta) {
  Value zero = f32Const(0.0);
  // P and dS of every score, flattened (P first), with or without the
  // masks (and score_mod).
  auto terms = [&](bool withMasks) {
    SmallVector<Value> p, ds;
    for (int64_t n = 0; n < kScoreTiles; ++n)
      for (int i = 0; i < 4; ++i) {
        Value score = fmul(s[n][i], scale), slope;
        if (withMasks) {
          ScorePosition at = position(n, i);
          std::tie(score, slope) = scoreTile.applyWithSlope(
              b, loc, score, at.query, at.key, at.queryValid, at.keyValid);
        }
        Value pv = exp(arith::SubFOp::create(b, loc, score, lse(n, i)));
        Value dsv = fmul(
            fmul(pv, arith::SubFOp::create(b, loc, dp[n][i], delta(n, i))),
            scale);
        if (slope) {
          // Where P = 0 (masked, or a row that saw nothing) dS is 0 even
          // when the score_mod's slope is not finite there.
          Value hidden = arith::CmpFOp::create(
              b, loc, arith::CmpFPredicate::OEQ, pv, zero);
          dsv = select(hidden, zero, fmul(dsv, slope));
        }
        p.push_back(pv);
        ds.push_back(dsv);
      }
    p.append(ds);
    return p;
  };
  SmallVector<Value> values;
  if (scoreTile.masksEveryTile()) {
    values = terms(/*withMasks=*/true);
  } else {
    auto ifOp = scf::IfOp::create(
        b, loc, needed,
        [&](OpBuilder &, Location) {
          scf::YieldOp::create(b, loc, terms(/*withMasks=*/true));
        },
        [&](OpBuilder &, Location) {
          scf::YieldOp::create(b, loc, terms(/*withMasks=*/false));
        });
    values = llvm::to_vector_of<Value>(ifOp.getResults());
  }
  return {unflatten(ValueRange(values).take_front(4 * kScoreTiles),
                    kScoreTiles),
          unflatten(ValueRange(values).drop_front(4 * kScoreTiles),
                    kScoreTiles)};
}

void MmaAttentionGradLowering::storeAccumulators(ArrayRef<Accumulator> acc,
                                                 Value dst, Value batch,
                                                 Value h, Value r0,
                                                 Value warpRow0,
                                                 Value validRows) {
  Type elt = cast<MemRefType>(dst.getType()).getElementType();
  Value laneCol = mma::accumulatorPosition(lane(), 0).col.v;
  for (int half = 0; half < 2; ++half) {
    Value row =
        add(warpRow0, mma::accumulatorPosition(lane(), 2 * half).row.v);
    scf::IfOp::create(
        b, loc, lessThan(row, validRows), [&](OpBuilder &, Location) {
          for (size_t n = 0; n < acc.size(); ++n)
            for (int i = 2 * half; i < 2 * half + 2; ++i) {
              Value v = acc[n][i];
              if (elt != f32)
                v = arith::TruncFOp::create(b, loc, elt, v);
              Value col = add(laneCol, idx(n * mma::kN + i % 2));
              memref::StoreOp::create(b, loc, v, dst,
                                      ValueRange{batch, h, add(r0, row), col});
            }
          scf::YieldOp::create(b, loc);
        });
  }
}

void MmaAttentionGradLowering::emitPrepareKernel() {
  OpBuilder::InsertionGuard guard(b);
  Value query = op.getQuery();
  Value paddedRows = dim(rowLse, 2);
  gpu::LaunchOp launch = launchWarps(
      arith::CeilDivUIOp::create(b, loc, paddedRows, idx(kRowThreads)),
      dim(query, 1), dim(query, 0), /*sharedBytes=*/0);
  Value head = launch.getBlockIds().y, batch = launch.getBlockIds().z;
  Value row = add(mul(launch.getBlockIds().x, idx(kRowThreads)), tid);
  Value zero = f32Const(0.0);
  Value posInf = f32Const(std::numeric_limits<double>::infinity());
  Value negInf = f32Const(-std::numeric_limits<double>::infinity());
  scf::IfOp::create(
      b, loc, lessThan(row, paddedRows), [&](OpBuilder &, Location) {
        Value exists = lessThan(row, lq);
        auto values = scf::IfOp::create(
            b, loc, exists,
            [&](OpBuilder &, Location) {
              Value delta =
                  loop(idx(0), idx(valueDim), idx(1), {zero},
                       [&](Value c, ValueRange acc) -> SmallVector<Value> {
                         Value g = loadF32(op.getGradOutput(),
                                           {batch, head, row, c});
                         Value o = loadF32(op.getOutput(), {batch, head, row, c});
                         return {
                             math::FmaOp::create(b, loc, g, o, acc[0])
                                 .getResult()};
                       })[0];
              Value l = memref::LoadOp::create(b, loc, op.getLse(),
                                               ValueRange{batch, head, row});
              Value empty = arith::CmpFOp::create(
                  b, loc, arith::CmpFPredicate::OEQ, l, negInf);
              scf::YieldOp::create(b, loc,
                                   ValueRange{delta, select(empty, posInf, l)});
            },
            [&](OpBuilder &, Location) {
              scf::YieldOp::create(b, loc, ValueRange{zero, posInf});
            });
        memref::StoreOp::create(b, loc, values.getResult(0), rowDelta,
                                ValueRange{batch, head, row});
        memref::StoreOp::create(b, loc, values.getResult(1), rowLse,
                                ValueRange{batch, head, row});
        if (mode == GradQueryMode::atomic)
          scf::IfOp::create(b, loc, exists, [&](OpBuilder &, Location) {
            loop(idx(0), idx(headDim), idx(1), [&](Value d) {
              memref::StoreOp::create(b, loc, zero, dqAccum,
                                      ValueRange{batch, head, row, d});
            });
            scf::YieldOp::create(b, loc);
          });
        scf::YieldOp::create(b, loc);
      });
  gpu::TerminatorOp::create(b, loc);
}

void MmaAttentionGradLowering::emitKeyValueKernel() {
  OpBuilder::InsertionGuard guard(b);
  const int64_t keyTiles = headDim / mma::kN, valueTiles = valueDim / mma::kN;
  Value key = op.getKey();
  gpu::LaunchOp launch = launchWarps(
      arith::CeilDivUIOp::create(b, loc, lkv, idx(kTile)), dim(key, 1),
      dim(key, 0), mmaGradKernelSharedBytes(headDim, valueDim, mode));
  // One dynamic buffer viewed as K [64][D+8], V [64][Dv+8], two stages of
  // Q [64][D+8], dO [64][Dv+8], lse [64] and D_i [64], and dS [64][64+8].
  SharedViews views(*this);
  Value ks = views.next({kTile, headDim + kMmaChunk});
  Value vs = views.next({kTile, valueDim + kMmaChunk});
  Value qs = views.next({2, kTile, headDim + kMmaChunk});
  Value dos = views.next({2, kTile, valueDim + kMmaChunk});
  Value lses = views.next({2, kTile}, f32);
  Value deltas = views.next({2, kTile}, f32);
  Value dss;
  if (mode == GradQueryMode::atomic)
    dss = views.next({kTile, kTile + kMmaChunk});

  Value batch = launch.getBlockIds().z, kvHead = launch.getBlockIds().y;
  Value k0 = mul(launch.getBlockIds().x, idx(kTile));
  Value validK = arith::MinSIOp::create(b, loc, idx(kTile), sub(lkv, k0));
  Value kFirst = add(op.getKvOffset(), k0);
  Value kLast = sub(add(kFirst, validK), idx(1));
  Value warpRow0 = mul(warp, idx(mma::kM));

  // The iterations: (query head of the group, visible query tile).
  QueryTiles queryTiles = buildVisibleQueryTiles(
      b, loc, mods.mask, kFirst, kLast, op.getQOffset(), lq, idx(kTile));
  Value tilesPerHead = sub(queryTiles.end, queryTiles.first);
  Value iterations = mul(tilesPerHead, kvGroup);
  struct Iteration {
    Value head, q0, validQ;
  };
  auto iterationOf = [&](Value it) {
    Value member = arith::DivUIOp::create(b, loc, it, tilesPerHead);
    Value tile = add(queryTiles.first,
                     arith::RemUIOp::create(b, loc, it, tilesPerHead));
    Value q0 = mul(tile, idx(kTile));
    return Iteration{add(mul(kvHead, kvGroup), member), q0,
                     arith::MinSIOp::create(b, loc, idx(kTile), sub(lq, q0))};
  };
  auto copyQueryTiles = [&](Value it, Value stage) {
    Iteration at = iterationOf(it);
    copyTileAsync(op.getQuery(), batch, at.head, at.q0, at.validQ, qs, stage,
                  headDim);
    copyTileAsync(op.getGradOutput(), batch, at.head, at.q0, at.validQ, dos,
                  stage, valueDim);
    copyRowAsync(rowLse, batch, at.head, at.q0, lses, stage, 0);
    copyRowAsync(rowDelta, batch, at.head, at.q0, deltas, stage, 16);
  };

  // Prologue: the key tile and the first query tiles, one group.
  copyTileAsync(key, batch, kvHead, k0, validK, ks, {}, headDim);
  copyTileAsync(op.getValue(), batch, kvHead, k0, validK, vs, {}, valueDim);
  whenThen(lessThan(idx(0), iterations),
           [&] { copyQueryTiles(idx(0), idx(0)); });
  commitCopies();

  std::pair<Value, Value> keySegments;
  if (mods.analysis.documentOperand)
    keySegments = rangeOf(documentSegments(), kFirst, validK);
  SmallVector<Value> init = flatten(zeroTiles(keyTiles));
  llvm::append_range(init, flatten(zeroTiles(valueTiles)));
  auto body = [&](Value it, ValueRange carried) -> SmallVector<Value> {
    AddressesInLoop inLoop(*this);
    Value stage = arith::RemUIOp::create(b, loc, it, idx(2));
    // This lane's two key rows of every accumulator, and its first query
    // column (computed here, from the loop's lane, like the addresses).
    SmallVector<Value, 2> keyRow, keyValid;
    for (int half = 0; half < 2; ++half) {
      keyRow.push_back(
          add(warpRow0, mma::accumulatorPosition(lane(), 2 * half).row.v));
      keyValid.push_back(lessThan(keyRow.back(), validK));
    }
    Value laneCol = mma::accumulatorPosition(lane(), 0).col.v;
    Value next = add(it, idx(1));
    whenThen(lessThan(next, iterations),
             [&] { copyQueryTiles(next, sub(idx(1), stage)); });
    commitCopies();
    waitCopies(1);
    gpu::BarrierOp::create(b, loc);

    Iteration at = iterationOf(it);
    Value qFirst = add(op.getQOffset(), at.q0);
    Value qLast = sub(add(qFirst, at.validQ), idx(1));
    auto compute = [&]() -> SmallVector<Value> {
      SmallVector<Accumulator> dk = unflatten(carried, keyTiles);
      SmallVector<Accumulator> dv =
          unflatten(carried.drop_front(4 * keyTiles), valueTiles);
      KeyTiles fullOnly;
      if (!mods.mask.isNone())
        fullOnly.full = buildFullyVisibleKeyRange(b, loc, mods.mask, qFirst,
                                                  qLast);
      Value cut = buildTileIsCut(b, loc, mods.mask, fullOnly, kFirst, kLast);
      ScoreTile scoreTile = ScoreTile::of(
          op, mods, batch, at.head, globalHeadOf(at.head), at.q0, qFirst, k0,
          kFirst, cut);
      Value needed = arith::OrIOp::create(b, loc, lessThan(at.validQ, idx(kTile)),
                                          lessThan(validK, idx(kTile)));
      if (cut)
        needed = arith::OrIOp::create(b, loc, needed, cut);

      // One slice of queries per iteration (a loop, not unrolled: the
      // slices' products would otherwise be live at once).
      SmallVector<Value> acc = flatten(dk);
      llvm::append_range(acc, flatten(dv));
      ValueRange sliced = loop(idx(0), idx(kTile), idx(kSlice), acc,
                               [&](Value slice0, ValueRange state)
                                   -> SmallVector<Value> {
        SmallVector<Accumulator> dk = unflatten(state, keyTiles);
        SmallVector<Accumulator> dv =
            unflatten(state.drop_front(4 * keyTiles), valueTiles);
        // S^T = K Q^T: rows are this warp's keys, columns the slice's
        // queries.
        SmallVector<Accumulator> st = zeroTiles(kScoreTiles);
        mmaColumns(loadA(ks, {}, warpRow0, headDim), qs, stage, st, slice0);
        auto queryOf = [&](int64_t n, int i) {
          return add(laneCol, add(slice0, idx(n * mma::kN + i % 2)));
        };
        auto position = [&](int64_t n, int i) {
          Value query = queryOf(n, i);
          return ScorePosition{query, keyRow[i / 2],
                               lessThan(query, at.validQ), keyValid[i / 2]};
        };
        auto rowValue = [&](Value tile) {
          return [&, tile](int64_t n, int i) -> Value {
            return memref::LoadOp::create(b, loc, tile,
                                          ValueRange{stage, queryOf(n, i)});
          };
        };
        // dP^T = V dO^T.
        SmallVector<Accumulator> dpt = zeroTiles(kScoreTiles);
        mmaColumns(loadA(vs, {}, warpRow0, valueDim), dos, stage, dpt, slice0);
        PairTerms terms = pairTerms(scoreTile, st, dpt, needed, position,
                                    rowValue(lses), rowValue(deltas));
        // dV += P^T dO.
        mmaRowsTrans(accumulatorsAsA(terms.p), dos, stage, slice0, 0,
                     dv);
        // dK += dS^T Q.
        mmaRowsTrans(accumulatorsAsA(terms.ds), qs, stage, slice0, 0,
                     dk);
        // dS^T, transposed into dS [query][key] in workgroup memory for
        // the atomic dQ.
        if (mode == GradQueryMode::atomic)
          for (int64_t n = 0; n < kScoreTiles; ++n)
            for (int i = 0; i < 4; ++i)
              memref::StoreOp::create(
                  b, loc,
                  arith::TruncFOp::create(b, loc, elt, terms.ds[n][i]), dss,
                  ValueRange{queryOf(n, i), keyRow[i / 2]});
        SmallVector<Value> out = flatten(dk);
        llvm::append_range(out, flatten(dv));
        return out;
      });
      dk = unflatten(sliced, keyTiles);
      dv = unflatten(sliced.drop_front(4 * keyTiles), valueTiles);

      if (mode == GradQueryMode::atomic) {
        gpu::BarrierOp::create(b, loc);
        // dQ of this warp's 16 query rows = dS [16 x 64 keys] K [64 x D],
        // 16 columns at a time, added to the f32 dQ.
        SmallVector<Fragment> ds = loadA(dss, {}, warpRow0, kTile);
        for (int64_t col0 = 0; col0 < headDim; col0 += 2 * mma::kN) {
          SmallVector<Accumulator> dq = zeroTiles(2);
          mmaRowsTrans(ds, ks, {}, idx(0), col0, dq);
          for (int half = 0; half < 2; ++half) {
            Value row = add(warpRow0,
                            mma::accumulatorPosition(lane(), 2 * half).row.v);
            whenThen(lessThan(row, at.validQ), [&] {
              for (int64_t t = 0; t < 2; ++t)
                for (int i = 2 * half; i < 2 * half + 2; ++i)
                  memref::AtomicRMWOp::create(
                      b, loc, arith::AtomicRMWKind::addf, dq[t][i], dqAccum,
                      ValueRange{batch, at.head, add(at.q0, row),
                                 add(laneCol,
                                     idx(col0 + t * mma::kN + i % 2))});
            });
          }
        }
      }
      SmallVector<Value> out = flatten(dk);
      llvm::append_range(out, flatten(dv));
      return out;
    };
    SmallVector<Value> out =
        when(documentsMeet(qFirst, at.validQ, keySegments), carried, compute);
    // The next iteration's copies overwrite this stage. With the atomic
    // dQ, the barrier between writing dS and reading it already orders
    // every read of the stage before them, and the next iteration's first
    // barrier every read of dS before its next write.
    if (mode != GradQueryMode::atomic)
      gpu::BarrierOp::create(b, loc);
    return out;
  };
  ValueRange state = loop(idx(0), iterations, idx(1), init, body);
  // Nothing may be left in flight when the kernel ends.
  waitCopies(0);
  storeAccumulators(unflatten(state, keyTiles), op.getGradKey(), batch, kvHead,
                    k0, warpRow0, validK);
  storeAccumulators(unflatten(state.drop_front(4 * keyTiles), valueTiles),
                    op.getGradValue(), batch, kvHead, k0, warpRow0, validK);
  gpu::TerminatorOp::create(b, loc);
}

void MmaAttentionGradLowering::emitQueryKernel() {
  OpBuilder::InsertionGuard guard(b);
  const int64_t queryTiles = headDim / mma::kN;
  Value query = op.getQuery();
  int64_t sharedBytes = 2 * tileElements(headDim, valueDim);
  gpu::LaunchOp launch =
      launchWarps(arith::CeilDivUIOp::create(b, loc, lq, idx(kTile)),
                  dim(query, 1), dim(query, 0), sharedBytes);
  SharedViews views(*this);
  Value qs = views.next({kTile, headDim + kMmaChunk});
  Value dos = views.next({kTile, valueDim + kMmaChunk});
  Value ks = views.next({2, kTile, headDim + kMmaChunk});
  Value vs = views.next({2, kTile, valueDim + kMmaChunk});

  Value batch = launch.getBlockIds().z, head = launch.getBlockIds().y;
  Value kvHead = arith::DivUIOp::create(b, loc, head, kvGroup);
  Value q0 = mul(launch.getBlockIds().x, idx(kTile));
  Value validQ = arith::MinSIOp::create(b, loc, idx(kTile), sub(lq, q0));
  Value qFirst = add(op.getQOffset(), q0);
  Value qLast = sub(add(qFirst, validQ), idx(1));
  Value warpRow0 = mul(warp, idx(mma::kM));
  // This lane's two query rows, their lse and D_i (the scratch is padded
  // to whole tiles).
  SmallVector<Value, 2> rows, rowValid, lse, delta;
  for (int half = 0; half < 2; ++half) {
    rows.push_back(
        add(warpRow0, mma::accumulatorPosition(lane(), 2 * half).row.v));
    rowValid.push_back(lessThan(rows.back(), validQ));
    SmallVector<Value> at{batch, head, add(q0, rows.back())};
    lse.push_back(memref::LoadOp::create(b, loc, rowLse, at));
    delta.push_back(memref::LoadOp::create(b, loc, rowDelta, at));
  }

  Value tileKv = idx(kTile);
  KeyTiles tiles = buildVisibleKeyTiles(b, loc, mods.mask, qFirst, qLast,
                                        op.getKvOffset(), lkv, tileKv);
  auto keyRows = [&](Value kt) {
    return arith::MinSIOp::create(b, loc, tileKv, sub(lkv, mul(kt, tileKv)))
        .getResult();
  };
  auto copyKeyTile = [&](Value kt, Value stage) {
    Value k0 = mul(kt, tileKv), rows0 = keyRows(kt);
    copyTileAsync(op.getKey(), batch, kvHead, k0, rows0, ks, stage, headDim);
    copyTileAsync(op.getValue(), batch, kvHead, k0, rows0, vs, stage,
                  valueDim);
  };

  // Prologue: Q and dO, then the first key tile.
  copyTileAsync(query, batch, head, q0, validQ, qs, {}, headDim);
  copyTileAsync(op.getGradOutput(), batch, head, q0, validQ, dos, {},
                valueDim);
  commitCopies();
  whenThen(lessThan(tiles.first, tiles.end),
           [&] { copyKeyTile(tiles.first, idx(0)); });
  commitCopies();

  std::pair<Value, Value> querySegments;
  if (mods.analysis.documentOperand)
    querySegments = rangeOf(documentSegments(), qFirst, validQ);
  auto body = [&](Value kt, ValueRange carried) -> SmallVector<Value> {
    AddressesInLoop inLoop(*this);
    Value stage = arith::RemUIOp::create(b, loc, sub(kt, tiles.first), idx(2));
    Value laneCol = mma::accumulatorPosition(lane(), 0).col.v;
    Value next = add(kt, idx(1));
    whenThen(lessThan(next, tiles.end),
             [&] { copyKeyTile(next, sub(idx(1), stage)); });
    commitCopies();
    waitCopies(1);
    gpu::BarrierOp::create(b, loc);

    Value k0 = mul(kt, tileKv), validK = keyRows(kt);
    Value kFirst = add(op.getKvOffset(), k0);
    Value kLast = sub(add(kFirst, validK), idx(1));
    Value meet;
    if (querySegments.first)
      meet = rangesMeet(querySegments,
                        rangeOf(documentSegments(), kFirst, validK));
    auto compute = [&]() -> SmallVector<Value> {
      SmallVector<Accumulator> dq = unflatten(carried, queryTiles);
      Value cut = buildTileIsCut(b, loc, mods.mask, tiles, kFirst, kLast);
      ScoreTile scoreTile =
          ScoreTile::of(op, mods, batch, head, globalHeadOf(head), q0, qFirst,
                        k0, kFirst, cut);
      Value needed = arith::OrIOp::create(b, loc, lessThan(validQ, tileKv),
                                          lessThan(validK, tileKv));
      if (cut)
        needed = arith::OrIOp::create(b, loc, needed, cut);
      for (int64_t slice0 = 0; slice0 < kTile; slice0 += kSlice) {
        // S = Q K^T: rows are this warp's queries, columns the slice's
        // keys.
        SmallVector<Accumulator> s = zeroTiles(kScoreTiles);
        mmaColumns(loadA(qs, {}, warpRow0, headDim), ks, stage, s, idx(slice0));
        auto position = [&](int64_t n, int i) {
          Value keyCol = add(laneCol, idx(slice0 + n * mma::kN + i % 2));
          return ScorePosition{rows[i / 2], keyCol, rowValid[i / 2],
                               lessThan(keyCol, validK)};
        };
        // dP = dO V^T.
        SmallVector<Accumulator> dp = zeroTiles(kScoreTiles);
        mmaColumns(loadA(dos, {}, warpRow0, valueDim), vs, stage, dp,
                   idx(slice0));
        PairTerms terms = pairTerms(
            scoreTile, s, dp, needed, position,
            [&](int64_t, int i) { return lse[i / 2]; },
            [&](int64_t, int i) { return delta[i / 2]; });
        // dQ += dS K.
        mmaRowsTrans(accumulatorsAsA(terms.ds), ks, stage, idx(slice0), 0,
                     dq);
      }
      return flatten(dq);
    };
    SmallVector<Value> out = when(meet, carried, compute);
    // The next iteration's copies overwrite this stage.
    gpu::BarrierOp::create(b, loc);
    return out;
  };
  ValueRange state = loop(tiles.first, tiles.end, idx(1),
                          flatten(zeroTiles(queryTiles)), body);
  waitCopies(0);
  storeAccumulators(unflatten(state, queryTiles), op.getGradQuery(), batch,
                    head, q0, warpRow0, validQ);
  gpu::TerminatorOp::create(b, loc);
}

void MmaAttentionGradLowering::emitFinishKernel() {
  OpBuilder::InsertionGuard guard(b);
  Value query = op.getQuery(), dq = op.getGradQuery();
  Type elt = cast<MemRefType>(dq.getType()).getElementType();
  gpu::LaunchOp launch = launchWarps(
      arith::CeilDivUIOp::create(b, loc, lq, idx(kRowThreads)), dim(query, 1),
      dim(query, 0), /*sharedBytes=*/0);
  Value head = launch.getBlockIds().y, batch = launch.getBlockIds().z;
  Value row = add(mul(launch.getBlockIds().x, idx(kRowThreads)), tid);
  scf::IfOp::create(b, loc, lessThan(row, lq), [&](OpBuilder &, Location) {
    loop(idx(0), idx(headDim), idx(1), [&](Value d) {
      SmallVector<Value> at{batch, head, row, d};
      Value v = memref::LoadOp::create(b, loc, dqAccum, at);
      memref::StoreOp::create(b, loc, arith::TruncFOp::create(b, loc, elt, v),
                              dq, at);
    });
    scf::YieldOp::create(b, loc);
  });
  gpu::TerminatorOp::create(b, loc);
}

void MmaAttentionGradLowering::build() {
  Value query = op.getQuery();
  lq = dim(query, 2);
  lkv = dim(op.getKey(), 2);
  Value batches = dim(query, 0), heads = dim(query, 1);
  kvGroup = arith::DivUIOp::create(b, loc, heads, dim(op.getKey(), 1));
  scale = f32Const(op.getScaleAttr()
                       ? op.getScaleAttr().getValueAsDouble()
                       : 1.0 / std::sqrt(static_cast<double>(headDim)));
  // lse and D_i of every query row, padded to whole tiles.
  Value paddedRows =
      mul(arith::CeilDivUIOp::create(b, loc, lq, idx(kTile)), idx(kTile));
  auto rows = MemRefType::get(SmallVector<int64_t>(3, ShapedType::kDynamic),
                              f32);
  rowLse = memref::AllocOp::create(b, loc, rows,
                                   ValueRange{batches, heads, paddedRows});
  rowDelta = memref::AllocOp::create(b, loc, rows,
                                     ValueRange{batches, heads, paddedRows});
  Value dq = op.getGradQuery();
  bool dqIsF32 = cast<MemRefType>(dq.getType()).getElementType() == f32;
  if (mode == GradQueryMode::atomic)
    dqAccum = dqIsF32 ? dq
                      : memref::AllocOp::create(
                            b, loc,
                            MemRefType::get(SmallVector<int64_t>(
                                                4, ShapedType::kDynamic),
                                            f32),
                            ValueRange{batches, heads, lq, idx(headDim)})
                            .getResult();
  emitPrepareKernel();
  emitKeyValueKernel();
  if (mode == GradQueryMode::recompute)
    emitQueryKernel();
  else if (!dqIsF32)
    emitFinishKernel();
  for (Value scratch : {rowLse, rowDelta, dqAccum})
    if (scratch && scratch != dq)
      memref::DeallocOp::create(b, loc, scratch);
}

} // namespace

int64_t mlir::cp::detail::mmaGradKernelSharedBytes(int64_t d, int64_t dv,
                                                   GradQueryMode mode) {
  // Beside the tiles: two stages of lse and D_i (f32), and dS for the
  // atomic dQ.
  int64_t elements = tileElements(d, dv);
  if (mode == GradQueryMode::atomic)
    elements += kTile * (kTile + kMmaChunk);
  return 2 * elements + 2 * 2 * kTile * 4;
}

std::string
mlir::cp::detail::mmaGradKernelUnsupportedReason(BufferLocalAttentionGradOp op,
                                                 int64_t capability,
                                                 GradQueryMode mode) {
  auto q = op.getQuery().getType(), k = op.getKey().getType(),
       v = op.getValue().getType(), dout = op.getGradOutput().getType();
  int64_t d = q.getDimSize(3), dv = v.getDimSize(3);
  std::string reason =
      mmaOperandsUnsupportedReason({"Q", "K", "V", "dO"}, {q, k, v, dout}, d,
                                   dv);
  if (!reason.empty())
    return reason;
  int64_t bytes = mmaGradKernelSharedBytes(d, dv, mode);
  int64_t limit = maxDynamicSharedBytes(capability);
  if (bytes > limit)
    return "D = " + std::to_string(d) + " and Dv = " + std::to_string(dv) +
           " need " + std::to_string(bytes) +
           " bytes of workgroup memory, over the " + std::to_string(limit) +
           " a block may use on sm_" + std::to_string(capability);
  return reason;
}

void mlir::cp::detail::lowerLocalAttentionGradToMmaKernels(
    BufferLocalAttentionGradOp op, GradQueryMode mode) {
  MmaAttentionGradLowering(op, mode).build();
}
