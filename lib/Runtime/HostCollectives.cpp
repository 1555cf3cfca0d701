//===- HostCollectives.cpp - the collectives over MPI on host buffers -----===//
//
// all_gather, all_to_all, reduce_scatter (f16/bf16 summed in f32 by a user
// MPI_Op), exchange and shift, and relayout, on host buffers of any rank,
// shape and stride: what runOnHost runs once a Call is agreed.
//
//===----------------------------------------------------------------------===//

#include "Collectives.h"
#include "Deadline.h"

#include <climits>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

using namespace cp::runtime;

namespace {

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
