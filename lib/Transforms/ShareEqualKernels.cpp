//===- ShareEqualKernels.cpp - one module per distinct kernel -------------===//
//
// Implements cp-share-equal-kernels: gpu.modules that are equal up to their
// symbol names become one, and the launches of the others name it.
//
//===----------------------------------------------------------------------===//

#include "cp/Transforms/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

namespace mlir {
namespace cp {
#define GEN_PASS_DEF_SHAREEQUALKERNELSPASS
#include "cp/Transforms/Passes.h.inc"
} // namespace cp
} // namespace mlir

using namespace mlir;

namespace {

/// Erases every occurrence of `"name"` (a symbol's quoted name) in `text`.
void eraseQuoted(std::string &text, StringRef name) {
  std::string quoted = ("\"" + name + "\"").str();
  for (size_t at = text.find(quoted); at != std::string::npos;
       at = text.find(quoted, at))
    text.erase(at, quoted.size());
}

/// The names of the symbols a module defines, in order.
SmallVector<StringAttr> symbolsOf(gpu::GPUModuleOp module) {
  SmallVector<StringAttr> names;
  for (Operation &op : module.getBody()->getOperations())
    if (auto name =
            op.getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName()))
      names.push_back(name);
  return names;
}

/// A module's text without the names of the module and its symbols, which
/// outlining derives from the launch site and so differ between copies.
std::string moduleKey(gpu::GPUModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os, OpPrintingFlags().printGenericOpForm().useLocalScope());
  eraseQuoted(text, module.getSymName());
  for (StringAttr name : symbolsOf(module))
    eraseQuoted(text, name.getValue());
  return text;
}

struct ShareEqualKernelsPass
    : public cp::impl::ShareEqualKernelsPassBase<ShareEqualKernelsPass> {
  void runOnOperation() override {
    ModuleOp top = getOperation();
    // Modules that only launches name can be merged.
    llvm::DenseMap<StringAttr, SmallVector<gpu::LaunchFuncOp>> launches;
    llvm::DenseSet<StringAttr> namedElsewhere;
    if (std::optional<SymbolTable::UseRange> uses =
            SymbolTable::getSymbolUses(&top.getBodyRegion())) {
      for (const SymbolTable::SymbolUse &use : *uses) {
        StringAttr root = use.getSymbolRef().getRootReference();
        if (auto launch = dyn_cast<gpu::LaunchFuncOp>(use.getUser()))
          launches[root].push_back(launch);
        else
          namedElsewhere.insert(root);
      }
    }

    llvm::StringMap<gpu::GPUModuleOp> firstByKey;
    SmallVector<gpu::GPUModuleOp> merged;
    for (auto module : top.getOps<gpu::GPUModuleOp>()) {
      if (namedElsewhere.contains(module.getSymNameAttr()))
        continue;
      gpu::GPUModuleOp &first = firstByKey[moduleKey(module)];
      if (!first) {
        first = module;
        continue;
      }
      // Equal text: the same symbols in the same order, under other names.
      SmallVector<StringAttr> from = symbolsOf(module), to = symbolsOf(first);
      ArrayRef<gpu::LaunchFuncOp> users = launches[module.getSymNameAttr()];
      if (!llvm::all_of(users, [&](gpu::LaunchFuncOp launch) {
            return llvm::is_contained(from, launch.getKernelName());
          }))
        continue;
      for (gpu::LaunchFuncOp launch : users) {
        auto *at = llvm::find(from, launch.getKernelName());
        launch.setKernelAttr(SymbolRefAttr::get(
            first.getSymNameAttr(),
            {FlatSymbolRefAttr::get(to[at - from.begin()])}));
      }
      merged.push_back(module);
    }
    for (gpu::GPUModuleOp module : merged)
      module.erase();
  }
};

} // namespace
