//===- CPOps.cpp - cp dialect operations ----------------------------------===//
//
// Custom syntax of the cp ops and the process groups they name. Shape rules
// that need the CP group size live in verifySymbolUses, which runs once the
// grid symbol can be resolved.
//
//===----------------------------------------------------------------------===//

#include "cp/Dialect/CP/IR/CPOps.h"
#include "OpVerification.h"
#include "cp/Dialect/CP/IR/CPAttrBodies.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::cp;

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

/// The product of the axes' sizes; dynamic when one is dynamic, and also
/// when one is not positive or the product overflows, so that no rule
/// divides by it before verifyGroup has rejected the grid.
static int64_t groupSizeOf(shard::GridOp grid, ArrayRef<int16_t> axes) {
  int64_t size = 1;
  for (int16_t axis : axes) {
    int64_t extent = grid.getShape()[axis];
    if (ShapedType::isDynamic(extent) || extent < 1 ||
        llvm::MulOverflow(size, extent, size))
      return ShapedType::kDynamic;
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

FailureOr<int64_t> cp::detail::verifyGroup(Operation *op,
                                           FlatSymbolRefAttr gridRef,
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
    int64_t extent = grid.getShape()[axis];
    if (!ShapedType::isDynamic(extent) && extent < 1)
      return op->emitOpError("grid axis ")
             << axis << " of " << gridRef << " has size " << extent
             << "; a CP group needs at least one process on every axis it "
                "uses (declare e.g. `shard.grid "
             << gridRef << "(shape = 4)`)";
  }
  int64_t size = groupSizeOf(grid, axes);
  bool anyDynamic = llvm::any_of(axes, [&](int16_t axis) {
    return ShapedType::isDynamic(grid.getShape()[axis]);
  });
  if (ShapedType::isDynamic(size) && !anyDynamic)
    return op->emitOpError("the CP group of grid_axes on ")
           << gridRef << " has more than " << INT64_MAX
           << " processes (the product of the axes' sizes overflows int64)";
  return size;
}
