//===- OutlineLocalAttention.cpp - shared local attention kernels ---------===//
//
// cp-outline-local-attention: each buffer-level local attention (forward
// or backward) becomes a call of a private function holding one copy of
// it, shared by every op with the same attributes and operand types up to
// their memrefs' offsets (cp/Dialect/CP/IR/KernelOperands.h), and with
// equal mod functions.
//
//===----------------------------------------------------------------------===//

#include "cp/Dialect/CP/IR/CPOps.h"
#include "cp/Dialect/CP/IR/KernelOperands.h"
#include "cp/Dialect/CP/Buffers/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::cp {
#define GEN_PASS_DEF_OUTLINELOCALATTENTIONPASS
#include "cp/Dialect/CP/Buffers/Passes.h.inc"
} // namespace mlir::cp

using namespace mlir;
using namespace mlir::cp;

namespace {

/// A mod function's text without its name. Bufferization outlines every
/// op's mask_mod / score_mod region into a function of its own, so the ops
/// a scheme makes of one cp.attention name equal functions under different
/// names; equal keys are one function.
std::string modFunctionKey(func::FuncOp function) {
  std::string text;
  llvm::raw_string_ostream os(text);
  function->print(os, OpPrintingFlags().printGenericOpForm().useLocalScope());
  std::string name = ("\"" + function.getSymName() + "\"").str();
  if (size_t at = text.find(name); at != std::string::npos)
    text.erase(at, name.size());
  return text;
}

/// What makes two ops the same kernel: the op, its attributes (mask,
/// scale, mod functions, ...) and its kernel parameter types.
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
    shareEqualModFunctions(ops, symbols);
    llvm::StringMap<func::FuncOp> kernels;
    for (Operation *op : ops) {
      OpBuilder b(op);
      castToKernelOperandTypes(b, op);
      func::FuncOp &kernel = kernels[signatureOf(op)];
      if (!kernel)
        kernel = createKernel(op, symbols);
      func::CallOp::create(b, op->getLoc(), kernel, op->getOperands());
      op->erase();
    }
  }

  /// Points every op's mask_mod / score_mod at the first of the functions
  /// equal to it, and erases the private ones no longer named.
  void shareEqualModFunctions(ArrayRef<Operation *> ops, SymbolTable &symbols) {
    llvm::StringMap<FlatSymbolRefAttr> firstByKey;
    llvm::SmallSetVector<func::FuncOp, 8> replaced;
    for (Operation *op : ops) {
      for (StringRef attrName : {"mask_mod", "score_mod"}) {
        auto ref = op->getAttrOfType<FlatSymbolRefAttr>(attrName);
        if (!ref)
          continue;
        auto function = symbols.lookup<func::FuncOp>(ref.getValue());
        if (!function)
          continue;
        FlatSymbolRefAttr &first = firstByKey[modFunctionKey(function)];
        if (!first)
          first = ref;
        else if (first != ref) {
          op->setAttr(attrName, first);
          replaced.insert(function);
        }
      }
    }
    ModuleOp module = getOperation();
    for (func::FuncOp function : replaced)
      if (function.isPrivate() &&
          SymbolTable::symbolKnownUseEmpty(function, module))
        symbols.erase(function);
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
