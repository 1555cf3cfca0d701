//===- ExportCInterface.cpp - C-callable wrappers for public functions ----===//
//
// Implements cp-export-c-interface: public functions get
// llvm.emit_c_interface, the ABI drivers call (docs/Lowering.md §4);
// private definitions (the shared attention kernels) get internal linkage,
// so that a program exports only its entry points.
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
    auto internal =
        LLVM::LinkageAttr::get(&getContext(), LLVM::Linkage::Internal);
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      if (func.isPublic())
        func->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(), unit);
      else if (!func->hasAttr("llvm.linkage"))
        func->setAttr("llvm.linkage", internal);
    }
  }
};
} // namespace
