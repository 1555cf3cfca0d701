//===- Communicator.cpp - groups, and failing on every rank of one --------===//

#include "Communicator.h"
#include "Deadline.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>

using namespace cp::runtime;

namespace {
struct GroupTable {
  std::map<std::pair<std::string, std::vector<int64_t>>, int64_t> handles;
  std::vector<std::unique_ptr<Group>> groups;
};
GroupTable &table() {
  static GroupTable t;
  return t;
}

std::string axesString(const std::vector<int64_t> &axes) {
  std::string s = "[";
  for (size_t i = 0; i < axes.size(); ++i)
    s += (i ? ", " : "") + std::to_string(axes[i]);
  return s + "]";
}
} // namespace

void cp::runtime::failOnEveryRank(const Group &group, const std::string &call,
                                  const std::string &reason) {
  std::fprintf(stderr, "cp-runtime: rank %d: %s: %s\n", ensureMpi(),
               call.c_str(), reason.c_str());
  std::fflush(stderr);
  // Every rank of the group prints before any of them stops the others.
  MPI_Request barrier;
  if (MPI_Ibarrier(group.comm, &barrier) == MPI_SUCCESS)
    waitOrFail(1, &barrier, call, "the barrier before stopping every rank");
  if (group.size == worldSize()) {
    MPI_Finalize();
    std::exit(1);
  }
  abortJob();
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
  if (processes != worldSize()) {
    Group world{"world", MPI_COMM_WORLD, ensureMpi(), worldSize()};
    failOnEveryRank(world, call,
                    "grid @" + name + " (shape " + text + ") has " +
                        std::to_string(processes) +
                        " processes but the program runs on " +
                        std::to_string(worldSize()) + "; launch it with " +
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
