//===- CudaDriver.cpp - mgpu* over the CUDA driver API --------------------===//
//
// The functions MLIR's GPU lowering calls, written over the driver API:
// module load (cubin/fatbin, or PTX through the JIT), function lookup,
// launch, streams, events, and stream-ordered memory. Modules are loaded by
// a global constructor of the compiled program, before main() and MPI, so
// the context is created lazily by the first call.
//
//===----------------------------------------------------------------------===//

#include "cp/Runtime/cp_runtime_gpu.h"

#include "../Communicator.h"
#include "CudaDriver.h"

#include <cstdlib>
#include <mutex>
#include <string>

using namespace cp::runtime;

namespace {
int defaultDevice = -1;
CUcontext context = nullptr;
std::once_flag contextOnce;

/// CP_RT_DEVICE, else the launcher's local rank, modulo the device count.
int chooseDevice(int count) {
  if (defaultDevice >= 0)
    return defaultDevice % count;
  if (const char *device = std::getenv("CP_RT_DEVICE"))
    return std::atoi(device) % count;
  for (const char *name :
       {"MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID"})
    if (const char *local = std::getenv(name))
      return std::atoi(local) % count;
  return 0;
}

constexpr int kStaticSharedMemoryLimit = 48 * 1024;
} // namespace

void cp::runtime::checkCuda(CUresult result, const std::string &call,
                            const char *driverFunction) {
  if (result == CUDA_SUCCESS)
    return;
  const char *name = nullptr, *text = nullptr;
  cuGetErrorName(result, &name);
  cuGetErrorString(result, &text);
  failHere(call, std::string(driverFunction) +
                     " failed: " + (name ? name : "unknown CUDA error") + " (" +
                     (text ? text : "no description") + ")");
}

void cp::runtime::ensureCudaContext() {
  std::call_once(contextOnce, [] {
    checkCuda(cuInit(0), "CUDA set-up", "cuInit");
    int count = 0;
    checkCuda(cuDeviceGetCount(&count), "CUDA set-up", "cuDeviceGetCount");
    if (count == 0)
      failHere("CUDA set-up", "no CUDA device is visible");
    CUdevice device;
    checkCuda(cuDeviceGet(&device, chooseDevice(count)), "CUDA set-up",
              "cuDeviceGet");
    checkCuda(cuDevicePrimaryCtxRetain(&context, device), "CUDA set-up",
              "cuDevicePrimaryCtxRetain");
  });
  checkCuda(cuCtxSetCurrent(context), "CUDA set-up", "cuCtxSetCurrent");
}

extern "C" {

void mgpuSetDefaultDevice(int32_t device) { defaultDevice = device; }

void *mgpuModuleLoad(void *data, size_t) {
  ensureCudaContext();
  CUmodule module = nullptr;
  checkCuda(cuModuleLoadData(&module, data), "mgpuModuleLoad",
            "cuModuleLoadData");
  return module;
}

void *mgpuModuleLoadJIT(void *data, int optLevel) {
  ensureCudaContext();
  char log[8192] = {0};
  CUjit_option options[] = {CU_JIT_OPTIMIZATION_LEVEL, CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {reinterpret_cast<void *>(static_cast<intptr_t>(optLevel)),
                    log, reinterpret_cast<void *>(sizeof(log))};
  CUmodule module = nullptr;
  CUresult result = cuModuleLoadDataEx(&module, data, 3, options, values);
  if (result != CUDA_SUCCESS && log[0])
    failHere("mgpuModuleLoadJIT", std::string("the PTX JIT failed: ") + log);
  checkCuda(result, "mgpuModuleLoadJIT", "cuModuleLoadDataEx");
  return module;
}

void mgpuModuleUnload(void *module) {
  checkCuda(cuModuleUnload(static_cast<CUmodule>(module)), "mgpuModuleUnload",
            "cuModuleUnload");
}

void *mgpuModuleGetFunction(void *module, const char *name) {
  CUfunction function = nullptr;
  checkCuda(cuModuleGetFunction(&function, static_cast<CUmodule>(module), name),
            std::string("mgpuModuleGetFunction(") + name + ")",
            "cuModuleGetFunction");
  return function;
}

void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t sharedMemBytes, void *stream,
                      void **params, void **extra, size_t) {
  ensureCudaContext();
  auto f = static_cast<CUfunction>(function);
  // Dynamic shared memory beyond 48 KiB must be opted into per function.
  if (sharedMemBytes > kStaticSharedMemoryLimit)
    checkCuda(
        cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                           sharedMemBytes),
        "mgpuLaunchKernel", "cuFuncSetAttribute");
  checkCuda(cuLaunchKernel(f, gridX, gridY, gridZ, blockX, blockY, blockZ,
                           sharedMemBytes, static_cast<CUstream>(stream),
                           params, extra),
            "mgpuLaunchKernel", "cuLaunchKernel");
}

void *mgpuStreamCreate(void) {
  ensureCudaContext();
  CUstream stream = nullptr;
  checkCuda(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "mgpuStreamCreate",
            "cuStreamCreate");
  return stream;
}

void mgpuStreamDestroy(void *stream) {
  checkCuda(cuStreamDestroy(static_cast<CUstream>(stream)), "mgpuStreamDestroy",
            "cuStreamDestroy");
}

void mgpuStreamSynchronize(void *stream) {
  checkCuda(cuStreamSynchronize(static_cast<CUstream>(stream)),
            "mgpuStreamSynchronize", "cuStreamSynchronize");
}

void mgpuStreamWaitEvent(void *stream, void *event) {
  checkCuda(cuStreamWaitEvent(static_cast<CUstream>(stream),
                              static_cast<CUevent>(event), 0),
            "mgpuStreamWaitEvent", "cuStreamWaitEvent");
}

void *mgpuEventCreate(void) {
  ensureCudaContext();
  CUevent event = nullptr;
  checkCuda(cuEventCreate(&event, CU_EVENT_DISABLE_TIMING), "mgpuEventCreate",
            "cuEventCreate");
  return event;
}

void mgpuEventDestroy(void *event) {
  checkCuda(cuEventDestroy(static_cast<CUevent>(event)), "mgpuEventDestroy",
            "cuEventDestroy");
}

void mgpuEventSynchronize(void *event) {
  checkCuda(cuEventSynchronize(static_cast<CUevent>(event)),
            "mgpuEventSynchronize", "cuEventSynchronize");
}

void mgpuEventRecord(void *event, void *stream) {
  checkCuda(
      cuEventRecord(static_cast<CUevent>(event), static_cast<CUstream>(stream)),
      "mgpuEventRecord", "cuEventRecord");
}

void *mgpuMemAlloc(uint64_t sizeBytes, void *stream, int8_t isHostShared) {
  ensureCudaContext();
  if (sizeBytes == 0)
    return nullptr;
  CUdeviceptr ptr = 0;
  if (isHostShared)
    checkCuda(cuMemAllocManaged(&ptr, sizeBytes, CU_MEM_ATTACH_GLOBAL),
              "mgpuMemAlloc", "cuMemAllocManaged");
  else if (stream)
    checkCuda(cuMemAllocAsync(&ptr, sizeBytes, static_cast<CUstream>(stream)),
              "mgpuMemAlloc", "cuMemAllocAsync");
  else
    checkCuda(cuMemAlloc(&ptr, sizeBytes), "mgpuMemAlloc", "cuMemAlloc");
  return reinterpret_cast<void *>(ptr);
}

void mgpuMemFree(void *ptr, void *stream) {
  if (!ptr)
    return;
  auto p = reinterpret_cast<CUdeviceptr>(ptr);
  if (stream)
    checkCuda(cuMemFreeAsync(p, static_cast<CUstream>(stream)), "mgpuMemFree",
              "cuMemFreeAsync");
  else
    checkCuda(cuMemFree(p), "mgpuMemFree", "cuMemFree");
}

void mgpuMemcpy(void *dst, void *src, size_t sizeBytes, void *stream) {
  checkCuda(cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(dst),
                          reinterpret_cast<CUdeviceptr>(src), sizeBytes,
                          static_cast<CUstream>(stream)),
            "mgpuMemcpy", "cuMemcpyAsync");
}

void mgpuMemset32(void *dst, uint32_t value, size_t count, void *stream) {
  checkCuda(cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(dst), value, count,
                             static_cast<CUstream>(stream)),
            "mgpuMemset32", "cuMemsetD32Async");
}

void mgpuMemset16(void *dst, uint16_t value, size_t count, void *stream) {
  checkCuda(cuMemsetD16Async(reinterpret_cast<CUdeviceptr>(dst), value, count,
                             static_cast<CUstream>(stream)),
            "mgpuMemset16", "cuMemsetD16Async");
}

} // extern "C"
