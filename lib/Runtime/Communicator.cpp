//===- Communicator.cpp - MPI set-up, groups and errors -------------------===//

#include "Communicator.h"
#include "Deadline.h"

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <memory>

using namespace cp::runtime;

namespace {
int worldRank = -1;
int worldSize = 0;

void finalizeAtExit() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized)
    MPI_Finalize();
}

struct GroupTable {
  std::map<std::pair<std::string, std::vector<int64_t>>, int64_t> handles;
  std::vector<std::unique_ptr<Group>> groups;
};
GroupTable &table() {
  static GroupTable t;
  return t;
}

// MPI_Abort has the launcher kill every process at once; a line written to
// stderr just before may still sit in the pipe to the launcher's proxy and
// be lost with it. Give the proxy a moment to forward it.
[[noreturn]] void abortJob() {
  timespec pause{0, 500 * 1000 * 1000}; // 0.5 s
  nanosleep(&pause, nullptr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::exit(1);
}

std::string axesString(const std::vector<int64_t> &axes) {
  std::string s = "[";
  for (size_t i = 0; i < axes.size(); ++i)
    s += (i ? ", " : "") + std::to_string(axes[i]);
  return s + "]";
}
} // namespace

int cp::runtime::ensureMpi() {
  if (worldRank >= 0)
    return worldRank;
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) !=
        MPI_SUCCESS) {
      std::fprintf(stderr, "cp-runtime: MPI_Init_thread failed\n");
      std::exit(1);
    }
    std::atexit(finalizeAtExit);
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &worldRank);
  MPI_Comm_size(MPI_COMM_WORLD, &worldSize);
  return worldRank;
}

void cp::runtime::failHere(const std::string &call, const std::string &reason) {
  std::fprintf(stderr, "cp-runtime: rank %d: %s: %s\n", worldRank, call.c_str(),
               reason.c_str());
  std::fflush(stderr);
  abortJob();
}

void cp::runtime::failOnEveryRank(const Group &group, const std::string &call,
                                  const std::string &reason) {
  std::fprintf(stderr, "cp-runtime: rank %d: %s: %s\n", worldRank, call.c_str(),
               reason.c_str());
  std::fflush(stderr);
  // Every rank of the group prints before any of them stops the others.
  MPI_Request barrier;
  if (MPI_Ibarrier(group.comm, &barrier) == MPI_SUCCESS)
    waitOrFail(1, &barrier, call, "the barrier before stopping every rank");
  if (group.size == worldSize) {
    MPI_Finalize();
    std::exit(1);
  }
  abortJob();
}

void cp::runtime::checkMpi(int code, const std::string &call,
                           const char *mpiFunction) {
  if (code == MPI_SUCCESS)
    return;
  char reason[MPI_MAX_ERROR_STRING] = {0};
  int length = 0;
  MPI_Error_string(code, reason, &length);
  failHere(call, std::string(mpiFunction) + " failed: " + reason);
}

std::vector<int64_t> cp::runtime::gridShape(const std::string &call,
                                            const std::string &name,
                                            const std::vector<int64_t> &spec) {
  ensureMpi();
  if (spec.empty() || spec[0] < 0 ||
      static_cast<int64_t>(spec.size()) < 1 + spec[0])
    failHere(call, "malformed grid description for @" + name);
  std::vector<int64_t> shape(spec.begin() + 1, spec.begin() + 1 + spec[0]);
  int64_t processes = 1;
  std::string text;
  for (int64_t extent : shape) {
    processes *= extent;
    text += (text.empty() ? "" : "x") + std::to_string(extent);
  }
  if (processes != worldSize) {
    Group world{"world", MPI_COMM_WORLD, worldRank, worldSize};
    failOnEveryRank(world, call,
                    "grid @" + name + " (shape " + text + ") has " +
                        std::to_string(processes) +
                        " processes but the program runs on " +
                        std::to_string(worldSize) + "; launch it with " +
                        "`mpirun -np " + std::to_string(processes) + "`");
  }
  return shape;
}

std::vector<int64_t>
cp::runtime::gridCoordinates(const std::vector<int64_t> &shape) {
  std::vector<int64_t> coords(shape.size());
  int64_t rest = ensureMpi();
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    coords[d] = rest % shape[d];
    rest /= shape[d];
  }
  return coords;
}

int64_t cp::runtime::handleOf(const std::string &name,
                              const std::vector<int64_t> &spec) {
  GroupTable &t = table();
  auto found = t.handles.find({name, spec});
  if (found != t.handles.end())
    return found->second;

  std::string call = "group @" + name;
  std::vector<int64_t> shape = gridShape(call, name, spec);
  int64_t gridRank = static_cast<int64_t>(shape.size());
  int64_t numAxes = static_cast<int64_t>(spec.size()) > 1 + gridRank
                        ? spec[1 + gridRank]
                        : -1;
  if (numAxes < 0 ||
      static_cast<int64_t>(spec.size()) != 2 + gridRank + numAxes)
    failHere(call, "malformed group description");
  std::vector<int64_t> axes(spec.begin() + 2 + gridRank, spec.end());
  std::vector<bool> inGroup(gridRank, false);
  for (int64_t axis : axes) {
    if (axis < 0 || axis >= gridRank)
      failHere(call, "grid axis " + std::to_string(axis) +
                         " is out of range for a rank-" +
                         std::to_string(gridRank) + " grid");
    inGroup[axis] = true;
  }
  // Processes that agree on every other axis form one group (color); within
  // it they are ranked row-major over `axes` in the order given (key).
  std::vector<int64_t> coords = gridCoordinates(shape);
  int64_t color = 0, key = 0;
  for (int64_t d = 0; d < gridRank; ++d)
    if (!inGroup[d])
      color = color * shape[d] + coords[d];
  for (int64_t axis : axes)
    key = key * shape[axis] + coords[axis];

  auto group = std::make_unique<Group>();
  group->label = "@" + name + " axes " + axesString(axes);
  checkMpi(MPI_Comm_split(MPI_COMM_WORLD, static_cast<int>(color),
                          static_cast<int>(key), &group->comm),
           call, "MPI_Comm_split");
  MPI_Comm_set_errhandler(group->comm, MPI_ERRORS_RETURN);
  group->color = static_cast<int>(color);
  group->key = static_cast<int>(key);
  MPI_Comm_rank(group->comm, &group->rank);
  MPI_Comm_size(group->comm, &group->size);
  int64_t handle = static_cast<int64_t>(t.groups.size());
  t.groups.push_back(std::move(group));
  t.handles[{name, spec}] = handle;
  return handle;
}

const Group &cp::runtime::groupByHandle(int64_t handle,
                                        const std::string &call) {
  GroupTable &t = table();
  if (handle < 0 || handle >= static_cast<int64_t>(t.groups.size()))
    failHere(call, "unknown group handle " + std::to_string(handle));
  return *t.groups[handle];
}
