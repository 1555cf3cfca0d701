//===- Requests.cpp - shifts in flight: start, wait, in-flight time -------===//
//
// The host side of cp.buffer.shift_start / cp.buffer.wait. A start agrees
// with the group like every collective, then posts MPI_Irecv / MPI_Isend
// and returns; the program computes; the wait completes both (within the collective time limit, see
// Deadline.h) and unpacks.
// Dense buffers are sent from and received into directly (the compiler
// keeps them untouched in between), strided ones through staging owned by
// the request.
//
//===----------------------------------------------------------------------===//

#include "Collectives.h"
#include "Deadline.h"

#include <map>
#include <memory>

using namespace cp::runtime;

namespace {

struct Request {
  std::unique_ptr<Call> call;
  MPI_Request mpi[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  std::vector<char> sendStorage, recvStorage;
  double startedAt = 0;
};

std::map<int64_t, Request> &pending() {
  static std::map<int64_t, Request> requests;
  return requests;
}
int64_t nextHandle = 1;
double secondsInFlight = 0;

} // namespace

int64_t cp::runtime::startOnHost(const Call &call) {
  int64_t handle = nextHandle++;
  Request &request = pending()[handle];
  request.call = std::make_unique<Call>(call);
  const Call &c = *request.call;
  int to = c.sendTo(), from = c.receiveFrom();
  int64_t bytes = c.input.numBytes();
  if (bytes > INT32_MAX) // on every rank, also one that only copies
    c.fail("a message of " + std::to_string(bytes) +
           " bytes exceeds MPI's int count");
  if (to == c.group->rank && from == c.group->rank) {
    copyElements(c.input, c.output);
  } else {
    void *recv = c.output.base;
    if (!c.output.isContiguous()) {
      request.recvStorage.resize(bytes);
      recv = request.recvStorage.data();
    }
    void *send = denseBytes(c.input, request.sendStorage);
    int tag = 400;
    checkMpi(MPI_Irecv(recv, static_cast<int>(bytes), MPI_BYTE, from, tag,
                       c.group->comm, &request.mpi[0]),
             c.label, "MPI_Irecv");
    checkMpi(MPI_Isend(send, static_cast<int>(bytes), MPI_BYTE, to, tag,
                       c.group->comm, &request.mpi[1]),
             c.label, "MPI_Isend");
  }
  count(c);
  if (tracing())
    trace(c.label + ": start request " + std::to_string(handle) +
          " (to group rank " + std::to_string(to) + ", from " +
          std::to_string(from) + ")");
  request.startedAt = MPI_Wtime();
  return handle;
}

void cp::runtime::resetInFlightTime() { secondsInFlight = 0; }

extern "C" {

void cp_rt_wait(int64_t handle) {
  auto found = pending().find(handle);
  if (found == pending().end())
    failHere("cp.buffer.wait",
             "unknown or already completed request " + std::to_string(handle));
  Request &request = found->second;
  double inFlight = MPI_Wtime() - request.startedAt;
  secondsInFlight += inFlight;
  const Call &c = *request.call;
  waitOrFail(2, request.mpi, "cp.buffer.wait of " + c.label, c.peersText());
  if (!request.recvStorage.empty())
    copyElements(StridedView::contiguous(request.recvStorage.data(),
                                         c.input.sizes, c.input.elementBytes),
                 c.output);
  if (tracing())
    trace(c.label + ": wait request " + std::to_string(handle) + " after " +
          std::to_string(inFlight * 1e3) + " ms in flight");
  pending().erase(found);
}

double cp_rt_seconds_in_flight(void) { return secondsInFlight; }

} // extern "C"
