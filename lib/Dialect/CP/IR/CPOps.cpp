//===- CPOps.cpp - cp dialect operations ----------------------------------===//
//
// Verifiers, folders, canonicalizations and custom syntax of the cp ops.
// Shape rules that need the CP group size live in verifySymbolUses, which
// runs once the grid symbol can be resolved.
//
//===----------------------------------------------------------------------===//

#include "cp/Dialect/CP/IR/CPOps.h"
#include "cp/Dialect/CP/IR/CPAttrBodies.h"
#include "cp/Dialect/CP/IR/ModRegions.h"
#include "cp/Dialect/CP/IR/SchemeConstraints.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"

using namespace mlir;
using namespace mlir::cp;

static bool isStatic(int64_t size) { return !ShapedType::isDynamic(size); }

/// True when both sizes are known and differ.
static bool knownDifferent(int64_t a, int64_t b) {
  return isStatic(a) && isStatic(b) && a != b;
}

static std::string sizeStr(int64_t size) {
  return isStatic(size) ? std::to_string(size) : std::string("?");
}

//===----------------------------------------------------------------------===//
// Custom syntax: the bare `causal` in `mask = causal`, `hybrid(2)` in
// `scheme = hybrid(2)`
//===----------------------------------------------------------------------===//

static ParseResult parseMaskKeyword(OpAsmParser &parser, MaskAttr &mask) {
  mask = parseMaskBody(static_cast<AsmParser &>(parser));
  return success(static_cast<bool>(mask));
}

static void printMaskKeyword(OpAsmPrinter &printer, Operation *,
                             MaskAttr mask) {
  printMaskBody(static_cast<AsmPrinter &>(printer), mask);
}

static ParseResult parseSchemeKeyword(OpAsmParser &parser, SchemeAttr &scheme) {
  scheme = parseSchemeBody(static_cast<AsmParser &>(parser));
  return success(static_cast<bool>(scheme));
}

static void printSchemeKeyword(OpAsmPrinter &printer, Operation *,
                               SchemeAttr scheme) {
  printSchemeBody(static_cast<AsmPrinter &>(printer), scheme);
}

//===----------------------------------------------------------------------===//
// Group sizes (used by the generated getGroupSize of every group op)
//===----------------------------------------------------------------------===//

static int64_t groupSizeOf(shard::GridOp grid, ArrayRef<int16_t> axes) {
  int64_t size = 1;
  for (int16_t axis : axes) {
    int64_t extent = grid.getShape()[axis];
    if (ShapedType::isDynamic(extent))
      return ShapedType::kDynamic;
    size *= extent;
  }
  return size;
}

template <typename GroupOp> static int64_t lookupGroupSize(GroupOp op) {
  auto grid = SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(
      op.getOperation(), op.getGridAttr());
  if (!grid)
    return ShapedType::kDynamic;
  for (int16_t axis : op.getGridAxes())
    if (axis < 0 || axis >= grid.getRank())
      return ShapedType::kDynamic;
  return groupSizeOf(grid, op.getGridAxes());
}

/// `async` and `[%dep, ...]`, as on gpu ops: the keyword gives the op a
/// !gpu.async.token result.
static ParseResult parseAsyncDependencies(
    OpAsmParser &parser, Type &asyncTokenType,
    SmallVectorImpl<OpAsmParser::UnresolvedOperand> &dependencies) {
  if (succeeded(parser.parseOptionalKeyword("async")))
    asyncTokenType = parser.getBuilder().getType<gpu::AsyncTokenType>();
  return parser.parseOperandList(dependencies,
                                 OpAsmParser::Delimiter::OptionalSquare);
}

static void printAsyncDependencies(OpAsmPrinter &printer, Operation *,
                                   Type asyncTokenType,
                                   OperandRange dependencies) {
  if (asyncTokenType)
    printer << "async";
  if (dependencies.empty())
    return;
  printer << (asyncTokenType ? " [" : "[");
  llvm::interleaveComma(dependencies, printer);
  printer << "]";
}

#define GET_OP_CLASSES
#include "cp/Dialect/CP/IR/CPOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Process groups
//===----------------------------------------------------------------------===//

/// Resolves `grid` and checks `axes` against it. Returns the group size
/// (kDynamic when a named axis is dynamic), or failure after a diagnostic.
static FailureOr<int64_t> verifyGroup(Operation *op, FlatSymbolRefAttr gridRef,
                                      ArrayRef<int16_t> axes,
                                      SymbolTableCollection &symbolTable) {
  shard::GridOp grid = shard::getGridOrNull(op, gridRef, symbolTable);
  if (!grid)
    return op->emitOpError("grid ")
           << gridRef << " does not name a shard.grid; declare it, e.g. "
           << "`shard.grid " << gridRef << "(shape = 4)`";
  llvm::SmallSet<int16_t, 4> seen;
  for (int16_t axis : axes) {
    if (axis < 0 || axis >= grid.getRank())
      return op->emitOpError("grid axis ")
             << axis << " is out of range for grid " << gridRef << " of rank "
             << grid.getRank() << "; valid axes are 0.." << grid.getRank() - 1;
    if (!seen.insert(axis).second)
      return op->emitOpError("grid axis ")
             << axis << " appears more than once in grid_axes";
  }
  return groupSizeOf(grid, axes);
}

/// The symbol-use check of ops whose shapes do not depend on the group size.
template <typename GroupOp>
static LogicalResult verifyGroupOnly(GroupOp op,
                                     SymbolTableCollection &symbolTable) {
  return failure(
      failed(verifyGroup(op, op.getGridAttr(), op.getGridAxes(), symbolTable)));
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

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

LogicalResult AttentionOp::verify() {
  RankedTensorType q = getQuery().getType();
  if (failed(verifyAttentionOperands(*this, q, getKey().getType(),
                                     getValue().getType(), getType(),
                                     /*sameLength=*/true)))
    return failure();
  int64_t len = q.getDimSize(kSeq);
  if (getLayout() == SequenceLayout::zigzag && isStatic(len) && len % 2 != 0)
    return emitOpError("layout = zigzag holds two chunks of L/2 rows and "
                       "needs an even local length L, got L = ")
           << len << "; pad the sequence to a multiple of 2 * P";
  if (failed(verifyModRegions(*this, getMaskMod(), getScoreMod(),
                              getModOperands())))
    return failure();
  if (getExplicitMask())
    return verifyExplicitMaskLayout(*this, getExplicitMask().getType(), q);
  return success();
}

LogicalResult
AttentionOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  FailureOr<int64_t> groupSize =
      verifyGroup(*this, getGridAttr(), getGridAxes(), symbolTable);
  if (failed(groupSize))
    return failure();
  AttentionShape shape =
      AttentionShape::fromTypes(getQuery().getType(), getKey().getType(),
                                getValue().getType(), *groupSize);
  int64_t localLen = shape.localLen, globalLen = shape.globalLen();
  if (Value mask = getExplicitMask()) {
    auto maskType = cast<RankedTensorType>(mask.getType());
    int64_t keys = maskKeyExtent(maskType), rows = maskQueryExtent(maskType);
    if (knownDifferent(keys, globalLen))
      return emitOpError("explicit_mask key extent (")
             << keys << ") must equal the global sequence length S = P * L = "
             << *groupSize << " * " << localLen << " = " << globalLen;
    if (isStatic(rows) && isStatic(globalLen) && rows != localLen &&
        rows != globalLen)
      return emitOpError("explicit_mask query extent (")
             << rows << ") must be the local length L (" << localLen
             << ") or the global length S (" << globalLen << ")";
  }
  if (SchemeAttr scheme = getSchemeAttr())
    if (std::optional<std::string> violation =
            findSchemeViolation(scheme, shape))
      return emitOpError("cannot use scheme ") << scheme << ": " << *violation;
  return success();
}

//===----------------------------------------------------------------------===//
// LocalAttentionOp
//===----------------------------------------------------------------------===//

/// The rules of cp.local_attention, shared by its tensor and buffer forms.
static LogicalResult verifyLocalAttention(Operation *op, ShapedType q,
                                          ShapedType k, ShapedType v,
                                          ShapedType out, Value maskValue,
                                          Value lseValue) {
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
  if (lseValue) {
    ArrayRef<int64_t> expected = q.getShape().drop_back();
    auto lseType = cast<ShapedType>(lseValue.getType());
    bool matches = lseType.getRank() == 3 &&
                   llvm::all_of(llvm::seq<int64_t>(0, 3), [&](int64_t i) {
                     return !knownDifferent(lseType.getDimSize(i), expected[i]);
                   });
    if (!matches)
      return op->emitOpError(
                 "expects the lse result to have shape [B, H, Lq] = [")
             << sizeStr(expected[0]) << ", " << sizeStr(expected[1]) << ", "
             << sizeStr(expected[2]) << "], got " << lseType;
  }
  return success();
}

LogicalResult LocalAttentionOp::verify() {
  if (failed(verifyModRegions(*this, getMaskMod(), getScoreMod(),
                              getModOperands())))
    return failure();
  return verifyLocalAttention(*this, getQuery().getType(), getKey().getType(),
                              getValue().getType(), getOutput().getType(),
                              getExplicitMask(), getLse());
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
// Collectives
//===----------------------------------------------------------------------===//

/// Rank, element type and range checks shared by all_gather and all_to_all:
/// every dim but `changing` must match between input and result.
static LogicalResult
verifyReshapingCollective(Operation *op, ShapedType in, ShapedType out,
                          ArrayRef<std::pair<StringRef, int64_t>> axes) {
  for (auto [name, axis] : axes)
    if (axis < 0 || axis >= in.getRank())
      return op->emitOpError()
             << name << " (" << axis << ") is out of range for a rank-"
             << in.getRank() << " tensor";
  if (in.getRank() != out.getRank())
    return op->emitOpError("expects result rank (")
           << out.getRank() << ") to equal input rank (" << in.getRank() << ")";
  if (in.getElementType() != out.getElementType())
    return op->emitOpError("expects result element type (")
           << out.getElementType() << ") to equal input element type ("
           << in.getElementType() << ")";
  for (int64_t dim = 0; dim < in.getRank(); ++dim) {
    if (llvm::any_of(axes, [&](auto axis) { return axis.second == dim; }))
      continue;
    if (knownDifferent(in.getDimSize(dim), out.getDimSize(dim)))
      return op->emitOpError("expects result dim ")
             << dim << " (" << out.getDimSize(dim) << ") to equal input dim "
             << dim << " (" << in.getDimSize(dim) << ")";
  }
  return success();
}

LogicalResult AllGatherOp::verify() {
  return verifyReshapingCollective(*this, getInput().getType(), getType(),
                                   {{"gather_axis", getGatherAxis()}});
}

/// all_gather's rule that needs the group size P.
static LogicalResult verifyAllGatherGroup(Operation *op, ShapedType in,
                                          ShapedType out, int64_t axis,
                                          int64_t groupSize) {
  int64_t inDim = in.getDimSize(axis), outDim = out.getDimSize(axis);
  if (isStatic(groupSize) && isStatic(inDim) &&
      knownDifferent(outDim, groupSize * inDim))
    return op->emitOpError("expects result dim ")
           << axis << " to be P * input dim = " << groupSize << " * " << inDim
           << " = " << groupSize * inDim << ", got " << outDim;
  return success();
}

LogicalResult
AllGatherOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  FailureOr<int64_t> groupSize =
      verifyGroup(*this, getGridAttr(), getGridAxes(), symbolTable);
  if (failed(groupSize))
    return failure();
  return verifyAllGatherGroup(*this, getInput().getType(), getType(),
                              getGatherAxis(), *groupSize);
}

OpFoldResult AllGatherOp::fold(FoldAdaptor) {
  if (getGroupSize() == 1 && getInput().getType() == getType())
    return getInput();
  return {};
}

LogicalResult AllToAllOp::verify() {
  return verifyReshapingCollective(
      *this, getInput().getType(), getType(),
      {{"split_axis", getSplitAxis()}, {"concat_axis", getConcatAxis()}});
}

/// all_to_all's rules that need the group size P.
static LogicalResult verifyAllToAllGroup(Operation *op, ShapedType in,
                                         ShapedType out, int64_t split,
                                         int64_t concat, int64_t p) {
  if (!isStatic(p))
    return success();
  int64_t inSplit = in.getDimSize(split);
  if (isStatic(inSplit) && inSplit % p != 0)
    return op->emitOpError("split_axis ")
           << split << " has size " << inSplit
           << ", which the group size P = " << p << " does not divide";
  if (split == concat) {
    if (knownDifferent(out.getDimSize(split), inSplit))
      return op->emitOpError("expects result dim ")
             << split << " (" << out.getDimSize(split)
             << ") to equal input dim (" << inSplit
             << ") when split_axis == concat_axis";
    return success();
  }
  if (isStatic(inSplit) && knownDifferent(out.getDimSize(split), inSplit / p))
    return op->emitOpError("expects result dim ")
           << split << " to be input dim / P = " << inSplit << " / " << p
           << " = " << inSplit / p << ", got " << out.getDimSize(split);
  int64_t inConcat = in.getDimSize(concat);
  if (isStatic(inConcat) &&
      knownDifferent(out.getDimSize(concat), inConcat * p))
    return op->emitOpError("expects result dim ")
           << concat << " to be input dim * P = " << inConcat << " * " << p
           << " = " << inConcat * p << ", got " << out.getDimSize(concat);
  return success();
}

LogicalResult AllToAllOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  FailureOr<int64_t> groupSize =
      verifyGroup(*this, getGridAttr(), getGridAxes(), symbolTable);
  if (failed(groupSize))
    return failure();
  return verifyAllToAllGroup(*this, getInput().getType(), getType(),
                             getSplitAxis(), getConcatAxis(), *groupSize);
}

OpFoldResult AllToAllOp::fold(FoldAdaptor) {
  if (getGroupSize() == 1 && getInput().getType() == getType())
    return getInput();
  return {};
}

LogicalResult ExchangeOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyGroupOnly(*this, symbolTable);
}

OpFoldResult ExchangeOp::fold(FoldAdaptor) {
  if (getGroupSize() == 1)
    return getInput();
  return {};
}

LogicalResult ShiftOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyGroupOnly(*this, symbolTable);
}

OpFoldResult ShiftOp::fold(FoldAdaptor) {
  int64_t p = getGroupSize();
  // The offset is signed: rank r receives from (r - offset) mod P.
  int64_t offset = static_cast<int64_t>(getOffset());
  if (isStatic(p) && offset % p == 0)
    return getInput();
  return {};
}

/// cp.relayout's rules on its (tensor or buffer) shard type.
static LogicalResult verifyRelayout(Operation *op, ShapedType type,
                                    int64_t seqAxis) {
  if (seqAxis < 0 || seqAxis >= type.getRank())
    return op->emitOpError("seq_axis (")
           << seqAxis << ") is out of range for a rank-" << type.getRank()
           << " shard";
  int64_t len = type.getDimSize(seqAxis);
  if (isStatic(len) && len % 2 != 0)
    return op->emitOpError("moves halves of the local shard and needs an "
                           "even local length along seq_axis ")
           << seqAxis << ", got " << len
           << "; pad the sequence to a multiple of 2 * P";
  return success();
}

LogicalResult RelayoutOp::verify() {
  return verifyRelayout(*this, getInput().getType(), getSeqAxis());
}

LogicalResult RelayoutOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyGroupOnly(*this, symbolTable);
}

OpFoldResult RelayoutOp::fold(FoldAdaptor) {
  // Both layouts are the same with one rank: chunks 0 and 1 are its rows.
  if (getFrom() == getTo() || getGroupSize() == 1)
    return getInput();
  return {};
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
// Buffer forms: the tensor forms' rules applied to memref types
//===----------------------------------------------------------------------===//

LogicalResult BufferLocalAttentionOp::verify() {
  if (!getMaskModAttr() && !getScoreModAttr() && !getModOperands().empty())
    return emitOpError("has mod_operands but no mask_mod or score_mod "
                       "function to read them");
  return verifyLocalAttention(*this, getQuery().getType(), getKey().getType(),
                              getValue().getType(), getOutput().getType(),
                              getExplicitMask(), getLse());
}

static func::FuncOp lookupModFunction(Operation *op, FlatSymbolRefAttr name) {
  if (!name)
    return {};
  return SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(op, name);
}

func::FuncOp BufferLocalAttentionOp::getMaskModFunction() {
  return lookupModFunction(*this, getMaskModAttr());
}

func::FuncOp BufferLocalAttentionOp::getScoreModFunction() {
  return lookupModFunction(*this, getScoreModAttr());
}

LogicalResult
BufferLocalAttentionOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  for (auto [name, isMask] : {std::pair(getMaskModAttr(), true),
                              std::pair(getScoreModAttr(), false)}) {
    if (!name)
      continue;
    auto function =
        symbolTable.lookupNearestSymbolFrom<func::FuncOp>(*this, name);
    if (!function)
      return emitOpError("expects ") << (isMask ? "mask_mod" : "score_mod")
                                     << " " << name << " to name a func.func";
    if (failed(verifyModFunction(*this, function, isMask, getModOperands(),
                                 /*checkBody=*/false)))
      return failure();
  }
  return success();
}

LogicalResult BufferAllGatherOp::verify() {
  return verifyReshapingCollective(*this, getInput().getType(),
                                   getOutput().getType(),
                                   {{"gather_axis", getGatherAxis()}});
}

LogicalResult
BufferAllGatherOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  FailureOr<int64_t> groupSize =
      verifyGroup(*this, getGridAttr(), getGridAxes(), symbolTable);
  if (failed(groupSize))
    return failure();
  return verifyAllGatherGroup(*this, getInput().getType(),
                              getOutput().getType(), getGatherAxis(),
                              *groupSize);
}

LogicalResult BufferAllToAllOp::verify() {
  return verifyReshapingCollective(
      *this, getInput().getType(), getOutput().getType(),
      {{"split_axis", getSplitAxis()}, {"concat_axis", getConcatAxis()}});
}

LogicalResult
BufferAllToAllOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  FailureOr<int64_t> groupSize =
      verifyGroup(*this, getGridAttr(), getGridAxes(), symbolTable);
  if (failed(groupSize))
    return failure();
  return verifyAllToAllGroup(*this, getInput().getType(), getOutput().getType(),
                             getSplitAxis(), getConcatAxis(), *groupSize);
}

/// exchange and shift move whole buffers: input and output shapes match.
static LogicalResult verifySameShapeBuffers(Operation *op, ShapedType in,
                                            ShapedType out) {
  if (in.getElementType() != out.getElementType() ||
      in.getRank() != out.getRank() ||
      llvm::any_of(llvm::seq<int64_t>(0, in.getRank()), [&](int64_t d) {
        return knownDifferent(in.getDimSize(d), out.getDimSize(d));
      }))
    return op->emitOpError("expects the output buffer to have the input's "
                           "shape and element type, got ")
           << out << " for input " << in;
  return success();
}

LogicalResult BufferExchangeOp::verify() {
  return verifySameShapeBuffers(*this, getInput().getType(),
                                getOutput().getType());
}

LogicalResult
BufferExchangeOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyGroupOnly(*this, symbolTable);
}

LogicalResult BufferShiftOp::verify() {
  return verifySameShapeBuffers(*this, getInput().getType(),
                                getOutput().getType());
}

LogicalResult
BufferShiftOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyGroupOnly(*this, symbolTable);
}

LogicalResult BufferRelayoutOp::verify() {
  if (failed(verifySameShapeBuffers(*this, getInput().getType(),
                                    getOutput().getType())))
    return failure();
  return verifyRelayout(*this, getInput().getType(), getSeqAxis());
}

LogicalResult
BufferRelayoutOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyGroupOnly(*this, symbolTable);
}

//===----------------------------------------------------------------------===//
// Split-phase collectives
//===----------------------------------------------------------------------===//

LogicalResult BufferShiftStartOp::verify() {
  if (failed(verifySameShapeBuffers(*this, getInput().getType(),
                                    getOutput().getType())))
    return failure();
  Value request = getRequest();
  auto users = llvm::to_vector(request.getUsers());
  if (users.size() != 1 || !isa<BufferWaitOp>(users.front()))
    return emitOpError("expects its request to be waited for by exactly one "
                       "cp.buffer.wait, found ")
           << users.size() << " use" << (users.size() == 1 ? "" : "s")
           << (users.size() == 1 ? " by another op" : "");
  return success();
}

LogicalResult
BufferShiftStartOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyGroupOnly(*this, symbolTable);
}

LogicalResult BufferWaitOp::verify() {
  if (!getRequest().getDefiningOp<BufferShiftStartOp>())
    return emitOpError("expects a request started by cp.buffer.shift_start");
  return success();
}
