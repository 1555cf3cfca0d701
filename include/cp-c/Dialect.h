/*===- Dialect.h - C API of the cp dialect ------------------------*- C -*-===//
 *
 * The cp dialect's registration handle and its attributes (#cp.scheme,
 * #cp.mask), for C users and language bindings. Everything here is a thin
 * wrapper over the C++ dialect; it shares MlirContext, MlirAttribute and
 * friends with the upstream MLIR C API.
 *
 *===----------------------------------------------------------------------===*/

#ifndef CP_C_DIALECT_H
#define CP_C_DIALECT_H

#include "mlir-c/IR.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The cp dialect. Inserting the handle into a registry also registers the
 * dialect's promised interface implementations (bufferization), so a
 * context that loads cp through it can run the whole pipeline. */
MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(CP, cp);

/*===----------------------------------------------------------------------===*
 * #cp.scheme
 *===----------------------------------------------------------------------===*/

/* The values of `SchemeKind` in the dialect (stable: they are the
 * attribute's storage). */
typedef enum CpSchemeKind {
  CpSchemeAllGather = 0,
  CpSchemeUlysses = 1,
  CpSchemeHybrid = 2,
  CpSchemeHeadTail = 3,
  CpSchemeRing = 4,
  CpSchemeZigzag = 5,
  CpSchemeAuto = 6,
  /* A scheme a plugin registered; built by name, not by cpSchemeAttrGet. */
  CpSchemePlugin = 7
} CpSchemeKind;

MLIR_CAPI_EXPORTED bool cpAttributeIsAScheme(MlirAttribute attr);
/* `ulyssesDegree` is hybrid's u and must be 0 for every other kind. Returns
 * a null attribute (and emits a diagnostic on the context) when the
 * combination is invalid, e.g. hybrid with u < 2. */
MLIR_CAPI_EXPORTED MlirAttribute cpSchemeAttrGet(MlirContext ctx,
                                                 CpSchemeKind kind,
                                                 int64_t ulyssesDegree);
MLIR_CAPI_EXPORTED CpSchemeKind cpSchemeAttrGetKind(MlirAttribute attr);
MLIR_CAPI_EXPORTED int64_t cpSchemeAttrGetUlyssesDegree(MlirAttribute attr);

/*===----------------------------------------------------------------------===*
 * #cp.mask
 *===----------------------------------------------------------------------===*/

typedef enum CpMaskKind {
  CpMaskNone = 0,
  CpMaskCausal = 1,
  CpMaskSlidingWindow = 2
} CpMaskKind;

MLIR_CAPI_EXPORTED bool cpAttributeIsAMask(MlirAttribute attr);
/* `window` is sliding_window's W (> 0) and must be 0 for the other kinds;
 * a null attribute (with a diagnostic) otherwise. */
MLIR_CAPI_EXPORTED MlirAttribute cpMaskAttrGet(MlirContext ctx, CpMaskKind kind,
                                               int64_t window);
MLIR_CAPI_EXPORTED CpMaskKind cpMaskAttrGetKind(MlirAttribute attr);
MLIR_CAPI_EXPORTED int64_t cpMaskAttrGetWindow(MlirAttribute attr);

#ifdef __cplusplus
}
#endif

#endif /* CP_C_DIALECT_H */
