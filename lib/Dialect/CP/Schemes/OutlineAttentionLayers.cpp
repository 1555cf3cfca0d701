//===- OutlineAttentionLayers.cpp - one function per distinct layer -------===//
//
// cp-outline-attention-layers: in a function with several sharded
// attention forwards (or several backwards), each becomes a call of a
// private function holding one copy of it, shared by every op that prints
// the same. The scheme rewrite, bufferization and lowering then see one
// layer per function, and their cost stays linear in model depth.
//
//===----------------------------------------------------------------------===//

#include "cp/Dialect/CP/IR/CPOps.h"
#include "cp/Dialect/CP/Schemes/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::cp {
#define GEN_PASS_DEF_OUTLINEATTENTIONLAYERSPASS
#include "cp/Dialect/CP/Schemes/Passes.h.inc"
} // namespace mlir::cp

using namespace mlir;
using namespace mlir::cp;

namespace {

/// The op with its operands left out: name, attributes, types and the
/// mod regions. Ops with equal text are the same layer.
std::string layerText(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  op->print(os, OpPrintingFlags().printGenericOpForm().useLocalScope());
  return text;
}

struct OutlineAttentionLayersPass
    : public cp::impl::OutlineAttentionLayersPassBase<
          OutlineAttentionLayersPass> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *context) override {
    FailureOr<SchemeAttr> resolved =
        scheme.resolve(context, "cp-outline-attention-layers");
    if (failed(resolved))
      return failure();
    defaultScheme = *resolved;
    return success();
  }

  /// The scheme cp-apply-scheme will rewrite `op` under; null for ops that
  /// are not sharded attention or whose scheme is not decided yet (auto).
  SchemeAttr appliedScheme(Operation *op) {
    SchemeAttr own;
    if (auto forward = dyn_cast<AttentionOp>(op))
      own = forward.getSchemeAttr();
    else if (auto backward = dyn_cast<AttentionGradOp>(op))
      own = backward.getSchemeAttr();
    else
      return {};
    SchemeAttr applied = own ? own : defaultScheme;
    if (!applied || applied.getKind() == SchemeKind::automatic)
      return {};
    return applied;
  }

  void runOnOperation() override {
    layers.clear();
    // Forwards and backwards are counted apart: a function with one of
    // each (a training step) keeps both, so the backward can still share
    // the forward's collectives (CSE, allgather's reused gather).
    llvm::MapVector<std::pair<Operation *, int>, SmallVector<Operation *>>
        layersByFunctionAndKind;
    getOperation()->walk([&](Operation *op) {
      if (!appliedScheme(op))
        return;
      if (auto function = op->getParentOfType<FunctionOpInterface>())
        layersByFunctionAndKind[{function, isa<AttentionGradOp>(op) ? 1 : 0}]
            .push_back(op);
    });
    SymbolTableCollection tables;
    for (auto &[key, ops] : layersByFunctionAndKind) {
      if (ops.size() < 2)
        continue;
      Operation *tableOp = SymbolTable::getNearestSymbolTable(key.first);
      if (!tableOp)
        continue;
      for (Operation *op : ops)
        outline(op, tableOp, tables.getSymbolTable(tableOp));
    }
  }

  void outline(Operation *op, Operation *tableOp, SymbolTable &symbols) {
    func::FuncOp &layer = layers[tableOp][layerText(op)];
    if (!layer)
      layer = createLayer(op, symbols);
    OpBuilder b(op);
    auto call = func::CallOp::create(b, op->getLoc(), layer, op->getOperands());
    op->replaceAllUsesWith(call.getResults());
    op->erase();
  }

  /// A private function whose body is a copy of `op` on its arguments.
  func::FuncOp createLayer(Operation *op, SymbolTable &symbols) {
    OpBuilder b(op->getContext());
    std::string name = ("cp_" + appliedScheme(op).getSchemeName() + "_layer" +
                        (isa<AttentionGradOp>(op) ? "_grad" : ""))
                           .str();
    auto layer = func::FuncOp::create(
        b, op->getLoc(), name,
        b.getFunctionType(op->getOperandTypes(), op->getResultTypes()));
    layer.setPrivate();
    symbols.insert(layer); // at the table's end, renamed to be unique
    Block *body = layer.addEntryBlock();
    b.setInsertionPointToStart(body);
    // Operands by position: one value may be several operands (k = v).
    Operation *copy = b.clone(*op);
    copy->setOperands(body->getArguments());
    func::ReturnOp::create(b, op->getLoc(), copy->getResults());
    return layer;
  }

  SchemeAttr defaultScheme;
  llvm::DenseMap<Operation *, llvm::StringMap<func::FuncOp>> layers;
};

} // namespace
