//===- ApplyScheme.cpp - rewrite cp.attention under a CP scheme -----------===//
//
// Implements cp-apply-scheme: each cp.attention becomes cp collectives plus
// cp.local_attention ops with the global offsets of DESIGN §2. Scheme
// constraints come from SchemeConstraints.h, traffic from SchemeTraffic.h,
// the choice behind scheme = auto from ChooseScheme.h.
//
//===----------------------------------------------------------------------===//

#include "cp/Dialect/CP/IR/CPAttrBodies.h"
#include "cp/Dialect/CP/IR/CPOps.h"
#include "cp/Dialect/CP/IR/RingSchedule.h"
#include "cp/Dialect/CP/IR/SchemeConstraints.h"
#include "cp/Dialect/CP/IR/SchemeTraffic.h"
#include "cp/Dialect/CP/IR/StructuredMask.h"
#include "cp/Dialect/CP/Transforms/ChooseScheme.h"
#include "cp/Dialect/CP/Transforms/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/StringExtras.h"

namespace mlir {
namespace cp {
#define GEN_PASS_DEF_APPLYSCHEMEPASS
#include "cp/Dialect/CP/Transforms/Passes.h.inc"
} // namespace cp
} // namespace mlir

using namespace mlir;
using namespace mlir::cp;

namespace {

constexpr int64_t kHeadsDim = 1;
constexpr int64_t kSeqDim = 2;

/// A process group: `axes` of the grid named `grid`, with `size` processes,
/// and this process's index in it (row-major over `axes`).
struct Group {
  FlatSymbolRefAttr grid;
  SmallVector<int16_t> axes;
  int64_t size;
  Value index;
};

/// Builds the ops that replace one cp.attention. One instance per op.
class SchemeBuilder {
public:
  SchemeBuilder(AttentionOp op, const AttentionShape &shape)
      : op(op), b(op), loc(op.getLoc()), shape(shape), query(op.getQuery()),
        key(op.getKey()), value(op.getValue()), mask(op.getExplicitMask()) {}

  Value index(int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }
  Value mul(Value x, int64_t c) {
    return arith::MulIOp::create(b, loc, x, index(c));
  }
  Value add(Value x, int64_t c) {
    return arith::AddIOp::create(b, loc, x, index(c));
  }

  /// This process's index in `axes` of `grid` (0 for a group of size 1).
  Value groupIndex(FlatSymbolRefAttr grid, ArrayRef<int16_t> axes,
                   ArrayRef<int64_t> axisSizes) {
    if (llvm::all_of(axisSizes, [](int64_t s) { return s == 1; }))
      return index(0);
    auto multi = shard::ProcessMultiIndexOp::create(
        b, loc, grid.getValue(), SmallVector<shard::GridAxis>(axes));
    Value linear = multi.getResult()[0];
    for (auto [i, coordinate] : llvm::enumerate(multi.getResult().drop_front()))
      linear = arith::AddIOp::create(b, loc, mul(linear, axisSizes[i + 1]),
                                     coordinate);
    return linear;
  }

  static RankedTensorType withDim(Value v, int64_t dim, int64_t size) {
    return withDim(cast<RankedTensorType>(v.getType()), dim, size);
  }
  static RankedTensorType withDim(RankedTensorType type, int64_t dim,
                                  int64_t size) {
    SmallVector<int64_t> shape(type.getShape());
    shape[dim] = size;
    return type.clone(shape);
  }
  /// The query-row dim of an explicit mask ([Lq, S] or [B, H, Lq, S]).
  static int64_t maskRowDim(Value mask) {
    return cast<RankedTensorType>(mask.getType()).getRank() - 2;
  }
  static int64_t dimOf(Value v, int64_t dim) {
    return cast<RankedTensorType>(v.getType()).getDimSize(dim);
  }

  /// `size` rows of `v` along `dim` starting at `offset`.
  Value slice(Value v, int64_t dim, OpFoldResult offset, int64_t size) {
    auto type = cast<RankedTensorType>(v.getType());
    SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes, strides(type.getRank(), b.getIndexAttr(1));
    for (int64_t d = 0; d < type.getRank(); ++d)
      sizes.push_back(b.getIndexAttr(d == dim ? size : type.getDimSize(d)));
    offsets[dim] = offset;
    return tensor::ExtractSliceOp::create(b, loc, withDim(v, dim, size), v,
                                          offsets, sizes, strides);
  }

  Value allGather(const Group &g, Value v, int64_t dim) {
    return AllGatherOp::create(b, loc, withDim(v, dim, dimOf(v, dim) * g.size),
                               v, g.grid.getValue(), g.axes, dim);
  }
  Value allToAll(const Group &g, Value v, int64_t split, int64_t concat) {
    RankedTensorType type = withDim(withDim(v, split, dimOf(v, split) / g.size),
                                    concat, dimOf(v, concat) * g.size);
    return AllToAllOp::create(b, loc, type, v, g.grid.getValue(), g.axes, split,
                              concat);
  }
  Value exchangeMirror(const Group &g, Value v) {
    return ExchangeOp::create(b, loc, v, g.grid.getValue(), g.axes,
                              PartnerKind::mirror);
  }
  Value shift(const Group &g, Value v) {
    return ShiftOp::create(b, loc, v, g.grid.getValue(), g.axes, 1);
  }
  Value relayout(const Group &g, Value v, int64_t seqAxis, SequenceLayout from,
                 SequenceLayout to) {
    return RelayoutOp::create(b, loc, v, g.grid.getValue(), g.axes, seqAxis,
                              from, to);
  }

  /// The operands in the scheme's layout: Q, K, V and a mask with a local
  /// query extent are converted when the op's layout differs.
  void convertOperandsTo(const Group &g, SequenceLayout to) {
    SequenceLayout from = op.getLayout();
    if (from == to)
      return;
    query = relayout(g, query, kSeqDim, from, to);
    key = relayout(g, key, kSeqDim, from, to);
    value = relayout(g, value, kSeqDim, from, to);
    if (mask && maskIsLocal(mask))
      mask = relayout(g, mask, maskRowDim(mask), from, to);
  }
  /// Replaces the op with `out`, converted back to the op's layout.
  void finish(const Group &g, Value out, SequenceLayout computedIn) {
    if (computedIn != op.getLayout())
      out = relayout(g, out, kSeqDim, computedIn, op.getLayout());
    op.replaceAllUsesWith(out);
  }

  /// Local attention of `q` against `k`/`v` at global offsets, carrying the
  /// op's mask kind and scale, marked with the scheme and its traffic.
  Value localAttention(Value q, Value k, Value v, Value qOffset, Value kvOffset,
                       Value mask) {
    RankedTensorType outType =
        withDim(withDim(op.getResult(), kSeqDim, dimOf(q, kSeqDim)), kHeadsDim,
                dimOf(q, kHeadsDim));
    auto out = LocalAttentionOp::create(
        b, loc, outType,
        /*lse=*/Type(), q, k, v, qOffset, kvOffset, headOffset, mask,
        op.getModOperands(), op.getMaskAttr(), op.getScaleAttr());
    mark(out);
    return out.getOutput();
  }
  /// Marks a local attention with the scheme and its traffic, and gives it
  /// the op's mask_mod and score_mod: they are written on global positions,
  /// which the local op's offsets (and head offset) supply.
  void mark(LocalAttentionOp attention) {
    attention->setAttr("cp.scheme", scheme);
    attention->setAttr("cp.bytes_per_rank", b.getI64IntegerAttr(bytesPerRank));
    IRMapping mapping;
    op.getMaskMod().cloneInto(&attention.getMaskMod(), mapping);
    op.getScoreMod().cloneInto(&attention.getScoreMod(), mapping);
  }
  bool hasModRegions() {
    return !op.getMaskMod().empty() || !op.getScoreMod().empty();
  }

  /// A partial result: the f32 output and log-sum-exp of some queries
  /// against some keys.
  struct Partial {
    Value out, lse;
  };
  Partial partialAttention(Value q, Value k, Value v, Value qOffset,
                           Value kvOffset, Value mask) {
    auto qType = cast<RankedTensorType>(q.getType());
    auto outType = RankedTensorType::get(
        {shape.batch, shape.heads, qType.getDimSize(kSeqDim), shape.valueDim},
        b.getF32Type());
    auto lseType = RankedTensorType::get(
        {shape.batch, shape.heads, qType.getDimSize(kSeqDim)}, b.getF32Type());
    auto attention = LocalAttentionOp::create(
        b, loc, outType, lseType, q, k, v, qOffset, kvOffset, headOffset, mask,
        op.getModOperands(), op.getMaskAttr(), op.getScaleAttr());
    mark(attention);
    return {attention.getOutput(), attention.getLse()};
  }
  /// What a fully masked block contributes: output 0, lse -inf.
  Partial emptyPartial(Partial like) {
    auto fill = [&](Value shapeOf, double value) {
      auto type = cast<RankedTensorType>(shapeOf.getType());
      Value empty = tensor::EmptyOp::create(b, loc, type.getShape(),
                                            type.getElementType());
      Value constant = arith::ConstantOp::create(
          b, loc, b.getF32FloatAttr(static_cast<float>(value)));
      return linalg::FillOp::create(b, loc, constant, empty).getResult(0);
    };
    return {fill(like.out, 0.0),
            fill(like.lse, -std::numeric_limits<double>::infinity())};
  }
  Partial merge(Partial a, Partial c) {
    auto merged = MergeOp::create(b, loc, a.out, a.lse, c.out, c.lse);
    return {merged.getOutput(), merged.getLse()};
  }
  /// `f32` rounded to the op's element type (a no-op for f32).
  Value toStorageType(Value f32) {
    Type element = op.getType().getElementType();
    if (element.isF32())
      return f32;
    auto type = cast<RankedTensorType>(f32.getType());
    Value empty = tensor::EmptyOp::create(b, loc, type.getShape(), element);
    int64_t rank = type.getRank();
    SmallVector<AffineMap> maps(2, b.getMultiDimIdentityMap(rank));
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    return linalg::GenericOp::create(
               b, loc, TypeRange{empty.getType()}, ValueRange{f32},
               ValueRange{empty}, maps, iterators,
               [&](OpBuilder &nb, Location nloc, ValueRange args) {
                 Value rounded =
                     arith::TruncFOp::create(nb, nloc, element, args[0]);
                 linalg::YieldOp::create(nb, nloc, rounded);
               })
        .getResult(0);
  }

  /// Rows [start, start + count) of an explicit mask given with the global
  /// query extent, and heads [h0, h0 + hCount) when it has one per head.
  Value sliceGlobalMask(Value mask, OpFoldResult start, int64_t count,
                        OpFoldResult h0, int64_t hCount) {
    int64_t rowDim = maskRowDim(mask);
    Value rows =
        dimOf(mask, rowDim) == count ? mask : slice(mask, rowDim, start, count);
    if (maskHasHeads(mask) && hCount != shape.heads)
      rows = slice(rows, kHeadsDim, h0, hCount);
    return rows;
  }
  bool maskHasHeads(Value mask) const {
    auto type = cast<RankedTensorType>(mask.getType());
    return type.getRank() == 4 && type.getDimSize(kHeadsDim) == shape.heads &&
           shape.heads != 1;
  }
  bool maskIsLocal(Value mask) const {
    return dimOf(mask, maskRowDim(mask)) == shape.localLen;
  }

  Value rewriteAllGather(const Group &cp);
  Value rewriteUlysses(const Group &inner, const Group *outer);
  Value rewriteHeadTail(const Group &cp);
  Value rewriteRing(const Group &cp, bool zigzag);

  AttentionOp op;
  OpBuilder b;
  Location loc;
  AttentionShape shape;
  SchemeAttr scheme;
  int64_t bytesPerRank = 0;
  /// The op's operands, in the layout the scheme computes in.
  Value query, key, value, mask;
  /// The global index of the first head local attentions compute, for mod
  /// regions (null: 0).
  Value headOffset;
};

Value SchemeBuilder::rewriteAllGather(const Group &cp) {
  Value k = allGather(cp, key, kSeqDim);
  Value v = allGather(cp, value, kSeqDim);
  Value qOffset = mul(cp.index, shape.localLen);
  Value m = mask;
  if (m && !maskIsLocal(m))
    m = sliceGlobalMask(m, qOffset, shape.localLen, b.getIndexAttr(0),
                        shape.heads);
  return localAttention(query, k, v, qOffset, index(0), m);
}

/// Ulysses over `inner`; with `outer` (hybrid), K/V are then all-gathered
/// across `outer` and the local queries start at outer.index * u * L.
Value SchemeBuilder::rewriteUlysses(const Group &inner, const Group *outer) {
  auto toHeads = [&](Value x) {
    return allToAll(inner, x, kHeadsDim, kSeqDim);
  };
  Value q = toHeads(query);
  Value k = toHeads(key);
  Value v = toHeads(value);
  int64_t blockLen = inner.size * shape.localLen;
  Value qOffset = index(0);
  if (outer) {
    k = allGather(*outer, k, kSeqDim);
    v = allGather(*outer, v, kSeqDim);
    qOffset = mul(outer->index, blockLen);
  }
  int64_t localHeads = shape.heads / inner.size;
  Value m = mask;
  if (m && maskIsLocal(m)) {
    int64_t rows = maskRowDim(m);
    m = maskHasHeads(m) ? allToAll(inner, m, kHeadsDim, rows)
                        : allGather(inner, m, rows);
  } else if (m) {
    m = sliceGlobalMask(m, qOffset, blockLen, mul(inner.index, localHeads),
                        localHeads);
  }
  if (hasModRegions())
    headOffset = mul(inner.index, localHeads);
  Value out = localAttention(q, k, v, qOffset, index(0), m);
  return allToAll(inner, out, kSeqDim, kHeadsDim);
}

Value SchemeBuilder::rewriteHeadTail(const Group &cp) {
  int64_t len = shape.localLen, half = len / 2;
  Value peer = arith::SubIOp::create(b, loc, index(cp.size - 1), cp.index);
  Value keepOffset = mul(cp.index, len);
  Value peerOffset = add(mul(peer, len), half);

  Value keepQ = slice(query, kSeqDim, b.getIndexAttr(0), half);
  Value peerQ =
      exchangeMirror(cp, slice(query, kSeqDim, b.getIndexAttr(half), half));
  Value k = allGather(cp, key, kSeqDim);
  Value v = allGather(cp, value, kSeqDim);

  Value keepMask, peerMask;
  if (mask) {
    int64_t rows = maskRowDim(mask);
    if (maskIsLocal(mask)) {
      keepMask = slice(mask, rows, b.getIndexAttr(0), half);
      peerMask =
          exchangeMirror(cp, slice(mask, rows, b.getIndexAttr(half), half));
    } else {
      keepMask = slice(mask, rows, keepOffset, half);
      peerMask = slice(mask, rows, peerOffset, half);
    }
  }
  Value keepOut = localAttention(keepQ, k, v, keepOffset, index(0), keepMask);
  Value peerOut = localAttention(peerQ, k, v, peerOffset, index(0), peerMask);
  Value tailOut = exchangeMirror(cp, peerOut);
  return tensor::ConcatOp::create(b, loc, op.getType(), kSeqDim,
                                  ValueRange{keepOut, tailOut});
}

/// Ring attention: P steps; at step s this rank holds the K/V of group rank
/// (r - s) mod P, attends its queries to it with the log-sum-exp, and merges
/// the partial result into a running one, while the K/V for step s + 1 are
/// already being shifted one rank on. The local block is cut in chunks (one
/// for ring, the two zigzag chunks r and 2P-1-r for zigzag); each pair of
/// query and key chunks that the mask may leave visible is attended at its
/// global offsets, and a pair it masks entirely is skipped.
Value SchemeBuilder::rewriteRing(const Group &cp, bool zigzag) {
  int64_t p = cp.size, len = shape.localLen;
  int64_t chunks = zigzag ? 2 : 1, rows = len / chunks;
  /// Global position of the first row of each chunk that `rank` holds.
  auto chunkStarts = [&](Value rank) -> SmallVector<Value> {
    if (!zigzag)
      return {mul(rank, len)};
    Value mirror = arith::SubIOp::create(b, loc, index(2 * p - 1), rank);
    return {mul(rank, rows), mul(mirror, rows)};
  };
  auto chunk = [&](Value x, int64_t c) {
    return chunks == 1 ? x : slice(x, kSeqDim, b.getIndexAttr(c * rows), rows);
  };
  /// The explicit mask's entries for query chunk `qc` (at global `qStart`)
  /// and the key chunk at global `kStart`.
  auto maskBlock = [&](int64_t qc, Value qStart, Value kStart) -> Value {
    if (!mask)
      return Value();
    int64_t rowDim = maskRowDim(mask);
    Value m = maskIsLocal(mask)
                  ? (chunks == 1
                         ? mask
                         : slice(mask, rowDim, b.getIndexAttr(qc * rows), rows))
                  : slice(mask, rowDim, qStart, rows);
    return slice(m, rowDim + 1, kStart, rows);
  };
  auto last = [&](Value start) { return add(start, rows - 1); };

  // Steps after the last one a mask lets any rank see are not emitted, nor
  // the shifts that would feed them.
  RingSchedule schedule{p, len, zigzag};
  int64_t steps = schedule.shiftsNeeded(op.getMask()) + 1;
  SmallVector<Value> qStarts = chunkStarts(cp.index);
  SmallVector<Partial> running(chunks);
  Value k = key, v = value;
  for (int64_t step = 0; step < steps; ++step) {
    // Issue the next step's shift first, so that it can overlap this
    // step's attention (cp-overlap-collectives).
    Value nextK, nextV;
    if (step + 1 < steps) {
      nextK = shift(cp, k);
      nextV = shift(cp, v);
    }
    Value source = cp.index;
    if (step != 0)
      source =
          arith::RemUIOp::create(b, loc, add(cp.index, p - step), index(p));
    SmallVector<Value> kStarts = chunkStarts(source);
    for (int64_t qc = 0; qc < chunks; ++qc) {
      // The diagonal chunk first: it is never fully masked, so it starts
      // the running result.
      for (int64_t kc : {qc, 1 - qc}) {
        if (kc >= chunks)
          continue;
        Value qStart = qStarts[qc], kStart = kStarts[kc];
        auto attend = [&] {
          return partialAttention(chunk(query, qc), chunk(k, kc), chunk(v, kc),
                                  qStart, kStart,
                                  maskBlock(qc, qStart, kStart));
        };
        if (step == 0 && kc == qc) {
          running[qc] = attend();
          continue;
        }
        // Visibility as a function of the rank: decided here when it is
        // the same on every rank, at run time (scf.if) otherwise.
        RingSchedule::Visibility visibility =
            schedule.visibility(op.getMask(), step, qc, kc);
        if (visibility == RingSchedule::Visibility::never)
          continue;
        Partial part;
        if (visibility == RingSchedule::Visibility::always) {
          part = attend();
        } else {
          Value visible = buildBlockIsVisible(
              b, loc, op.getMask(), qStart, last(qStart), kStart, last(kStart));
          Partial shapeOf = running[qc];
          auto ifOp = scf::IfOp::create(
              b, loc, TypeRange{shapeOf.out.getType(), shapeOf.lse.getType()},
              visible, /*withElseRegion=*/true);
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(ifOp.thenBlock());
          Partial computed = attend();
          scf::YieldOp::create(b, loc, ValueRange{computed.out, computed.lse});
          b.setInsertionPointToStart(ifOp.elseBlock());
          Partial skipped = emptyPartial(shapeOf);
          scf::YieldOp::create(b, loc, ValueRange{skipped.out, skipped.lse});
          part = {ifOp.getResult(0), ifOp.getResult(1)};
        }
        running[qc] = merge(running[qc], part);
      }
    }
    k = nextK;
    v = nextV;
  }
  Value out = running[0].out;
  if (chunks == 2) {
    auto type = withDim(out, kSeqDim, len);
    out = tensor::ConcatOp::create(b, loc, type, kSeqDim,
                                   ValueRange{running[0].out, running[1].out});
  }
  return toStorageType(out);
}

struct ApplySchemePass : public cp::impl::ApplySchemePassBase<ApplySchemePass> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *context) override {
    if (scheme.empty())
      return success();
    defaultScheme = parseSchemeOption(context, "cp-apply-scheme", scheme);
    return success(defaultScheme != nullptr);
  }

  void runOnOperation() override;
  /// Rewrites `op`; returns the scheme applied (auto resolved).
  FailureOr<SchemeAttr> rewrite(AttentionOp op);
  FailureOr<Group> hybridOuterInner(SchemeBuilder &builder, Group &inner,
                                    int64_t u);

  SchemeAttr defaultScheme;
};

/// The CP group of a hybrid(u) op as an (outer, inner) pair of grid axes.
/// A 1-D grid of size P is viewed through a derived `(P/u) x u` grid whose
/// row-major linear index equals the 1-D index, so both name the same ranks.
FailureOr<Group> ApplySchemePass::hybridOuterInner(SchemeBuilder &builder,
                                                   Group &inner, int64_t u) {
  AttentionOp op = builder.op;
  auto grid =
      SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(op, op.getGridAttr());
  ArrayRef<int16_t> axes = op.getGridAxes();
  Group outer;
  if (axes.size() == 2) {
    int64_t innerSize = grid.getShape()[axes[1]];
    if (innerSize != u)
      return op.emitOpError("hybrid(")
             << u << ") on grid_axes [" << axes[0] << ", " << axes[1]
             << "] needs the inner axis " << axes[1]
             << " to have size u = " << u << ", got " << innerSize;
    outer = {op.getGridAttr(), {axes[0]}, grid.getShape()[axes[0]], Value()};
    inner = {op.getGridAttr(), {axes[1]}, u, Value()};
  } else if (grid.getRank() == 1 && axes.size() == 1) {
    int64_t p = grid.getShape()[0], rows = p / u;
    std::string name =
        (grid.getSymName() + "_hybrid_" + Twine(rows) + "x" + Twine(u)).str();
    auto derived = SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(
        op, StringAttr::get(op.getContext(), name));
    if (derived && derived.getShape() != ArrayRef<int64_t>{rows, u})
      return op.emitOpError("hybrid(")
             << u << ") needs grid @" << name << " to have shape " << rows
             << "x" << u << ", but a grid of that name has another shape";
    if (!derived) {
      OpBuilder gridBuilder(grid);
      gridBuilder.setInsertionPointAfter(grid);
      derived = shard::GridOp::create(gridBuilder, grid.getLoc(), name,
                                      ArrayRef<int64_t>{rows, u});
    }
    auto ref = FlatSymbolRefAttr::get(derived.getSymNameAttr());
    outer = {ref, {0}, rows, Value()};
    inner = {ref, {1}, u, Value()};
  } else {
    return op.emitOpError("hybrid needs a 1-D grid or two grid axes (outer, "
                          "inner); got grid_axes of size ")
           << axes.size() << " on a rank-" << grid.getRank() << " grid";
  }
  outer.index = builder.groupIndex(outer.grid, outer.axes, {outer.size});
  inner.index = builder.groupIndex(inner.grid, inner.axes, {inner.size});
  return outer;
}

FailureOr<SchemeAttr> ApplySchemePass::rewrite(AttentionOp op) {
  SchemeAttr scheme = op.getSchemeAttr() ? op.getSchemeAttr() : defaultScheme;
  if (!scheme)
    return op.emitOpError("has no scheme: set `scheme = ...` on the op or "
                          "run cp-apply-scheme{scheme=...}");
  auto types = {op.getQuery().getType(), op.getKey().getType(),
                op.getValue().getType()};
  int64_t groupSize = op.getGroupSize();
  if (ShapedType::isDynamic(groupSize) ||
      llvm::any_of(types,
                   [](RankedTensorType t) { return !t.hasStaticShape(); }))
    return op.emitOpError("cp-apply-scheme needs static shapes and a static "
                          "CP group size, got P = ")
           << (ShapedType::isDynamic(groupSize) ? std::string("?")
                                                : std::to_string(groupSize))
           << " and query " << op.getQuery().getType();
  AttentionShape shape =
      AttentionShape::fromTypes(op.getQuery().getType(), op.getKey().getType(),
                                op.getValue().getType(), groupSize);
  if (scheme.getKind() == SchemeKind::automatic) {
    FailureOr<MachineModel> machine =
        machineFor(op, *MachineModel::preset("h200-nvlink"));
    if (failed(machine))
      return failure();
    FailureOr<SchemeAttr> chosen = chooseScheme(op, *machine, /*record=*/false);
    if (failed(chosen))
      return failure();
    scheme = *chosen;
  }
  if (std::optional<std::string> violation = findSchemeViolation(scheme, shape))
    return op.emitOpError("cannot use scheme ") << scheme << ": " << *violation;

  SchemeBuilder builder(op, shape);
  builder.scheme = scheme;
  SchemeKind kind = scheme.getKind();
  int64_t elementBytes = op.getQuery().getType().getElementTypeBitWidth() / 8;
  builder.bytesPerRank = bytesSentPerRank(scheme, shape, elementBytes,
                                          op.getLayout(), op.getMask());

  auto grid =
      SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(op, op.getGridAttr());
  SmallVector<int64_t> axisSizes;
  for (int16_t axis : op.getGridAxes())
    axisSizes.push_back(grid.getShape()[axis]);
  Group cp{op.getGridAttr(), SmallVector<int16_t>(op.getGridAxes()), groupSize,
           Value()};

  SequenceLayout layout = schemeLayout(kind);
  Value out;
  if (kind == SchemeKind::hybrid) {
    Group inner;
    FailureOr<Group> outer =
        hybridOuterInner(builder, inner, scheme.getUlyssesDegree());
    if (failed(outer))
      return failure();
    builder.convertOperandsTo(cp, layout);
    out = builder.rewriteUlysses(inner, &*outer);
    ++numHybrid;
  } else {
    cp.index = builder.groupIndex(cp.grid, cp.axes, axisSizes);
    builder.convertOperandsTo(cp, layout);
    switch (kind) {
    case SchemeKind::allgather:
      out = builder.rewriteAllGather(cp);
      ++numAllGather;
      break;
    case SchemeKind::ulysses:
      out = builder.rewriteUlysses(cp, /*outer=*/nullptr);
      ++numUlysses;
      break;
    case SchemeKind::head_tail:
      out = builder.rewriteHeadTail(cp);
      ++numHeadTail;
      break;
    case SchemeKind::ring:
    case SchemeKind::zigzag:
      out = builder.rewriteRing(cp, kind == SchemeKind::zigzag);
      ++(kind == SchemeKind::ring ? numRing : numZigzag);
      break;
    default:
      llvm_unreachable("auto is resolved above, hybrid handled before");
    }
  }
  builder.finish(cp, out, layout);
  op.erase();
  return scheme;
}

void ApplySchemePass::runOnOperation() {
  bool failedAny = false;
  getOperation().walk([&](FunctionOpInterface func) {
    if (func.isExternal())
      return;
    SmallVector<AttentionOp> ops;
    func.walk([&](AttentionOp op) { ops.push_back(op); });
    if (ops.empty() && requireMatch) {
      func.emitError("cp-apply-scheme found no cp.attention in function @")
          << func.getName()
          << " (require-match is set): nothing would be parallelized; "
             "check that the attention was raised to cp.attention";
      failedAny = true;
    }
    llvm::StringMap<int64_t> rewritten;
    for (AttentionOp op : ops) {
      FailureOr<SchemeAttr> applied = rewrite(op);
      if (failed(applied)) {
        failedAny = true;
        continue;
      }
      ++rewritten[stringifySchemeKind(applied->getKind())];
    }
    if (reportRewrites && !ops.empty()) {
      InFlightDiagnostic remark = func.emitRemark("cp-apply-scheme rewrote ")
                                  << ops.size() << " cp.attention:";
      for (StringRef kind :
           {"allgather", "ulysses", "hybrid", "head_tail", "ring", "zigzag"})
        if (rewritten.count(kind))
          remark << " " << kind << " = " << rewritten[kind];
    }
  });
  if (failedAny)
    signalPassFailure();
}

} // namespace
