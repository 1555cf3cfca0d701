//===- CollectiveCall.cpp - one rank's collective, agreed and checked -----===//
//
// Building a Call (Collectives.h): the group's agreement on what every rank
// passes (a disagreement fails on every rank, naming both), the output
// shape's check, and what the call moves: the halves of a relayout, the
// peers of a shift or exchange, the bytes each rank sends.
//
//===----------------------------------------------------------------------===//

#include "Collectives.h"
#include "Deadline.h"

#include <cstring>
#include <string>
#include <vector>

using namespace cp::runtime;

namespace {

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

} // namespace

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
