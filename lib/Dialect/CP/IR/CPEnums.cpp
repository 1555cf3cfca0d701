//===- CPEnums.cpp - the cp dialect's enums -------------------------------===//
//
// The generated enum definitions (SchemeKind, SequenceLayout, ...) in a unit
// of their own: the attributes and the scheme registry both use them, and
// neither has to reach the other for them.
//
//===----------------------------------------------------------------------===//

#include "cp/Dialect/CP/IR/CPDialect.h"

#include "cp/Dialect/CP/IR/CPEnums.cpp.inc"
