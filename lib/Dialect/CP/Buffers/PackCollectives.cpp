//===- PackCollectives.cpp - flat buffers for device collectives ----------===//
//
// Implements cp-pack-collectives: every bufferized collective gets dense
// buffers exchanged along dim 0, the form NCCL moves as flat byte ranges.
// Where a collective gathers, splits or concatenates along another dim, or
// reads or writes a strided view, explicit linalg.copy ops pack and unpack
// around it (on GPUs they become kernels).
//
//===----------------------------------------------------------------------===//

#include "cp/Dialect/CP/IR/CPOps.h"
#include "cp/Dialect/CP/Buffers/Passes.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "llvm/Support/MathExtras.h"

namespace mlir {
namespace cp {
#define GEN_PASS_DEF_PACKCOLLECTIVESPASS
#include "cp/Dialect/CP/Buffers/Passes.h.inc"
} // namespace cp
} // namespace mlir

using namespace mlir;
using namespace mlir::cp;

namespace {

bool isDense(Value buffer) {
  return cast<MemRefType>(buffer.getType()).getLayout().isIdentity();
}

/// Bufferization casts dense buffers to a fully dynamic layout where values
/// of both kinds meet (loop-carried values, scf.if results). A collective on
/// such a cast uses the dense buffer under it, so no copy is packed.
void lookThroughDenseCasts(Operation *op) {
  for (OpOperand &operand : op->getOpOperands()) {
    auto castOp = operand.get().getDefiningOp<memref::CastOp>();
    if (!castOp)
      continue;
    auto source = dyn_cast<MemRefType>(castOp.getSource().getType());
    auto target = dyn_cast<MemRefType>(castOp.getType());
    if (source && target && source.getLayout().isIdentity() &&
        source.getShape() == target.getShape())
      operand.set(castOp.getSource());
  }
}

/// Product of the sizes before `dim`.
int64_t outerSize(ArrayRef<int64_t> shape, int64_t dim) {
  int64_t outer = 1;
  for (int64_t d = 0; d < dim; ++d)
    outer *= shape[d];
  return outer;
}

class Packer {
public:
  explicit Packer(Operation *op) : b(op), loc(op->getLoc()) {}

  /// [begin, begin + count) along `dim` of `buffer`.
  Value slice(Value buffer, int64_t dim, int64_t begin, int64_t count) {
    auto type = cast<MemRefType>(buffer.getType());
    SmallVector<int64_t> offsets(type.getRank(), 0), sizes(type.getShape()),
        strides(type.getRank(), 1);
    offsets[dim] = begin;
    sizes[dim] = count;
    return memref::SubViewOp::create(b, loc, buffer, offsets, sizes, strides);
  }
  Value alloc(ArrayRef<int64_t> shape, Type element) {
    Value buffer =
        memref::AllocOp::create(b, loc, MemRefType::get(shape, element));
    temporaries.push_back(buffer);
    return buffer;
  }
  void copy(Value from, Value to) { linalg::CopyOp::create(b, loc, from, to); }
  /// Copies `count` rows along `fromDim` of `from` at `fromBegin` to the
  /// same-shaped rows along `toDim` of `to` at `toBegin`.
  void copySlice(Value from, int64_t fromDim, int64_t fromBegin, Value to,
                 int64_t toDim, int64_t toBegin, int64_t fromCount,
                 int64_t toCount) {
    Value source = slice(from, fromDim, fromBegin, fromCount);
    Value target = slice(to, toDim, toBegin, toCount);
    copy(source, target);
  }
  /// Copies, for every r < p, block r of `from` along `fromDim` to block r
  /// of `to` along `toDim` (both dims split into p equal blocks), as one
  /// copy of a transposed view: the IR does not grow with p. Falls back to
  /// p copies where a split view has no strided layout.
  void copyBlocks(Value from, int64_t fromDim, Value to, int64_t toDim,
                  int64_t p) {
    FailureOr<Value> source = splitDim(from, fromDim, p);
    FailureOr<Value> target = splitDim(to, toDim, p);
    if (failed(source) || failed(target)) {
      int64_t fromBlock = cast<MemRefType>(from.getType()).getDimSize(fromDim) / p;
      int64_t toBlock = cast<MemRefType>(to.getType()).getDimSize(toDim) / p;
      for (int64_t r = 0; r < p; ++r)
        copySlice(from, fromDim, r * fromBlock, to, toDim, r * toBlock,
                  fromBlock, toBlock);
      return;
    }
    // The block index is dim fromDim of the source view and dim toDim of
    // the target view: move it there.
    int64_t rank = cast<MemRefType>((*source).getType()).getRank();
    SmallVector<unsigned> order;
    for (int64_t d = 0; d < rank; ++d)
      if (d != fromDim)
        order.push_back(d);
    order.insert(order.begin() + toDim, fromDim);
    Value view = *source;
    if (fromDim != toDim)
      view = memref::TransposeOp::create(
          b, loc, view,
          AffineMapAttr::get(AffineMap::getPermutationMap(order,
                                                          b.getContext())));
    copy(view, *target);
  }
  /// `buffer` with dim `dim` split into [p, size / p].
  FailureOr<Value> splitDim(Value buffer, int64_t dim, int64_t p) {
    auto type = cast<MemRefType>(buffer.getType());
    SmallVector<int64_t> shape;
    SmallVector<ReassociationIndices> groups;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      int64_t next = static_cast<int64_t>(shape.size());
      if (d == dim) {
        groups.push_back({next, next + 1});
        shape.append({p, type.getDimSize(d) / p});
      } else {
        groups.push_back({next});
        shape.push_back(type.getDimSize(d));
      }
    }
    if (failed(memref::ExpandShapeOp::computeExpandedType(type, shape, groups)))
      return failure();
    return memref::ExpandShapeOp::create(b, loc, shape, buffer, groups)
        .getResult();
  }
  /// `buffer` itself when dense, else a dense copy of it.
  Value denseInput(Value buffer) {
    if (isDense(buffer))
      return buffer;
    auto type = cast<MemRefType>(buffer.getType());
    Value dense = alloc(type.getShape(), type.getElementType());
    copy(buffer, dense);
    return dense;
  }
  /// Frees the temporaries, after everything built so far.
  void release() {
    for (Value buffer : temporaries)
      memref::DeallocOp::create(b, loc, buffer);
  }

  OpBuilder b;
  Location loc;
  SmallVector<Value> temporaries;
};

/// `block` with P of them stacked along dim 0, or an error on `op` when
/// that size overflows int64.
FailureOr<SmallVector<int64_t>> stackedShape(Operation *op,
                                             ArrayRef<int64_t> block,
                                             int64_t p) {
  SmallVector<int64_t> stacked(block);
  if (llvm::MulOverflow(stacked[0], p, stacked[0]))
    return op->emitOpError("cp-pack-collectives stacks P = ")
           << p << " blocks of " << block[0]
           << " along dim 0, which overflows int64";
  return stacked;
}

/// The same collective on other buffers and axes.
template <typename BufferOp>
BufferOp recreate(OpBuilder &b, BufferOp op, Value input, Value output) {
  SmallVector<NamedAttribute> attrs(op->getAttrs());
  return BufferOp::create(b, op.getLoc(), TypeRange{},
                          ValueRange{input, output}, attrs);
}

LogicalResult packAllGather(BufferAllGatherOp op, int64_t p) {
  auto in = op.getInput().getType();
  int64_t axis = op.getGatherAxis();
  if (isDense(op.getInput()) && isDense(op.getOutput()) &&
      outerSize(op.getOutput().getType().getShape(), axis) == 1)
    return success();
  FailureOr<SmallVector<int64_t>> stacked =
      stackedShape(op, in.getShape(), p);
  if (failed(stacked))
    return failure();
  Packer k(op);
  Value send = k.denseInput(op.getInput());
  Value recv = k.alloc(*stacked, in.getElementType());
  auto gathered = recreate(k.b, op, send, recv);
  gathered.setGatherAxis(0);
  k.copyBlocks(recv, 0, op.getOutput(), axis, p);
  k.release();
  op.erase();
  return success();
}

LogicalResult packAllToAll(BufferAllToAllOp op, int64_t p) {
  auto in = op.getInput().getType();
  int64_t split = op.getSplitAxis(), concat = op.getConcatAxis();
  if (isDense(op.getInput()) && isDense(op.getOutput()) &&
      outerSize(in.getShape(), split) == 1 &&
      outerSize(op.getOutput().getType().getShape(), concat) == 1)
    return success();
  // Part j of the input goes to rank j: stack the parts along dim 0.
  SmallVector<int64_t> part(in.getShape());
  part[split] /= p;
  FailureOr<SmallVector<int64_t>> stacked = stackedShape(op, part, p);
  if (failed(stacked))
    return failure();
  Packer k(op);
  Value send = k.alloc(*stacked, in.getElementType());
  k.copyBlocks(op.getInput(), split, send, 0, p);
  Value recv = k.alloc(*stacked, in.getElementType());
  auto exchanged = recreate(k.b, op, send, recv);
  exchanged.setSplitAxis(0);
  exchanged.setConcatAxis(0);
  k.copyBlocks(recv, 0, op.getOutput(), concat, p);
  k.release();
  op.erase();
  return success();
}

/// reduce_scatter: stack the P blocks (along the scatter axis) along dim
/// 0, where rank r's block is a flat range, and reduce-scatter that.
LogicalResult packReduceScatter(BufferReduceScatterOp op, int64_t p) {
  auto in = op.getInput().getType();
  int64_t axis = op.getScatterAxis();
  if (isDense(op.getInput()) && isDense(op.getOutput()) &&
      outerSize(in.getShape(), axis) == 1)
    return success();
  SmallVector<int64_t> part(in.getShape());
  part[axis] /= p;
  FailureOr<SmallVector<int64_t>> stacked = stackedShape(op, part, p);
  if (failed(stacked))
    return failure();
  Packer k(op);
  Value send = k.alloc(*stacked, in.getElementType());
  k.copyBlocks(op.getInput(), axis, send, 0, p);
  Value recv = isDense(op.getOutput()) ? op.getOutput()
                                       : k.alloc(part, in.getElementType());
  auto reduced = recreate(k.b, op, send, recv);
  reduced.setScatterAxis(0);
  if (recv != op.getOutput())
    k.copy(recv, op.getOutput());
  k.release();
  op.erase();
  return success();
}

/// relayout moves the two halves along the sequence axis: stack them along
/// dim 0 (where each half is a flat byte range) and relayout that.
LogicalResult packRelayout(BufferRelayoutOp op) {
  auto in = op.getInput().getType();
  int64_t seq = op.getSeqAxis();
  if (isDense(op.getInput()) && isDense(op.getOutput()) &&
      outerSize(in.getShape(), seq) == 1)
    return success();
  Packer k(op);
  SmallVector<int64_t> half(in.getShape());
  half[seq] /= 2;
  SmallVector<int64_t> stacked(half);
  stacked[0] *= 2;
  Value send = k.alloc(stacked, in.getElementType());
  for (int64_t h = 0; h < 2; ++h)
    k.copySlice(op.getInput(), seq, h * half[seq], send, 0, h * half[0],
                half[seq], half[0]);
  Value recv = k.alloc(stacked, in.getElementType());
  auto moved = recreate(k.b, op, send, recv);
  moved.setSeqAxis(0);
  for (int64_t h = 0; h < 2; ++h)
    k.copySlice(recv, 0, h * half[0], op.getOutput(), seq, h * half[seq],
                half[0], half[seq]);
  k.release();
  op.erase();
  return success();
}

/// exchange and shift move the whole buffer: only density matters.
template <typename BufferOp> LogicalResult packWhole(BufferOp op) {
  if (isDense(op.getInput()) && isDense(op.getOutput()))
    return success();
  Packer k(op);
  Value send = k.denseInput(op.getInput());
  Value recv = op.getOutput();
  if (!isDense(recv)) {
    auto type = cast<MemRefType>(recv.getType());
    recv = k.alloc(type.getShape(), type.getElementType());
  }
  recreate(k.b, op, send, recv);
  if (recv != op.getOutput())
    k.copy(recv, op.getOutput());
  k.release();
  op.erase();
  return success();
}

struct PackCollectivesPass
    : public cp::impl::PackCollectivesPassBase<PackCollectivesPass> {
  using Base::Base;

  LogicalResult pack(Operation *op) {
    auto async = cast<gpu::AsyncOpInterface>(op);
    if (async.getAsyncToken() || !async.getAsyncDependencies().empty())
      return op->emitOpError("cp-pack-collectives runs before gpu-async-region"
                             " and does not take async collectives");
    lookThroughDenseCasts(op);
    for (Value buffer : op->getOperands().take_back(2))
      if (!cast<MemRefType>(buffer.getType()).hasStaticShape())
        return op->emitOpError("cp-pack-collectives needs static shapes, got ")
               << buffer.getType();
    if (auto gather = dyn_cast<BufferAllGatherOp>(op)) {
      int64_t p = gather.getGroupSize();
      if (ShapedType::isDynamic(p))
        return op->emitOpError("cp-pack-collectives needs a static group "
                               "size");
      return packAllGather(gather, p);
    }
    if (auto scatter = dyn_cast<BufferReduceScatterOp>(op)) {
      int64_t p = scatter.getGroupSize();
      if (ShapedType::isDynamic(p))
        return op->emitOpError("cp-pack-collectives needs a static group "
                               "size");
      return packReduceScatter(scatter, p);
    }
    if (auto allToAll = dyn_cast<BufferAllToAllOp>(op)) {
      int64_t p = allToAll.getGroupSize();
      if (ShapedType::isDynamic(p))
        return op->emitOpError("cp-pack-collectives needs a static group "
                               "size");
      return packAllToAll(allToAll, p);
    }
    if (auto exchange = dyn_cast<BufferExchangeOp>(op))
      return packWhole(exchange);
    if (auto relayout = dyn_cast<BufferRelayoutOp>(op))
      return packRelayout(relayout);
    return packWhole(cast<BufferShiftOp>(op));
  }

  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (isa<BufferAllGatherOp, BufferAllToAllOp, BufferReduceScatterOp,
              BufferExchangeOp, BufferShiftOp, BufferRelayoutOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops)
      if (failed(pack(op)))
        return signalPassFailure();
  }
};

} // namespace
