// convert-cp-to-nccl: the host's GPU ops go to LLVM as in gpu-to-llvm, and
// each async collective becomes a call that takes the stream of its
// dependency; its token is that same stream, so what waits on the token
// (kernels, gpu.wait) is ordered after the NCCL work.
// RUN: cp-opt %s -convert-cp-to-nccl | FileCheck %s

shard.grid @cp(shape = 4)

// CHECK-DAG: llvm.func @cp_rt_gpu_all_gather(i64, i64, !llvm.ptr, i64, !llvm.ptr, i64, i64, !llvm.ptr)
// CHECK-DAG: llvm.func @cp_rt_group(i64, !llvm.ptr, i64, !llvm.ptr) -> i64

// CHECK-LABEL: llvm.func @gather_then_wait
// CHECK: %[[S:.*]] = llvm.call @mgpuStreamCreate()
// CHECK: %[[G:.*]] = llvm.call @cp_rt_group
// Buffers go as (rank, descriptor on the stack); then element bytes (4),
// the gather axis (0) and the stream.
// CHECK: %[[IN:.*]] = llvm.alloca %{{.*}} x !llvm.struct<(ptr, ptr, i64, array<4 x i64>, array<4 x i64>)>
// CHECK: %[[OUT:.*]] = llvm.alloca %{{.*}} x !llvm.struct<(ptr, ptr, i64, array<4 x i64>, array<4 x i64>)>
// CHECK: %[[AXIS:.*]] = llvm.mlir.constant(0 : i64) : i64
// CHECK: llvm.call @cp_rt_gpu_all_gather(%[[G]], %{{.*}}, %[[IN]], %{{.*}}, %[[OUT]], %{{.*}}, %[[AXIS]], %[[S]])
// CHECK: llvm.call @mgpuStreamSynchronize(%[[S]])
// CHECK: llvm.call @mgpuStreamDestroy(%[[S]])
// CHECK-NOT: cp.buffer
func.func @gather_then_wait(%x: memref<1x4x64x32xf32>, %y: memref<4x4x64x32xf32>) {
  %t0 = gpu.wait async
  %t1 = cp.buffer.all_gather async [%t0] %x into %y on @cp grid_axes = [0] gather_axis = 0 : memref<1x4x64x32xf32> into memref<4x4x64x32xf32>
  gpu.wait [%t1]
  return
}

// A chain: device allocation, exchange, shift (signed offset), free; one
// stream throughout.
// CHECK-LABEL: llvm.func @chain
// CHECK: %[[S:.*]] = llvm.call @mgpuStreamCreate()
// CHECK: %[[BUF:.*]] = llvm.call @mgpuMemAlloc(%{{.*}}, %[[S]], %{{.*}})
// CHECK: llvm.call @cp_rt_gpu_exchange_mirror({{.*}}, %[[S]])
// CHECK: %[[OFFSET:.*]] = llvm.mlir.constant(-1 : i64) : i64
// CHECK: llvm.call @cp_rt_gpu_shift({{.*}}, %[[OFFSET]], %[[S]])
// CHECK: llvm.call @mgpuMemFree(%{{.*}}, %[[S]])
// CHECK: llvm.call @mgpuStreamSynchronize(%[[S]])
func.func @chain(%x: memref<4x8xbf16>) {
  %t0 = gpu.wait async
  %y, %t1 = gpu.alloc async [%t0] () : memref<4x8xbf16>
  %t2 = cp.buffer.exchange async [%t1] %x into %y on @cp grid_axes = [0] partner = mirror : memref<4x8xbf16> into memref<4x8xbf16>
  %t3 = cp.buffer.shift async [%t2] %y into %x on @cp grid_axes = [0] offset = -1 : memref<4x8xbf16> into memref<4x8xbf16>
  %t4 = gpu.dealloc async [%t3] %y : memref<4x8xbf16>
  gpu.wait [%t4]
  return
}
