//===- BuiltinSchemes.h - cp's own schemes as SchemeDefinitions -*- C++ -*-===//
//
// allgather, ulysses, hybrid(u), head_tail, ring and zigzag, registered with
// the cp dialect through the same interface plugins use
// (SchemeDefinition.h).
//
//===----------------------------------------------------------------------===//

#ifndef CP_DIALECT_CP_TRANSFORMS_BUILTINSCHEMES_H
#define CP_DIALECT_CP_TRANSFORMS_BUILTINSCHEMES_H

namespace mlir {
class DialectRegistry;
namespace cp {

/// Adds the extension that registers the built-in schemes when the cp
/// dialect is loaded (part of cp::registerAllDialects).
void registerBuiltinSchemes(DialectRegistry &registry);

} // namespace cp
} // namespace mlir

#endif // CP_DIALECT_CP_TRANSFORMS_BUILTINSCHEMES_H
