//===- OutlineLocalAttention.cpp - shared local attention kernels ---------===//
//
// cp-outline-local-attention: each buffer-level local attention (forward
// or backward) becomes a call of a private function holding one copy of
// it, shared by every op with the same attributes and operand types.
//
//===----------------------------------------------------------------------===//

#include "cp/Dialect/CP/IR/CPOps.h"
#include "cp/Dialect/CP/Buffers/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::cp {
#define GEN_PASS_DEF_OUTLINELOCALATTENTIONPASS
#include "cp/Dialect/CP/Buffers/Passes.h.inc"
} // namespace mlir::cp

using namespace mlir;
using namespace mlir::cp;

namespace {

/// What makes two ops the same kernel: the op, its attributes (mask,
/// scale, mod functions, ...) and its operand types.
std::string signatureOf(Operation *op) {
  std::string key;
  llvm::raw_string_ostream os(key);
  os << op->getName() << op->getAttrDictionary();
  for (Type type : op->getOperandTypes())
    os << ',' << type;
  return key;
}

struct OutlineLocalAttentionPass
    : public cp::impl::OutlineLocalAttentionPassBase<
          OutlineLocalAttentionPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<Operation *> ops;
    module.walk([&](Operation *op) {
      if (isa<BufferLocalAttentionOp, BufferLocalAttentionGradOp>(op))
        ops.push_back(op);
    });
    SymbolTable symbols(module);
    llvm::StringMap<func::FuncOp> kernels;
    for (Operation *op : ops) {
      std::string key = signatureOf(op);
      func::FuncOp &kernel = kernels[key];
      if (!kernel)
        kernel = createKernel(op, symbols);
      OpBuilder b(op);
      func::CallOp::create(b, op->getLoc(), kernel, op->getOperands());
      op->erase();
    }
  }

  /// A private function at module level whose body is a copy of `op` on
  /// its arguments.
  func::FuncOp createKernel(Operation *op, SymbolTable &symbols) {
    ModuleOp module = getOperation();
    OpBuilder b(module.getBodyRegion());
    b.setInsertionPointToEnd(module.getBody());
    StringRef base = isa<BufferLocalAttentionOp>(op)
                         ? "cp_local_attention"
                         : "cp_local_attention_grad";
    auto kernel = func::FuncOp::create(
        b, op->getLoc(), base,
        b.getFunctionType(op->getOperandTypes(), TypeRange()));
    kernel.setPrivate();
    symbols.insert(kernel); // renames to a unique name
    Block *body = kernel.addEntryBlock();
    b.setInsertionPointToStart(body);
    // Operands by position: one value may be several operands (both
    // offsets 0), which a value-to-value mapping would merge.
    Operation *copy = b.clone(*op);
    copy->setOperands(body->getArguments());
    func::ReturnOp::create(b, op->getLoc());
    return kernel;
  }
};

} // namespace
