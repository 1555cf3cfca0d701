//===- ExportCInterface.cpp - C-callable wrappers for public functions ----===//
//
// Implements cp-export-c-interface: public functions get
// llvm.emit_c_interface, the ABI drivers call (docs/Lowering.md §4).
//
//===----------------------------------------------------------------------===//

#include "cp/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir {
namespace cp {
#define GEN_PASS_DEF_EXPORTCINTERFACEPASS
#include "cp/Transforms/Passes.h.inc"
} // namespace cp
} // namespace mlir

using namespace mlir;

namespace {
struct ExportCInterfacePass
    : public cp::impl::ExportCInterfacePassBase<ExportCInterfacePass> {
  using Base::Base;

  void runOnOperation() override {
    UnitAttr unit = UnitAttr::get(&getContext());
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (func.isPublic() && !func.isExternal())
        func->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(), unit);
  }
};
} // namespace
