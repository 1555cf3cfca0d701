//===- LowerLocalAttentionGradToGPU.cpp - attention backward as gpu.launch ===//
//
// Implements cp-lower-local-attention-grad-to-gpu: every
// cp.buffer.local_attention_grad becomes GPU launches that recompute the
// probabilities from the forward's log-sum-exp, as the CPU backward does
// (docs/Training.md §4), and never store an Lq x Lkv buffer. kernel=mma is
// the tensor-core backward of MmaAttentionGradKernel.cpp; what it cannot
// take, and kernel=simt, gets the two SIMT kernels of this file:
//
//   dK/dV  a block per (key tile, KV head, batch), a thread per key j: over
//          the group's query heads and the queries that may see j, dV_j +=
//          P dO_i and dK_j += dT Q_i, in per-thread f32 accumulators. Each
//          dK/dV row has one writer: no atomics, no reduction across
//          blocks.
//   dQ     a block per (query tile, head, batch), a thread per query i:
//          over the keys i may see, dQ_i += dT K_j.
//
// with P = exp(s - lse_i), dT = P (dP - D_i) m'(s) scale, dP = dO_i . V_j
// and D_i = rowsum(dO_i o O_i). Structured masks bound each thread's loop
// (StructuredMask's visible key and query ranges); explicit masks, biases,
// mask_mod and score_mod (with its derivative) are evaluated per pair as in
// the forward kernel.
//
//===----------------------------------------------------------------------===//

#include "KernelChoice.h"
#include "MmaAttentionGradKernel.h"
#include "cp/Conversion/AttentionCommon/AttentionBuilder.h"
#include "cp/Conversion/AttentionCommon/LowerBufferAttentions.h"
#include "cp/Conversion/AttentionCommon/ModFunctions.h"
#include "cp/Conversion/Passes.h"
#include "cp/Dialect/CP/IR/KernelOperands.h"
#include "cp/Dialect/CP/Analysis/StructuredMask.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cmath>
#include <limits>

namespace mlir {
namespace cp {
#define GEN_PASS_DEF_LOWERLOCALATTENTIONGRADTOGPUPASS
#include "cp/Conversion/Passes.h.inc"
} // namespace cp
} // namespace mlir

using namespace mlir;
using namespace mlir::cp;
using namespace mlir::cp::detail;

namespace {

class GpuAttentionGradLowering : cp::detail::AttentionBuilder {
public:
  GpuAttentionGradLowering(BufferLocalAttentionGradOp op, int64_t threads)
      : AttentionBuilder(op), op(op), threads(threads),
        headDim(op.getQuery().getType().getDimSize(3)),
        valueDim(op.getValue().getType().getDimSize(3)),
        mods(modFunctionsOf(op)) {}

  void build();

private:
  /// What one (query, key) pair contributes: the probability P and
  /// dT = P (dP - D_i) m'(s) scale.
  struct PairTerms {
    Value p, dt;
  };

  Value fma(Value x, Value y, Value z) {
    return math::FmaOp::create(b, loc, x, y, z);
  }
  Value maxI(Value x, Value y) { return arith::MaxSIOp::create(b, loc, x, y); }
  Value minI(Value x, Value y) { return arith::MinSIOp::create(b, loc, x, y); }
  /// Runs `body` when `condition` holds.
  void when(Value condition, function_ref<void()> body) {
    scf::IfOp::create(b, loc, condition, [&](OpBuilder &, Location) {
      body();
      scf::YieldOp::create(b, loc);
    });
  }

  /// sum_d x[d] * y[d] over `n` elements.
  Value dot(int64_t n, function_ref<Value(Value)> x,
            function_ref<Value(Value)> y) {
    return loop(idx(0), idx(n), idx(1), {f32Const(0.0)},
                [&](Value d, ValueRange acc) -> SmallVector<Value> {
                  return {fma(x(d), y(d), acc[0])};
                })[0];
  }
  /// D_i = rowsum(dO_i o O_i).
  Value rowDelta(Value batch, Value head, Value i) {
    return dot(
        valueDim,
        [&](Value c) {
          return loadF32(op.getGradOutput(), {batch, head, i, c});
        },
        [&](Value c) { return loadF32(op.getOutput(), {batch, head, i, c}); });
  }
  PairTerms pairTerms(Value batch, Value head, Value kvHead, Value i, Value j,
                      Value delta);
  /// [first, end) of local rows whose global positions (local + offset)
  /// lie in `range`, clipped to [0, extent).
  std::pair<Value, Value> localRows(KeyRange range, Value offset,
                                    Value extent) {
    Value first = idx(0), end = extent;
    if (range.first)
      first = maxI(first, sub(range.first, offset));
    if (range.last)
      end = minI(end, add(sub(range.last, offset), idx(1)));
    return {first, maxI(first, end)};
  }
  /// A gpu.launch of `threads` threads per block with f32 private arrays of
  /// `privateSizes`; the builder is left at the start of its body.
  gpu::LaunchOp launch(Value gridX, Value gridY, Value gridZ,
                       ArrayRef<int64_t> privateSizes);
  void zero(Value array, int64_t n) {
    Value z = f32Const(0.0);
    loop(idx(0), idx(n), idx(1),
         [&](Value d) { memref::StoreOp::create(b, loc, z, array, d); });
  }
  /// Stores the f32 private array `array` of `n` values into row `at` of
  /// `out` (rounded to its element type).
  void storeRow(Value array, int64_t n, Value out, ValueRange at) {
    Type element = cast<MemRefType>(out.getType()).getElementType();
    loop(idx(0), idx(n), idx(1), [&](Value d) {
      Value v = memref::LoadOp::create(b, loc, array, d);
      if (element != f32)
        v = arith::TruncFOp::create(b, loc, element, v);
      SmallVector<Value> index(at);
      index.push_back(d);
      memref::StoreOp::create(b, loc, v, out, index);
    });
  }
  void emitKeyValueKernel();
  void emitQueryKernel();

  BufferLocalAttentionGradOp op;
  int64_t threads, headDim, valueDim;
  ModFunctions mods;
  // Host values the kernels use.
  Value lq, lkv, scale, kvGroup;
};

gpu::LaunchOp GpuAttentionGradLowering::launch(Value gridX, Value gridY,
                                               Value gridZ,
                                               ArrayRef<int64_t> privateSizes) {
  SmallVector<Type> privates;
  for (int64_t n : privateSizes)
    privates.push_back(MemRefType::get(
        {n}, f32, MemRefLayoutAttrInterface(),
        gpu::AddressSpaceAttr::get(b.getContext(),
                                   gpu::AddressSpace::Private)));
  Value one = idx(1);
  auto launchOp = gpu::LaunchOp::create(
      b, loc, gridX, gridY, gridZ, idx(threads), one, one,
      /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
      /*asyncDependencies=*/{}, /*workgroupAttributions=*/{}, privates);
  b.setInsertionPointToStart(&launchOp.getBody().front());
  return launchOp;
}

GpuAttentionGradLowering::PairTerms
GpuAttentionGradLowering::pairTerms(Value batch, Value head, Value kvHead,
                                    Value i, Value j, Value delta) {
  Value zero = f32Const(0.0);
  Value negInf = f32Const(-std::numeric_limits<double>::infinity());
  Value qPos = add(op.getQOffset(), i), kPos = add(op.getKvOffset(), j);
  Value globalHead = op.getHeadOffset() ? add(op.getHeadOffset(), head) : head;
  Value s = fmul(dot(
                     headDim,
                     [&](Value d) {
                       return loadF32(op.getQuery(), {batch, head, i, d});
                     },
                     [&](Value d) {
                       return loadF32(op.getKey(), {batch, kvHead, j, d});
                     }),
                 scale);
  SmallVector<Value> modArgs{batch, globalHead, qPos, kPos};
  llvm::append_range(modArgs, op.getModOperands());
  Value slope;
  if (mods.scoreMod) {
    SmallVector<Value> args{s};
    llvm::append_range(args, modArgs);
    std::tie(s, slope) = emitScoreModWithDerivative(b, mods.scoreMod, args);
  }
  Value allowed = arith::ConstantIntOp::create(b, loc, 1, 1);
  if (!mods.mask.isNone())
    allowed = buildMaskAllows(b, loc, mods.mask, qPos, kPos);
  if (mods.evaluatesMaskMod())
    allowed = andI(allowed, emitModFunction(b, mods.maskMod, modArgs));
  if (Value mask = op.getExplicitMask()) {
    auto maskType = cast<MemRefType>(mask.getType());
    SmallVector<Value> at;
    if (maskType.getRank() == 4) {
      auto broadcast = [&](int64_t d, Value x) {
        Value isOne = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                            dim(mask, d), idx(1));
        return select(isOne, idx(0), x);
      };
      at = {broadcast(0, batch), broadcast(1, head)};
    }
    at.append({i, j});
    if (maskType.getElementType().isInteger(1))
      allowed = andI(allowed, memref::LoadOp::create(b, loc, mask, at));
    else
      s = arith::AddFOp::create(b, loc, s, loadF32(mask, at));
  }
  // P = exp(s - lse), 0 where masked and for a row that saw nothing.
  Value lse = memref::LoadOp::create(b, loc, op.getLse(),
                                     ValueRange{batch, head, i});
  Value seen =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::ONE, lse, negInf);
  Value p = select(andI(allowed, seen),
                   math::ExpOp::create(b, loc,
                                       arith::SubFOp::create(b, loc, s, lse)),
                   zero);
  Value dp = dot(
      valueDim,
      [&](Value c) {
        return loadF32(op.getGradOutput(), {batch, head, i, c});
      },
      [&](Value c) { return loadF32(op.getValue(), {batch, kvHead, j, c}); });
  Value dt = fmul(fmul(p, arith::SubFOp::create(b, loc, dp, delta)), scale);
  if (slope) {
    // Where P = 0 the slope may not be finite; dT is 0 there.
    Value hidden =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, p, zero);
    dt = select(hidden, zero, fmul(dt, slope));
  }
  return {p, dt};
}

void GpuAttentionGradLowering::emitKeyValueKernel() {
  OpBuilder::InsertionGuard guard(b);
  Value tiles = arith::CeilDivUIOp::create(b, loc, lkv, idx(threads));
  gpu::LaunchOp kernel =
      launch(tiles, dim(op.getKey(), 1), dim(op.getKey(), 0),
             {headDim, valueDim});
  Value dk = kernel.getPrivateAttributions()[0];
  Value dv = kernel.getPrivateAttributions()[1];
  Value batch = kernel.getBlockIds().z, kvHead = kernel.getBlockIds().y;
  Value j = add(mul(kernel.getBlockIds().x, idx(threads)),
                kernel.getThreadIds().x);
  when(lessThan(j, lkv), [&] {
    zero(dk, headDim);
    zero(dv, valueDim);
    // The queries that may see key j.
    Value kPos = add(op.getKvOffset(), j);
    auto [first, end] =
        localRows(buildVisibleQueryRange(b, loc, mods.mask, kPos, kPos),
                  op.getQOffset(), lq);
    Value firstHead = mul(kvHead, kvGroup);
    loop(firstHead, add(firstHead, kvGroup), idx(1), [&](Value head) {
      loop(first, end, idx(1), [&](Value i) {
        PairTerms t =
            pairTerms(batch, head, kvHead, i, j, rowDelta(batch, head, i));
        loop(idx(0), idx(valueDim), idx(1), [&](Value c) {
          Value acc = memref::LoadOp::create(b, loc, dv, c);
          Value g = loadF32(op.getGradOutput(), {batch, head, i, c});
          memref::StoreOp::create(b, loc, fma(t.p, g, acc), dv, c);
        });
        loop(idx(0), idx(headDim), idx(1), [&](Value d) {
          Value acc = memref::LoadOp::create(b, loc, dk, d);
          Value q = loadF32(op.getQuery(), {batch, head, i, d});
          memref::StoreOp::create(b, loc, fma(t.dt, q, acc), dk, d);
        });
      });
    });
    storeRow(dk, headDim, op.getGradKey(), {batch, kvHead, j});
    storeRow(dv, valueDim, op.getGradValue(), {batch, kvHead, j});
  });
  gpu::TerminatorOp::create(b, loc);
}

void GpuAttentionGradLowering::emitQueryKernel() {
  OpBuilder::InsertionGuard guard(b);
  Value tiles = arith::CeilDivUIOp::create(b, loc, lq, idx(threads));
  gpu::LaunchOp kernel = launch(tiles, dim(op.getQuery(), 1),
                                dim(op.getQuery(), 0), {headDim});
  Value dq = kernel.getPrivateAttributions()[0];
  Value batch = kernel.getBlockIds().z, head = kernel.getBlockIds().y;
  Value kvHead = arith::DivUIOp::create(b, loc, head, kvGroup);
  Value i = add(mul(kernel.getBlockIds().x, idx(threads)),
                kernel.getThreadIds().x);
  when(lessThan(i, lq), [&] {
    zero(dq, headDim);
    Value delta = rowDelta(batch, head, i);
    // The keys query i may see.
    Value qPos = add(op.getQOffset(), i);
    auto [first, end] =
        localRows(buildVisibleKeyRange(b, loc, mods.mask, qPos, qPos),
                  op.getKvOffset(), lkv);
    loop(first, end, idx(1), [&](Value j) {
      PairTerms t = pairTerms(batch, head, kvHead, i, j, delta);
      loop(idx(0), idx(headDim), idx(1), [&](Value d) {
        Value acc = memref::LoadOp::create(b, loc, dq, d);
        Value k = loadF32(op.getKey(), {batch, kvHead, j, d});
        memref::StoreOp::create(b, loc, fma(t.dt, k, acc), dq, d);
      });
    });
    storeRow(dq, headDim, op.getGradQuery(), {batch, head, i});
  });
  gpu::TerminatorOp::create(b, loc);
}

void GpuAttentionGradLowering::build() {
  lq = dim(op.getQuery(), 2);
  lkv = dim(op.getKey(), 2);
  kvGroup = arith::DivUIOp::create(b, loc, dim(op.getQuery(), 1),
                                   dim(op.getKey(), 1));
  scale = f32Const(op.getScaleAttr()
                       ? op.getScaleAttr().getValueAsDouble()
                       : 1.0 / std::sqrt(static_cast<double>(headDim)));
  emitKeyValueKernel();
  emitQueryKernel();
}


/// Emits the SIMT dK/dV and dQ kernels of `op` before it, `threadsPerBlock`
/// threads per block. Fails with a diagnostic on the op when D or Dv is
/// dynamic.
LogicalResult lowerToSimtKernels(BufferLocalAttentionGradOp op,
                                 int64_t threadsPerBlock) {
  int64_t d = op.getQuery().getType().getDimSize(3);
  int64_t dv = op.getValue().getType().getDimSize(3);
  if (ShapedType::isDynamic(d) || ShapedType::isDynamic(dv))
    return op.emitOpError("needs static head dims D and Dv for the GPU "
                          "backward's per-thread accumulators, got D = ")
           << (ShapedType::isDynamic(d) ? std::string("?") : std::to_string(d))
           << " and Dv = "
           << (ShapedType::isDynamic(dv) ? std::string("?")
                                         : std::to_string(dv));
  GpuAttentionGradLowering(op, threadsPerBlock).build();
  return success();
}

struct LowerLocalAttentionGradToGPUPass
    : public cp::impl::LowerLocalAttentionGradToGPUPassBase<
          LowerLocalAttentionGradToGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    if (simtThreads <= 0 || simtThreads > 1024 || simtThreads % 32 != 0) {
      getOperation()->emitError(getArgument())
          << ": simt-threads must be a multiple of 32 between 32 and 1024, "
             "got "
          << static_cast<int64_t>(simtThreads);
      return signalPassFailure();
    }
    if (dq != "atomic" && dq != "recompute") {
      getOperation()->emitError(getArgument())
          << ": dq must be atomic or recompute, got '" << dq << "'";
      return signalPassFailure();
    }
    GradQueryMode mode =
        dq == "atomic" ? GradQueryMode::atomic : GradQueryMode::recompute;
    FailureOr<KernelOptions> options =
        parseKernelOptions(getOperation(), getArgument(), kernel, chip);
    if (failed(options))
      return signalPassFailure();
    auto lowerGrad = [&](BufferLocalAttentionGradOp op) -> LogicalResult {
      // Kernels for dynamic offsets, alignment checked on the static ones
      // first (as in cp-lower-local-attention-to-gpu).
      std::string reason =
          options->choice == KernelChoice::simt
              ? "kernel=simt"
              : mmaGradKernelUnsupportedReason(op, options->capability, mode);
      OpBuilder b(op);
      castToKernelOperandTypes(b, op);
      if (reason.empty()) {
        lowerLocalAttentionGradToMmaKernels(op, mode);
        return success();
      }
      if (options->choice == KernelChoice::mma)
        op.emitRemark("uses the SIMT backward, not kernel=mma: ") << reason;
      return lowerToSimtKernels(op, simtThreads);
    };
    if (failed(lowerBufferAttentions(getOperation(), nullptr, lowerGrad)))
      signalPassFailure();
  }
};

} // namespace
