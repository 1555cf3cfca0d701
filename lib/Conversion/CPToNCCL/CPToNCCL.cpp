//===- CPToNCCL.cpp - async cp collectives to NCCL on their stream --------===//
//
// Implements convert-cp-to-nccl. A !gpu.async.token means a stream only in
// the conversion that lowers the host's GPU ops (gpu-to-llvm), which also
// keeps the bookkeeping of which tokens are streams and which are events.
// So this pass is that conversion, upstream's patterns plus the cp
// collectives: a collective's call takes the stream of its dependency, and
// its token is that stream, exactly as for gpu.alloc or gpu.memcpy.
// Process indices and group handles are emitted first, at the memref level,
// with the same runtime calls as convert-cp-to-mpi.
//
//===----------------------------------------------------------------------===//

#include "cp/Conversion/Passes.h"
#include "cp/Conversion/RuntimeCalls.h"
#include "cp/Dialect/CP/IR/CPOps.h"
#include "mlir/Conversion/AsyncToLLVM/AsyncToLLVM.h"
#include "mlir/Conversion/ConvertToLLVM/ToLLVMInterface.h"
#include "mlir/Conversion/GPUCommon/GPUCommonPass.h"
#include "mlir/Conversion/LLVMCommon/Pattern.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVM.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir {
namespace cp {
#define GEN_PASS_DEF_CONVERTCPTONCCLPASS
#include "cp/Conversion/Passes.h.inc"
} // namespace cp
} // namespace mlir

using namespace mlir;
using namespace mlir::cp;

namespace {

using GroupHandles = llvm::DenseMap<Operation *, Value>;

/// The runtime entry and the trailing i64 parameters of each collective.
std::pair<std::string, SmallVector<int64_t>> entryOf(Operation *op) {
  if (auto gather = dyn_cast<BufferAllGatherOp>(op))
    return {"cp_rt_gpu_all_gather",
            {static_cast<int64_t>(gather.getGatherAxis())}};
  if (auto allToAll = dyn_cast<BufferAllToAllOp>(op))
    return {"cp_rt_gpu_all_to_all",
            {static_cast<int64_t>(allToAll.getSplitAxis()),
             static_cast<int64_t>(allToAll.getConcatAxis())}};
  if (auto scatter = dyn_cast<BufferReduceScatterOp>(op))
    return {"cp_rt_gpu_reduce_scatter_" +
                runtimeElementSuffix(scatter.getInput().getType().getElementType()),
            {static_cast<int64_t>(scatter.getScatterAxis())}};
  if (isa<BufferExchangeOp>(op))
    return {"cp_rt_gpu_exchange_mirror", {}};
  if (auto relayout = dyn_cast<BufferRelayoutOp>(op))
    return {"cp_rt_gpu_relayout",
            {static_cast<int64_t>(relayout.getSeqAxis()),
             static_cast<int64_t>(relayout.getFrom()),
             static_cast<int64_t>(relayout.getTo())}};
  if (auto start = dyn_cast<BufferShiftStartOp>(op))
    return {"cp_rt_gpu_shift_start", {static_cast<int64_t>(start.getOffset())}};
  return {"cp_rt_gpu_shift",
          {static_cast<int64_t>(cast<BufferShiftOp>(op).getOffset())}};
}

/// `name(args) -> result` as an llvm.call, declaring `name` on first use.
Value callRuntime(ConversionPatternRewriter &rewriter, Operation *op,
                  StringRef name, ValueRange args, Type result) {
  MLIRContext *ctx = op->getContext();
  auto module = op->getParentOfType<ModuleOp>();
  auto callee = module.lookupSymbol<LLVM::LLVMFuncOp>(name);
  if (!callee) {
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(module.getBody());
    callee = LLVM::LLVMFuncOp::create(
        rewriter, op->getLoc(), name,
        LLVM::LLVMFunctionType::get(result ? result
                                           : LLVM::LLVMVoidType::get(ctx),
                                    llvm::to_vector(args.getTypes())));
  }
  auto call = LLVM::CallOp::create(rewriter, op->getLoc(), callee, args);
  return result ? call.getResult() : Value();
}

template <typename BufferOp>
struct CollectiveToRuntimeCall : public ConvertOpToLLVMPattern<BufferOp> {
  CollectiveToRuntimeCall(const LLVMTypeConverter &converter,
                          const GroupHandles &handles)
      : ConvertOpToLLVMPattern<BufferOp>(converter), handles(handles) {}

  LogicalResult
  matchAndRewrite(BufferOp op, typename BufferOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    Type i64 = rewriter.getI64Type();
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    auto constant = [&](int64_t v) -> Value {
      return LLVM::ConstantOp::create(rewriter, loc, i64,
                                      rewriter.getI64IntegerAttr(v));
    };
    // A ranked descriptor on the stack, passed as (rank, pointer): the
    // runtime reads it like the CPU entries' unranked memrefs.
    auto unranked = [&](Value memref, Value descriptor,
                        SmallVectorImpl<Value> &args) {
      int64_t rank = cast<MemRefType>(memref.getType()).getRank();
      Value slot = LLVM::AllocaOp::create(rewriter, loc, ptr,
                                          descriptor.getType(), constant(1));
      LLVM::StoreOp::create(rewriter, loc, descriptor, slot);
      args.append({constant(rank), slot});
    };
    Value stream = adaptor.getAsyncDependencies().front();
    SmallVector<Value> args{handles.lookup(op)};
    unranked(op.getInput(), adaptor.getInput(), args);
    unranked(op.getOutput(), adaptor.getOutput(), args);
    Type element = op.getInput().getType().getElementType();
    args.push_back(constant((element.getIntOrFloatBitWidth() + 7) / 8));
    auto [name, params] = entryOf(op);
    for (int64_t param : params)
      args.push_back(constant(param));
    args.push_back(stream);

    // A started shift returns its request; the stream goes on at once.
    if (isa<BufferShiftStartOp>(op)) {
      Value request = callRuntime(rewriter, op, name, args, i64);
      rewriter.replaceOp(op, {request, stream});
      return success();
    }
    callRuntime(rewriter, op, name, args, Type());
    rewriter.replaceOp(op, stream);
    return success();
  }

  const GroupHandles &handles;
};

/// The stream of the wait's dependency waits for the request's transfer.
struct WaitToRuntimeCall : public ConvertOpToLLVMPattern<BufferWaitOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(BufferWaitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (adaptor.getAsyncDependencies().size() != 1 || !op.getAsyncToken())
      return rewriter.notifyMatchFailure(op, "not a stream op");
    Value stream = adaptor.getAsyncDependencies().front();
    callRuntime(rewriter, op, "cp_rt_gpu_wait", {adaptor.getRequest(), stream},
                Type());
    rewriter.replaceOp(op, stream);
    return success();
  }
};

struct ConvertCPToNCCLPass
    : public cp::impl::ConvertCPToNCCLPassBase<ConvertCPToNCCLPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    RuntimeCalls runtime(module);
    auto [collectives, waits, indices] = collectRuntimeOps(module);
    bool failedAny = false;
    for (Operation *op : indices)
      failedAny |= failed(lowerProcessIndex(op, runtime));

    // Group handles, at the memref level, before each collective.
    GroupHandles handles;
    for (Operation *op : waits) {
      auto async = cast<gpu::AsyncOpInterface>(op);
      if (!async.getAsyncToken() || async.getAsyncDependencies().size() != 1) {
        op->emitOpError("must be asynchronous with exactly one dependency to "
                        "run on a stream; run gpu-async-region first");
        failedAny = true;
      }
    }
    for (Operation *op : collectives) {
      auto async = cast<gpu::AsyncOpInterface>(op);
      if (!async.getAsyncToken() || async.getAsyncDependencies().size() != 1) {
        op->emitOpError("must be asynchronous with exactly one dependency to "
                        "run on a stream; run gpu-async-region first");
        failedAny = true;
        continue;
      }
      if (auto scatter = dyn_cast<BufferReduceScatterOp>(op)) {
        Type element = scatter.getInput().getType().getElementType();
        if (element.isInteger(16)) {
          op->emitOpError("sums ")
              << element << " elements, which NCCL cannot; use i32 or a "
              << "float type on GPUs";
          failedAny = true;
          continue;
        }
      }
      auto grid = lookupStaticGrid(
          op, op->getAttrOfType<FlatSymbolRefAttr>("grid").getValue());
      if (!grid) {
        failedAny = true;
        continue;
      }
      OpBuilder b(op);
      handles[op] = runtime.groupHandle(
          b, op->getLoc(), grid,
          op->getAttrOfType<DenseI16ArrayAttr>("grid_axes").asArrayRef());
    }
    if (failedAny)
      return signalPassFailure();

    // The host's GPU-to-LLVM conversion (as upstream gpu-to-llvm), with the
    // collectives in it.
    MLIRContext *ctx = &getContext();
    LLVMTypeConverter converter(ctx);
    // A started collective is the runtime's integer request handle.
    converter.addConversion([](RequestType type) {
      return IntegerType::get(type.getContext(), 64);
    });
    RewritePatternSet patterns(ctx);
    ConversionTarget target(*ctx);
    target.addLegalDialect<LLVM::LLVMDialect>();
    for (Dialect *dialect : ctx->getLoadedDialects())
      if (auto iface = dyn_cast<ConvertToLLVMPatternInterface>(dialect))
        iface->populateConvertToLLVMConversionPatterns(target, converter,
                                                       patterns);
    SymbolTable symbols(module);
    target.addDynamicallyLegalOp<gpu::GPUModuleOp>(
        [](gpu::GPUModuleOp gpuModule) {
          return gpuModule.getTargetsAttr() != nullptr;
        });
    target.addDynamicallyLegalOp<gpu::LaunchFuncOp>(
        [&](gpu::LaunchFuncOp launch) {
          auto kernels =
              symbols.lookup<gpu::GPUModuleOp>(launch.getKernelModuleName());
          return converter.isLegal(launch->getOperandTypes()) &&
                 converter.isLegal(launch->getResultTypes()) && kernels &&
                 kernels.getTargetsAttr() && !kernels.getTargetsAttr().empty();
        });
    populateVectorToLLVMConversionPatterns(converter, patterns);
    populateFinalizeMemRefToLLVMConversionPatterns(converter, patterns);
    populateAsyncStructuralTypeConversionsAndLegality(converter, patterns,
                                                      target);
    populateGpuToLLVMConversionPatterns(converter, patterns);
    patterns.add<CollectiveToRuntimeCall<BufferAllGatherOp>,
                 CollectiveToRuntimeCall<BufferReduceScatterOp>,
                 CollectiveToRuntimeCall<BufferAllToAllOp>,
                 CollectiveToRuntimeCall<BufferExchangeOp>,
                 CollectiveToRuntimeCall<BufferShiftOp>,
                 CollectiveToRuntimeCall<BufferRelayoutOp>,
                 CollectiveToRuntimeCall<BufferShiftStartOp>>(converter,
                                                              handles);
    patterns.add<WaitToRuntimeCall>(converter);
    target.addIllegalOp<BufferAllGatherOp, BufferAllToAllOp, BufferReduceScatterOp,
                        BufferExchangeOp,
                        BufferShiftOp, BufferRelayoutOp, BufferShiftStartOp,
                        BufferWaitOp>();
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      return signalPassFailure();
    eraseUnusedGrids(module);
  }
};

} // namespace
