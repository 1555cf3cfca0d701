//===- Collectives.cpp - the runtime's C entry points ---------------------===//
//
// all_gather, all_to_all, exchange and shift over MPI on buffers of any
// rank, shape and stride, plus grid queries and byte counters. Every
// collective first has the group agree on what each rank passes, so a shape
// that differs across ranks is reported on every rank instead of hanging.
//
//===----------------------------------------------------------------------===//

#include "cp/Runtime/cp_runtime.h"

#include "Communicator.h"
#include "StridedView.h"

#include <array>
#include <climits>
#include <cstring>
#include <vector>

using namespace cp::runtime;

namespace {

using Counters = std::array<int64_t, CP_RT_NUM_COLLECTIVES>;
Counters bytesSent{};
Counters callCount{};

/// One kind's counter, or the sum over kinds for kind < 0.
int64_t counterOf(const Counters &counters, int kind) {
  if (kind >= 0 && kind < CP_RT_NUM_COLLECTIVES)
    return counters[kind];
  int64_t total = 0;
  for (int64_t c : counters)
    total += c;
  return total;
}

constexpr int kMaxRank = 8;
constexpr const char *kCollectiveNames[] = {"cp.all_gather", "cp.all_to_all",
                                            "cp.exchange", "cp.shift"};

/// What one rank passes to a collective; every rank of the group must pass
/// the same.
struct CallHeader {
  int64_t kind, elementBytes, rank;
  int64_t inSizes[kMaxRank], outSizes[kMaxRank];
  int64_t params[2];
};

std::string describe(const int64_t *sizes, int64_t rank, const char *type) {
  std::string s;
  for (int64_t d = 0; d < rank; ++d)
    s += (d ? "x" : "") + std::to_string(sizes[d]);
  return (s.empty() ? "scalar" : s) + "x" + type;
}

/// One collective call: its buffers, its group and its label for messages.
struct Call {
  Call(cp_rt_collective kind, int64_t groupHandle, int64_t inRank, void *in,
       int64_t outRank, void *out, int64_t elementBytes, const char *type,
       int64_t param0 = 0, int64_t param1 = 0)
      : kind(kind), type(type) {
    ensureMpi();
    group = &groupByHandle(groupHandle, kCollectiveNames[kind]);
    label = std::string(kCollectiveNames[kind]) + " on " + group->label;
    input = StridedView::fromDescriptor(inRank, in, elementBytes);
    output = StridedView::fromDescriptor(outRank, out, elementBytes);
    params[0] = param0;
    params[1] = param1;
    agree();
    ++callCount[kind];
  }

  /// Fails on every rank of the group, with this rank's view of the call.
  [[noreturn]] void fail(const std::string &reason) const {
    failOnEveryRank(*group, label, reason);
  }

  void agree() const {
    if (input.rank() > kMaxRank || output.rank() > kMaxRank)
      failHere(label, "buffers of rank > 8 are not supported");
    CallHeader mine{};
    mine.kind = kind;
    mine.elementBytes = input.elementBytes;
    mine.rank = input.rank();
    for (int64_t d = 0; d < input.rank(); ++d)
      mine.inSizes[d] = input.sizes[d];
    for (int64_t d = 0; d < output.rank(); ++d)
      mine.outSizes[d] = output.sizes[d];
    mine.params[0] = params[0];
    mine.params[1] = params[1];
    std::vector<CallHeader> all(group->size);
    checkMpi(MPI_Allgather(&mine, sizeof(CallHeader), MPI_BYTE, all.data(),
                           sizeof(CallHeader), MPI_BYTE, group->comm),
             label, "MPI_Allgather");
    for (int r = 0; r < group->size; ++r) {
      const CallHeader &other = all[r];
      if (other.kind != mine.kind)
        fail("group rank " + std::to_string(r) + " is in " +
             kCollectiveNames[other.kind] +
             " at the same point; every rank must run the same program");
      if (std::memcmp(&other, &mine, sizeof(CallHeader)) == 0)
        continue;
      fail("this rank (group rank " + std::to_string(group->rank) +
           ") passes " + describe(mine.inSizes, mine.rank, type) + " -> " +
           describe(mine.outSizes, output.rank(), type) + " but group rank " +
           std::to_string(r) + " passes " +
           describe(other.inSizes, other.rank, type) + " -> " +
           describe(other.outSizes, other.rank, type) +
           "; every rank of the group must pass the same shapes");
    }
  }

  /// A dense copy of `view` (the view itself when already dense).
  void *dense(const StridedView &view, std::vector<char> &storage) const {
    if (view.isContiguous())
      return view.base;
    storage.resize(view.numBytes());
    copyElements(view, StridedView::contiguous(storage.data(), view.sizes,
                                               view.elementBytes));
    return storage.data();
  }

  int count(int64_t bytes) const {
    if (bytes > INT_MAX)
      fail("a message of " + std::to_string(bytes) +
           " bytes exceeds MPI's int count");
    return static_cast<int>(bytes);
  }

  void checkAxis(const char *name, int64_t axis) const {
    if (axis < 0 || axis >= input.rank())
      fail(std::string(name) + " " + std::to_string(axis) +
           " is out of range for a rank-" + std::to_string(input.rank()) +
           " buffer");
  }

  /// Output sizes must equal input sizes except where `expected` says.
  void checkOutputShape(const std::vector<int64_t> &expected) const {
    if (output.sizes != expected)
      fail("output buffer is " + output.shapeString() + " but " +
           input.shapeString() + " input needs " +
           StridedView::contiguous(nullptr, expected, 1).shapeString());
  }

  cp_rt_collective kind;
  const char *type;
  const Group *group = nullptr;
  std::string label;
  StridedView input, output;
  int64_t params[2];
};

void allGather(Call c, int64_t axis) {
  c.checkAxis("gather_axis", axis);
  int p = c.group->size;
  std::vector<int64_t> expected = c.input.sizes;
  expected[axis] *= p;
  c.checkOutputShape(expected);
  std::vector<char> sendStorage, recvStorage;
  void *send = c.dense(c.input, sendStorage);
  int64_t blockBytes = c.input.numBytes();
  // Blocks land in rank order; they are the output itself when it is dense
  // and nothing precedes the gather axis.
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= c.output.sizes[d];
  bool direct = c.output.isContiguous() && outer == 1;
  void *recv = c.output.base;
  if (!direct) {
    recvStorage.resize(blockBytes * p);
    recv = recvStorage.data();
  }
  checkMpi(MPI_Allgather(send, c.count(blockBytes), MPI_BYTE, recv,
                         c.count(blockBytes), MPI_BYTE, c.group->comm),
           c.label, "MPI_Allgather");
  if (!direct)
    for (int r = 0; r < p; ++r)
      copyElements(
          StridedView::contiguous(recvStorage.data() + r * blockBytes,
                                  c.input.sizes, c.input.elementBytes),
          c.output.slice(axis, r * c.input.sizes[axis], c.input.sizes[axis]));
  bytesSent[CP_RT_ALL_GATHER] += blockBytes * (p - 1);
}

void allToAll(Call c, int64_t split, int64_t concat) {
  c.checkAxis("split_axis", split);
  c.checkAxis("concat_axis", concat);
  int p = c.group->size;
  if (c.input.sizes[split] % p != 0)
    c.fail("split_axis " + std::to_string(split) + " has size " +
           std::to_string(c.input.sizes[split]) +
           ", which the group size P = " + std::to_string(p) +
           " does not divide");
  std::vector<int64_t> part = c.input.sizes;
  part[split] /= p;
  std::vector<int64_t> expected = part;
  if (split != concat)
    expected[concat] *= p;
  else
    expected[concat] = c.input.sizes[concat];
  c.checkOutputShape(expected);
  int64_t eb = c.input.elementBytes;
  int64_t partBytes = StridedView::contiguous(nullptr, part, eb).numBytes();
  std::vector<char> send(partBytes * p), recv(partBytes * p);
  for (int r = 0; r < p; ++r)
    copyElements(
        c.input.slice(split, r * part[split], part[split]),
        StridedView::contiguous(send.data() + r * partBytes, part, eb));
  checkMpi(MPI_Alltoall(send.data(), c.count(partBytes), MPI_BYTE, recv.data(),
                        c.count(partBytes), MPI_BYTE, c.group->comm),
           c.label, "MPI_Alltoall");
  for (int r = 0; r < p; ++r)
    copyElements(StridedView::contiguous(recv.data() + r * partBytes, part, eb),
                 c.output.slice(concat, r * part[concat], part[concat]));
  bytesSent[CP_RT_ALL_TO_ALL] += partBytes * (p - 1);
}

/// Sends the input to `to` and writes what `from` sends into the output.
void sendReceive(Call c, int to, int from, int tag) {
  c.checkOutputShape(c.input.sizes);
  if (to == c.group->rank && from == c.group->rank) {
    copyElements(c.input, c.output);
    return;
  }
  std::vector<char> sendStorage, recvStorage;
  void *send = c.dense(c.input, sendStorage);
  int64_t bytes = c.input.numBytes();
  void *recv = c.output.base;
  if (!c.output.isContiguous()) {
    recvStorage.resize(bytes);
    recv = recvStorage.data();
  }
  checkMpi(MPI_Sendrecv(send, c.count(bytes), MPI_BYTE, to, tag, recv,
                        c.count(bytes), MPI_BYTE, from, tag, c.group->comm,
                        MPI_STATUS_IGNORE),
           c.label, "MPI_Sendrecv");
  if (recv != c.output.base)
    copyElements(
        StridedView::contiguous(recv, c.input.sizes, c.input.elementBytes),
        c.output);
  bytesSent[c.kind] += bytes;
}

void exchangeMirror(Call c) {
  int partner = c.group->size - 1 - c.group->rank;
  sendReceive(c, partner, partner, /*tag=*/CP_RT_EXCHANGE + 100);
}

void shift(Call c, int64_t offset) {
  int64_t p = c.group->size, r = c.group->rank;
  int64_t k = ((offset % p) + p) % p;
  sendReceive(c, static_cast<int>((r + k) % p),
              static_cast<int>((r - k + p) % p), /*tag=*/CP_RT_SHIFT + 100);
}

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
    allGather(Call(CP_RT_ALL_GATHER, group, inRank, in, outRank, out, BYTES,   \
                   #T, gatherAxis),                                            \
              gatherAxis);                                                     \
  }                                                                            \
  void cp_rt_all_to_all_##T(int64_t group, int64_t inRank, void *in,           \
                            int64_t outRank, void *out, int64_t splitAxis,     \
                            int64_t concatAxis) {                              \
    allToAll(Call(CP_RT_ALL_TO_ALL, group, inRank, in, outRank, out, BYTES,    \
                  #T, splitAxis, concatAxis),                                  \
             splitAxis, concatAxis);                                           \
  }                                                                            \
  void cp_rt_exchange_mirror_##T(int64_t group, int64_t inRank, void *in,      \
                                 int64_t outRank, void *out) {                 \
    exchangeMirror(                                                            \
        Call(CP_RT_EXCHANGE, group, inRank, in, outRank, out, BYTES, #T));     \
  }                                                                            \
  void cp_rt_shift_##T(int64_t group, int64_t inRank, void *in,                \
                       int64_t outRank, void *out, int64_t offset) {           \
    shift(                                                                     \
        Call(CP_RT_SHIFT, group, inRank, in, outRank, out, BYTES, #T, offset), \
        offset);                                                               \
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

int64_t cp_rt_bytes_sent(int kind) { return counterOf(bytesSent, kind); }

int64_t cp_rt_calls(int kind) { return counterOf(callCount, kind); }

void cp_rt_reset_counters(void) {
  bytesSent.fill(0);
  callCount.fill(0);
}

} // extern "C"
