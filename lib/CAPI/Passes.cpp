//===- Passes.cpp - C API registration of cp passes -----------------------===//
//
// The TableGen-generated per-pass entry points, plus one call for all of
// cp's passes, conversions and pipelines.
//
//===----------------------------------------------------------------------===//

#include "cp-c/Passes.h"
#include "cp/InitAllCP.h"
#include "mlir/CAPI/Pass.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;
using namespace mlir::cp;

#ifdef __cplusplus
extern "C" {
#endif
#include "cp/Conversion/Passes.capi.cpp.inc"
#include "cp/Dialect/CP/Buffers/Passes.capi.cpp.inc"
#include "cp/Dialect/CP/Schemes/Passes.capi.cpp.inc"
#include "cp/Raising/Passes.capi.cpp.inc"
#include "cp/Transforms/Passes.capi.cpp.inc"
#ifdef __cplusplus
}
#endif

void cpRegisterPipelines(void) { registerCPPipelines(); }

void cpRegisterAllPasses(void) { cp::registerAllPasses(); }
