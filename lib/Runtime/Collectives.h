//===- Collectives.h - one collective call, checked and run -----*- C++ -*-===//
//
// What every backend shares: a Call is one rank's collective, built from
// its buffers. Building it has the group agree on what each rank passes
// (a disagreement fails on every rank) and checks the output shape; then
// the host algorithms (MPI) or the GPU backend (NCCL) move the data, and
// the counters record the bytes of DESIGN §2.
//
//===----------------------------------------------------------------------===//

#ifndef CP_RUNTIME_COLLECTIVES_H
#define CP_RUNTIME_COLLECTIVES_H

#include "cp/Runtime/cp_runtime.h"

#include "Communicator.h"
#include "StridedView.h"

#include <string>
#include <vector>

namespace cp::runtime {

struct Call {
  /// Agrees with the group and validates; `params` are gather_axis,
  /// (split_axis, concat_axis) or the shift offset.
  Call(cp_rt_collective kind, int64_t groupHandle, StridedView input,
       StridedView output, const char *type, int64_t param0 = 0,
       int64_t param1 = 0);

  /// The same call on other buffers of the same shapes (host staging).
  Call withBuffers(StridedView newInput, StridedView newOutput) const;

  /// Fails on every rank of the group, with this rank's view of the call.
  [[noreturn]] void fail(const std::string &reason) const;

  /// For exchange and shift: the group ranks this rank sends to and
  /// receives from.
  int sendTo() const;
  int receiveFrom() const;
  /// Bytes this rank sends to other ranks.
  int64_t bytesSent() const;
  /// all_to_all: the shape of the part exchanged with each rank.
  std::vector<int64_t> part() const;

  cp_rt_collective kind;
  const char *type;
  const Group *group = nullptr;
  std::string label;
  StridedView input, output;
  int64_t params[2];

private:
  Call() = default;
  void agree() const;
  void validate() const;
};

/// Runs `call` over MPI on host buffers, and counts it.
void runOnHost(const Call &call);
/// Records `call` in the byte and call counters.
void count(const Call &call);

} // namespace cp::runtime

#endif // CP_RUNTIME_COLLECTIVES_H
