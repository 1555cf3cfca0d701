//===- Deadline.h - bounded waits for peers, and the fault hook -*- C++ -*-===//
//
// A collective completes only when its peers take part. If one of them has
// died or stalled, a blocking MPI call waits forever; every wait of the host
// runtime therefore goes through waitOrFail, which gives up after a time
// limit and fails on this rank with the call, the MPI operation, the peer
// and the time. CP_RT_FAULT makes a chosen rank die or stall at a chosen
// collective, so that tests can check exactly that.
//
//===----------------------------------------------------------------------===//

#ifndef CP_RUNTIME_DEADLINE_H
#define CP_RUNTIME_DEADLINE_H

#include <mpi.h>

#include <string>

namespace cp::runtime {

/// Seconds a collective waits for its peers: CP_RT_TIMEOUT_S (a positive
/// number; 0 waits forever), 600 by default, like common training
/// frameworks' collective timeouts.
double collectiveTimeLimit();

/// Completes `count` requests, or fails on this rank ("rank R: call: what
/// did not complete within T s; ...") once the time limit has passed.
/// `what` names the MPI operation and, for point-to-point ones, the peer.
void waitOrFail(int count, MPI_Request *requests, const std::string &call,
                const std::string &what);

/// The CP_RT_FAULT=ACTION:RANK:N hook: on world rank RANK, the N-th
/// collective call (1-based, any kind, counted as it starts) kills the
/// process with SIGKILL (ACTION `kill`) or stops it forever (`stall`).
/// Does nothing without the variable.
void faultPoint(const std::string &call);

} // namespace cp::runtime

#endif // CP_RUNTIME_DEADLINE_H
