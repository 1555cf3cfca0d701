//===- ChooseScheme.h - resolve scheme = auto -------------------*- C++ -*-===//
//
// What cp-choose-scheme does for one op, also used by cp-apply-scheme when
// it meets `auto` itself.
//
//===----------------------------------------------------------------------===//

#ifndef CP_DIALECT_CP_TRANSFORMS_CHOOSESCHEME_H
#define CP_DIALECT_CP_TRANSFORMS_CHOOSESCHEME_H

#include "cp/Dialect/CP/IR/CPOps.h"
#include "cp/Dialect/CP/IR/SchemeCost.h"

namespace mlir {
namespace cp {

/// The machine an op is costed on: `base`, then the `cp.machine`
/// dictionaries of the op's ancestors (outermost first) and of the op
/// itself. Fails with a diagnostic on a bad entry.
FailureOr<MachineModel> machineFor(Operation *op, MachineModel base);

/// The fastest scheme for `op` on `machine` (as machineFor and any pass
/// options made it). With
/// `record`, the op's scheme becomes that scheme and its `cp.cost`
/// attribute lists every scheme's estimate or rejection. When no scheme can
/// be used, fails with one diagnostic on the op that says why each was
/// rejected.
FailureOr<SchemeAttr> chooseScheme(AttentionOp op, const MachineModel &machine,
                                   bool record);

} // namespace cp
} // namespace mlir

#endif // CP_DIALECT_CP_TRANSFORMS_CHOOSESCHEME_H
