/*===- Driver.h - parse, transform and print cp IR from C ---------*- C -*-===//
 *
 * A small convenience layer over the upstream MLIR C API for tools and
 * language bindings: a context that knows every dialect cp-opt knows,
 * parsing, verification, running a textual pipeline and printing. Every
 * call that can fail reports each diagnostic it produced, formatted as
 * `file:line:col: error: message` (notes included), through `onDiagnostic`;
 * nothing is printed to stderr.
 *
 *===----------------------------------------------------------------------===*/

#ifndef CP_C_DRIVER_H
#define CP_C_DRIVER_H

#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A context with every upstream dialect and extension, the GPU-to-LLVM IR
 * translations and cp registered, and every upstream and cp pass
 * registered for textual pipelines. Destroy with mlirContextDestroy. */
MLIR_CAPI_EXPORTED MlirContext cpContextCreate(void);

/* Parses `source` (named `sourceName` in diagnostics) into a module and
 * verifies it. Returns a null module on failure. */
MLIR_CAPI_EXPORTED MlirModule cpModuleParse(MlirContext ctx,
                                            MlirStringRef source,
                                            MlirStringRef sourceName,
                                            MlirStringCallback onDiagnostic,
                                            void *userData);

/* Verifies the module; failure reports the verifier's diagnostics. */
MLIR_CAPI_EXPORTED MlirLogicalResult cpModuleVerify(
    MlirModule module, MlirStringCallback onDiagnostic, void *userData);

/* Runs a textual pass pipeline on the module, e.g.
 * "cp-apply-scheme{scheme=ulysses},canonicalize" (anchored on
 * builtin.module) or "builtin.module(cp-lower-to-cpu)". A pipeline that
 * does not parse is reported like a failing pass. */
MLIR_CAPI_EXPORTED MlirLogicalResult
cpModuleRunPipeline(MlirModule module, MlirStringRef pipeline,
                    MlirStringCallback onDiagnostic, void *userData);

/* Prints the module as cp-opt would (`generic`: the generic op form). The
 * text may arrive in several chunks. */
MLIR_CAPI_EXPORTED void cpModulePrint(MlirModule module, bool generic,
                                      MlirStringCallback callback,
                                      void *userData);

#ifdef __cplusplus
}
#endif

#endif /* CP_C_DRIVER_H */
