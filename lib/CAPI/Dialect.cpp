//===- Dialect.cpp - C API of the cp dialect ------------------------------===//
//
// The dialect handle and the #cp.scheme / #cp.mask attribute wrappers of
// include/cp-c/Dialect.h.
//
//===----------------------------------------------------------------------===//

#include "cp-c/Dialect.h"
#include "cp/InitAllCP.h"
#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Registration.h"

using namespace mlir;
using namespace mlir::cp;

// MLIR_DEFINE_CAPI_DIALECT_REGISTRATION would insert only the dialect; the
// handle also brings the dialect's promised external models, without which
// one-shot bufferization of cp ops fails.
static void insertCPDialect(MlirDialectRegistry registry) {
  cp::registerAllDialects(*unwrap(registry));
}
static MlirDialect loadCPDialect(MlirContext ctx) {
  return wrap(unwrap(ctx)->getOrLoadDialect<CPDialect>());
}
static MlirStringRef cpDialectNamespace() {
  return wrap(CPDialect::getDialectNamespace());
}

MlirDialectHandle mlirGetDialectHandle__cp__() {
  static MlirDialectRegistrationHooks hooks = {insertCPDialect, loadCPDialect,
                                               cpDialectNamespace};
  return MlirDialectHandle{&hooks};
}

/// Diagnostics of a checked attribute construction go to the context's
/// handlers at an unknown location.
static auto emitOnContext(MLIRContext *ctx) {
  return [ctx] { return emitError(UnknownLoc::get(ctx)); };
}

bool cpAttributeIsAScheme(MlirAttribute attr) {
  return isa<SchemeAttr>(unwrap(attr));
}

MlirAttribute cpSchemeAttrGet(MlirContext ctx, CpSchemeKind kind,
                              int64_t ulyssesDegree) {
  MLIRContext *context = unwrap(ctx);
  context->getOrLoadDialect<CPDialect>();
  std::optional<SchemeKind> k =
      symbolizeSchemeKind(static_cast<uint32_t>(kind));
  if (!k || *k == SchemeKind::plugin) {
    emitError(UnknownLoc::get(context))
        << "unknown cp scheme kind " << static_cast<int>(kind)
        << (k ? " (a plugin's scheme is parsed by name, e.g. "
                "#cp.scheme<name(2)>)"
              : "");
    return MlirAttribute{nullptr};
  }
  return wrap(SchemeAttr::getChecked(emitOnContext(context), context, *k,
                                     ulyssesDegree, StringRef()));
}

CpSchemeKind cpSchemeAttrGetKind(MlirAttribute attr) {
  return static_cast<CpSchemeKind>(cast<SchemeAttr>(unwrap(attr)).getKind());
}

int64_t cpSchemeAttrGetUlyssesDegree(MlirAttribute attr) {
  return cast<SchemeAttr>(unwrap(attr)).getUlyssesDegree();
}

bool cpAttributeIsAMask(MlirAttribute attr) {
  return isa<MaskAttr>(unwrap(attr));
}

MlirAttribute cpMaskAttrGet(MlirContext ctx, CpMaskKind kind, int64_t window) {
  MLIRContext *context = unwrap(ctx);
  context->getOrLoadDialect<CPDialect>();
  std::optional<MaskKind> k = symbolizeMaskKind(static_cast<uint32_t>(kind));
  if (!k) {
    emitError(UnknownLoc::get(context))
        << "unknown cp mask kind " << static_cast<int>(kind);
    return MlirAttribute{nullptr};
  }
  return wrap(
      MaskAttr::getChecked(emitOnContext(context), context, *k, window));
}

CpMaskKind cpMaskAttrGetKind(MlirAttribute attr) {
  return static_cast<CpMaskKind>(cast<MaskAttr>(unwrap(attr)).getKind());
}

int64_t cpMaskAttrGetWindow(MlirAttribute attr) {
  return cast<MaskAttr>(unwrap(attr)).getWindow();
}
