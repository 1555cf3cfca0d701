//===- CPAttrBodies.h - shared syntax of #cp.scheme / #cp.mask --*- C++ -*-===//
//
// The keyword form (`hybrid(2)`, `sliding_window(128)`) shared by the
// attributes' own syntax and the `scheme = ...` / `mask = ...` op clauses.
//
//===----------------------------------------------------------------------===//

#ifndef CP_DIALECT_CP_IR_CPATTRBODIES_H
#define CP_DIALECT_CP_IR_CPATTRBODIES_H

#include "cp/Dialect/CP/IR/CPDialect.h"
#include "cp/Dialect/CP/IR/SchemeOption.h"
#include "mlir/IR/OpImplementation.h"

namespace mlir {
namespace cp {
/// Parse/print a scheme without the `#cp.scheme<...>` wrapper. The parser
/// returns a null attribute after emitting an error.
SchemeAttr parseSchemeBody(AsmParser &parser);
void printSchemeBody(AsmPrinter &printer, SchemeAttr scheme);
/// Parse/print a mask without the `#cp.mask<...>` wrapper.
MaskAttr parseMaskBody(AsmParser &parser);
void printMaskBody(AsmPrinter &printer, MaskAttr mask);

/// Writes a scheme as ops and options spell it: the built-in keyword or
/// the plugin scheme's `pluginName`, then `(parameter)` for hybrid and for
/// a plugin scheme with a nonzero parameter. The one spelling of #cp.scheme,
/// SchemeOption and the cost model's names.
void printSchemeSpelling(llvm::raw_ostream &os, SchemeKind kind,
                         llvm::StringRef pluginName, int64_t parameter);

/// The scheme `keyword` (with `(degree)`, 0 when absent) names, under the
/// rules of #cp.scheme; std::nullopt with `error` set otherwise. Shared by
/// the attribute's parser and SchemeOption::parse.
std::optional<SchemeOption>
schemeFromKeyword(llvm::StringRef keyword, int64_t degree, std::string &error);
} // namespace cp
} // namespace mlir

#endif // CP_DIALECT_CP_IR_CPATTRBODIES_H
