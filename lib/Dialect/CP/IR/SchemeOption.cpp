//===- SchemeOption.cpp - a scheme as a pass option -----------------------===//
//
// The command-line form of a scheme: `keyword` or `keyword(N)`, read with
// #cp.scheme's rules (schemeFromKeyword).
//
//===----------------------------------------------------------------------===//

#include "cp/Dialect/CP/IR/SchemeOption.h"
#include "cp/Dialect/CP/IR/CPAttrBodies.h"
#include "cp/Dialect/CP/IR/SchemeDefinition.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"

using namespace mlir;
using namespace mlir::cp;

SchemeOption SchemeOption::parse(StringRef text) {
  text = text.trim();
  if (text.empty())
    return SchemeOption();
  StringRef keyword = text, argument;
  int64_t degree = 0;
  std::string error;
  std::optional<SchemeOption> scheme;
  size_t open = text.find('(');
  if (open != StringRef::npos) {
    keyword = text.take_front(open).rtrim();
    argument = text.drop_front(open + 1);
    if (!argument.consume_back(")") ||
        argument.trim().getAsInteger(10, degree))
      error = ("expected `" + keyword + "(N)` with an integer N").str();
  }
  if (error.empty())
    scheme = schemeFromKeyword(keyword, degree, error);
  if (scheme)
    return *scheme;
  SchemeOption invalid;
  invalid.text = text.str();
  invalid.invalid = error;
  return invalid;
}

FailureOr<SchemeAttr> SchemeOption::resolve(MLIRContext *context,
                                            StringRef user) const {
  if (invalid)
    return emitError(UnknownLoc::get(context))
           << user << ": invalid scheme option '" << text << "': " << *invalid;
  if (!kind)
    return SchemeAttr();
  if (isPlugin()) {
    std::optional<std::string> bad =
        checkPluginScheme(context, pluginName, ulyssesDegree);
    if (!bad)
      return SchemeAttr::getPlugin(context, pluginName, ulyssesDegree);
    std::string written;
    llvm::raw_string_ostream os(written);
    os << *this;
    return emitError(UnknownLoc::get(context))
           << user << ": invalid scheme option '" << written << "': " << *bad;
  }
  return SchemeAttr::get(context, *kind, ulyssesDegree);
}

llvm::raw_ostream &mlir::cp::operator<<(llvm::raw_ostream &os,
                                        const SchemeOption &scheme) {
  if (scheme.invalid)
    return os << scheme.text;
  if (!scheme.kind)
    return os;
  printSchemeSpelling(os, *scheme.kind, scheme.pluginName,
                      scheme.ulyssesDegree);
  return os;
}

bool llvm::cl::parser<SchemeOption>::parse(Option &, StringRef,
                                           StringRef arg, SchemeOption &value) {
  value = SchemeOption::parse(arg);
  return false;
}

void llvm::cl::parser<SchemeOption>::printOptionDiff(const Option &option,
                                                     const SchemeOption &value,
                                                     const OptVal &defaultValue,
                                                     size_t globalWidth) const {
  printOptionName(option, globalWidth);
  std::string text;
  llvm::raw_string_ostream os(text);
  os << value;
  outs() << "= " << text;
  size_t padding = text.size() < 8 ? 8 - text.size() : 0;
  outs().indent(padding) << " (default: ";
  if (defaultValue.hasValue())
    outs() << defaultValue.getValue();
  else
    outs() << "*no default*";
  outs() << ")\n";
}

void llvm::cl::parser<SchemeOption>::anchor() {}
