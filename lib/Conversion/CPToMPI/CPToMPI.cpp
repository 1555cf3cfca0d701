//===- CPToMPI.cpp - cp collectives to libcp_runtime calls ----------------===//
//
// Implements convert-cp-to-mpi: bufferized cp collectives and shard process
// indices become calls into libcp_runtime (include/cp/Runtime/cp_runtime.h),
// which implements them over MPI.
//
//===----------------------------------------------------------------------===//

#include "cp/Conversion/Passes.h"
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

/// The runtime's name for an element type ("f32", "bf16", "i1", ...), or
/// empty when the runtime has no entry for it.
std::string elementSuffix(Type type) {
  if (type.isF64())
    return "f64";
  if (type.isF32())
    return "f32";
  if (type.isF16())
    return "f16";
  if (type.isBF16())
    return "bf16";
  if (auto integer = dyn_cast<IntegerType>(type)) {
    unsigned width = integer.getWidth();
    if (width == 1 || width == 8 || width == 16 || width == 32 || width == 64)
      return "i" + std::to_string(width);
  }
  return "";
}

/// Emits runtime calls into one module: declares each runtime function
/// once and the constant globals that describe grids and groups.
class RuntimeCalls {
public:
  explicit RuntimeCalls(ModuleOp module) : module(module), symbols(module) {}

  /// `func.call @name(args)`, declaring `name` on first use.
  func::CallOp call(OpBuilder &b, Location loc, StringRef name, ValueRange args,
                    TypeRange results = {}) {
    auto callee = symbols.lookup<func::FuncOp>(name);
    if (!callee) {
      OpBuilder declBuilder = OpBuilder::atBlockBegin(module.getBody());
      callee = func::FuncOp::create(
          declBuilder, loc, name,
          FunctionType::get(module.getContext(), args.getTypes(), results));
      callee.setPrivate();
      symbols.insert(callee);
    }
    return func::CallOp::create(b, loc, callee, args);
  }

  /// `value` as an unranked memref, the way runtime entries take buffers.
  static Value unranked(OpBuilder &b, Location loc, Value value) {
    auto type = cast<MemRefType>(value.getType());
    return memref::CastOp::create(
        b, loc,
        UnrankedMemRefType::get(type.getElementType(), type.getMemorySpace()),
        value);
  }

  /// The grid's name as a NUL-terminated i8 vector.
  Value gridName(OpBuilder &b, Location loc, shard::GridOp grid) {
    std::string name = grid.getSymName().str();
    SmallVector<int8_t> bytes(name.begin(), name.end());
    bytes.push_back(0);
    auto type = RankedTensorType::get({static_cast<int64_t>(bytes.size())},
                                      b.getI8Type());
    return constantVector(b, loc, ("__cp_grid_name_" + name),
                          DenseElementsAttr::get(type, ArrayRef(bytes)));
  }

  /// [grid rank, shape..., number of axes, axes...] as an i64 vector.
  Value groupSpec(OpBuilder &b, Location loc, shard::GridOp grid,
                  ArrayRef<int16_t> axes) {
    SmallVector<int64_t> spec{grid.getRank()};
    llvm::append_range(spec, grid.getShape());
    spec.push_back(static_cast<int64_t>(axes.size()));
    std::string name =
        ((axes.empty() ? "__cp_grid_" : "__cp_group_") + grid.getSymName())
            .str();
    for (int16_t axis : axes) {
      spec.push_back(axis);
      name += "_" + std::to_string(axis);
    }
    auto type = RankedTensorType::get({static_cast<int64_t>(spec.size())},
                                      b.getI64Type());
    return constantVector(b, loc, name,
                          DenseElementsAttr::get(type, ArrayRef(spec)));
  }

private:
  /// An unranked view of the constant global `name` holding `value`.
  Value constantVector(OpBuilder &b, Location loc, StringRef name,
                       DenseElementsAttr value) {
    auto tensorType = cast<RankedTensorType>(value.getType());
    auto type =
        MemRefType::get(tensorType.getShape(), tensorType.getElementType());
    auto global = symbols.lookup<memref::GlobalOp>(name);
    if (!global) {
      OpBuilder globalBuilder = OpBuilder::atBlockBegin(module.getBody());
      global = memref::GlobalOp::create(
          globalBuilder, loc, name, globalBuilder.getStringAttr("private"),
          type, value, /*constant=*/true, /*alignment=*/IntegerAttr());
      symbols.insert(global);
    }
    Value ref = memref::GetGlobalOp::create(b, loc, type, name);
    return unranked(b, loc, ref);
  }

  ModuleOp module;
  SymbolTable symbols;
};

struct ConvertCPToMPIPass
    : public cp::impl::ConvertCPToMPIPassBase<ConvertCPToMPIPass> {
  using Base::Base;

  void runOnOperation() override;

  /// The grid a cp or shard op names, with a static shape; null after a
  /// diagnostic.
  shard::GridOp staticGrid(Operation *op, StringRef gridName);

  LogicalResult lowerCollective(Operation *op, RuntimeCalls &runtime);
  LogicalResult lowerProcessIndex(Operation *op, RuntimeCalls &runtime);
};

shard::GridOp ConvertCPToMPIPass::staticGrid(Operation *op,
                                             StringRef gridName) {
  auto grid = SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(
      op, StringAttr::get(op->getContext(), gridName));
  if (!grid) {
    op->emitOpError("names @") << gridName << ", which is not a shard.grid";
    return {};
  }
  if (llvm::any_of(grid.getShape(), ShapedType::isDynamic)) {
    op->emitOpError("needs grid @")
        << gridName << " to have a static shape to be lowered to MPI";
    return {};
  }
  return grid;
}

LogicalResult ConvertCPToMPIPass::lowerCollective(Operation *op,
                                                  RuntimeCalls &runtime) {
  StringRef gridName = op->getAttrOfType<FlatSymbolRefAttr>("grid").getValue();
  ArrayRef<int16_t> axes =
      op->getAttrOfType<DenseI16ArrayAttr>("grid_axes").asArrayRef();
  if (cast<gpu::AsyncOpInterface>(op).getAsyncToken() ||
      !cast<gpu::AsyncOpInterface>(op).getAsyncDependencies().empty())
    return op->emitOpError("is asynchronous (a GPU stream op); lower it with "
                           "convert-cp-to-nccl, not convert-cp-to-mpi");
  shard::GridOp grid = staticGrid(op, gridName);
  if (!grid)
    return failure();
  auto operands = op->getOperands().take_back(2);
  Value input = operands[0], output = operands[1];
  Type element = cast<MemRefType>(input.getType()).getElementType();
  std::string suffix = elementSuffix(element);
  if (suffix.empty())
    return op->emitOpError("has no runtime entry for element type ")
           << element << "; use f64, f32, f16, bf16 or i1/i8/i16/i32/i64";

  OpBuilder b(op);
  Location loc = op->getLoc();
  auto i64 = [&](int64_t v) {
    return arith::ConstantIntOp::create(b, loc, v, 64).getResult();
  };
  Value handle = runtime
                     .call(b, loc, "cp_rt_group",
                           {runtime.gridName(b, loc, grid),
                            runtime.groupSpec(b, loc, grid, axes)},
                           b.getI64Type())
                     .getResult(0);
  SmallVector<Value> args{handle, RuntimeCalls::unranked(b, loc, input),
                          RuntimeCalls::unranked(b, loc, output)};
  std::string entry;
  if (auto gather = dyn_cast<BufferAllGatherOp>(op)) {
    entry = "cp_rt_all_gather_";
    args.push_back(i64(gather.getGatherAxis()));
  } else if (auto allToAll = dyn_cast<BufferAllToAllOp>(op)) {
    entry = "cp_rt_all_to_all_";
    args.append({i64(allToAll.getSplitAxis()), i64(allToAll.getConcatAxis())});
  } else if (isa<BufferExchangeOp>(op)) {
    entry = "cp_rt_exchange_mirror_";
  } else {
    entry = "cp_rt_shift_";
    args.push_back(
        i64(static_cast<int64_t>(cast<BufferShiftOp>(op).getOffset())));
  }
  runtime.call(b, loc, entry + suffix, args);
  op->erase();
  return success();
}

LogicalResult ConvertCPToMPIPass::lowerProcessIndex(Operation *op,
                                                    RuntimeCalls &runtime) {
  OpBuilder b(op);
  Location loc = op->getLoc();
  auto toIndex = [&](Value v) {
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), v).getResult();
  };
  if (auto linear = dyn_cast<shard::ProcessLinearIndexOp>(op)) {
    shard::GridOp grid = staticGrid(op, linear.getGrid());
    if (!grid)
      return failure();
    Value index = runtime
                      .call(b, loc, "cp_rt_grid_linear_index",
                            {runtime.gridName(b, loc, grid),
                             runtime.groupSpec(b, loc, grid, {})},
                            b.getI64Type())
                      .getResult(0);
    linear.replaceAllUsesWith(toIndex(index));
    op->erase();
    return success();
  }
  auto multi = cast<shard::ProcessMultiIndexOp>(op);
  shard::GridOp grid = staticGrid(op, multi.getGrid());
  if (!grid)
    return failure();
  SmallVector<int16_t> axes(multi.getAxes());
  if (axes.empty())
    for (int64_t axis = 0; axis < grid.getRank(); ++axis)
      axes.push_back(static_cast<int16_t>(axis));
  SmallVector<Value> coordinates;
  for (int16_t axis : axes)
    coordinates.push_back(
        toIndex(runtime
                    .call(b, loc, "cp_rt_grid_coord",
                          {runtime.gridName(b, loc, grid),
                           runtime.groupSpec(b, loc, grid, {}),
                           arith::ConstantIntOp::create(b, loc, axis, 64)},
                          b.getI64Type())
                    .getResult(0)));
  multi.replaceAllUsesWith(coordinates);
  op->erase();
  return success();
}

void ConvertCPToMPIPass::runOnOperation() {
  ModuleOp module = getOperation();
  RuntimeCalls runtime(module);
  SmallVector<Operation *> collectives, indices;
  module.walk([&](Operation *op) {
    if (isa<BufferAllGatherOp, BufferAllToAllOp, BufferExchangeOp,
            BufferShiftOp>(op))
      collectives.push_back(op);
    else if (isa<shard::ProcessMultiIndexOp, shard::ProcessLinearIndexOp>(op))
      indices.push_back(op);
  });
  llvm::SmallPtrSet<Operation *, 4> diagnosed;
  for (Operation *op : collectives)
    if (failed(lowerCollective(op, runtime)))
      diagnosed.insert(op);
  for (Operation *op : indices)
    if (failed(lowerProcessIndex(op, runtime)))
      diagnosed.insert(op);
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
  SymbolTableCollection tables;
  SymbolUserMap users(tables, module);
  for (auto grid : llvm::make_early_inc_range(module.getOps<shard::GridOp>()))
    if (users.getUsers(grid).empty())
      grid.erase();
}

} // namespace
