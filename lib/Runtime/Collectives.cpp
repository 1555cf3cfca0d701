//===- Collectives.cpp - collective calls: agreement, checks, MPI ---------===//
//
// all_gather, all_to_all, reduce_scatter, exchange and shift over MPI on
// host buffers of any rank, shape and stride, the group agreement that
// turns mismatched shapes into an error on every rank, and the byte
// counters.
//
//===----------------------------------------------------------------------===//

#include "Collectives.h"
#include "Deadline.h"

#include <array>
#include <climits>
#include <cmath>
#include <limits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

using namespace cp::runtime;

namespace {

using Counters = std::array<int64_t, CP_RT_NUM_COLLECTIVES>;
Counters bytesCounter{};
Counters callCounter{};

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
constexpr const char *kCollectiveNames[] = {
    "cp.all_gather", "cp.all_to_all",  "cp.exchange",
    "cp.shift",      "cp.relayout",    "cp.reduce_scatter"};
static_assert(sizeof(kCollectiveNames) / sizeof(kCollectiveNames[0]) ==
              CP_RT_NUM_COLLECTIVES);

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

void *dense(const StridedView &view, std::vector<char> &storage) {
  return denseBytes(view, storage);
}

int mpiCount(const Call &c, int64_t bytes) {
  if (bytes > INT_MAX)
    c.fail("a message of " + std::to_string(bytes) +
           " bytes exceeds MPI's int count");
  return static_cast<int>(bytes);
}

void allGather(const Call &c) {
  int64_t axis = c.params[0];
  int p = c.group->size;
  std::vector<char> sendStorage, recvStorage;
  void *send = dense(c.input, sendStorage);
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
  MPI_Request request;
  checkMpi(MPI_Iallgather(send, mpiCount(c, blockBytes), MPI_BYTE, recv,
                          mpiCount(c, blockBytes), MPI_BYTE, c.group->comm,
                          &request),
           c.label, "MPI_Iallgather");
  waitOrFail(1, &request, c.label, "MPI_Iallgather");
  if (!direct)
    for (int r = 0; r < p; ++r)
      copyElements(
          StridedView::contiguous(recvStorage.data() + r * blockBytes,
                                  c.input.sizes, c.input.elementBytes),
          c.output.slice(axis, r * c.input.sizes[axis], c.input.sizes[axis]));
}

void allToAll(const Call &c) {
  int64_t split = c.params[0], concat = c.params[1];
  int p = c.group->size;
  std::vector<int64_t> part = c.part();
  int64_t eb = c.input.elementBytes;
  int64_t partBytes = StridedView::contiguous(nullptr, part, eb).numBytes();
  std::vector<char> send(partBytes * p), recv(partBytes * p);
  for (int r = 0; r < p; ++r)
    copyElements(
        c.input.slice(split, r * part[split], part[split]),
        StridedView::contiguous(send.data() + r * partBytes, part, eb));
  MPI_Request request;
  checkMpi(MPI_Ialltoall(send.data(), mpiCount(c, partBytes), MPI_BYTE,
                         recv.data(), mpiCount(c, partBytes), MPI_BYTE,
                         c.group->comm, &request),
           c.label, "MPI_Ialltoall");
  waitOrFail(1, &request, c.label, "MPI_Ialltoall");
  for (int r = 0; r < p; ++r)
    copyElements(StridedView::contiguous(recv.data() + r * partBytes, part, eb),
                 c.output.slice(concat, r * part[concat], part[concat]));
}

/// bf16 <-> f32 (bf16 is the upper half of an f32; rounding to nearest
/// even on the way back).
float bf16ToFloat(uint16_t bits) {
  uint32_t wide = uint32_t(bits) << 16;
  float value;
  std::memcpy(&value, &wide, sizeof(value));
  return value;
}
uint16_t floatToBf16(float value) {
  uint32_t wide;
  std::memcpy(&wide, &value, sizeof(wide));
  if ((wide & 0x7fffffff) > 0x7f800000)
    return uint16_t((wide >> 16) | 0x40); // NaN stays NaN
  wide += 0x7fff + ((wide >> 16) & 1);
  return uint16_t(wide >> 16);
}

/// IEEE half <-> f32, rounding to nearest even on the way back.
float halfToFloat(uint16_t bits) {
  float sign = (bits & 0x8000) ? -1.0f : 1.0f;
  int exponent = (bits >> 10) & 0x1f, mantissa = bits & 0x3ff;
  if (exponent == 0)
    return sign * std::ldexp(float(mantissa), -24);
  if (exponent == 31)
    return mantissa ? std::numeric_limits<float>::quiet_NaN()
                    : sign * std::numeric_limits<float>::infinity();
  return sign * std::ldexp(float(mantissa | 0x400), exponent - 25);
}
uint16_t floatToHalf(float value) {
  uint32_t wide;
  std::memcpy(&wide, &value, sizeof(wide));
  uint16_t sign = (wide >> 16) & 0x8000;
  uint32_t magnitude = wide & 0x7fffffff;
  if (magnitude > 0x7f800000)
    return sign | 0x7e00; // NaN
  if (magnitude >= 0x47800000)
    return sign | 0x7c00; // 65536 and beyond: infinity
  if (magnitude < 0x38800000) { // below 2^-14: a subnormal half
    float absolute;
    std::memcpy(&absolute, &magnitude, sizeof(absolute));
    return sign | uint16_t(std::lrint(absolute * 16777216.0f));
  }
  uint32_t half = (magnitude - 0x38000000) >> 13, rest = magnitude & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1)))
    ++half; // may carry into the exponent, up to infinity: as it should
  return sign | uint16_t(half);
}

/// MPI_SUM of 16-bit floats: each pair added in f32, then rounded back.
template <bool Brain>
void sumHalves(void *in, void *inout, int *length, MPI_Datatype *) {
  auto *a = static_cast<uint16_t *>(in);
  auto *b = static_cast<uint16_t *>(inout);
  for (int i = 0; i < *length; ++i) {
    if constexpr (Brain)
      b[i] = floatToBf16(bf16ToFloat(a[i]) + bf16ToFloat(b[i]));
    else
      b[i] = floatToHalf(halfToFloat(a[i]) + halfToFloat(b[i]));
  }
}

/// The MPI datatype and sum of element type `type`.
std::pair<MPI_Datatype, MPI_Op> summed(const Call &c) {
  std::string type = c.type;
  if (type == "f64")
    return {MPI_DOUBLE, MPI_SUM};
  if (type == "f32")
    return {MPI_FLOAT, MPI_SUM};
  if (type == "i64")
    return {MPI_INT64_T, MPI_SUM};
  if (type == "i32")
    return {MPI_INT32_T, MPI_SUM};
  if (type == "i16")
    return {MPI_INT16_T, MPI_SUM};
  if (type == "i8")
    return {MPI_INT8_T, MPI_SUM};
  if (type == "f16" || type == "bf16") {
    static MPI_Op ops[2] = {MPI_OP_NULL, MPI_OP_NULL};
    int brain = type == "bf16";
    if (ops[brain] == MPI_OP_NULL)
      checkMpi(MPI_Op_create(brain ? sumHalves<true> : sumHalves<false>,
                             /*commute=*/1, &ops[brain]),
               c.label, "MPI_Op_create");
    return {MPI_UINT16_T, ops[brain]};
  }
  c.fail("elements of type " + type + " cannot be summed");
}

/// reduce_scatter: block r (along the axis) of every rank's input, summed,
/// lands on group rank r.
void reduceScatter(const Call &c) {
  int64_t axis = c.params[0];
  int p = c.group->size;
  std::vector<int64_t> block = c.input.sizes;
  block[axis] /= p;
  int64_t eb = c.input.elementBytes;
  int64_t blockBytes = StridedView::contiguous(nullptr, block, eb).numBytes();
  auto [type, sum] = summed(c);
  int count = mpiCount(c, blockBytes) / static_cast<int>(eb);
  std::vector<char> send(blockBytes * p), recvStorage;
  for (int r = 0; r < p; ++r)
    copyElements(
        c.input.slice(axis, r * block[axis], block[axis]),
        StridedView::contiguous(send.data() + r * blockBytes, block, eb));
  void *recv = c.output.base;
  if (!c.output.isContiguous()) {
    recvStorage.resize(blockBytes);
    recv = recvStorage.data();
  }
  MPI_Request request;
  checkMpi(MPI_Ireduce_scatter_block(send.data(), recv, count, type, sum,
                                     c.group->comm, &request),
           c.label, "MPI_Ireduce_scatter_block");
  waitOrFail(1, &request, c.label, "MPI_Ireduce_scatter_block");
  if (recv != c.output.base)
    copyElements(StridedView::contiguous(recv, block, eb), c.output);
}

/// exchange and shift: send the input to one rank, receive from another.
void sendReceive(const Call &c) {
  int to = c.sendTo(), from = c.receiveFrom();
  // Every rank checks the size, also one that only copies (the middle rank
  // of an exchange over an odd group), so that all of them fail together.
  mpiCount(c, c.input.numBytes());
  if (to == c.group->rank && from == c.group->rank) {
    copyElements(c.input, c.output);
    return;
  }
  std::vector<char> sendStorage, recvStorage;
  void *send = dense(c.input, sendStorage);
  int64_t bytes = c.input.numBytes();
  void *recv = c.output.base;
  if (!c.output.isContiguous()) {
    recvStorage.resize(bytes);
    recv = recvStorage.data();
  }
  int tag = 100 + c.kind;
  MPI_Request requests[2];
  checkMpi(MPI_Irecv(recv, mpiCount(c, bytes), MPI_BYTE, from, tag,
                     c.group->comm, &requests[0]),
           c.label, "MPI_Irecv");
  checkMpi(MPI_Isend(send, mpiCount(c, bytes), MPI_BYTE, to, tag,
                     c.group->comm, &requests[1]),
           c.label, "MPI_Isend");
  waitOrFail(2, requests, c.label, c.peersText());
  if (recv != c.output.base)
    copyElements(
        StridedView::contiguous(recv, c.input.sizes, c.input.elementBytes),
        c.output);
}

/// relayout: each half goes to the rank that holds it in the other layout.
void relayout(const Call &c) {
  std::vector<MPI_Request> requests;
  std::vector<std::vector<char>> sendStorage(2), recvStorage(2);
  std::vector<Call::HalfMove> receives = c.relayoutReceives();
  for (const Call::HalfMove &in : receives) {
    StridedView target = c.halfOf(c.output, in.half);
    recvStorage[in.half].resize(target.numBytes());
    requests.emplace_back();
    checkMpi(MPI_Irecv(recvStorage[in.half].data(),
                       mpiCount(c, target.numBytes()), MPI_BYTE, in.peer,
                       300 + in.half, c.group->comm, &requests.back()),
             c.label, "MPI_Irecv");
  }
  for (const Call::HalfMove &out : c.relayoutSends()) {
    StridedView source = c.halfOf(c.input, out.half);
    if (out.peer == c.group->rank) {
      copyElements(source, c.halfOf(c.output, out.peerHalf));
      continue;
    }
    void *bytes = dense(source, sendStorage[out.half]);
    requests.emplace_back();
    checkMpi(MPI_Isend(bytes, mpiCount(c, source.numBytes()), MPI_BYTE,
                       out.peer, 300 + out.peerHalf, c.group->comm,
                       &requests.back()),
             c.label, "MPI_Isend");
  }
  waitOrFail(static_cast<int>(requests.size()), requests.data(), c.label,
             "the half exchange (MPI_Irecv/MPI_Isend)");
  for (const Call::HalfMove &in : receives) {
    StridedView target = c.halfOf(c.output, in.half);
    copyElements(StridedView::contiguous(recvStorage[in.half].data(),
                                         target.sizes, target.elementBytes),
                 target);
  }
}

/// The rank holding global chunk `chunk` (of 2P) in `layout`, and which of
/// its halves the chunk is.
std::pair<int, int> holderOfChunk(int p, int chunk, int64_t layout) {
  if (layout == CP_RT_CONTIGUOUS)
    return {chunk / 2, chunk % 2};
  return chunk < p ? std::pair<int, int>{chunk, 0}
                   : std::pair<int, int>{2 * p - 1 - chunk, 1};
}

/// The global chunk that is half `half` of `rank` in `layout`.
int chunkOfHalf(int p, int rank, int half, int64_t layout) {
  if (layout == CP_RT_CONTIGUOUS)
    return 2 * rank + half;
  return half == 0 ? rank : 2 * p - 1 - rank;
}

bool traceRequested() {
  const char *value = std::getenv("CP_RT_TRACE");
  return value && *value && std::strcmp(value, "0") != 0;
}

} // namespace

void *cp::runtime::denseBytes(const StridedView &view,
                              std::vector<char> &storage) {
  if (view.isContiguous())
    return view.base;
  storage.resize(view.numBytes());
  copyElements(view, StridedView::contiguous(storage.data(), view.sizes,
                                             view.elementBytes));
  return storage.data();
}

bool cp::runtime::tracing() {
  static const bool enabled = traceRequested();
  return enabled;
}

void cp::runtime::trace(const std::string &line) {
  std::fprintf(stderr, "cp-runtime trace: rank %d: %s\n", ensureMpi(),
               line.c_str());
}

//===----------------------------------------------------------------------===//
// Call
//===----------------------------------------------------------------------===//

Call::Call(cp_rt_collective kind, int64_t groupHandle, StridedView input,
           StridedView output, const char *type, int64_t param0, int64_t param1)
    : kind(kind), type(type), input(std::move(input)),
      output(std::move(output)) {
  ensureMpi();
  group = &groupByHandle(groupHandle, kCollectiveNames[kind]);
  label = std::string(kCollectiveNames[kind]) + " on " + group->label;
  faultPoint(label);
  params[0] = param0;
  params[1] = param1;
  agree();
  validate();
}

Call Call::withBuffers(StridedView newInput, StridedView newOutput) const {
  Call copy;
  copy.kind = kind;
  copy.type = type;
  copy.group = group;
  copy.label = label;
  copy.params[0] = params[0];
  copy.params[1] = params[1];
  copy.input = std::move(newInput);
  copy.output = std::move(newOutput);
  return copy;
}

void Call::fail(const std::string &reason) const {
  failOnEveryRank(*group, label, reason);
}

void Call::agree() const {
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
  MPI_Request request;
  checkMpi(MPI_Iallgather(&mine, sizeof(CallHeader), MPI_BYTE, all.data(),
                          sizeof(CallHeader), MPI_BYTE, group->comm, &request),
           label, "MPI_Iallgather");
  waitOrFail(1, &request, label,
             "the agreement on the call (MPI_Iallgather over " +
                 std::to_string(group->size) + " ranks)");
  for (int r = 0; r < group->size; ++r) {
    const CallHeader &other = all[r];
    if (other.kind != mine.kind)
      fail("group rank " + std::to_string(r) + " is in " +
           kCollectiveNames[other.kind] +
           " at the same point; every rank must run the same program");
    if (std::memcmp(&other, &mine, sizeof(CallHeader)) == 0)
      continue;
    fail("this rank (group rank " + std::to_string(group->rank) + ") passes " +
         describe(mine.inSizes, mine.rank, type) + " -> " +
         describe(mine.outSizes, output.rank(), type) + " but group rank " +
         std::to_string(r) + " passes " +
         describe(other.inSizes, other.rank, type) + " -> " +
         describe(other.outSizes, other.rank, type) +
         "; every rank of the group must pass the same shapes");
  }
}

void Call::validate() const {
  auto checkAxis = [&](const char *name, int64_t axis) {
    if (axis < 0 || axis >= input.rank())
      fail(std::string(name) + " " + std::to_string(axis) +
           " is out of range for a rank-" + std::to_string(input.rank()) +
           " buffer");
  };
  std::vector<int64_t> expected = input.sizes;
  int p = group->size;
  switch (kind) {
  case CP_RT_RELAYOUT:
    checkAxis("seq_axis", params[0]);
    if (input.sizes[params[0]] % 2 != 0)
      fail("seq_axis " + std::to_string(params[0]) + " has length " +
           std::to_string(input.sizes[params[0]]) +
           ", which is not even; the layouts move halves of the local shard");
    if (params[1] < 0 || params[1] > 3)
      fail("unknown layouts " + std::to_string(params[1]));
    break;
  case CP_RT_ALL_GATHER:
    checkAxis("gather_axis", params[0]);
    expected[params[0]] *= p;
    break;
  case CP_RT_REDUCE_SCATTER:
    checkAxis("scatter_axis", params[0]);
    if (input.sizes[params[0]] % p != 0)
      fail("scatter_axis " + std::to_string(params[0]) + " has size " +
           std::to_string(input.sizes[params[0]]) +
           ", which the group size P = " + std::to_string(p) +
           " does not divide");
    expected[params[0]] /= p;
    break;
  case CP_RT_ALL_TO_ALL: {
    int64_t split = params[0], concat = params[1];
    checkAxis("split_axis", split);
    checkAxis("concat_axis", concat);
    if (input.sizes[split] % p != 0)
      fail("split_axis " + std::to_string(split) + " has size " +
           std::to_string(input.sizes[split]) + ", which the group size P = " +
           std::to_string(p) + " does not divide");
    expected = part();
    if (split != concat)
      expected[concat] *= p;
    else
      expected[concat] = input.sizes[concat];
    break;
  }
  default:
    break;
  }
  if (output.sizes != expected)
    fail("output buffer is " + output.shapeString() + " but " +
         input.shapeString() + " input needs " +
         StridedView::contiguous(nullptr, expected, 1).shapeString());
}

std::vector<int64_t> Call::part() const {
  std::vector<int64_t> shape = input.sizes;
  shape[params[0]] /= group->size;
  return shape;
}

StridedView Call::halfOf(const StridedView &view, int half) const {
  int64_t len = view.sizes[params[0]] / 2;
  return view.slice(params[0], half * len, len);
}

// params[1] of a relayout is from * 2 + to.
std::vector<Call::HalfMove> Call::relayoutSends() const {
  int64_t from = params[1] / 2, to = params[1] % 2;
  std::vector<HalfMove> moves;
  for (int half = 0; half < 2; ++half) {
    auto [peer, peerHalf] = holderOfChunk(
        group->size, chunkOfHalf(group->size, group->rank, half, from), to);
    moves.push_back({half, peer, peerHalf});
  }
  return moves;
}

std::vector<Call::HalfMove> Call::relayoutReceives() const {
  int64_t from = params[1] / 2, to = params[1] % 2;
  std::vector<HalfMove> moves;
  for (int half = 0; half < 2; ++half) {
    auto [peer, peerHalf] = holderOfChunk(
        group->size, chunkOfHalf(group->size, group->rank, half, to), from);
    if (peer != group->rank)
      moves.push_back({half, peer, peerHalf});
  }
  return moves;
}

int Call::sendTo() const {
  int p = group->size, r = group->rank;
  if (kind == CP_RT_EXCHANGE)
    return p - 1 - r;
  int64_t k = ((params[0] % p) + p) % p;
  return static_cast<int>((r + k) % p);
}

int Call::receiveFrom() const {
  int p = group->size, r = group->rank;
  if (kind == CP_RT_EXCHANGE)
    return p - 1 - r;
  int64_t k = ((params[0] % p) + p) % p;
  return static_cast<int>((r - k + p) % p);
}

std::string Call::peersText() const {
  return "MPI_Isend to group rank " + std::to_string(sendTo()) +
         " / MPI_Irecv from group rank " + std::to_string(receiveFrom());
}

int64_t Call::bytesSent() const {
  int p = group->size;
  switch (kind) {
  case CP_RT_ALL_GATHER:
    return input.numBytes() * (p - 1);
  case CP_RT_ALL_TO_ALL:
  case CP_RT_REDUCE_SCATTER:
    return input.numBytes() / p * (p - 1);
  case CP_RT_RELAYOUT: {
    int64_t bytes = 0;
    for (const HalfMove &move : relayoutSends())
      if (move.peer != group->rank)
        bytes += input.numBytes() / 2;
    return bytes;
  }
  default:
    return sendTo() == group->rank ? 0 : input.numBytes();
  }
}

void cp::runtime::count(const Call &call) {
  int64_t bytes = call.bytesSent();
  bytesCounter[call.kind] += bytes;
  ++callCounter[call.kind];
  if (tracing())
    trace(call.label + ": " + std::to_string(bytes) + " bytes sent");
}

void cp::runtime::runOnHost(const Call &call) {
  switch (call.kind) {
  case CP_RT_ALL_GATHER:
    allGather(call);
    break;
  case CP_RT_ALL_TO_ALL:
    allToAll(call);
    break;
  case CP_RT_RELAYOUT:
    relayout(call);
    break;
  case CP_RT_REDUCE_SCATTER:
    reduceScatter(call);
    break;
  default:
    sendReceive(call);
    break;
  }
  count(call);
}

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

int64_t cp_rt_bytes_sent(int kind) { return counterOf(bytesCounter, kind); }

int64_t cp_rt_calls(int kind) { return counterOf(callCounter, kind); }

void cp_rt_reset_counters(void) {
  bytesCounter.fill(0);
  callCounter.fill(0);
  resetInFlightTime();
}

} // extern "C"
