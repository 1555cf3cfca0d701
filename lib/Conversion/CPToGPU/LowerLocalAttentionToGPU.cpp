//===- LowerLocalAttentionToGPU.cpp - flash attention as gpu.launch -------===//
//
// Implements cp-lower-local-attention-to-gpu: cp.buffer.local_attention
// becomes one gpu.launch, a block per (query tile, head, batch) with
// R threads per query row, K/V tiles staged in workgroup memory, online
// softmax in registers and row reductions by warp shuffles. The design is
// docs/Lowering.md §6; tile ranges and masks come from StructuredMask.h,
// as in the CPU lowering. cp.buffer.local_attention_grad is
// cp-lower-local-attention-grad-to-gpu's (LowerLocalAttentionGradToGPU.cpp).
//
//===----------------------------------------------------------------------===//

#include "ForwardKernelCommon.h"
#include "ScoreTile.h"
#include "KernelChoice.h"
#include "MmaAttentionKernel.h"
#include "cp/Conversion/AttentionCommon/AttentionBuilder.h"
#include "cp/Conversion/AttentionCommon/LowerBufferAttentions.h"
#include "cp/Conversion/AttentionCommon/ModFunctions.h"
#include "cp/Conversion/Passes.h"
#include "cp/Dialect/CP/Analysis/StructuredMask.h"
#include "cp/Dialect/CP/IR/CPOps.h"
#include "cp/Dialect/CP/IR/KernelOperands.h"
#include "cp/Dialect/CP/IR/ModRegions.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

namespace mlir {
namespace cp {
#define GEN_PASS_DEF_LOWERLOCALATTENTIONTOGPUPASS
#include "cp/Conversion/Passes.h.inc"
} // namespace cp
} // namespace mlir

using namespace mlir;
using namespace mlir::cp;
using mlir::cp::detail::ForwardShape;
using mlir::cp::detail::KernelChoice;
using mlir::cp::detail::KernelOptions;
using mlir::cp::detail::parseKernelOptions;
using mlir::cp::detail::forwardShapeOf;
using mlir::cp::detail::RowEnd;
using mlir::cp::detail::rowEnd;
using mlir::cp::detail::ScoreTile;

namespace {

struct GpuTiles {
  int64_t tileQ, tileKv, threadsPerRow;
  int64_t threads() const { return tileQ * threadsPerRow; }
  int64_t keysPerThread() const { return tileKv / threadsPerRow; }
};

/// Workgroup memory of one block, all f32: the scaled query tile Qs
/// [Tq, D+1], the key and value tiles Ks [Tk, D+1] and Vs [Tk, Dv'], and
/// the probabilities Ps [Tq, Tk+1]. The extra column keeps rows read by
/// neighbouring lanes in different banks; Dv' pads Dv to whole threads.
struct Workgroup {
  Value qs, ks, vs, ps;
};

int64_t workgroupBytes(const GpuTiles &t, int64_t d, int64_t dvPadded) {
  return 4 * (t.tileQ * (d + 1) + t.tileKv * (d + 1) + t.tileKv * dvPadded +
              t.tileQ * (t.tileKv + 1));
}

class GpuAttentionLowering : cp::detail::AttentionBuilder {
public:
  GpuAttentionLowering(BufferLocalAttentionOp op, const GpuTiles &tiles)
      : AttentionBuilder(op), op(op), t(tiles),
        headDim(op.getQuery().getType().getDimSize(3)),
        valueDim(op.getValue().getType().getDimSize(3)),
        valueCols(llvm::divideCeil(valueDim, t.threadsPerRow)) {}

  void build();

private:
  Value load(Value memref, ValueRange at) {
    return memref::LoadOp::create(b, loc, memref, at);
  }
  void store(Value v, Value memref, ValueRange at) {
    memref::StoreOp::create(b, loc, v, memref, at);
  }
  /// `inBounds ? loadF32(memref[at]) : otherwise`, never reading outside.
  Value guardedLoadF32(Value inBounds, Value memref, ValueRange at,
                       Value otherwise) {
    auto ifOp = scf::IfOp::create(
        b, loc, inBounds,
        [&](OpBuilder &, Location) {
          scf::YieldOp::create(b, loc, loadF32(memref, at));
        },
        [&](OpBuilder &, Location) {
          scf::YieldOp::create(b, loc, otherwise);
        });
    return ifOp.getResult(0);
  }
  /// Sum or max of `v` over the R threads of this query row (adjacent
  /// lanes of one warp), by butterfly shuffles.
  Value rowReduce(Value v, bool isMax) {
    for (int64_t offset = 1; offset < t.threadsPerRow; offset *= 2) {
      Value other = gpu::ShuffleOp::create(b, loc, v, offset, /*width=*/32,
                                           gpu::ShuffleMode::XOR)
                        .getShuffleResult();
      v = isMax ? fmax(v, other) : fadd(v, other);
    }
    return v;
  }

  /// Block-cooperative copy of `rows x cols` elements into workgroup memory:
  /// `value(i, j)` for i < validRows, else 0.
  void stage(Value tile, int64_t rows, int64_t cols, Value validRows,
             function_ref<Value(Value, Value)> value);
  void emitKernelBody(gpu::LaunchOp launch, const Workgroup &w);

  BufferLocalAttentionOp op;
  GpuTiles t;
  int64_t headDim, valueDim, valueCols;
  // Values computed on the host and used by the kernel.
  ForwardShape shape;
  // Values of the kernel (set by emitKernelBody).
  Value tid, threads, batch, head, kvHead;
};

void GpuAttentionLowering::stage(Value tile, int64_t rows, int64_t cols,
                                 Value validRows,
                                 function_ref<Value(Value, Value)> value) {
  Value zero = f32Const(0.0), colsV = idx(cols);
  loop(tid, idx(rows * cols), threads, [&](Value linear) {
    Value i = arith::DivUIOp::create(b, loc, linear, colsV);
    Value j = arith::RemUIOp::create(b, loc, linear, colsV);
    auto ifOp = scf::IfOp::create(
        b, loc, lessThan(i, validRows),
        [&](OpBuilder &, Location) {
          scf::YieldOp::create(b, loc, value(i, j));
        },
        [&](OpBuilder &, Location) { scf::YieldOp::create(b, loc, zero); });
    store(ifOp.getResult(0), tile, {i, j});
  });
}

void GpuAttentionLowering::emitKernelBody(gpu::LaunchOp launch,
                                          const Workgroup &w) {
  int64_t R = t.threadsPerRow, U = t.keysPerThread();
  tid = launch.getThreadIds().x;
  threads = idx(t.threads());
  Value row = arith::DivUIOp::create(b, loc, tid, idx(R));
  Value lane = arith::RemUIOp::create(b, loc, tid, idx(R));
  Value tileIndex = launch.getBlockIds().x;
  head = launch.getBlockIds().y;
  batch = launch.getBlockIds().z;
  kvHead = arith::DivUIOp::create(b, loc, head, shape.kvGroup);
  Value q0 = mul(tileIndex, idx(t.tileQ));
  Value validQ =
      arith::MinSIOp::create(b, loc, idx(t.tileQ), sub(shape.lq, q0));
  Value rowValid = lessThan(row, validQ);
  Value negInf = f32Const(-std::numeric_limits<double>::infinity());
  Value zero = f32Const(0.0);

  stage(w.qs, t.tileQ, headDim, validQ, [&](Value i, Value d) {
    return fmul(loadF32(op.getQuery(), {batch, head, add(q0, i), d}),
                shape.scale);
  });
  gpu::BarrierOp::create(b, loc);

  // The structured mask, narrowed by what a mask_mod is known to be.
  ModFunctions mods = modFunctionsOf(op);
  MaskAttr mask = mods.mask;
  Value globalHead = op.getHeadOffset() ? add(op.getHeadOffset(), head) : head;
  Value qFirst = add(op.getQOffset(), q0);
  Value qLast = sub(add(qFirst, validQ), idx(1));
  Value kvOffset = op.getKvOffset();
  Value tileKv = idx(t.tileKv);
  KeyTiles tiles = buildVisibleKeyTiles(b, loc, mask, qFirst, qLast, kvOffset,
                                        shape.lkv, tileKv);

  // A document mask skips a key tile whose segment ids all differ from the
  // query tile's: every thread computes both [min, max] ranges (the same
  // loads, so the branch is uniform over the block and its barriers hold).
  Value segments;
  std::pair<Value, Value> querySegments;
  if (mods.analysis.documentOperand) {
    segments = op.getModOperands()[*mods.analysis.documentOperand];
    querySegments = rangeOf(segments, qFirst, validQ);
  }

  SmallVector<Value> init{negInf, zero};
  init.append(valueCols, zero);
  auto keyTile = [&](Value kt, ValueRange carried) -> SmallVector<Value> {
    Value m = carried[0], l = carried[1];
    SmallVector<Value> acc(carried.drop_front(2));
    Value k0 = mul(kt, tileKv);
    Value rows = arith::MinSIOp::create(b, loc, tileKv, sub(shape.lkv, k0));
    stage(w.ks, t.tileKv, headDim, rows, [&](Value j, Value d) {
      return loadF32(op.getKey(), {batch, kvHead, add(k0, j), d});
    });
    Value dvValid = idx(valueDim);
    stage(
        w.vs, t.tileKv, valueCols * R, rows, [&](Value j, Value dv) {
          return guardedLoadF32(lessThan(dv, dvValid), op.getValue(),
                                {batch, kvHead, add(k0, j), dv}, zero);
        });
    gpu::BarrierOp::create(b, loc);

    // Scores of keys lane, lane + R, ... of this tile.
    SmallVector<Value> keys;
    for (int64_t u = 0; u < U; ++u)
      keys.push_back(add(lane, idx(u * R)));
    SmallVector<Value>
        scores(
            loop(idx(0), idx(headDim), idx(1), SmallVector<Value>(U, zero),
                 [&](Value d, ValueRange s) {
                   Value qd = load(w.qs, {row, d});
                   SmallVector<Value> next;
                   for (int64_t u = 0; u < U; ++u)
                     next.push_back(math::FmaOp::create(
                         b, loc, qd, load(w.ks, {keys[u], d}), s[u]));
                   return next;
                 }));
    Value kFirst = add(kvOffset, k0);
    Value cut = buildTileIsCut(b, loc, mask, tiles, kFirst,
                               sub(add(kFirst, rows), idx(1)));
    ScoreTile scoreTile = ScoreTile::of(op, mods, batch, head, globalHead, q0,
                                         qFirst, k0, kFirst, cut);
    for (int64_t u = 0; u < U; ++u)
      scores[u] = scoreTile.apply(b, loc, scores[u], row, keys[u], rowValid,
                                  lessThan(keys[u], rows));

    // Online softmax across the row's R threads.
    Value tileMax = scores[0];
    for (int64_t u = 1; u < U; ++u)
      tileMax = fmax(tileMax, scores[u]);
    Value newMax = fmax(m, rowReduce(tileMax, /*isMax=*/true));
    Value isNegInf = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                           newMax, negInf);
    Value safeMax = select(isNegInf, zero, newMax);
    Value alpha = exp(arith::SubFOp::create(b, loc, m, safeMax));
    Value partSum = zero;
    for (int64_t u = 0; u < U; ++u) {
      Value p = exp(arith::SubFOp::create(b, loc, scores[u], safeMax));
      partSum = fadd(partSum, p);
      store(p, w.ps, {row, keys[u]});
    }
    Value newSum = math::FmaOp::create(b, loc, l, alpha,
                                       rowReduce(partSum, /*isMax=*/false));
    gpu::BarrierOp::create(b, loc);

    // Value columns lane, lane + R, ... accumulate sum_j P[row, j] V[j].
    for (Value &a : acc)
      a = fmul(a, alpha);
    SmallVector<Value> cols;
    for (int64_t c = 0; c < valueCols; ++c)
      cols.push_back(add(lane, idx(c * R)));
    SmallVector<Value> accumulated(
        loop(
            idx(0), rows, idx(1), acc, [&](Value j, ValueRange a) {
              Value p = load(w.ps, {row, j});
              SmallVector<Value> next;
              for (int64_t c = 0; c < valueCols; ++c)
                next.push_back(math::FmaOp::create(
                    b, loc, p, load(w.vs, {j, cols[c]}), a[c]));
              return next;
            }));
    // The next tile overwrites Ks, Vs and Ps.
    gpu::BarrierOp::create(b, loc);
    SmallVector<Value> next{newMax, newSum};
    next.append(accumulated);
    return next;
  };
  ValueRange state =
      loop(tiles.first, tiles.end, idx(1), init,
           [&](Value kt, ValueRange carried) -> SmallVector<Value> {
             if (!segments)
               return keyTile(kt, carried);
             Value k0 = mul(kt, tileKv);
             Value rows =
                 arith::MinSIOp::create(b, loc, tileKv, sub(shape.lkv, k0));
             Value meet = rangesMeet(
                 querySegments, rangeOf(segments, add(kvOffset, k0), rows));
             auto ifOp = scf::IfOp::create(b, loc, TypeRange(carried), meet,
                                           /*withElseRegion=*/true);
             OpBuilder::InsertionGuard guard(b);
             b.setInsertionPointToStart(ifOp.thenBlock());
             scf::YieldOp::create(b, loc, keyTile(kt, carried));
             b.setInsertionPointToStart(ifOp.elseBlock());
             scf::YieldOp::create(b, loc, carried);
             return SmallVector<Value>(ifOp.getResults());
           });

  Value sink;
  if (Value sinks = op.getSinks())
    sink = memref::LoadOp::create(b, loc, sinks, ValueRange{head});
  RowEnd end = rowEnd(b, loc, state[0], state[1], sink);
  Type outElt = op.getOutput().getType().getElementType();
  scf::IfOp::create(b, loc, rowValid, [&](OpBuilder &, Location) {
    Value outRow = add(q0, row);
    for (int64_t c = 0; c < valueCols; ++c) {
      Value col = add(lane, idx(c * R));
      scf::IfOp::create(
          b, loc, lessThan(col, idx(valueDim)), [&](OpBuilder &, Location) {
            Value out = fmul(state[2 + c], end.inverseSum);
            if (outElt != f32)
              out = arith::TruncFOp::create(b, loc, outElt, out);
            store(out, op.getOutput(), {batch, head, outRow, col});
            scf::YieldOp::create(b, loc);
          });
    }
    if (Value lse = op.getLse()) {
      Value firstLane =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, idx(0));
      scf::IfOp::create(b, loc, firstLane, [&](OpBuilder &, Location) {
        store(end.lse, lse, {batch, head, outRow});
        scf::YieldOp::create(b, loc);
      });
    }
    scf::YieldOp::create(b, loc);
  });
}

void GpuAttentionLowering::build() {
  Value query = op.getQuery();
  shape = forwardShapeOf(b, loc, op);
  Value tiles = arith::CeilDivUIOp::create(b, loc, shape.lq, idx(t.tileQ));
  Value one = idx(1);

  auto workgroup = [&](int64_t rows, int64_t cols) {
    return MemRefType::get({rows, cols}, f32, MemRefLayoutAttrInterface(),
                           gpu::AddressSpaceAttr::get(
                               b.getContext(), gpu::AddressSpace::Workgroup));
  };
  int64_t R = t.threadsPerRow;
  SmallVector<Type> attributions{
      workgroup(t.tileQ, headDim + 1), workgroup(t.tileKv, headDim + 1),
      workgroup(t.tileKv, valueCols * R), workgroup(t.tileQ, t.tileKv + 1)};
  auto launch = gpu::LaunchOp::create(
      b, loc, tiles, dim(query, 1), dim(query, 0), idx(t.threads()), one, one,
      /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
      /*asyncDependencies=*/{}, attributions);
  ArrayRef<BlockArgument> wg = launch.getWorkgroupAttributions();
  Workgroup w{wg[0], wg[1], wg[2], wg[3]};
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&launch.getBody().front());
  emitKernelBody(launch, w);
  gpu::TerminatorOp::create(b, loc);
}

struct LowerLocalAttentionToGPUPass
    : public cp::impl::LowerLocalAttentionToGPUPassBase<
          LowerLocalAttentionToGPUPass> {
  using Base::Base;

  /// tile-kv, the option's or the largest that fits the workgroup budget.
  FailureOr<GpuTiles> tilesFor(BufferLocalAttentionOp op) {
    int64_t d = op.getQuery().getType().getDimSize(3);
    int64_t dv = op.getValue().getType().getDimSize(3);
    if (ShapedType::isDynamic(d) || ShapedType::isDynamic(dv))
      return op.emitOpError("needs static head dims D and Dv for the GPU "
                            "kernel's workgroup memory, got D = ")
             << (ShapedType::isDynamic(d) ? std::string("?")
                                          : std::to_string(d))
             << " and Dv = "
             << (ShapedType::isDynamic(dv) ? std::string("?")
                                           : std::to_string(dv));
    GpuTiles t{tileQ, tileKv, threadsPerRow};
    int64_t dvPadded = llvm::divideCeil(dv, t.threadsPerRow) * t.threadsPerRow;
    if (t.tileKv == 0) {
      t.tileKv = 64;
      while (t.tileKv > t.threadsPerRow &&
             workgroupBytes(t, d, dvPadded) > sharedMemoryBytes)
        t.tileKv /= 2;
    }
    int64_t bytes = workgroupBytes(t, d, dvPadded);
    if (bytes > sharedMemoryBytes)
      return op.emitOpError("needs ")
             << bytes << " bytes of workgroup memory for tile-q = " << t.tileQ
             << ", tile-kv = " << t.tileKv << ", D = " << d << ", Dv = " << dv
             << ", over the budget of "
             << static_cast<int64_t>(sharedMemoryBytes)
             << "; use a smaller tile-q or tile-kv";
    return t;
  }

  void runOnOperation() override {
    int64_t r = threadsPerRow;
    if (r <= 0 || r > 32 || (r & (r - 1)) != 0) {
      getOperation()->emitError("cp-lower-local-attention-to-gpu: "
                                "threads-per-row must be a power of two "
                                "between 1 and 32, got ")
          << r;
      return signalPassFailure();
    }
    // Row reductions shuffle over whole warps: blocks are whole warps.
    int64_t tq = tileQ, tkv = tileKv;
    if (tq <= 0 || tq * r > 1024 || (tq * r) % 32 != 0 || tkv < 0 ||
        (tkv != 0 && tkv % r != 0)) {
      getOperation()->emitError("cp-lower-local-attention-to-gpu: need "
                                "tile-q * threads-per-row a multiple of 32 "
                                "and at most 1024 (got ")
          << tq << " * " << r
          << "), and tile-kv a multiple of threads-per-row (got " << tkv << ")";
      return signalPassFailure();
    }
    FailureOr<KernelOptions> kernelOptions = parseKernelOptions(
        getOperation(), getArgument(), kernel, chip);
    if (failed(kernelOptions))
      return signalPassFailure();
    KernelChoice choice = kernelOptions->choice;
    auto lowerOne = [&](BufferLocalAttentionOp op) -> LogicalResult {
      // The kernel is built for dynamic offsets (KernelOperands.h), so that
      // the launches of ops that differ only in their views' offsets are
      // equal kernels; the tensor-core kernel's alignment is checked on the
      // static offsets first.
      std::string reason = choice == KernelChoice::simt
                               ? "kernel=simt"
                               : cp::detail::mmaKernelUnsupportedReason(op);
      OpBuilder b(op);
      castToKernelOperandTypes(b, op);
      if (reason.empty()) {
        cp::detail::lowerLocalAttentionToMmaKernel(op);
        return success();
      }
      if (choice == KernelChoice::mma)
        op.emitRemark("uses the SIMT kernel, not kernel=mma: ") << reason;
      FailureOr<GpuTiles> tiles = tilesFor(op);
      if (failed(tiles))
        return failure();
      GpuAttentionLowering(op, *tiles).build();
      return success();
    };
    if (failed(lowerBufferAttentions(getOperation(), lowerOne, nullptr)))
      signalPassFailure();
  }
};

} // namespace
