//===- CaseEmitter.h - the cp IR of cp-run-attention's cases ----*- C++ -*-===//
//
// One func.func per case, printed for cp-compile (--emit-mlir). The runner
// builds its operands to the types written here, hence maskShape.
//
//===----------------------------------------------------------------------===//

#ifndef CP_TOOLS_CPRUNATTENTION_CASEEMITTER_H
#define CP_TOOLS_CPRUNATTENTION_CASEEMITTER_H

#include "RunConfig.h"

#include <cstdint>
#include <vector>

namespace cp::run {

/// The shape of a case's explicit mask operand (empty without one).
std::vector<int64_t> maskShape(const Config &c, Case::Explicit kind);

/// Prints the grid and one function per case of `c` to stdout.
void emitMlir(const Config &c);

} // namespace cp::run

#endif // CP_TOOLS_CPRUNATTENTION_CASEEMITTER_H
