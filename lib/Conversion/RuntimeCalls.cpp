//===- RuntimeCalls.cpp - calls into libcp_runtime from IR ----------------===//

#include "cp/Conversion/RuntimeCalls.h"
#include "cp/Dialect/CP/IR/CPOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::cp;

func::CallOp RuntimeCalls::call(OpBuilder &b, Location loc, StringRef name,
                                ValueRange args, TypeRange results) {
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

Value RuntimeCalls::unranked(OpBuilder &b, Location loc, Value value) {
  auto type = cast<MemRefType>(value.getType());
  return memref::CastOp::create(
      b, loc,
      UnrankedMemRefType::get(type.getElementType(), type.getMemorySpace()),
      value);
}

Value RuntimeCalls::gridName(OpBuilder &b, Location loc, shard::GridOp grid) {
  std::string name = grid.getSymName().str();
  SmallVector<int8_t> bytes(name.begin(), name.end());
  bytes.push_back(0);
  auto type = RankedTensorType::get({static_cast<int64_t>(bytes.size())},
                                    b.getI8Type());
  return constantVector(b, loc, ("__cp_grid_name_" + name),
                        DenseElementsAttr::get(type, ArrayRef(bytes)));
}

Value RuntimeCalls::groupSpec(OpBuilder &b, Location loc, shard::GridOp grid,
                              ArrayRef<int16_t> axes) {
  SmallVector<int64_t> spec{grid.getRank()};
  llvm::append_range(spec, grid.getShape());
  spec.push_back(static_cast<int64_t>(axes.size()));
  std::string name =
      ((axes.empty() ? "__cp_grid_" : "__cp_group_") + grid.getSymName()).str();
  for (int16_t axis : axes) {
    spec.push_back(axis);
    name += "_" + std::to_string(axis);
  }
  auto type = RankedTensorType::get({static_cast<int64_t>(spec.size())},
                                    b.getI64Type());
  return constantVector(b, loc, name,
                        DenseElementsAttr::get(type, ArrayRef(spec)));
}

Value RuntimeCalls::groupHandle(OpBuilder &b, Location loc, shard::GridOp grid,
                                ArrayRef<int16_t> axes) {
  return call(b, loc, "cp_rt_group",
              {gridName(b, loc, grid), groupSpec(b, loc, grid, axes)},
              b.getI64Type())
      .getResult(0);
}

/// An unranked view of the constant global `name` holding `value`.
Value RuntimeCalls::constantVector(OpBuilder &b, Location loc, StringRef name,
                                   DenseElementsAttr value) {
  auto tensorType = cast<RankedTensorType>(value.getType());
  auto type =
      MemRefType::get(tensorType.getShape(), tensorType.getElementType());
  auto global = symbols.lookup<memref::GlobalOp>(name);
  if (!global) {
    OpBuilder globalBuilder = OpBuilder::atBlockBegin(module.getBody());
    global = memref::GlobalOp::create(
        globalBuilder, loc, name, globalBuilder.getStringAttr("private"), type,
        value, /*constant=*/true, /*alignment=*/IntegerAttr());
    symbols.insert(global);
  }
  Value ref = memref::GetGlobalOp::create(b, loc, type, name);
  return unranked(b, loc, ref);
}

shard::GridOp mlir::cp::lookupStaticGrid(Operation *op, StringRef gridName) {
  auto grid = SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(
      op, StringAttr::get(op->getContext(), gridName));
  if (!grid) {
    op->emitOpError("names @") << gridName << ", which is not a shard.grid";
    return {};
  }
  if (llvm::any_of(grid.getShape(), ShapedType::isDynamic)) {
    op->emitOpError("needs grid @")
        << gridName << " to have a static shape to be lowered to the runtime";
    return {};
  }
  return grid;
}

std::string mlir::cp::runtimeElementSuffix(Type type) {
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

RuntimeOps mlir::cp::collectRuntimeOps(ModuleOp module) {
  RuntimeOps ops;
  module.walk([&](Operation *op) {
    if (isa<BufferAllGatherOp, BufferAllToAllOp, BufferReduceScatterOp,
            BufferExchangeOp, BufferShiftOp, BufferRelayoutOp,
            BufferShiftStartOp>(op))
      ops.collectives.push_back(op);
    else if (isa<BufferWaitOp>(op))
      ops.waits.push_back(op);
    else if (isa<shard::ProcessMultiIndexOp, shard::ProcessLinearIndexOp>(op))
      ops.processIndices.push_back(op);
  });
  return ops;
}

LogicalResult mlir::cp::lowerProcessIndex(Operation *op,
                                          RuntimeCalls &runtime) {
  OpBuilder b(op);
  Location loc = op->getLoc();
  auto toIndex = [&](Value v) {
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), v).getResult();
  };
  if (auto linear = dyn_cast<shard::ProcessLinearIndexOp>(op)) {
    shard::GridOp grid = lookupStaticGrid(op, linear.getGrid());
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
  shard::GridOp grid = lookupStaticGrid(op, multi.getGrid());
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

void mlir::cp::eraseUnusedGrids(ModuleOp module) {
  SymbolTableCollection tables;
  SymbolUserMap users(tables, module);
  for (auto grid : llvm::make_early_inc_range(module.getOps<shard::GridOp>()))
    if (users.getUsers(grid).empty())
      grid.erase();
}
