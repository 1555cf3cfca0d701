//===- LocalAttentionLoops.h - the CPU attention loop nest ------*- C++ -*-===//
//
// Lowers one cp.buffer.local_attention (or its gradient) to a CPU loop
// nest: the forward nest is in LowerLocalAttention.cpp, the backward's in
// LowerLocalAttentionGrad.cpp, and the register-blocked kernels, the masks
// and the packing they share in LocalAttentionKernels.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef CP_LIB_CONVERSION_CPTOLOOPS_LOCALATTENTIONLOOPS_H
#define CP_LIB_CONVERSION_CPTOLOOPS_LOCALATTENTIONLOOPS_H

#include "cp/Conversion/AttentionCommon/AttentionBuilder.h"
#include "cp/Dialect/CP/IR/CPOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>

namespace mlir::cp::detail {

/// Per-tile [min, max] of a document mask's segment ids: two heap buffers
/// of one element per tile, freed by the caller.
struct SegmentRanges {
  Value min, max;
  explicit operator bool() const { return static_cast<bool>(min); }
};

struct TileSizes {
  int64_t tileQ, tileKv, vectorWidth, microRows, microVectors;
  /// bf16 Q, K and V: both products on AVX512-BF16 dot products.
  bool bf16Dot = false;
};

/// Per-parallel-iteration scratch, all f32: packed queries Qt [D, Tq],
/// transposed scores St [Tk, Tq], the accumulator Acc [Tq, Dv'] (Dv padded
/// to whole register blocks), and per query row the running max M, sum L and
/// the rescale factor alpha of the current key tile [Tq].
struct Scratch {
  Value qt, st, acc, rowMax, rowSum, alpha;
  /// With bf16 dot products: Q's pairs Qp [D/2, 2 Tq] (Qp[p, 2i + e] =
  /// Q[i, 2p + e], unscaled) and P's pairs Pp [Tk/2, 2 Tq] (Pp[q, 2i + e] =
  /// P[2q + e, i], rounded to bf16), in place of Qt.
  Value qp, pp;
};

/// The vocabulary both CPU lowerings (forward and gradient) build tiles
/// with: vector lanes, the register-blocked broadcast-FMA kernel, and the
/// masks applied to a transposed score tile St [Tk, Tq] (St[j, i] is the
/// score of query row i against key row j of the tile).
class TileKernels : protected cp::detail::AttentionBuilder {
protected:
  TileKernels(Operation *op, const TileSizes &sizes)
      : AttentionBuilder(op), t(sizes),
        lanes(VectorType::get({sizes.vectorWidth}, f32)),
        negInf(f32Const(-std::numeric_limits<double>::infinity())) {}

  using AttentionBuilder::loop;

  // Constants and small arithmetic.
  Value splat(Value scalar) {
    return vector::BroadcastOp::create(b, loc, lanes, scalar);
  }
  Value vecConst(double v) { return splat(f32Const(v)); }
  /// The index vector [0, 1, ..., vector-width - 1].
  Value laneIota() {
    auto type = VectorType::get({t.vectorWidth}, b.getIndexType());
    SmallVector<Attribute> steps;
    for (int64_t l = 0; l < t.vectorWidth; ++l)
      steps.push_back(b.getIndexAttr(l));
    return arith::ConstantOp::create(b, loc, type,
                                     DenseElementsAttr::get(type, steps));
  }
  Value minIdx(Value x, Value y) {
    return arith::MinSIOp::create(b, loc, x, y);
  }
  Value maxIdx(Value x, Value y) {
    return arith::MaxSIOp::create(b, loc, x, y);
  }
  Value loadLanes(Value memref, ValueRange indices) {
    return vector::LoadOp::create(b, loc, lanes, memref, indices);
  }
  void storeLanes(Value v, Value memref, ValueRange indices) {
    vector::StoreOp::create(b, loc, v, memref, indices);
  }
  /// A whole number of register blocks covering `size` lanes.
  Value paddedLanes(Value size) {
    int64_t block = t.vectorWidth * t.microVectors;
    return mul(arith::CeilDivUIOp::create(b, loc, size, idx(block)),
               idx(block));
  }

  void loop(Value lb, Value ub, int64_t step, function_ref<void(Value)> body) {
    loop(lb, ub, idx(step), body);
  }

  /// An f32 [rows, cols] stack buffer, 64-byte aligned; `rows` / `cols`
  /// give the sizes that are dynamic in `staticRows` / `staticCols`. Inside
  /// an scf.parallel (an automatic allocation scope) it lives for one
  /// iteration.
  Value scratchTile(Value rows, int64_t staticRows, Value cols,
                    int64_t staticCols) {
    SmallVector<Value> dynamic;
    if (ShapedType::isDynamic(staticRows))
      dynamic.push_back(rows);
    if (ShapedType::isDynamic(staticCols))
      dynamic.push_back(cols);
    return memref::AllocaOp::create(
               b, loc, MemRefType::get({staticRows, staticCols}, f32), dynamic,
               b.getI64IntegerAttr(64))
        .getResult();
  }
  /// An f32 [tileQ] stack buffer (one value per query row of a tile).
  Value scratchRow() {
    return memref::AllocaOp::create(b, loc, MemRefType::get({t.tileQ}, f32),
                                    b.getI64IntegerAttr(64))
        .getResult();
  }
  /// packed[at(d)] = value(d) for d < count, `zero` for count <= d <
  /// padded: one row of a packed operand with its padding.
  void packRow(Value packed, Value count, Value padded, Value zero,
               function_ref<SmallVector<Value>(Value)> at,
               function_ref<Value(Value)> value) {
    loop(idx(0), count, 1, [&](Value d) {
      memref::StoreOp::create(b, loc, value(d), packed, at(d));
    });
    loop(count, padded, 1, [&](Value d) {
      memref::StoreOp::create(b, loc, zero, packed, at(d));
    });
  }
  /// The op's `scale`, or 1/sqrt(D).
  Value softmaxScale(FloatAttr scale, Value headDim) {
    if (scale)
      return f32Const(scale.getValueAsDouble());
    Value d = arith::IndexCastOp::create(b, loc, b.getI64Type(), headDim);
    return math::RsqrtOp::create(b, loc,
                                 arith::SIToFPOp::create(b, loc, f32, d));
  }

  /// Calls `block(r0, rows)` for consecutive row blocks of [begin, end):
  /// blocks of `microRows` rows, then the remainder in at most one block of
  /// each power of two below microRows (6 rows: 6, 6, ..., 4, 2, 1).
  void forRowBlocks(Value begin, Value end,
                    function_ref<void(Value, int64_t)> block);

  /// C[r, l] (+)= sum_k A(r, k) * B(k, l) for rows r in [rowBegin, rowEnd)
  /// and lanes l < `laneCount`, in register blocks of microRows x
  /// microVectors vectors. `a` gives a scalar of A, `bLanes` a vector of B's
  /// row k at lane l; C starts at zero unless `accumulate`. With
  /// `lanesOuter`, all row blocks of one lane block run back to back, so
  /// B's columns of that block stay in L1; otherwise A's rows do. C is
  /// indexed [cPrefix..., r, l].
  void broadcastFmaKernel(Value c, Value rowBegin, Value rowEnd, Value kCount,
                          Value laneCount,
                          function_ref<Value(Value r, Value k)> a,
                          function_ref<Value(Value k, Value lane)> bLanes,
                          bool accumulate, bool lanesOuter,
                          ValueRange cPrefix = {});
  /// C[r, l] (+)= sum_k A(r, k) . B(k, l) with AVX512-BF16 dot products
  /// (x86vector.avx512.dot, f32 accumulation): step k is a pair of bf16
  /// products. `aPair` gives row r's pair k broadcast to every lane
  /// (broadcastBf16Pair), `bPairs` the lanes from `lane` as 2 * vector-width
  /// bf16, each lane's pair adjacent. Blocked as broadcastFmaKernel.
  void bf16DotKernel(Value c, Value rowBegin, Value rowEnd, Value pairCount,
                     Value laneCount,
                     function_ref<Value(Value r, Value k)> aPair,
                     function_ref<Value(Value k, Value lane)> bPairs,
                     bool accumulate, bool lanesOuter);
  /// The bf16 pair memref[at], memref[at + 1] in every lane of a
  /// 2 * vector-width bf16 vector.
  Value broadcastBf16Pair(Value memref, ValueRange at);

  /// What one step k of a register block computes: acc = step(acc,
  /// aLanes(r, k), bLanes(k, lane)) (an FMA of a broadcast scalar, or a
  /// bf16 pair dot product).
  struct LaneProduct {
    function_ref<Value(Value r, Value k)> aLanes;
    function_ref<Value(Value k, Value lane)> bLanes;
    function_ref<Value(Value acc, Value a, Value b)> step;
  };
  void blockedKernel(Value c, Value rowBegin, Value rowEnd, Value kCount,
                     Value laneCount, const LaneProduct &product,
                     bool accumulate, bool lanesOuter, ValueRange cPrefix);
  /// One register block: `rows` rows from r0, the microVectors vectors from
  /// lane0, accumulated in registers over k.
  void registerBlock(Value c, ValueRange cPrefix, Value r0, int64_t rows,
                     Value lane0, Value kCount, const LaneProduct &product,
                     bool accumulate);

  /// St[j, i] = -inf where `mask` hides query qBase + i from key k0 + j,
  /// for every lane i < tileQ and row j < rowsInTile.
  void applyStructuredMask(MaskAttr mask, Value qBase, Value k0,
                           Value rowsInTile, Value st);
  /// The block-local explicit mask `mask` (i1 or additive bias) on St's
  /// valid rows and columns; q0 and k0 are the tile's local positions.
  void applyExplicitMask(Value mask, Value batch, Value head, Value q0,
                         Value validQ, Value k0, Value rowsInTile, Value st);
  /// St[j, i] = mod(St[j, i] or its position) for the tile's valid rows
  /// and columns: score_mod rewrites scores, mask_mod sets -inf where it
  /// returns false. Positions are global (q: qFirst + i, k: kFirst + j).
  /// A body canEmitOnLanes accepts runs on a row's vector lanes at once,
  /// any other once per score.
  void applyModFunction(func::FuncOp function, bool isMask,
                        ValueRange modOperands, Value batch, Value head,
                        Value qFirst, Value validQ, Value kFirst,
                        Value rowsInTile, Value st);
  /// Which mod function arguments differ between the lanes of a row of St
  /// (the score, the query position): canEmitOnLanes's `varying`.
  SmallVector<bool> varyingModArguments(bool isMask, ValueRange modOperands);
  /// Calls `body(j, i, qPos)` for every row j < rowsInTile of St and every
  /// vector of lanes from i covering the tile's valid queries; qPos holds
  /// the lanes' global query positions (qFirst + i + lane; a lane past the
  /// last valid query repeats the first, so its reads stay in bounds).
  void forScoreLanes(Value qFirst, Value validQ, Value rowsInTile,
                     function_ref<void(Value j, Value i, Value qPos)> body);
  /// The segment range of every tile of `tile` positions of the document
  /// mask's segment ids `seg` over [first, first + length), computed once
  /// per call: i-th range at (min[i], max[i]).
  SegmentRanges tileSegmentRanges(Value seg, Value first, Value length,
                                  int64_t tile);
  /// Frees what tileSegmentRanges allocated (nothing when `ranges` is
  /// empty).
  void freeSegmentRanges(const SegmentRanges &ranges) {
    if (!ranges)
      return;
    memref::DeallocOp::create(b, loc, ranges.min);
    memref::DeallocOp::create(b, loc, ranges.max);
  }
  std::pair<Value, Value> segmentRangeOfTile(const SegmentRanges &ranges,
                                             Value tileIndex) {
    return {memref::LoadOp::create(b, loc, ranges.min, tileIndex),
            memref::LoadOp::create(b, loc, ranges.max, tileIndex)};
  }

  TileSizes t;
  VectorType lanes;
  Value negInf;
};

/// Builds the loop nest replacing one cp.buffer.local_attention.
class AttentionLowering : TileKernels {
public:
  AttentionLowering(BufferLocalAttentionOp op, const TileSizes &sizes)
      : TileKernels(op, sizes), op(op) {}

  void build();

private:
  /// K as a dense f32 [B, Hkv, Lkv, D] buffer (K itself when it is one).
  Value packKeys();
  /// V as f32 panels [B, Hkv, Dv' / W, Lkv, W] of W = vector-width *
  /// micro-vectors lanes, zero padded to Dv': one panel is contiguous, so the
  /// output kernel streams it instead of striding through V's rows (whose
  /// power-of-two strides alias in the L1 sets).
  Value packValuePanels();

  /// V as bf16 pair panels [B, Hkv, Dv' / W, ceil(Lkv / 2), 2 W]: row
  /// pair q of panel p holds V[2q + e, p W + l] at 2 l + e, zero padded, so
  /// one vector load gives each lane its pair of rows.
  Value packValuePairPanels();
  /// Whether the bf16 dot-product kernel applies to this op (remarks why
  /// not when it was asked for).
  bool usesBf16Dot();
  void packQueryPairs(Value batch, Value head, Value q0, Value validQ,
                      const Scratch &s);
  /// St = scale * sum_p K pairs . Qp pairs, then (after the softmax) P's
  /// pairs into Pp.
  void scoreTileBf16(Value batch, Value kvHead, Value k0, Value rows,
                     const Scratch &s);
  void packProbabilityPairs(Value rows, const Scratch &s);

  void emitQueryTile(Value batch, Value head, Value kvHead, Value tile,
                     const Scratch &s);
  void packQueries(Value batch, Value head, Value q0, Value validQ,
                   const Scratch &s);
  void updateSoftmax(Value validQ, Value rowsInTile, const Scratch &s);
  void writeOutputs(Value batch, Value head, Value q0, Value validQ,
                    const Scratch &s);

  BufferLocalAttentionOp op;
  // Set by build(): sizes, the (possibly packed) keys and values, scalars.
  Value lq, lkv, headDim, valueDim, valueLanes, scale, kvGroup;
  Value key, value;
  bool bf16Dot = false;
  /// The segment range of each key tile, for a document mask.
  SegmentRanges segments;
};

/// Builds the FlashAttention-2 backward loop nest replacing one
/// cp.buffer.local_attention_grad (LowerLocalAttentionGrad.cpp).
class AttentionGradLowering : TileKernels {
public:
  AttentionGradLowering(BufferLocalAttentionGradOp op, const TileSizes &sizes)
      : TileKernels(op, sizes), op(op) {}

  void build();

private:
  struct QueryPack;
  struct PairScratch;
  /// Packs query head `head`'s Q, dO, lse and D_i into `p` and zeroes its
  /// dQ accumulator.
  void packQueries(Value batch, Value head, const QueryPack &p);
  /// Every query tile of `head` that can see the key tile [k0, k0 + rows).
  void emitKeyTile(Value batch, Value head, Value kvHead, Value k0, Value rows,
                   const QueryPack &p, const PairScratch &s);
  void emitTilePair(Value batch, Value head, Value kvHead, Value tile,
                    Value validQ, Value k0, Value rows, const QueryPack &p,
                    const PairScratch &s);
  void applyScoreMod(Value batch, Value head, Value qFirst, Value validQ,
                     Value kFirst, Value rows, const PairScratch &s);
  /// A K or V operand as f32 [B, Hkv, Lkv, padded], rows zero padded from
  /// `width`.
  Value packRows(Value source, Value width, Value padded);
  /// to[batch, head, r, d] = from[r, d] in to's element type, for r <
  /// count and d < width.
  void storeRows(Value from, Value to, Value batch, Value head, Value count,
                 Value width);

  BufferLocalAttentionGradOp op;
  // Set by build().
  Value lq, lkv, headDim, valueDim, keyLanes, valueLanes, scale, kvGroup;
  /// K as f32 [B, Hkv, Lkv, D'] zero padded to whole register blocks; V
  /// itself when it is f32, else as f32 [B, Hkv, Lkv, Dv].
  Value key, value;
  /// The f32 dK and dV accumulators [Lkv, D'] and [Lkv, Dv'] of the KV head
  /// a parallel iteration owns.
  Value gradKey, gradValue;
  /// The segment range of each query tile, for a document mask.
  SegmentRanges querySegments;
};

} // namespace mlir::cp::detail

#endif // CP_LIB_CONVERSION_CPTOLOOPS_LOCALATTENTIONLOOPS_H
