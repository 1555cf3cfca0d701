//===- CPTypes.td - cp dialect types -----------------------*- tablegen -*-===//
//
// !cp.request: a collective in flight.
//
//===----------------------------------------------------------------------===//

#ifndef CP_TYPES_TD
#define CP_TYPES_TD

include "cp/Dialect/CP/IR/CPDialect.td"
include "mlir/IR/AttrTypeBase.td"

def CP_RequestType : TypeDef<CP_Dialect, "Request"> {
  let mnemonic = "request";
  let summary = "A collective that has been started and not yet waited for";
  let description = [{
    Produced by a split-phase collective (`cp.buffer.shift_start`) and
    consumed by exactly one `cp.buffer.wait` (which `cp-overlap-collectives`
    places in the same block). Between the two, the collective's output buffer must not be read or written and its
    input buffer must not be written; `cp-overlap-collectives` places the
    wait accordingly. Lowered to the runtime's integer request handle.
  }];
}

#endif // CP_TYPES_TD
