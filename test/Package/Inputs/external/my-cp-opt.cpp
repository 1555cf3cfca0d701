// An opt tool of someone else's project: only the dialects it needs, plus
// everything cp provides, through the installed cp/InitAllCP.h.
#include "cp/InitAllCP.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<mlir::func::FuncDialect>();
  mlir::cp::registerAllDialects(registry);
  mlir::cp::registerAllPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "an external cp-mlir user\n", registry));
}
