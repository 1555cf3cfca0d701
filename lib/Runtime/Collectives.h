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
  /// "MPI_Isend to group rank T / MPI_Irecv from group rank F".
  std::string peersText() const;
  /// Bytes this rank sends to other ranks.
  int64_t bytesSent() const;
  /// all_to_all: the shape of the part exchanged with each rank.
  std::vector<int64_t> part() const;

  /// relayout: where each half (L/2 rows along the sequence axis) goes or
  /// comes from. `half` is this rank's half, `peer` the group rank on the
  /// other side and `peerHalf` the half it is there.
  struct HalfMove {
    int half, peer, peerHalf;
  };
  std::vector<HalfMove> relayoutSends() const;
  std::vector<HalfMove> relayoutReceives() const;
  /// relayout: this rank's half `half` of a buffer.
  StridedView halfOf(const StridedView &view, int half) const;

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
/// Records `call` in the byte and call counters (and traces it).
void count(const Call &call);
/// The bytes sent and the calls made of one kind (all kinds for kind < 0)
/// since the start or the last resetCounts().
int64_t countedBytes(int kind);
int64_t countedCalls(int kind);
void resetCounts();

/// A dense copy of `view` in `storage`, or the view's own memory when it is
/// already dense.
void *denseBytes(const StridedView &view, std::vector<char> &storage);

/// Starts a shift with nonblocking MPI (counted now); returns the request
/// handle that cp_rt_wait completes.
int64_t startOnHost(const Call &call);
/// Clears the in-flight time (cp_rt_reset_counters).
void resetInFlightTime();

/// Whether CP_RT_TRACE asks for a trace, and one line of it on stderr.
bool tracing();
void trace(const std::string &line);

} // namespace cp::runtime

#endif // CP_RUNTIME_COLLECTIVES_H
