//===- AttentionOps.cpp - the attention ops -------------------------------===//
//
// Verifiers and canonicalizations of cp.attention, cp.local_attention (tensor
// and buffer forms), cp.offset_mask and cp.merge. The gradient ops are in
// AttentionGradOps.cpp.
//
//===----------------------------------------------------------------------===//

#include "AttentionVerification.h"
#include "OpVerification.h"
#include "cp/Dialect/CP/IR/CPOps.h"
#include "cp/Dialect/CP/IR/ModRegions.h"
#include "cp/Dialect/CP/IR/SchemeConstraints.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::cp;
using mlir::cp::detail::isStatic;
using mlir::cp::detail::knownDifferent;
using mlir::cp::detail::verifyGroup;
using mlir::cp::detail::verifyLocalAttention;

static std::string sizeStr(int64_t size) {
  return isStatic(size) ? std::to_string(size) : std::string("?");
}

//===----------------------------------------------------------------------===//
// Attention operand shapes, shared by cp.attention and cp.local_attention
//===----------------------------------------------------------------------===//

namespace {
enum Dim { kBatch = 0, kHeads = 1, kSeq = 2, kHeadDim = 3 };
} // namespace

static LogicalResult verifyBHSD(Operation *op, StringRef name,
                                ShapedType type) {
  if (type.getRank() != 4)
    return op->emitOpError("expects ")
           << name << " to be rank 4 [B, H, S, D], got rank " << type.getRank()
           << " (" << type << ")";
  // Sizes, traffic and FLOPs are computed in int64 from here on.
  int64_t bytes = llvm::divideCeil(type.getElementTypeBitWidth(), 8);
  for (int64_t extent : type.getShape())
    if (!ShapedType::isDynamic(extent) &&
        llvm::MulOverflow(bytes, extent, bytes))
      return op->emitOpError("expects ")
             << name << " to fit in memory, but its shape " << type
             << " holds more than " << INT64_MAX
             << " bytes (the element count times the element size overflows "
                "int64)";
  return success();
}

/// Checks the rules that relate query, key, value and output: BHSD rank,
/// element types, batch, H % Hkv, D and Dv. `sameLength` additionally asks
/// query and key/value to be shards of equal local length (cp.attention).
static LogicalResult verifyAttentionOperands(Operation *op, ShapedType q,
                                             ShapedType k, ShapedType v,
                                             ShapedType out, bool sameLength) {
  // A single-device block may keep its partial output in f32 for merging.
  bool f32Result = !sameLength && out.getElementType().isF32();
  if (failed(verifyBHSD(op, "query", q)) || failed(verifyBHSD(op, "key", k)) ||
      failed(verifyBHSD(op, "value", v)) ||
      failed(verifyBHSD(op, "result", out)))
    return failure();
  Type elt = q.getElementType();
  for (auto [name, type] : {std::pair<StringRef, ShapedType>{"key", k},
                            {"value", v},
                            {"result", out}})
    if (type.getElementType() != elt && !(name == "result" && f32Result))
      return op->emitOpError("expects ")
             << name << " element type (" << type.getElementType()
             << ") to match the query element type (" << elt << ")"
             << (sameLength || name != "result" ? "" : " or be f32");
  for (auto [name, type] : {std::pair<StringRef, ShapedType>{"key", k},
                            {"value", v},
                            {"result", out}})
    if (knownDifferent(type.getDimSize(kBatch), q.getDimSize(kBatch)))
      return op->emitOpError("expects ")
             << name << " batch size (" << type.getDimSize(kBatch)
             << ") to match the query batch size (" << q.getDimSize(kBatch)
             << ")";
  int64_t heads = q.getDimSize(kHeads), kvHeads = k.getDimSize(kHeads);
  if (knownDifferent(kvHeads, v.getDimSize(kHeads)))
    return op->emitOpError("expects key and value to have the same number of "
                           "heads Hkv, got ")
           << kvHeads << " and " << v.getDimSize(kHeads);
  if (isStatic(heads) && isStatic(kvHeads) &&
      (kvHeads == 0 || heads % kvHeads != 0))
    return op->emitOpError("expects query heads H (")
           << heads << ") to be a multiple of key/value heads Hkv (" << kvHeads
           << ") for grouped-query attention";
  if (knownDifferent(out.getDimSize(kHeads), heads))
    return op->emitOpError("expects result heads (")
           << out.getDimSize(kHeads) << ") to match query heads H (" << heads
           << ")";
  if (knownDifferent(k.getDimSize(kSeq), v.getDimSize(kSeq)))
    return op->emitOpError("expects key and value sequence lengths to match, "
                           "got ")
           << k.getDimSize(kSeq) << " and " << v.getDimSize(kSeq);
  if (sameLength && knownDifferent(q.getDimSize(kSeq), k.getDimSize(kSeq)))
    return op->emitOpError("expects query and key/value shards of the same "
                           "local length L, got ")
           << q.getDimSize(kSeq) << " and " << k.getDimSize(kSeq)
           << "; all three are contiguous shards of one sequence";
  if (knownDifferent(out.getDimSize(kSeq), q.getDimSize(kSeq)))
    return op->emitOpError("expects result sequence length (")
           << out.getDimSize(kSeq) << ") to match the query's ("
           << q.getDimSize(kSeq) << ")";
  if (knownDifferent(q.getDimSize(kHeadDim), k.getDimSize(kHeadDim)))
    return op->emitOpError("expects query and key head dims D to match, got ")
           << q.getDimSize(kHeadDim) << " and " << k.getDimSize(kHeadDim);
  if (knownDifferent(out.getDimSize(kHeadDim), v.getDimSize(kHeadDim)))
    return op->emitOpError("expects result head dim (")
           << out.getDimSize(kHeadDim) << ") to match the value head dim Dv ("
           << v.getDimSize(kHeadDim) << ")";
  return success();
}

/// Checks an explicit mask's rank, element type, batch and head extents.
/// Its query and key extents depend on the op and are checked by callers.
static LogicalResult verifyExplicitMaskLayout(Operation *op, ShapedType mask,
                                              ShapedType q) {
  if (mask.getRank() != 2 && mask.getRank() != 4)
    return op->emitOpError("expects explicit_mask of rank 2 [Lq, Skv] or 4 "
                           "[B|1, H|1, Lq, Skv], got rank ")
           << mask.getRank();
  Type elt = mask.getElementType();
  if (!elt.isInteger(1) && elt != q.getElementType())
    return op->emitOpError("expects explicit_mask element type to be i1 "
                           "(true = attend) or the query element type (")
           << q.getElementType() << ") as an additive bias, got " << elt;
  if (mask.getRank() == 2)
    return success();
  int64_t b = mask.getDimSize(0), h = mask.getDimSize(1);
  if (isStatic(b) && b != 1 && knownDifferent(b, q.getDimSize(kBatch)))
    return op->emitOpError("explicit_mask batch extent (")
           << b << ") must be 1 or the batch size B (" << q.getDimSize(kBatch)
           << ")";
  if (isStatic(h) && h != 1 && knownDifferent(h, q.getDimSize(kHeads)))
    return op->emitOpError("explicit_mask head extent (")
           << h << ") must be 1 or the query head count H ("
           << q.getDimSize(kHeads) << ")";
  return success();
}

static int64_t maskQueryExtent(ShapedType mask) {
  return mask.getDimSize(mask.getRank() - 2);
}
static int64_t maskKeyExtent(ShapedType mask) {
  return mask.getDimSize(mask.getRank() - 1);
}

/// The lse result of an attention over query `q`: [B, H, <rows>] (`rows`
/// names the query length in the message: Lq or L).
static LogicalResult verifyLseShape(Operation *op, ShapedType q,
                                    ShapedType lseType, StringRef rows) {
  ArrayRef<int64_t> expected = q.getShape().drop_back();
  bool matches = lseType.getRank() == 3 &&
                 llvm::all_of(llvm::seq<int64_t>(0, 3), [&](int64_t i) {
                   return !knownDifferent(lseType.getDimSize(i), expected[i]);
                 });
  if (matches)
    return success();
  return op->emitOpError("expects the lse result to have shape [B, H, ")
         << rows << "] = [" << sizeStr(expected[0]) << ", "
         << sizeStr(expected[1]) << ", " << sizeStr(expected[2]) << "], got "
         << lseType;
}

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

LogicalResult mlir::cp::detail::verifyShardedAttention(
    Operation *op, ShapedType q, ShapedType k, ShapedType v, ShapedType out,
    SequenceLayout layout, QueryPlacement queries, Region &maskMod,
    Region &scoreMod, ValueRange modOperands, Value explicitMask,
    Value sinks) {
  bool replicated = queries == QueryPlacement::replicated;
  if (failed(verifyAttentionOperands(op, q, k, v, out,
                                     /*sameLength=*/!replicated)))
    return failure();
  if (replicated && out.getElementType() != q.getElementType())
    return op->emitOpError("expects result element type (")
           << out.getElementType() << ") to match the query element type ("
           << q.getElementType() << ")";
  if (replicated && layout != SequenceLayout::contiguous)
    return op->emitOpError("with queries = replicated only K and V are "
                           "sharded, in the contiguous layout; got layout = ")
           << stringifySequenceLayout(layout)
           << " (shard the queries, or drop the layout)";
  int64_t len = k.getDimSize(kSeq);
  if (layout == SequenceLayout::zigzag && isStatic(len) && len % 2 != 0)
    return op->emitOpError("layout = zigzag holds two chunks of L/2 rows and "
                           "needs an even local length L, got L = ")
           << len << "; pad the sequence to a multiple of 2 * P";
  if (failed(verifyModRegions(op, maskMod, scoreMod, modOperands)))
    return failure();
  if (failed(verifySinks(op, q, sinks)))
    return failure();
  if (explicitMask)
    return verifyExplicitMaskLayout(
        op, cast<ShapedType>(explicitMask.getType()), q);
  return success();
}

LogicalResult mlir::cp::detail::verifySinks(Operation *op, ShapedType q,
                                            Value sinks) {
  if (!sinks)
    return success();
  auto type = cast<ShapedType>(sinks.getType());
  int64_t heads = q.getDimSize(kHeads);
  if (type.getRank() == 1 && !knownDifferent(type.getDimSize(0), heads))
    return success();
  return op->emitOpError("expects sinks to have shape [H] = [")
         << sizeStr(heads) << "] (one f32 logit per query head), got "
         << sinks.getType();
}

LogicalResult mlir::cp::detail::verifyShardedAttentionSymbols(
    Operation *op, FlatSymbolRefAttr grid, ArrayRef<int16_t> gridAxes,
    RankedTensorType q, RankedTensorType k, RankedTensorType v,
    QueryPlacement queries, Value explicitMask, SchemeAttr scheme,
    SymbolTableCollection &symbolTable) {
  FailureOr<int64_t> groupSize = verifyGroup(op, grid, gridAxes, symbolTable);
  if (failed(groupSize))
    return failure();
  AttentionShape shape =
      AttentionShape::fromTypes(q, k, v, *groupSize, queries);
  int64_t localLen = shape.localLen, globalLen = shape.globalLen();
  int64_t unused = 0;
  if (isStatic(localLen) && isStatic(*groupSize) &&
      llvm::MulOverflow(localLen, *groupSize, unused))
    return op->emitOpError("expects the global sequence length S = P * L = ")
           << *groupSize << " * " << localLen
           << " to fit in int64; use a smaller local length or fewer ranks";
  if (explicitMask) {
    auto maskType = cast<RankedTensorType>(explicitMask.getType());
    int64_t keys = maskKeyExtent(maskType), rows = maskQueryExtent(maskType);
    if (knownDifferent(keys, globalLen))
      return op->emitOpError("explicit_mask key extent (")
             << keys << ") must equal the global sequence length S = P * L = "
             << *groupSize << " * " << localLen << " = " << globalLen;
    if (shape.replicatedQueries) {
      if (knownDifferent(rows, shape.queryLen))
        return op->emitOpError("explicit_mask query extent (")
               << rows << ") must be the number of replicated queries Lq ("
               << shape.queryLen << ")";
    } else if (isStatic(rows) && isStatic(globalLen) && rows != localLen &&
               rows != globalLen)
      return op->emitOpError("explicit_mask query extent (")
             << rows << ") must be the local length L (" << localLen
             << ") or the global length S (" << globalLen << ")";
  }
  if (scheme)
    if (std::optional<std::string> violation =
            findSchemeViolation(scheme, shape))
      return op->emitOpError("cannot use scheme ")
             << scheme << ": " << *violation;
  return success();
}

LogicalResult AttentionOp::verify() {
  if (failed(detail::verifyShardedAttention(
          *this, getQuery().getType(), getKey().getType(), getValue().getType(),
          getResult().getType(), getLayout(), getQueries(), getMaskMod(),
          getScoreMod(), getModOperands(), getExplicitMask(), getSinks())))
    return failure();
  return getLse() ? verifyLseShape(*this, getQuery().getType(),
                                   getLse().getType(),
                                   getQueries() == QueryPlacement::replicated
                                       ? "Lq"
                                       : "L")
                  : success();
}

LogicalResult
AttentionOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return detail::verifyShardedAttentionSymbols(
      *this, getGridAttr(), getGridAxes(), getQuery().getType(),
      getKey().getType(), getValue().getType(), getQueries(),
      getExplicitMask(), getSchemeAttr(), symbolTable);
}

//===----------------------------------------------------------------------===//
// LocalAttentionOp
//===----------------------------------------------------------------------===//

LogicalResult mlir::cp::detail::verifyLocalAttention(Operation *op, ShapedType q,
                                          ShapedType k, ShapedType v,
                                          ShapedType out, Value maskValue,
                                          Value lseValue, Value sinks) {
  if (failed(verifyAttentionOperands(op, q, k, v, out, /*sameLength=*/false)))
    return failure();
  if (maskValue) {
    auto mask = cast<ShapedType>(maskValue.getType());
    if (failed(verifyExplicitMaskLayout(op, mask, q)))
      return failure();
    if (knownDifferent(maskQueryExtent(mask), q.getDimSize(kSeq)) ||
        knownDifferent(maskKeyExtent(mask), k.getDimSize(kSeq)))
      return op->emitOpError("expects explicit_mask to cover this block's "
                             "[Lq, Lkv] = [")
             << sizeStr(q.getDimSize(kSeq)) << ", "
             << sizeStr(k.getDimSize(kSeq)) << "], got ["
             << sizeStr(maskQueryExtent(mask)) << ", "
             << sizeStr(maskKeyExtent(mask)) << "]";
  }
  if (failed(verifySinks(op, q, sinks)))
    return failure();
  if (lseValue)
    return verifyLseShape(op, q, cast<ShapedType>(lseValue.getType()), "Lq");
  return success();
}

LogicalResult LocalAttentionOp::verify() {
  if (failed(verifyModRegions(*this, getMaskMod(), getScoreMod(),
                              getModOperands())))
    return failure();
  return verifyLocalAttention(*this, getQuery().getType(), getKey().getType(),
                              getValue().getType(), getOutput().getType(),
                              getExplicitMask(), getLse(), getSinks());
}

namespace {
/// local_attention(..., explicit_mask = offset_mask(qo', ko', M)) computes
/// the same as local_attention with mask M at offsets (qo', ko') when the op
/// has no structured mask of its own (its offsets are then unused), or when
/// it already applies M at the same offsets. No mask tensor is built.
struct FoldOffsetMaskIntoAttention : public OpRewritePattern<LocalAttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(LocalAttentionOp op,
                                PatternRewriter &rewriter) const override {
    Value maskValue = op.getExplicitMask();
    auto maskOp =
        maskValue ? maskValue.getDefiningOp<OffsetMaskOp>() : OffsetMaskOp();
    if (!maskOp)
      return failure();
    bool sameOffsets = maskOp.getQOffset() == op.getQOffset() &&
                       maskOp.getKvOffset() == op.getKvOffset();
    bool redundant = op.getMask() == maskOp.getMask() && sameOffsets;
    if (!op.getMask().isNone() && !redundant)
      return failure();
    rewriter.modifyOpInPlace(op, [&] {
      op.getQOffsetMutable().assign(maskOp.getQOffset());
      op.getKvOffsetMutable().assign(maskOp.getKvOffset());
      op.getExplicitMaskMutable().clear();
      op.setMaskAttr(maskOp.getMask());
    });
    return success();
  }
};
} // namespace

namespace {
/// A mask_mod that is only a causal or sliding-window predicate on the
/// global positions is that structured mask: fold it into the `mask`
/// attribute, which the lowerings evaluate per tile instead of per element.
template <typename AttentionLikeOp>
struct FoldStructuredMaskMod : public OpRewritePattern<AttentionLikeOp> {
  using OpRewritePattern<AttentionLikeOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(AttentionLikeOp op,
                                PatternRewriter &rewriter) const override {
    MaskAttr folded = foldMaskModInto(op.getMask(), op.getMaskMod());
    if (!folded)
      return failure();
    rewriter.eraseBlock(&op.getMaskMod().front());
    rewriter.modifyOpInPlace(op, [&] {
      op.setMaskAttr(folded);
      if (op.getScoreMod().empty())
        op.getModOperandsMutable().clear();
    });
    return success();
  }
};
} // namespace

void LocalAttentionOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                                   MLIRContext *context) {
  results.add<FoldOffsetMaskIntoAttention,
              FoldStructuredMaskMod<LocalAttentionOp>>(context);
}

void AttentionOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                              MLIRContext *context) {
  results.add<FoldStructuredMaskMod<AttentionOp>>(context);
}

//===----------------------------------------------------------------------===//
// OffsetMaskOp
//===----------------------------------------------------------------------===//

LogicalResult OffsetMaskOp::verify() {
  if (getType().getRank() != 2)
    return emitOpError("expects a rank-2 [Lq, Lkv] result, got rank ")
           << getType().getRank();
  if (getMask().isNone())
    return emitOpError("mask = none is all-true; pass no explicit_mask "
                       "instead of materializing one");
  return success();
}

//===----------------------------------------------------------------------===//
// MergeOp
//===----------------------------------------------------------------------===//

LogicalResult MergeOp::verify() {
  RankedTensorType out = getOutA().getType(), lse = getLseA().getType();
  ArrayRef<int64_t> expected = out.getShape().drop_back();
  bool matches =
      lse.getRank() == out.getRank() - 1 &&
      llvm::all_of(llvm::seq<int64_t>(0, lse.getRank()), [&](int64_t i) {
        return !knownDifferent(lse.getDimSize(i), expected[i]);
      });
  if (!matches)
    return emitOpError("expects log-sum-exp operands shaped like the outputs "
                       "without their last dim, got ")
           << lse << " for outputs " << out;
  return success();
}

//===----------------------------------------------------------------------===//
// BufferLocalAttentionOp
//===----------------------------------------------------------------------===//

LogicalResult BufferLocalAttentionOp::verify() {
  if (!getMaskModAttr() && !getScoreModAttr() && !getModOperands().empty())
    return emitOpError("has mod_operands but no mask_mod or score_mod "
                       "function to read them");
  return verifyLocalAttention(*this, getQuery().getType(), getKey().getType(),
                              getValue().getType(), getOutput().getType(),
                              getExplicitMask(), getLse(), getSinks());
}

func::FuncOp BufferLocalAttentionOp::getMaskModFunction() {
  return lookupModFunction(*this, getMaskModAttr());
}

func::FuncOp BufferLocalAttentionOp::getScoreModFunction() {
  return lookupModFunction(*this, getScoreModAttr());
}

LogicalResult
BufferLocalAttentionOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyModFunctionSymbols(*this, getMaskModAttr(), getScoreModAttr(),
                                  getModOperands(), symbolTable);
}
