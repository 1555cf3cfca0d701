//===- CPAttrBodies.h - shared syntax of #cp.scheme / #cp.mask --*- C++ -*-===//
//
// The keyword form (`hybrid(2)`, `sliding_window(128)`) shared by the
// attributes' own syntax and the `scheme = ...` / `mask = ...` op clauses.
//
//===----------------------------------------------------------------------===//

#ifndef CP_DIALECT_CP_IR_CPATTRBODIES_H
#define CP_DIALECT_CP_IR_CPATTRBODIES_H

#include "cp/Dialect/CP/IR/CPDialect.h"
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
} // namespace cp
} // namespace mlir

#endif // CP_DIALECT_CP_IR_CPATTRBODIES_H
