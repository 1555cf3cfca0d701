//===- CollectiveOps.cpp - collectives over a process group ---------------===//
//
// Verifiers and folders of all_gather, all_to_all, reduce_scatter,
// exchange, shift and relayout, of their buffer forms, and of the split-phase shift.
//
//===----------------------------------------------------------------------===//

#include "OpVerification.h"
#include "cp/Dialect/CP/IR/CPOps.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::cp;
using mlir::cp::detail::isStatic;
using mlir::cp::detail::knownDifferent;
using mlir::cp::detail::verifyGroup;

/// The symbol-use check of ops whose shapes do not depend on the group size.
template <typename GroupOp>
static LogicalResult verifyGroupOnly(GroupOp op,
                                     SymbolTableCollection &symbolTable) {
  return failure(
      failed(verifyGroup(op, op.getGridAttr(), op.getGridAxes(), symbolTable)));
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
  int64_t gathered = 0;
  if (isStatic(groupSize) && isStatic(inDim) &&
      llvm::MulOverflow(groupSize, inDim, gathered))
    return op->emitOpError("expects result dim ")
           << axis << " to be P * input dim = " << groupSize << " * " << inDim
           << ", which overflows int64; gather fewer rows or ranks";
  if (isStatic(groupSize) && isStatic(inDim) &&
      knownDifferent(outDim, gathered))
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
  int64_t inConcat = in.getDimSize(concat), concatenated = 0;
  if (isStatic(inConcat) && llvm::MulOverflow(inConcat, p, concatenated))
    return op->emitOpError("expects result dim ")
           << concat << " to be input dim * P = " << inConcat << " * " << p
           << ", which overflows int64; use a smaller concat_axis size";
  if (isStatic(inConcat) &&
      knownDifferent(out.getDimSize(concat), concatenated))
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

/// reduce_scatter's rules without the group size: a summable element type.
static LogicalResult verifyReduceScatter(Operation *op, ShapedType in,
                                         ShapedType out, int64_t axis) {
  if (failed(verifyReshapingCollective(op, in, out,
                                       {{"scatter_axis", axis}})))
    return failure();
  Type element = in.getElementType();
  if (!isa<FloatType>(element) &&
      !(element.isInteger() && element.getIntOrFloatBitWidth() >= 8))
    return op->emitOpError("sums its inputs, so it needs a float or an "
                           "integer element type of 8 bits or more, got ")
           << element;
  return success();
}

/// reduce_scatter's rule that needs the group size P: the scattered dim
/// splits into P blocks, one per rank.
static LogicalResult verifyReduceScatterGroup(Operation *op, ShapedType in,
                                              ShapedType out, int64_t axis,
                                              int64_t p) {
  int64_t inDim = in.getDimSize(axis), outDim = out.getDimSize(axis);
  if (!isStatic(p) || !isStatic(inDim))
    return success();
  if (inDim % p != 0)
    return op->emitOpError("scatter_axis ")
           << axis << " has size " << inDim << ", which the group size P = "
           << p << " does not divide; pad it to a multiple of " << p;
  if (knownDifferent(outDim, inDim / p))
    return op->emitOpError("expects result dim ")
           << axis << " to be input dim / P = " << inDim << " / " << p
           << " = " << inDim / p << ", got " << outDim;
  return success();
}

LogicalResult ReduceScatterOp::verify() {
  return verifyReduceScatter(*this, getInput().getType(), getType(),
                             getScatterAxis());
}

LogicalResult
ReduceScatterOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  FailureOr<int64_t> groupSize =
      verifyGroup(*this, getGridAttr(), getGridAxes(), symbolTable);
  if (failed(groupSize))
    return failure();
  return verifyReduceScatterGroup(*this, getInput().getType(), getType(),
                                  getScatterAxis(), *groupSize);
}

OpFoldResult ReduceScatterOp::fold(FoldAdaptor) {
  if (getGroupSize() == 1 && getInput().getType() == getType())
    return getInput();
  return {};
}

//===----------------------------------------------------------------------===//
// Buffer forms: the tensor forms' rules applied to memref types
//===----------------------------------------------------------------------===//

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

LogicalResult BufferReduceScatterOp::verify() {
  return verifyReduceScatter(*this, getInput().getType(),
                             getOutput().getType(), getScatterAxis());
}

LogicalResult
BufferReduceScatterOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  FailureOr<int64_t> groupSize =
      verifyGroup(*this, getGridAttr(), getGridAxes(), symbolTable);
  if (failed(groupSize))
    return failure();
  return verifyReduceScatterGroup(*this, getInput().getType(),
                                  getOutput().getType(), getScatterAxis(),
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
