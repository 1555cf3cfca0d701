//===- CPToMPI.cpp - cp collectives to libcp_runtime calls ----------------===//
//
// Implements convert-cp-to-mpi: bufferized cp collectives and shard process
// indices become calls into libcp_runtime (include/cp/Runtime/cp_runtime.h),
// which implements them over MPI.
//
//===----------------------------------------------------------------------===//

#include "cp/Conversion/Passes.h"
#include "cp/Conversion/RuntimeCalls.h"
#include "cp/Dialect/CP/IR/CPOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir {
namespace cp {
#define GEN_PASS_DEF_CONVERTCPTOMPIPASS
#include "cp/Conversion/Passes.h.inc"
} // namespace cp
} // namespace mlir

using namespace mlir;
using namespace mlir::cp;

namespace {

struct ConvertCPToMPIPass
    : public cp::impl::ConvertCPToMPIPassBase<ConvertCPToMPIPass> {
  using Base::Base;

  void runOnOperation() override;
  LogicalResult lowerCollective(Operation *op, RuntimeCalls &runtime);

  /// The runtime's request handle of each lowered shift start.
  llvm::DenseMap<Value, Value> requests;
};

LogicalResult ConvertCPToMPIPass::lowerCollective(Operation *op,
                                                  RuntimeCalls &runtime) {
  StringRef gridName = op->getAttrOfType<FlatSymbolRefAttr>("grid").getValue();
  ArrayRef<int16_t> axes =
      op->getAttrOfType<DenseI16ArrayAttr>("grid_axes").asArrayRef();
  if (cast<gpu::AsyncOpInterface>(op).getAsyncToken() ||
      !cast<gpu::AsyncOpInterface>(op).getAsyncDependencies().empty())
    return op->emitOpError("is asynchronous (a GPU stream op); lower it with "
                           "convert-cp-to-nccl, not convert-cp-to-mpi");
  shard::GridOp grid = lookupStaticGrid(op, gridName);
  if (!grid)
    return failure();
  // Every collective's operands end with its input and output buffers.
  auto operands = op->getOperands().take_back(2);
  Value input = operands[0], output = operands[1];
  Type element = cast<MemRefType>(input.getType()).getElementType();
  std::string suffix = runtimeElementSuffix(element);
  if (suffix.empty())
    return op->emitOpError("has no runtime entry for element type ")
           << element << "; use f64, f32, f16, bf16 or i1/i8/i16/i32/i64";

  OpBuilder b(op);
  Location loc = op->getLoc();
  auto i64 = [&](int64_t v) {
    return arith::ConstantIntOp::create(b, loc, v, 64).getResult();
  };
  Value handle = runtime.groupHandle(b, loc, grid, axes);
  SmallVector<Value> args{handle, RuntimeCalls::unranked(b, loc, input),
                          RuntimeCalls::unranked(b, loc, output)};
  std::string entry;
  if (auto gather = dyn_cast<BufferAllGatherOp>(op)) {
    entry = "cp_rt_all_gather_";
    args.push_back(i64(gather.getGatherAxis()));
  } else if (auto scatter = dyn_cast<BufferReduceScatterOp>(op)) {
    entry = "cp_rt_reduce_scatter_";
    args.push_back(i64(scatter.getScatterAxis()));
  } else if (auto allToAll = dyn_cast<BufferAllToAllOp>(op)) {
    entry = "cp_rt_all_to_all_";
    args.append({i64(allToAll.getSplitAxis()), i64(allToAll.getConcatAxis())});
  } else if (isa<BufferExchangeOp>(op)) {
    entry = "cp_rt_exchange_mirror_";
  } else if (auto relayout = dyn_cast<BufferRelayoutOp>(op)) {
    entry = "cp_rt_relayout_";
    args.append({i64(relayout.getSeqAxis()),
                 i64(static_cast<int64_t>(relayout.getFrom())),
                 i64(static_cast<int64_t>(relayout.getTo()))});
  } else if (auto start = dyn_cast<BufferShiftStartOp>(op)) {
    args.push_back(i64(static_cast<int64_t>(start.getOffset())));
    requests[start.getRequest()] =
        runtime
            .call(b, loc, "cp_rt_shift_start_" + suffix, args, b.getI64Type())
            .getResult(0);
    return success(); // erased once its wait is lowered
  } else {
    entry = "cp_rt_shift_";
    args.push_back(
        i64(static_cast<int64_t>(cast<BufferShiftOp>(op).getOffset())));
  }
  runtime.call(b, loc, entry + suffix, args);
  op->erase();
  return success();
}

void ConvertCPToMPIPass::runOnOperation() {
  ModuleOp module = getOperation();
  RuntimeCalls runtime(module);
  auto [collectives, waits, indices] = collectRuntimeOps(module);
  llvm::SmallPtrSet<Operation *, 4> diagnosed;
  for (Operation *op : collectives)
    if (failed(lowerCollective(op, runtime)))
      diagnosed.insert(op);
  for (Operation *op : indices)
    if (failed(lowerProcessIndex(op, runtime)))
      diagnosed.insert(op);
  for (Operation *op : waits) {
    auto wait = cast<BufferWaitOp>(op);
    Value handle = requests.lookup(wait.getRequest());
    if (!handle || wait.getAsyncToken() ||
        !wait.getAsyncDependencies().empty()) {
      diagnosed.insert(op); // its start, or the op itself, is diagnosed
      if (handle)
        op->emitOpError("is asynchronous (a GPU stream op); lower it with "
                        "convert-cp-to-nccl, not convert-cp-to-mpi");
      continue;
    }
    OpBuilder b(op);
    runtime.call(b, op->getLoc(), "cp_rt_wait", handle);
    Operation *start = wait.getRequest().getDefiningOp();
    op->erase();
    start->erase();
  }
  bool failedAny = !diagnosed.empty();

  // What is left of cp and shard has no MPI lowering here.
  module.walk([&](Operation *op) {
    if (isa<shard::GridOp>(op) || diagnosed.contains(op))
      return;
    StringRef dialect =
        op->getDialect() ? op->getDialect()->getNamespace() : StringRef();
    if (dialect == "shard" || dialect == "cp") {
      op->emitOpError("has no lowering in convert-cp-to-mpi; ")
          << (dialect == "cp" ? "bufferize cp ops (one-shot-bufferize) and "
                                "lower cp.buffer.local_attention "
                                "(cp-lower-local-attention) first"
                              : "only shard.process_multi_index and "
                                "shard.process_linear_index are lowered");
      failedAny = true;
    }
  });
  if (failedAny)
    return signalPassFailure();
  eraseUnusedGrids(module);
}

} // namespace
