//===- CPPlugin.cpp - cp as a plugin for stock mlir-opt -------------------===//
//
// One shared library that is both a dialect plugin and a pass plugin:
//
//   mlir-opt --load-dialect-plugin=CPPlugin.so --load-pass-plugin=CPPlugin.so
//
// registers the cp dialect (with its bufferization models) and every cp
// pass, conversion and pipeline into an unmodified mlir-opt that links
// libMLIR.so, as Debian's does.
//
//===----------------------------------------------------------------------===//

#include "cp/InitAllCP.h"
#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/Compiler.h"

using namespace mlir;

extern "C" LLVM_ATTRIBUTE_WEAK DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {
      MLIR_PLUGIN_API_VERSION, "CP", LLVM_VERSION_STRING,
      [](DialectRegistry *registry) { cp::registerAllDialects(*registry); }};
}

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "CP", LLVM_VERSION_STRING,
          [] { cp::registerAllPasses(); }};
}
