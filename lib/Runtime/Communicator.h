//===- Communicator.h - groups, and failing on every rank of one -*- C++ -*-===//
//
// The cache of one communicator per (grid, axes), and the runtime's second
// way to fail: on every rank of a group (inputs disagree: each rank says
// why, then all stop with exit code 1 instead of hanging). MPI itself and
// failing on one rank are MpiProcess.h's.
//
//===----------------------------------------------------------------------===//

#ifndef CP_RUNTIME_COMMUNICATOR_H
#define CP_RUNTIME_COMMUNICATOR_H

#include "MpiProcess.h"

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace cp::runtime {

/// A process group: the `axes` of a grid, ranked row-major over `axes`.
struct Group {
  std::string label; // "@cp axes [0]"
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;
  int size = 1;
  /// The split of the world that made `comm`: other backends (NCCL) split
  /// their world communicator the same way.
  int color = 0, key = 0;
};

/// Every rank of `group` has found the same problem: each prints its own
/// message, then all stop with exit code 1.
[[noreturn]] void failOnEveryRank(const Group &group, const std::string &call,
                                  const std::string &reason);

/// The grid of `name`, read from a [rank, shape..., nAxes, axes...] spec;
/// fails on every rank unless the world has exactly prod(shape) processes.
std::vector<int64_t> gridShape(const std::string &call, const std::string &name,
                               const std::vector<int64_t> &spec);

/// The handle of the group of `axes` in a [rank, shape..., nAxes, axes...]
/// spec of grid `name`; its communicator is created on first use, then
/// cached.
int64_t handleOf(const std::string &name, const std::vector<int64_t> &spec);
const Group &groupByHandle(int64_t handle, const std::string &call);

/// This process's coordinate along each grid axis (row-major world rank).
std::vector<int64_t> gridCoordinates(const std::vector<int64_t> &shape);

} // namespace cp::runtime

#endif // CP_RUNTIME_COMMUNICATOR_H
