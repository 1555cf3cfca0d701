//===- BufferizableOpInterfaceImpl.cpp - bufferization of cp ops ----------===//
//
// cp.local_attention, its gradient and the collectives bufferize into their cp.buffer.*
// forms, writing a fresh allocation (a collective's receive buffer never
// aliases its send buffer). cp.merge and cp.offset_mask are elementwise and
// bufferize into linalg.generic on memrefs.
//
//===----------------------------------------------------------------------===//

#include "cp/Dialect/CP/Extensions/BufferizableOpInterfaceImpl.h"
#include "OutlineModRegion.h"
#include "cp/Dialect/CP/Analysis/StructuredMask.h"
#include "cp/Dialect/CP/IR/CPOps.h"
#include "cp/Dialect/CP/IR/ModRegions.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Dialect.h"

using namespace mlir;
using namespace mlir::bufferization;
using namespace mlir::cp;

namespace {

/// A fresh buffer for the tensor `result`; `dimOf(d)` gives dynamic dim `d`.
FailureOr<Value> allocateResult(RewriterBase &rewriter, Location loc,
                                Value result,
                                const BufferizationOptions &options,
                                function_ref<Value(int64_t)> dimOf) {
  auto type = cast<RankedTensorType>(result.getType());
  SmallVector<Value> dynamicDims;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      dynamicDims.push_back(dimOf(d));
  auto memrefType = cast<MemRefType>(getMemRefTypeWithStaticIdentityLayout(
      type, options.defaultMemorySpaceFn(type).value_or(Attribute())));
  return options.createAlloc(rewriter, loc, memrefType, dynamicDims);
}

Value dimOfBuffer(RewriterBase &rewriter, Location loc, Value buffer,
                  int64_t d) {
  return memref::DimOp::create(rewriter, loc, buffer, d);
}

/// Buffers for every tensor operand of `op`, in operand order (non-tensor
/// operands are passed through).
FailureOr<SmallVector<Value>>
operandBuffers(RewriterBase &rewriter, Operation *op,
               const BufferizationOptions &options,
               const BufferizationState &state) {
  SmallVector<Value> buffers;
  for (Value operand : op->getOperands()) {
    if (!isa<TensorType>(operand.getType())) {
      buffers.push_back(operand);
      continue;
    }
    FailureOr<Value> buffer = getBuffer(rewriter, operand, options, state);
    if (failed(buffer))
      return failure();
    buffers.push_back(*buffer);
  }
  return buffers;
}

/// Shared by every cp op: tensor operands are read and not written, results
/// are new allocations that alias nothing. `bufferize` hands the concrete
/// model the op's operands as buffers (an adaptor over them), with the
/// insertion point before the op; the model's `bufferizeOnBuffers` builds
/// the buffer form and replaces the op.
template <typename ConcreteModel, typename ConcreteOp>
struct AllocatingOpModel
    : public BufferizableOpInterface::ExternalModel<ConcreteModel, ConcreteOp> {
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    rewriter.setInsertionPoint(op);
    FailureOr<SmallVector<Value>> buffers =
        operandBuffers(rewriter, op, options, state);
    if (failed(buffers))
      return failure();
    auto concrete = cast<ConcreteOp>(op);
    return static_cast<const ConcreteModel *>(this)->bufferizeOnBuffers(
        concrete, typename ConcreteOp::Adaptor(*buffers, concrete), rewriter,
        options);
  }
  bool bufferizesToMemoryRead(Operation *, OpOperand &,
                              const AnalysisState &) const {
    return true;
  }
  bool bufferizesToMemoryWrite(Operation *, OpOperand &,
                               const AnalysisState &) const {
    return false;
  }
  bool bufferizesToAllocation(Operation *, Value) const { return true; }
  AliasingValueList getAliasingValues(Operation *, OpOperand &,
                                      const AnalysisState &) const {
    return {};
  }
  FailureOr<BufferLikeType> getBufferType(Operation *, Value value,
                                          const BufferizationOptions &options,
                                          const BufferizationState &,
                                          SmallVector<Value> &) const {
    auto type = cast<TensorType>(value.getType());
    return cast<BufferLikeType>(getMemRefTypeWithStaticIdentityLayout(
        type, options.defaultMemorySpaceFn(type).value_or(Attribute())));
  }
};

/// The mask_mod / score_mod regions of `tensorOp` become private functions
/// reading the mod operands' buffers, named by `bufferOp`.
template <typename TensorOp, typename BufferOp>
void outlineModRegionsOnto(RewriterBase &rewriter, TensorOp tensorOp,
                           BufferOp bufferOp, ValueRange modBuffers) {
  MLIRContext *ctx = tensorOp->getContext();
  TypeRange modTypes = modBuffers.getTypes();
  if (!tensorOp.getMaskMod().empty())
    bufferOp.setMaskModAttr(FlatSymbolRefAttr::get(
        outlineModRegion(rewriter, tensorOp.getMaskMod(), tensorOp,
                         "cp_mask_mod", modArgumentTypes(ctx, true, modTypes))
            .getSymNameAttr()));
  if (!tensorOp.getScoreMod().empty())
    bufferOp.setScoreModAttr(FlatSymbolRefAttr::get(
        outlineModRegion(rewriter, tensorOp.getScoreMod(), tensorOp,
                         "cp_score_mod", modArgumentTypes(ctx, false, modTypes))
            .getSymNameAttr()));
}

//===----------------------------------------------------------------------===//
// cp.local_attention -> cp.buffer.local_attention
//===----------------------------------------------------------------------===//

struct LocalAttentionModel
    : public AllocatingOpModel<LocalAttentionModel, LocalAttentionOp> {
  LogicalResult bufferizeOnBuffers(LocalAttentionOp attention,
                                   LocalAttentionOp::Adaptor in,
                                   RewriterBase &rewriter,
                                   const BufferizationOptions &options) const {
    Operation *op = attention;
    Location loc = op->getLoc();
    // Output [B, H, Lq, Dv] and lse [B, H, Lq] take their sizes from Q and V.
    auto fromQueryAndValue = [&](int64_t d) {
      return d == 3 ? dimOfBuffer(rewriter, loc, in.getValue(), 3)
                    : dimOfBuffer(rewriter, loc, in.getQuery(), d);
    };
    FailureOr<Value> output = allocateResult(
        rewriter, loc, attention.getOutput(), options, fromQueryAndValue);
    if (failed(output))
      return failure();
    Value lse;
    if (attention.getLse()) {
      FailureOr<Value> lseBuffer = allocateResult(
          rewriter, loc, attention.getLse(), options, fromQueryAndValue);
      if (failed(lseBuffer))
        return failure();
      lse = *lseBuffer;
    }
    auto buffered = BufferLocalAttentionOp::create(
        rewriter, loc, in.getQuery(), in.getKey(), in.getValue(),
        in.getQOffset(), in.getKvOffset(), in.getHeadOffset(),
        in.getExplicitMask(), in.getSinks(), in.getModOperands(), *output,
        lse, attention.getMaskAttr(), attention.getScaleAttr(),
        /*mask_mod=*/FlatSymbolRefAttr(), /*score_mod=*/FlatSymbolRefAttr());
    outlineModRegionsOnto(rewriter, attention, buffered, in.getModOperands());
    SmallVector<Value> results{*output};
    if (lse)
      results.push_back(lse);
    replaceOpWithBufferizedValues(rewriter, op, results);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// cp.local_attention_grad -> cp.buffer.local_attention_grad
//===----------------------------------------------------------------------===//

struct LocalAttentionGradModel
    : public AllocatingOpModel<LocalAttentionGradModel, LocalAttentionGradOp> {
  LogicalResult bufferizeOnBuffers(LocalAttentionGradOp grad,
                                   LocalAttentionGradOp::Adaptor in,
                                   RewriterBase &rewriter,
                                   const BufferizationOptions &options) const {
    Operation *op = grad;
    Location loc = op->getLoc();
    // Each gradient takes its sizes from its operand.
    SmallVector<Value> results;
    for (auto [result, operand] :
         {std::pair(grad.getGradQuery(), in.getQuery()),
          std::pair(grad.getGradKey(), in.getKey()),
          std::pair(grad.getGradValue(), in.getValue())}) {
      FailureOr<Value> buffer =
          allocateResult(rewriter, loc, result, options, [&](int64_t d) {
            return dimOfBuffer(rewriter, loc, operand, d);
          });
      if (failed(buffer))
        return failure();
      results.push_back(*buffer);
    }
    auto buffered = BufferLocalAttentionGradOp::create(
        rewriter, loc, in.getQuery(), in.getKey(), in.getValue(),
        in.getOutput(), in.getLse(), in.getGradOutput(), in.getQOffset(),
        in.getKvOffset(), in.getHeadOffset(), in.getExplicitMask(),
        in.getModOperands(), results[0], results[1], results[2],
        grad.getMaskAttr(), grad.getScaleAttr(),
        /*mask_mod=*/FlatSymbolRefAttr(), /*score_mod=*/FlatSymbolRefAttr());
    outlineModRegionsOnto(rewriter, grad, buffered, in.getModOperands());
    replaceOpWithBufferizedValues(rewriter, op, results);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Collectives -> cp.buffer.<collective>
//===----------------------------------------------------------------------===//

/// A collective's result is a fresh buffer shaped like its input, except
/// along the axes it reshapes (all_gather, all_to_all, reduce_scatter).
template <typename TensorOp, typename BufferOp>
struct CollectiveModel
    : public AllocatingOpModel<CollectiveModel<TensorOp, BufferOp>, TensorOp> {
  LogicalResult bufferizeOnBuffers(TensorOp collective,
                                   typename TensorOp::Adaptor in,
                                   RewriterBase &rewriter,
                                   const BufferizationOptions &options) const {
    Operation *op = collective;
    Location loc = op->getLoc();
    Value input = in.getInput();
    int64_t groupSize = collective.getGroupSize();
    auto resultType = cast<RankedTensorType>(collective.getType());
    auto inputType = cast<RankedTensorType>(collective.getInput().getType());
    for (int64_t d = 0; d < resultType.getRank(); ++d)
      if (resultType.isDynamicDim(d) && !inputType.isDynamicDim(d))
        return op->emitOpError("cannot bufferize: result dim ")
               << d << " is dynamic but input dim " << d
               << " is static; use a static result type";
    if (ShapedType::isDynamic(groupSize) &&
        llvm::any_of(llvm::seq<int64_t>(0, resultType.getRank()),
                     [&](int64_t d) {
                       return resultType.isDynamicDim(d) && reshapes(op, d);
                     }))
      return op->emitOpError("cannot bufferize a dynamic result size along a "
                             "reshaped axis when the group size is dynamic");
    FailureOr<Value> output = allocateResult(
        rewriter, loc, collective.getResult(), options, [&](int64_t d) {
          Value dim = dimOfBuffer(rewriter, loc, input, d);
          return reshapedDim(rewriter, loc, op, d, dim, groupSize);
        });
    if (failed(output))
      return failure();
    SmallVector<NamedAttribute> attrs(op->getAttrs());
    BufferOp::create(rewriter, loc, TypeRange{}, ValueRange{input, *output},
                     attrs);
    replaceOpWithBufferizedValues(rewriter, op, *output);
    return success();
  }

  /// Whether the collective changes the size of dim `d`.
  static bool reshapes(Operation *op, int64_t d) {
    if (auto gather = dyn_cast<AllGatherOp>(op))
      return d == static_cast<int64_t>(gather.getGatherAxis());
    if (auto scatter = dyn_cast<ReduceScatterOp>(op))
      return d == static_cast<int64_t>(scatter.getScatterAxis());
    if (auto allToAll = dyn_cast<AllToAllOp>(op))
      return allToAll.getSplitAxis() != allToAll.getConcatAxis() &&
             (d == static_cast<int64_t>(allToAll.getSplitAxis()) ||
              d == static_cast<int64_t>(allToAll.getConcatAxis()));
    return false;
  }

  /// The result size of dim `d` from the input's size `dim`.
  static Value reshapedDim(RewriterBase &rewriter, Location loc, Operation *op,
                           int64_t d, Value dim, int64_t groupSize) {
    if (!reshapes(op, d))
      return dim;
    Value p = arith::ConstantIndexOp::create(rewriter, loc, groupSize);
    auto allToAll = dyn_cast<AllToAllOp>(op);
    if ((allToAll && d == static_cast<int64_t>(allToAll.getSplitAxis())) ||
        isa<ReduceScatterOp>(op))
      return arith::DivUIOp::create(rewriter, loc, dim, p);
    return arith::MulIOp::create(rewriter, loc, dim, p);
  }
};

//===----------------------------------------------------------------------===//
// cp.merge and cp.offset_mask -> linalg.generic on memrefs
//===----------------------------------------------------------------------===//

/// `x`, or 0 where `x` is -inf: a row whose scores are all masked then
/// contributes exp(-inf - 0) = 0 instead of exp(-inf + inf) = NaN.
Value zeroIfNegInf(OpBuilder &b, Location loc, Value x) {
  Type type = x.getType();
  Value negInf = arith::ConstantOp::create(
      b, loc, type,
      b.getFloatAttr(type, -std::numeric_limits<double>::infinity()));
  Value zero =
      arith::ConstantOp::create(b, loc, type, b.getFloatAttr(type, 0.0));
  Value isNegInf =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, x, negInf);
  return arith::SelectOp::create(b, loc, isNegInf, zero, x);
}

Value toF32(OpBuilder &b, Location loc, Value x) {
  if (x.getType().isF32())
    return x;
  return arith::ExtFOp::create(b, loc, b.getF32Type(), x);
}

struct MergeModel : public AllocatingOpModel<MergeModel, MergeOp> {
  LogicalResult bufferizeOnBuffers(MergeOp merge, MergeOp::Adaptor in,
                                   RewriterBase &rewriter,
                                   const BufferizationOptions &options) const {
    Operation *op = merge;
    Location loc = op->getLoc();
    auto fromOutputA = [&](int64_t d) {
      return dimOfBuffer(rewriter, loc, in.getOutA(), d);
    };
    FailureOr<Value> output =
        allocateResult(rewriter, loc, merge.getOutput(), options, fromOutputA);
    FailureOr<Value> lse =
        allocateResult(rewriter, loc, merge.getLse(), options, fromOutputA);
    if (failed(output) || failed(lse))
      return failure();

    int64_t rank = merge.getOutput().getType().getRank();
    MLIRContext *ctx = op->getContext();
    // lse = m + log(exp(a - m) + exp(b - m)), m = max(a, b) (0 while -inf).
    SmallVector<utils::IteratorType> rowIterators(
        rank - 1, utils::IteratorType::parallel);
    AffineMap rowIdentity = AffineMap::getMultiDimIdentityMap(rank - 1, ctx);
    linalg::GenericOp::create(
        rewriter, loc, ValueRange{in.getLseA(), in.getLseB()}, ValueRange{*lse},
        SmallVector<AffineMap>(3, rowIdentity), rowIterators,
        [](OpBuilder &b, Location loc, ValueRange args) {
          Value m = zeroIfNegInf(
              b, loc, arith::MaximumFOp::create(b, loc, args[0], args[1]));
          Value ea = math::ExpOp::create(
              b, loc, arith::SubFOp::create(b, loc, args[0], m));
          Value eb = math::ExpOp::create(
              b, loc, arith::SubFOp::create(b, loc, args[1], m));
          Value sum = arith::AddFOp::create(b, loc, ea, eb);
          Value lse = arith::AddFOp::create(b, loc, m,
                                            math::LogOp::create(b, loc, sum));
          linalg::YieldOp::create(b, loc, lse);
        });
    // output = exp(lse_a - lse) * out_a + exp(lse_b - lse) * out_b.
    AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, ctx);
    AffineMap row = identity.dropResult(rank - 1);
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    linalg::GenericOp::create(
        rewriter, loc,
        ValueRange{in.getOutA(), in.getLseA(), in.getOutB(), in.getLseB(),
                   *lse},
        ValueRange{*output},
        SmallVector<AffineMap>{identity, row, identity, row, row, identity},
        iterators, [](OpBuilder &b, Location loc, ValueRange args) {
          Value lse = zeroIfNegInf(b, loc, args[4]);
          auto weighted = [&](Value out, Value partLse) {
            Value w = math::ExpOp::create(
                b, loc, arith::SubFOp::create(b, loc, partLse, lse));
            return arith::MulFOp::create(b, loc, w, toF32(b, loc, out));
          };
          Value sum = arith::AddFOp::create(b, loc, weighted(args[0], args[1]),
                                            weighted(args[2], args[3]));
          Type outType = args[5].getType();
          if (!outType.isF32())
            sum = arith::TruncFOp::create(b, loc, outType, sum);
          linalg::YieldOp::create(b, loc, sum);
        });
    replaceOpWithBufferizedValues(rewriter, op, {*output, *lse});
    return success();
  }
};

struct OffsetMaskModel
    : public AllocatingOpModel<OffsetMaskModel, OffsetMaskOp> {
  LogicalResult bufferizeOnBuffers(OffsetMaskOp maskOp, OffsetMaskOp::Adaptor,
                                   RewriterBase &rewriter,
                                   const BufferizationOptions &options) const {
    Operation *op = maskOp;
    Location loc = op->getLoc();
    if (!maskOp.getType().hasStaticShape())
      return op->emitOpError("cannot bufferize a mask of dynamic shape ")
             << maskOp.getType();
    FailureOr<Value> buffer = allocateResult(
        rewriter, loc, maskOp.getResult(), options,
        [](int64_t) -> Value { llvm_unreachable("static shape"); });
    if (failed(buffer))
      return failure();
    MaskAttr mask = maskOp.getMask();
    Value qOffset = maskOp.getQOffset(), kvOffset = maskOp.getKvOffset();
    linalg::GenericOp::create(
        rewriter, loc, ValueRange{}, ValueRange{*buffer},
        AffineMap::getMultiDimIdentityMap(2, op->getContext()),
        SmallVector<utils::IteratorType>(2, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location loc, ValueRange) {
          Value q = arith::AddIOp::create(b, loc, qOffset,
                                          linalg::IndexOp::create(b, loc, 0));
          Value k = arith::AddIOp::create(b, loc, kvOffset,
                                          linalg::IndexOp::create(b, loc, 1));
          linalg::YieldOp::create(b, loc, buildMaskAllows(b, loc, mask, q, k));
        });
    replaceOpWithBufferizedValues(rewriter, op, *buffer);
    return success();
  }
};

/// cp.attention (and its gradient) has no buffer form: a scheme must turn it
/// into collectives and local attention first. Saying so beats "op was not bufferized".
template <typename ShardedOp>
struct AttentionModel
    : public AllocatingOpModel<AttentionModel<ShardedOp>, ShardedOp> {
  LogicalResult bufferize(Operation *op, RewriterBase &,
                          const BufferizationOptions &,
                          BufferizationState &) const {
    return op->emitOpError("has no buffer form: apply a CP scheme first "
                           "(cp-apply-scheme, or cp-lower-to-cpu{scheme=...})");
  }
};

} // namespace

void mlir::cp::registerBufferizableOpInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, CPDialect *) {
    AttentionOp::attachInterface<AttentionModel<AttentionOp>>(*ctx);
    AttentionGradOp::attachInterface<AttentionModel<AttentionGradOp>>(*ctx);
    LocalAttentionOp::attachInterface<LocalAttentionModel>(*ctx);
    LocalAttentionGradOp::attachInterface<LocalAttentionGradModel>(*ctx);
    AllGatherOp::attachInterface<
        CollectiveModel<AllGatherOp, BufferAllGatherOp>>(*ctx);
    ReduceScatterOp::attachInterface<
        CollectiveModel<ReduceScatterOp, BufferReduceScatterOp>>(*ctx);
    AllToAllOp::attachInterface<CollectiveModel<AllToAllOp, BufferAllToAllOp>>(
        *ctx);
    ExchangeOp::attachInterface<CollectiveModel<ExchangeOp, BufferExchangeOp>>(
        *ctx);
    ShiftOp::attachInterface<CollectiveModel<ShiftOp, BufferShiftOp>>(*ctx);
    RelayoutOp::attachInterface<CollectiveModel<RelayoutOp, BufferRelayoutOp>>(
        *ctx);
    MergeOp::attachInterface<MergeModel>(*ctx);
    OffsetMaskOp::attachInterface<OffsetMaskModel>(*ctx);
    ctx->loadDialect<linalg::LinalgDialect, math::MathDialect,
                     memref::MemRefDialect>();
  });
}
