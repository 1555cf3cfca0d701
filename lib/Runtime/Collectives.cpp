//===- Collectives.cpp - the runtime's C ABI ------------------------------===//
//
// The cp_rt_* entry points compiled programs call. A call is agreed and
// checked in CollectiveCall.cpp, run over MPI in HostCollectives.cpp (or
// started in Requests.cpp) and counted in Counters.cpp.
//
//===----------------------------------------------------------------------===//

#include "Collectives.h"
#include "Deadline.h"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

using namespace cp::runtime;

namespace {

std::string nameOf(int64_t rank, void *descriptor) {
  StridedView view = StridedView::fromDescriptor(rank, descriptor, 1);
  std::string name;
  for (int64_t i = 0; i < view.numElements(); ++i) {
    char ch = view.base[i * view.strides[0]];
    if (!ch)
      break;
    name += ch;
  }
  return name;
}

std::vector<int64_t> specOf(int64_t rank, void *descriptor) {
  StridedView view = StridedView::fromDescriptor(rank, descriptor, 8);
  std::vector<int64_t> spec(view.numElements());
  copyElements(view, StridedView::contiguous(spec.data(), view.sizes, 8));
  return spec;
}

/// A Call on the buffers of two unranked memref descriptors.
Call callOn(cp_rt_collective kind, int64_t group, int64_t inRank, void *in,
            int64_t outRank, void *out, int64_t elementBytes, const char *type,
            int64_t param0 = 0, int64_t param1 = 0) {
  return Call(kind, group,
              StridedView::fromDescriptor(inRank, in, elementBytes),
              StridedView::fromDescriptor(outRank, out, elementBytes), type,
              param0, param1);
}

} // namespace

extern "C" {

void cp_rt_init(int *argc, char ***argv) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
  }
  ensureMpi();
}

void cp_rt_finalize(void) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized)
    MPI_Finalize();
}

int cp_rt_world_rank(void) { return ensureMpi(); }

int cp_rt_world_size(void) {
  ensureMpi();
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

int64_t cp_rt_group(int64_t nameRank, void *name, int64_t specRank,
                    void *spec) {
  return handleOf(nameOf(nameRank, name), specOf(specRank, spec));
}

int64_t cp_rt_grid_coord(int64_t nameRank, void *name, int64_t specRank,
                         void *spec, int64_t axis) {
  std::string grid = nameOf(nameRank, name);
  std::vector<int64_t> shape = gridShape(
      "shard.process_multi_index on @" + grid, grid, specOf(specRank, spec));
  if (axis < 0 || axis >= static_cast<int64_t>(shape.size()))
    failHere("shard.process_multi_index on @" + grid,
             "axis " + std::to_string(axis) + " is out of range");
  return gridCoordinates(shape)[axis];
}

int64_t cp_rt_grid_linear_index(int64_t nameRank, void *name, int64_t specRank,
                                void *spec) {
  std::string grid = nameOf(nameRank, name);
  gridShape("shard.process_linear_index on @" + grid, grid,
            specOf(specRank, spec));
  return ensureMpi();
}

#define CP_RT_DEFINE_COLLECTIVES(T, BYTES)                                     \
  void cp_rt_all_gather_##T(int64_t group, int64_t inRank, void *in,           \
                            int64_t outRank, void *out, int64_t gatherAxis) {  \
    runOnHost(callOn(CP_RT_ALL_GATHER, group, inRank, in, outRank, out, BYTES, \
                     #T, gatherAxis));                                         \
  }                                                                            \
  void cp_rt_all_to_all_##T(int64_t group, int64_t inRank, void *in,           \
                            int64_t outRank, void *out, int64_t splitAxis,     \
                            int64_t concatAxis) {                              \
    runOnHost(callOn(CP_RT_ALL_TO_ALL, group, inRank, in, outRank, out, BYTES, \
                     #T, splitAxis, concatAxis));                              \
  }                                                                            \
  void cp_rt_exchange_mirror_##T(int64_t group, int64_t inRank, void *in,      \
                                 int64_t outRank, void *out) {                 \
    runOnHost(                                                                 \
        callOn(CP_RT_EXCHANGE, group, inRank, in, outRank, out, BYTES, #T));   \
  }                                                                            \
  void cp_rt_shift_##T(int64_t group, int64_t inRank, void *in,                \
                       int64_t outRank, void *out, int64_t offset) {           \
    runOnHost(callOn(CP_RT_SHIFT, group, inRank, in, outRank, out, BYTES, #T,  \
                     offset));                                                 \
  }                                                                            \
  int64_t cp_rt_shift_start_##T(int64_t group, int64_t inRank, void *in,       \
                                int64_t outRank, void *out, int64_t offset) {  \
    return startOnHost(callOn(CP_RT_SHIFT, group, inRank, in, outRank, out,    \
                              BYTES, #T, offset));                             \
  }                                                                            \
  void cp_rt_relayout_##T(int64_t group, int64_t inRank, void *in,             \
                          int64_t outRank, void *out, int64_t seqAxis,         \
                          int64_t from, int64_t to) {                          \
    runOnHost(callOn(CP_RT_RELAYOUT, group, inRank, in, outRank, out, BYTES,   \
                     #T, seqAxis, from * 2 + to));                             \
  }                                                                            \
  void cp_rt_reduce_scatter_##T(int64_t group, int64_t inRank, void *in,       \
                                int64_t outRank, void *out,                    \
                                int64_t scatterAxis) {                         \
    runOnHost(callOn(CP_RT_REDUCE_SCATTER, group, inRank, in, outRank, out,    \
                     BYTES, #T, scatterAxis));                                 \
  }

CP_RT_DEFINE_COLLECTIVES(f64, 8)
CP_RT_DEFINE_COLLECTIVES(f32, 4)
CP_RT_DEFINE_COLLECTIVES(f16, 2)
CP_RT_DEFINE_COLLECTIVES(bf16, 2)
CP_RT_DEFINE_COLLECTIVES(i64, 8)
CP_RT_DEFINE_COLLECTIVES(i32, 4)
CP_RT_DEFINE_COLLECTIVES(i16, 2)
CP_RT_DEFINE_COLLECTIVES(i8, 1)
CP_RT_DEFINE_COLLECTIVES(i1, 1)

int64_t cp_rt_bytes_sent(int kind) { return countedBytes(kind); }

int64_t cp_rt_calls(int kind) { return countedCalls(kind); }

void cp_rt_reset_counters(void) {
  resetCounts();
  resetInFlightTime();
}

} // extern "C"
