//===- CPAttrs.cpp - #cp.scheme and #cp.mask ------------------------------===//
//
// Both attributes print as a keyword with an optional integer argument,
// `hybrid(2)` or `sliding_window(128)`: inside `<...>` as attributes, and
// bare in op clauses such as `mask = causal` (see CPOps.cpp).
//
//===----------------------------------------------------------------------===//

#include "cp/Dialect/CP/IR/CPAttrBodies.h"
#include "cp/Dialect/CP/IR/CPDialect.h"
#include "cp/Dialect/CP/IR/SchemeDefinition.h"
#include "cp/Dialect/CP/IR/SchemeOption.h"
#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::cp;

#define GET_ATTRDEF_CLASSES
#include "cp/Dialect/CP/IR/CPAttrs.cpp.inc"

void CPDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "cp/Dialect/CP/IR/CPAttrs.cpp.inc"
      >();
}

/// Parses `keyword` or `keyword(N)`; `argument` stays 0 without `(N)`.
static ParseResult parseKeywordWithArgument(AsmParser &parser,
                                            std::string &keyword,
                                            int64_t &argument) {
  if (parser.parseKeywordOrString(&keyword))
    return failure();
  argument = 0;
  if (succeeded(parser.parseOptionalLParen()))
    if (parser.parseInteger(argument) || parser.parseRParen())
      return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// SchemeAttr
//===----------------------------------------------------------------------===//

/// The rules on a built-in scheme's parameters: #cp.scheme's verifier, and
/// through schemeFromKeyword every parser of a scheme. A plugin scheme's
/// parameter is its definition's to check (SchemeDefinition).
static std::optional<std::string> schemeParameterError(SchemeKind kind,
                                                       int64_t ulyssesDegree) {
  if (kind == SchemeKind::plugin)
    return std::nullopt;
  if (kind == SchemeKind::hybrid && ulyssesDegree < 2)
    return "hybrid needs a Ulysses degree u >= 2, got u = " +
           std::to_string(ulyssesDegree) + "; use allgather for u = 1";
  if (kind != SchemeKind::hybrid && ulyssesDegree != 0)
    return ("scheme " + stringifySchemeKind(kind) +
            " takes no Ulysses degree, got " + Twine(ulyssesDegree))
        .str();
  return std::nullopt;
}

std::optional<SchemeOption> mlir::cp::schemeFromKeyword(StringRef keyword,
                                                        int64_t degree,
                                                        std::string &error) {
  std::optional<SchemeKind> kind = symbolizeSchemeKind(keyword);
  if (!kind || *kind == SchemeKind::plugin) {
    // Any other identifier may name a plugin's scheme; the context that
    // resolves the option knows whether one does.
    if (isValidSchemeName(keyword) && keyword != "plugin" && degree >= 0)
      return SchemeOption::plugin(keyword, degree);
    error = ("unknown scheme '" + keyword +
             "'; expected allgather, ulysses, hybrid(u), head_tail, ring, "
             "zigzag, auto or the name of a plugin's scheme")
                .str();
    return std::nullopt;
  }
  if (*kind == SchemeKind::hybrid && degree == 0) {
    error = "hybrid needs its Ulysses degree, e.g. hybrid(2)";
    return std::nullopt;
  }
  if (std::optional<std::string> violation =
          schemeParameterError(*kind, degree)) {
    error = *violation;
    return std::nullopt;
  }
  return SchemeOption(*kind, degree);
}

void mlir::cp::printSchemeSpelling(llvm::raw_ostream &os, SchemeKind kind,
                                   StringRef pluginName, int64_t parameter) {
  bool plugin = kind == SchemeKind::plugin;
  os << (plugin ? pluginName : stringifySchemeKind(kind));
  if (kind == SchemeKind::hybrid || (plugin && parameter != 0))
    os << "(" << parameter << ")";
}

SchemeAttr mlir::cp::parseSchemeBody(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  std::string keyword;
  int64_t degree;
  if (parseKeywordWithArgument(parser, keyword, degree))
    return {};
  std::string error;
  std::optional<SchemeOption> scheme =
      schemeFromKeyword(keyword, degree, error);
  if (scheme && scheme->isPlugin()) {
    if (std::optional<std::string> bad =
            checkPluginScheme(parser.getContext(), keyword, degree)) {
      error = *bad;
      scheme.reset();
    }
  }
  if (!scheme) {
    parser.emitError(loc) << error;
    return {};
  }
  // Built here rather than by SchemeOption::resolve, which builds on this
  // file's attribute: the option depends on the attribute, not back.
  if (scheme->isPlugin())
    return SchemeAttr::getPlugin(parser.getContext(), keyword, degree);
  return SchemeAttr::get(parser.getContext(), *scheme->getKind(), degree);
}

void mlir::cp::printSchemeBody(AsmPrinter &printer, SchemeAttr scheme) {
  printSchemeSpelling(printer.getStream(), scheme.getKind(), scheme.getName(),
                      scheme.getParameter());
}

StringRef SchemeAttr::getSchemeName() const {
  return isPlugin() ? getName() : stringifySchemeKind(getKind());
}

SchemeAttr SchemeAttr::getPlugin(MLIRContext *context, StringRef name,
                                 int64_t parameter) {
  return get(context, SchemeKind::plugin, parameter, name);
}

Attribute SchemeAttr::parse(AsmParser &parser, Type) {
  if (parser.parseLess())
    return {};
  SchemeAttr scheme = parseSchemeBody(parser);
  if (!scheme || parser.parseGreater())
    return {};
  return scheme;
}

void SchemeAttr::print(AsmPrinter &printer) const {
  printer << "<";
  printSchemeBody(printer, *this);
  printer << ">";
}

LogicalResult SchemeAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 SchemeKind kind, int64_t ulyssesDegree,
                                 StringRef name) {
  if (kind == SchemeKind::plugin && !isValidSchemeName(name))
    return emitError() << "a plugin scheme needs the name it is registered "
                          "under, got '"
                       << name << "'";
  if (kind != SchemeKind::plugin && !name.empty())
    return emitError() << "built-in scheme " << stringifySchemeKind(kind)
                       << " takes no plugin name, got '" << name << "'";
  if (std::optional<std::string> violation =
          schemeParameterError(kind, ulyssesDegree))
    return emitError() << *violation;
  return success();
}

//===----------------------------------------------------------------------===//
// MaskAttr
//===----------------------------------------------------------------------===//

MaskAttr mlir::cp::parseMaskBody(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  std::string keyword;
  int64_t window;
  if (parseKeywordWithArgument(parser, keyword, window))
    return {};
  std::optional<MaskKind> kind = symbolizeMaskKind(keyword);
  if (!kind) {
    parser.emitError(loc) << "unknown mask '" << keyword
                          << "'; expected none, causal or sliding_window(W)";
    return {};
  }
  return MaskAttr::getChecked([&] { return parser.emitError(loc); },
                              parser.getContext(), *kind, window);
}

void mlir::cp::printMaskBody(AsmPrinter &printer, MaskAttr mask) {
  printer << stringifyMaskKind(mask.getKind());
  if (mask.getKind() == MaskKind::sliding_window)
    printer << "(" << mask.getWindow() << ")";
}

Attribute MaskAttr::parse(AsmParser &parser, Type) {
  if (parser.parseLess())
    return {};
  MaskAttr mask = parseMaskBody(parser);
  if (!mask || parser.parseGreater())
    return {};
  return mask;
}

void MaskAttr::print(AsmPrinter &printer) const {
  printer << "<";
  printMaskBody(printer, *this);
  printer << ">";
}

LogicalResult MaskAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               MaskKind kind, int64_t window) {
  if (kind == MaskKind::sliding_window && window <= 0)
    return emitError() << "sliding_window needs a positive window size W "
                          "(keys in (q - W, q] are visible), got W = "
                       << window;
  if (kind != MaskKind::sliding_window && window != 0)
    return emitError() << "mask " << stringifyMaskKind(kind)
                       << " takes no window size, got " << window;
  return success();
}
