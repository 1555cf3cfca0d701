//===- cp-opt.cpp - the cp-mlir optimizer driver --------------------------===//
//
// mlir-opt with every upstream dialect, pass and extension, the GPU to LLVM
// IR translations (to serialize gpu.module), plus the cp dialect, passes
// and pipelines.
//
//===----------------------------------------------------------------------===//

#include "cp/InitAllCP.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::cp::registerAllPasses();

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllGPUToLLVMIRTranslations(registry);
  mlir::cp::registerAllDialects(registry);

  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "cp-mlir optimizer driver\n", registry));
}
