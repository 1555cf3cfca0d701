/*===- cp_runtime_gpu.h - C ABI of libcp_runtime_gpu -------------*- C -*-===//
 *
 * The GPU backend of the runtime, built when CUDA and NCCL are found:
 *   - the mgpu* functions MLIR's GPU lowering calls (modules, launches,
 *     streams, events, memory), implemented over the CUDA driver API;
 *   - the collectives that convert-cp-to-nccl emits, enqueued with NCCL on
 *     the caller's stream (or staged through host memory over MPI when
 *     CP_RT_GPU_COLLECTIVES=mpi).
 * Device choice: CP_RT_DEVICE if set, else the MPI local rank modulo the
 * number of devices. Errors name the rank, the call and the CUDA/NCCL
 * reason, and end every rank, like the rest of the runtime.
 *
 *===----------------------------------------------------------------------===*/

#ifndef CP_RUNTIME_CP_RUNTIME_GPU_H
#define CP_RUNTIME_CP_RUNTIME_GPU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* MLIR's GPU runtime ABI (what gpu-to-llvm and the gpu.binary launcher call).
 * Streams, events, modules and functions are opaque CUDA handles. */
void *mgpuModuleLoad(void *data, size_t gpuBlobSize);
void *mgpuModuleLoadJIT(void *data, int optLevel);
void mgpuModuleUnload(void *module);
void *mgpuModuleGetFunction(void *module, const char *name);
void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t sharedMemBytes, void *stream,
                      void **params, void **extra, size_t paramsCount);
void *mgpuStreamCreate(void);
void mgpuStreamDestroy(void *stream);
void mgpuStreamSynchronize(void *stream);
void mgpuStreamWaitEvent(void *stream, void *event);
void *mgpuEventCreate(void);
void mgpuEventDestroy(void *event);
void mgpuEventSynchronize(void *event);
void mgpuEventRecord(void *event, void *stream);
void *mgpuMemAlloc(uint64_t sizeBytes, void *stream, int8_t isHostShared);
void mgpuMemFree(void *ptr, void *stream);
void mgpuMemcpy(void *dst, void *src, size_t sizeBytes, void *stream);
void mgpuMemset32(void *dst, uint32_t value, size_t count, void *stream);
void mgpuMemset16(void *dst, uint16_t value, size_t count, void *stream);
void mgpuSetDefaultDevice(int32_t device);

/* Collectives on device buffers given as unranked memref descriptors (rank,
 * pointer to the ranked descriptor), enqueued on `stream`. Buffers must be
 * dense and exchanged along their leading dim (cp-pack-collectives). */
void cp_rt_gpu_all_gather(int64_t group, int64_t inRank, void *in,
                          int64_t outRank, void *out, int64_t elementBytes,
                          int64_t gatherAxis, void *stream);
void cp_rt_gpu_all_to_all(int64_t group, int64_t inRank, void *in,
                          int64_t outRank, void *out, int64_t elementBytes,
                          int64_t splitAxis, int64_t concatAxis, void *stream);
void cp_rt_gpu_exchange_mirror(int64_t group, int64_t inRank, void *in,
                               int64_t outRank, void *out, int64_t elementBytes,
                               void *stream);
void cp_rt_gpu_shift(int64_t group, int64_t inRank, void *in, int64_t outRank,
                     void *out, int64_t elementBytes, int64_t offset,
                     void *stream);
/* Layouts as in cp_runtime.h (CP_RT_CONTIGUOUS, CP_RT_ZIGZAG). */
void cp_rt_gpu_relayout(int64_t group, int64_t inRank, void *in,
                        int64_t outRank, void *out, int64_t elementBytes,
                        int64_t seqAxis, int64_t from, int64_t to,
                        void *stream);
/* reduce_scatter sums, so its entry names the element type T in f64 f32
 * f16 bf16 i64 i32 i8 (what NCCL sums), e.g. cp_rt_gpu_reduce_scatter_f32. */
#define CP_RT_GPU_DECLARE_REDUCE_SCATTER(T)                                    \
  void cp_rt_gpu_reduce_scatter_##T(int64_t group, int64_t inRank, void *in,   \
                                    int64_t outRank, void *out,                \
                                    int64_t elementBytes, int64_t scatterAxis, \
                                    void *stream);
CP_RT_GPU_DECLARE_REDUCE_SCATTER(f64)
CP_RT_GPU_DECLARE_REDUCE_SCATTER(f32)
CP_RT_GPU_DECLARE_REDUCE_SCATTER(f16)
CP_RT_GPU_DECLARE_REDUCE_SCATTER(bf16)
CP_RT_GPU_DECLARE_REDUCE_SCATTER(i64)
CP_RT_GPU_DECLARE_REDUCE_SCATTER(i32)
CP_RT_GPU_DECLARE_REDUCE_SCATTER(i8)
#undef CP_RT_GPU_DECLARE_REDUCE_SCATTER

/* A shift on the runtime's communication stream: it starts once the work
 * enqueued on `stream` so far is done, and returns at once. cp_rt_gpu_wait
 * makes `stream` wait for it (no host synchronization), so kernels
 * enqueued in between overlap the transfer. */
int64_t cp_rt_gpu_shift_start(int64_t group, int64_t inRank, void *in,
                              int64_t outRank, void *out, int64_t elementBytes,
                              int64_t offset, void *stream);
void cp_rt_gpu_wait(int64_t request, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* CP_RUNTIME_CP_RUNTIME_GPU_H */
