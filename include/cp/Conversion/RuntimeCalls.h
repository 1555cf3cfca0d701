//===- RuntimeCalls.h - calls into libcp_runtime from IR --------*- C++ -*-===//
//
// What the conversions to the runtime share: declaring runtime functions,
// describing grids and groups as constant globals, and lowering shard
// process indices to the runtime's grid queries (convert-cp-to-mpi and
// convert-cp-to-nccl both use it).
//
//===----------------------------------------------------------------------===//

#ifndef CP_CONVERSION_RUNTIMECALLS_H
#define CP_CONVERSION_RUNTIMECALLS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir {
namespace cp {

/// Emits runtime calls into one module: declares each runtime function
/// once and the constant globals that describe grids and groups.
class RuntimeCalls {
public:
  explicit RuntimeCalls(ModuleOp module) : module(module), symbols(module) {}

  /// `func.call @name(args)`, declaring `name` on first use.
  func::CallOp call(OpBuilder &b, Location loc, StringRef name, ValueRange args,
                    TypeRange results = {});

  /// `value` as an unranked memref, the way runtime entries take buffers.
  static Value unranked(OpBuilder &b, Location loc, Value value);

  /// The grid's name as a NUL-terminated i8 vector (unranked memref).
  Value gridName(OpBuilder &b, Location loc, shard::GridOp grid);

  /// [grid rank, shape..., number of axes, axes...] as an i64 vector.
  Value groupSpec(OpBuilder &b, Location loc, shard::GridOp grid,
                  ArrayRef<int16_t> axes);

  /// `%handle = call @cp_rt_group(name, spec)` for `axes` of `grid`.
  Value groupHandle(OpBuilder &b, Location loc, shard::GridOp grid,
                    ArrayRef<int16_t> axes);

private:
  Value constantVector(OpBuilder &b, Location loc, StringRef name,
                       DenseElementsAttr value);

  ModuleOp module;
  SymbolTable symbols;
};

/// The grid `gridName` seen from `op`, with a static shape; null after a
/// diagnostic on `op`.
shard::GridOp lookupStaticGrid(Operation *op, StringRef gridName);

/// The runtime's name for an element type ("f32", "bf16", "i1", ...), the
/// suffix of its typed entries; empty when the runtime has none for it.
std::string runtimeElementSuffix(Type type);

/// The ops a runtime conversion lowers, in walk order: the bufferized
/// collectives (shift starts included), the waits for started ones, and
/// the shard process-index queries.
struct RuntimeOps {
  SmallVector<Operation *> collectives, waits, processIndices;
};
RuntimeOps collectRuntimeOps(ModuleOp module);

/// shard.process_multi_index / process_linear_index become runtime grid
/// queries. Fails after a diagnostic.
LogicalResult lowerProcessIndex(Operation *op, RuntimeCalls &runtime);

/// Erases the shard.grid symbols nothing refers to any more.
void eraseUnusedGrids(ModuleOp module);

} // namespace cp
} // namespace mlir

#endif // CP_CONVERSION_RUNTIMECALLS_H
