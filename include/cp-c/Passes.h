/*===- Passes.h - C API registration of cp passes -----------------*- C -*-===//
 *
 * Per-pass create/register entry points are generated from the passes'
 * TableGen (mlirCreateCPSchemesApplySchemePass,
 * mlirRegisterCPConversionConvertCPToMPIPass,
 * mlirCreateCPUpstreamExportCInterfacePass, ...); this header adds one call
 *that registers everything cp provides, pipelines included, so that textual
 *pass pipelines can name it.
 *
 *===----------------------------------------------------------------------===*/

#ifndef CP_C_PASSES_H
#define CP_C_PASSES_H

#include "mlir-c/Pass.h"

#include "cp/Conversion/Passes.capi.h.inc"
#include "cp/Dialect/CP/Buffers/Passes.capi.h.inc"
#include "cp/Dialect/CP/Schemes/Passes.capi.h.inc"
#include "cp/Raising/Passes.capi.h.inc"
#include "cp/Transforms/Passes.capi.h.inc"

#ifdef __cplusplus
extern "C" {
#endif

/* Registers the cp pipelines (cp-lower-to-cpu, cp-lower-to-nvvm). */
MLIR_CAPI_EXPORTED void cpRegisterPipelines(void);

/* Registers every cp pass, conversion and pipeline (idempotent). */
MLIR_CAPI_EXPORTED void cpRegisterAllPasses(void);

#ifdef __cplusplus
}
#endif

#endif /* CP_C_PASSES_H */
