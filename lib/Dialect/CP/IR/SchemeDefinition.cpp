//===- SchemeDefinition.cpp - the cp dialect's scheme registry ------------===//
//
// Schemes are registered with the cp dialect of a context: the built-ins by
// cp's dialect extension (registerBuiltinSchemes), plugin schemes by the
// plugin's extension (docs/SchemePlugins.md). Lookups go by name: this
// file never reads a #cp.scheme, so the attribute's parser can ask it
// which plugin schemes exist (lookupScheme, by attribute, is in
// SchemeConstraints.cpp).
//
//===----------------------------------------------------------------------===//

#include "cp/Dialect/CP/IR/SchemeDefinition.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::cp;

SchemeDefinition::~SchemeDefinition() = default;

std::string SchemeDefinition::describe() const {
  if (isBuiltin())
    return ("scheme '" + name + "'");
  return llvm::formatv("scheme '{0}' (plugin '{1}')", name, provider).str();
}

std::optional<std::string>
SchemeDefinition::checkParameter(int64_t parameter) const {
  if (parameter == 0)
    return std::nullopt;
  return llvm::formatv("{0} takes no parameter, got {1}", describe(), parameter)
      .str();
}

bool mlir::cp::isValidSchemeName(StringRef name) {
  if (name.empty() || !(llvm::isAlpha(name[0]) || name[0] == '_'))
    return false;
  return llvm::all_of(
      name, [](char c) { return llvm::isAlnum(c) || c == '_' || c == '.'; });
}

/// The dialect's definitions; empty when cp is not loaded.
static ArrayRef<std::unique_ptr<SchemeDefinition>>
definitionsOf(MLIRContext *context) {
  auto *dialect = context->getLoadedDialect<CPDialect>();
  if (!dialect)
    return {};
  return dialect->schemes;
}

LogicalResult
mlir::cp::registerScheme(MLIRContext *context,
                         std::unique_ptr<SchemeDefinition> definition) {
  auto *dialect = context->getLoadedDialect<CPDialect>();
  Location loc = UnknownLoc::get(context);
  if (!dialect)
    return emitError(loc) << "cannot register " << definition->describe()
                          << ": the cp dialect is not loaded";
  StringRef name = definition->getName();
  if (!isValidSchemeName(name))
    return emitError(loc)
           << "cannot register " << definition->describe()
           << ": a scheme name is an identifier (letters, digits, '_', '.')";
  std::optional<SchemeKind> builtin = symbolizeSchemeKind(name);
  if (builtin && (!definition->isBuiltin() || *builtin == SchemeKind::plugin))
    return emitError(loc) << "cannot register " << definition->describe()
                          << ": '" << name
                          << "' is a built-in scheme keyword; choose "
                             "another name";
  for (const auto &existing : dialect->schemes)
    if (existing->getName() == name)
      return emitError(loc) << "cannot register " << definition->describe()
                            << ": " << existing->describe()
                            << " is already registered under that name";
  dialect->schemes.push_back(std::move(definition));
  return success();
}

const SchemeDefinition *mlir::cp::lookupPluginScheme(MLIRContext *context,
                                                     StringRef name) {
  for (const auto &definition : definitionsOf(context))
    if (!definition->isBuiltin() && definition->getName() == name)
      return definition.get();
  return nullptr;
}

const SchemeDefinition *mlir::cp::lookupBuiltinScheme(MLIRContext *context,
                                                      StringRef keyword) {
  for (const auto &definition : definitionsOf(context))
    if (definition->isBuiltin() && definition->getName() == keyword)
      return definition.get();
  return nullptr;
}

std::optional<std::string> mlir::cp::checkPluginScheme(MLIRContext *context,
                                                       StringRef name,
                                                       int64_t parameter) {
  const SchemeDefinition *definition = lookupPluginScheme(context, name);
  if (!definition)
    return unknownSchemeMessage(context, name);
  return definition->checkParameter(parameter);
}

SmallVector<const SchemeDefinition *>
mlir::cp::registeredSchemes(MLIRContext *context) {
  SmallVector<const SchemeDefinition *> builtins, plugins;
  for (const auto &definition : definitionsOf(context))
    (definition->isBuiltin() ? builtins : plugins).push_back(definition.get());
  builtins.append(plugins);
  return builtins;
}

std::string mlir::cp::unknownSchemeMessage(MLIRContext *context,
                                           StringRef name) {
  SmallVector<std::string> plugins;
  for (const SchemeDefinition *definition : registeredSchemes(context))
    if (!definition->isBuiltin())
      plugins.push_back(definition->getName().str());
  std::string loaded = plugins.empty()
                           ? std::string("none is registered")
                           : "registered: " + llvm::join(plugins, ", ");
  return llvm::formatv("unknown scheme '{0}'; expected allgather, ulysses, "
                       "hybrid(u), head_tail, ring, zigzag, auto or a scheme "
                       "a loaded plugin registers ({1})",
                       name, loaded)
      .str();
}
