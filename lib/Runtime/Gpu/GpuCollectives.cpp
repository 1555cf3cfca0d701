//===- GpuCollectives.cpp - collectives on device buffers -----------------===//
//
// The entries convert-cp-to-nccl emits. Each builds the same Call as the
// CPU path (so the group agrees on shapes first), then moves the bytes with
// NCCL on the caller's stream, or, with CP_RT_GPU_COLLECTIVES=mpi, through
// host memory with the CPU algorithms (several ranks can then share one
// GPU, which NCCL refuses). A started shift runs on a second stream, with
// its own communicator, between two events: its dependencies' work, and
// its completion, which the wait makes the caller's stream wait for.
//
//===----------------------------------------------------------------------===//

#include "cp/Runtime/cp_runtime_gpu.h"

#include "../Collectives.h"
#include "CudaDriver.h"

#include <nccl.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <vector>

using namespace cp::runtime;

namespace {

void checkNccl(ncclResult_t result, const Call &call,
               const char *ncclFunction) {
  if (result == ncclSuccess)
    return;
  std::string reason =
      std::string(ncclFunction) + " failed: " + ncclGetErrorString(result);
  if (const char *last = ncclGetLastError(nullptr))
    if (*last)
      reason += std::string(" (") + last + ")";
  failHere(call.label, reason);
}

bool useMpiStaging() {
  const char *backend = std::getenv("CP_RT_GPU_COLLECTIVES");
  return backend && std::strcmp(backend, "mpi") == 0;
}

/// The world communicator from a unique id broadcast over MPI, and one
/// communicator per group split from it like the group's MPI communicator.
/// Started shifts use a second one per group (`overlapped`): NCCL work on
/// two streams must not share a communicator.
ncclComm_t ncclCommunicatorOf(const Call &call, bool overlapped = false) {
  static ncclComm_t world = nullptr;
  static std::map<std::pair<const Group *, bool>, ncclComm_t> groups;
  auto found = groups.find({call.group, overlapped});
  if (found != groups.end())
    return found->second;
  if (!world) {
    int rank = ensureMpi(), size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    ncclUniqueId id;
    if (rank == 0)
      checkNccl(ncclGetUniqueId(&id), call, "ncclGetUniqueId");
    checkMpi(MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD),
             call.label, "MPI_Bcast");
    checkNccl(ncclCommInitRank(&world, size, id, rank), call,
              "ncclCommInitRank");
  }
  ncclComm_t comm = nullptr;
  checkNccl(
      ncclCommSplit(world, call.group->color, call.group->key, &comm, nullptr),
      call, "ncclCommSplit");
  groups[{call.group, overlapped}] = comm;
  return comm;
}

/// The stream started shifts run on (one per process, not synchronizing
/// with the legacy default stream).
CUstream communicationStream(const Call &call) {
  static CUstream stream = nullptr;
  if (!stream)
    checkCuda(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), call.label,
              "cuStreamCreate");
  return stream;
}

CUevent recordEvent(const Call &call, CUstream stream) {
  CUevent event;
  checkCuda(cuEventCreate(&event, CU_EVENT_DISABLE_TIMING), call.label,
            "cuEventCreate");
  checkCuda(cuEventRecord(event, stream), call.label, "cuEventRecord");
  return event;
}

/// Product of the sizes before `dim`: 1 when blocks along `dim` are
/// contiguous in a dense buffer.
int64_t outerSize(const StridedView &view, int64_t dim) {
  int64_t outer = 1;
  for (int64_t d = 0; d < dim; ++d)
    outer *= view.sizes[d];
  return outer;
}

/// NCCL moves flat byte ranges: the buffers must be dense and every
/// rank's block contiguous.
void checkFlat(const Call &c) {
  bool flat = c.input.isContiguous() && c.output.isContiguous();
  if (c.kind == CP_RT_ALL_GATHER)
    flat = flat && outerSize(c.output, c.params[0]) == 1;
  if (c.kind == CP_RT_ALL_TO_ALL)
    flat = flat && outerSize(c.input, c.params[0]) == 1 &&
           outerSize(c.output, c.params[1]) == 1;
  if (c.kind == CP_RT_RELAYOUT || c.kind == CP_RT_REDUCE_SCATTER)
    flat = flat && outerSize(c.input, c.params[0]) == 1;
  if (!flat)
    c.fail("GPU collectives need dense buffers exchanged along their "
           "leading dim; lower the program with cp-pack-collectives "
           "(part of cp-lower-to-nvvm)");
}

void copyOnDevice(const Call &c, const StridedView &from, const StridedView &to,
                  CUstream stream) {
  checkCuda(cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(to.base),
                          reinterpret_cast<CUdeviceptr>(from.base),
                          static_cast<size_t>(from.numBytes()), stream),
            c.label, "cuMemcpyAsync");
}

/// relayout: every half goes to its holder in the other layout.
void relayoutWithNccl(const Call &c, ncclComm_t comm, CUstream stream) {
  checkNccl(ncclGroupStart(), c, "ncclGroupStart");
  for (const Call::HalfMove &out : c.relayoutSends()) {
    StridedView half = c.halfOf(c.input, out.half);
    if (out.peer == c.group->rank)
      copyOnDevice(c, half, c.halfOf(c.output, out.peerHalf), stream);
    else
      checkNccl(ncclSend(half.base, half.numBytes(), ncclUint8, out.peer, comm,
                         stream),
                c, "ncclSend");
  }
  for (const Call::HalfMove &in : c.relayoutReceives()) {
    StridedView half = c.halfOf(c.output, in.half);
    checkNccl(
        ncclRecv(half.base, half.numBytes(), ncclUint8, in.peer, comm, stream),
        c, "ncclRecv");
  }
  checkNccl(ncclGroupEnd(), c, "ncclGroupEnd");
}

/// exchange and shift: one send and one receive (a copy when both are
/// this rank).
void sendReceiveWithNccl(const Call &c, ncclComm_t comm, CUstream stream) {
  int to = c.sendTo(), from = c.receiveFrom();
  if (to == c.group->rank && from == c.group->rank) {
    copyOnDevice(c, c.input, c.output, stream);
    return;
  }
  size_t bytes = static_cast<size_t>(c.input.numBytes());
  checkNccl(ncclGroupStart(), c, "ncclGroupStart");
  checkNccl(ncclSend(c.input.base, bytes, ncclUint8, to, comm, stream), c,
            "ncclSend");
  checkNccl(ncclRecv(c.output.base, bytes, ncclUint8, from, comm, stream), c,
            "ncclRecv");
  checkNccl(ncclGroupEnd(), c, "ncclGroupEnd");
}

/// The NCCL datatype of a reduce_scatter's elements (its Call's type).
ncclDataType_t ncclTypeOf(const Call &c) {
  std::string type = c.type;
  if (type == "f64")
    return ncclFloat64;
  if (type == "f32")
    return ncclFloat32;
  if (type == "f16")
    return ncclFloat16;
  if (type == "bf16")
    return ncclBfloat16;
  if (type == "i64")
    return ncclInt64;
  if (type == "i32")
    return ncclInt32;
  if (type == "i8")
    return ncclInt8;
  c.fail("NCCL cannot sum elements of type " + type);
}

void runWithNccl(const Call &c, CUstream stream) {
  ncclComm_t comm = ncclCommunicatorOf(c);
  const void *send = c.input.base;
  void *recv = c.output.base;
  size_t bytes = static_cast<size_t>(c.input.numBytes());
  switch (c.kind) {
  case CP_RT_ALL_GATHER:
    checkNccl(ncclAllGather(send, recv, bytes, ncclUint8, comm, stream), c,
              "ncclAllGather");
    break;
  case CP_RT_ALL_TO_ALL:
    checkNccl(ncclAlltoAll(send, recv, bytes / c.group->size, ncclUint8, comm,
                           stream),
              c, "ncclAlltoAll");
    break;
  case CP_RT_RELAYOUT:
    relayoutWithNccl(c, comm, stream);
    break;
  case CP_RT_REDUCE_SCATTER: {
    size_t count =
        static_cast<size_t>(c.output.numBytes() / c.output.elementBytes);
    checkNccl(ncclReduceScatter(send, recv, count, ncclTypeOf(c), ncclSum,
                                comm, stream),
              c, "ncclReduceScatter");
    break;
  }
  default:
    sendReceiveWithNccl(c, comm, stream);
    break;
  }
  count(c);
}

/// Host staging: wait for the stream, copy down, run the CPU algorithm,
/// copy up on the stream and wait for it (the host buffers die here).
void runStagedThroughMpi(const Call &c, CUstream stream) {
  checkCuda(cuStreamSynchronize(stream), c.label, "cuStreamSynchronize");
  std::vector<char> in(c.input.numBytes()), out(c.output.numBytes());
  checkCuda(cuMemcpyDtoH(in.data(), reinterpret_cast<CUdeviceptr>(c.input.base),
                         in.size()),
            c.label, "cuMemcpyDtoH");
  runOnHost(c.withBuffers(
      StridedView::contiguous(in.data(), c.input.sizes, c.input.elementBytes),
      StridedView::contiguous(out.data(), c.output.sizes,
                              c.output.elementBytes)));
  checkCuda(cuMemcpyHtoDAsync(reinterpret_cast<CUdeviceptr>(c.output.base),
                              out.data(), out.size(), stream),
            c.label, "cuMemcpyHtoDAsync");
  checkCuda(cuStreamSynchronize(stream), c.label, "cuStreamSynchronize");
}

Call checkedCall(cp_rt_collective kind, int64_t group, int64_t inRank, void *in,
                 int64_t outRank, void *out, int64_t elementBytes,
                 int64_t param0, int64_t param1, const char *type = "bytes") {
  ensureCudaContext();
  Call call(kind, group, StridedView::fromDescriptor(inRank, in, elementBytes),
            StridedView::fromDescriptor(outRank, out, elementBytes), type,
            param0, param1);
  checkFlat(call);
  return call;
}

void run(cp_rt_collective kind, int64_t group, int64_t inRank, void *in,
         int64_t outRank, void *out, int64_t elementBytes, void *stream,
         int64_t param0 = 0, int64_t param1 = 0, const char *type = "bytes") {
  Call call = checkedCall(kind, group, inRank, in, outRank, out, elementBytes,
                          param0, param1, type);
  auto cuStream = static_cast<CUstream>(stream);
  if (useMpiStaging())
    runStagedThroughMpi(call, cuStream);
  else
    runWithNccl(call, cuStream);
}

/// Started shifts: request handle -> the event recorded after the transfer
/// (null when the transfer already completed, as with host staging).
std::map<int64_t, CUevent> &startedShifts() {
  static std::map<int64_t, CUevent> requests;
  return requests;
}

} // namespace

extern "C" {

void cp_rt_gpu_all_gather(int64_t group, int64_t inRank, void *in,
                          int64_t outRank, void *out, int64_t elementBytes,
                          int64_t gatherAxis, void *stream) {
  run(CP_RT_ALL_GATHER, group, inRank, in, outRank, out, elementBytes, stream,
      gatherAxis);
}

void cp_rt_gpu_all_to_all(int64_t group, int64_t inRank, void *in,
                          int64_t outRank, void *out, int64_t elementBytes,
                          int64_t splitAxis, int64_t concatAxis, void *stream) {
  run(CP_RT_ALL_TO_ALL, group, inRank, in, outRank, out, elementBytes, stream,
      splitAxis, concatAxis);
}

void cp_rt_gpu_exchange_mirror(int64_t group, int64_t inRank, void *in,
                               int64_t outRank, void *out, int64_t elementBytes,
                               void *stream) {
  run(CP_RT_EXCHANGE, group, inRank, in, outRank, out, elementBytes, stream);
}

void cp_rt_gpu_shift(int64_t group, int64_t inRank, void *in, int64_t outRank,
                     void *out, int64_t elementBytes, int64_t offset,
                     void *stream) {
  run(CP_RT_SHIFT, group, inRank, in, outRank, out, elementBytes, stream,
      offset);
}

void cp_rt_gpu_relayout(int64_t group, int64_t inRank, void *in,
                        int64_t outRank, void *out, int64_t elementBytes,
                        int64_t seqAxis, int64_t from, int64_t to,
                        void *stream) {
  run(CP_RT_RELAYOUT, group, inRank, in, outRank, out, elementBytes, stream,
      seqAxis, from * 2 + to);
}

#define CP_RT_GPU_DEFINE_REDUCE_SCATTER(T)                                     \
  void cp_rt_gpu_reduce_scatter_##T(int64_t group, int64_t inRank, void *in,   \
                                    int64_t outRank, void *out,                \
                                    int64_t elementBytes, int64_t scatterAxis, \
                                    void *stream) {                            \
    run(CP_RT_REDUCE_SCATTER, group, inRank, in, outRank, out, elementBytes,   \
        stream, scatterAxis, 0, #T);                                           \
  }
CP_RT_GPU_DEFINE_REDUCE_SCATTER(f64)
CP_RT_GPU_DEFINE_REDUCE_SCATTER(f32)
CP_RT_GPU_DEFINE_REDUCE_SCATTER(f16)
CP_RT_GPU_DEFINE_REDUCE_SCATTER(bf16)
CP_RT_GPU_DEFINE_REDUCE_SCATTER(i64)
CP_RT_GPU_DEFINE_REDUCE_SCATTER(i32)
CP_RT_GPU_DEFINE_REDUCE_SCATTER(i8)
#undef CP_RT_GPU_DEFINE_REDUCE_SCATTER

int64_t cp_rt_gpu_shift_start(int64_t group, int64_t inRank, void *in,
                              int64_t outRank, void *out, int64_t elementBytes,
                              int64_t offset, void *stream) {
  static int64_t nextHandle = 1;
  int64_t handle = nextHandle++;
  auto caller = static_cast<CUstream>(stream);
  if (useMpiStaging()) {
    run(CP_RT_SHIFT, group, inRank, in, outRank, out, elementBytes, stream,
        offset);
    startedShifts()[handle] = nullptr;
    return handle;
  }
  Call call = checkedCall(CP_RT_SHIFT, group, inRank, in, outRank, out,
                          elementBytes, offset, 0);
  CUstream comm = communicationStream(call);
  // The transfer starts after the caller's work so far, on the second stream.
  CUevent ready = recordEvent(call, caller);
  checkCuda(cuStreamWaitEvent(comm, ready, 0), call.label, "cuStreamWaitEvent");
  checkCuda(cuEventDestroy(ready), call.label, "cuEventDestroy");
  sendReceiveWithNccl(call, ncclCommunicatorOf(call, /*overlapped=*/true),
                      comm);
  count(call);
  startedShifts()[handle] = recordEvent(call, comm);
  if (tracing())
    trace(call.label + ": start request " + std::to_string(handle) +
          " on the communication stream");
  return handle;
}

void cp_rt_gpu_wait(int64_t request, void *stream) {
  auto found = startedShifts().find(request);
  if (found == startedShifts().end())
    failHere("cp.buffer.wait",
             "unknown or already completed request " + std::to_string(request));
  if (CUevent done = found->second) {
    checkCuda(cuStreamWaitEvent(static_cast<CUstream>(stream), done, 0),
              "cp.buffer.wait", "cuStreamWaitEvent");
    checkCuda(cuEventDestroy(done), "cp.buffer.wait", "cuEventDestroy");
  }
  if (tracing())
    trace("cp.buffer.wait: request " + std::to_string(request) +
          " joins the caller's stream");
  startedShifts().erase(found);
}

} // extern "C"
