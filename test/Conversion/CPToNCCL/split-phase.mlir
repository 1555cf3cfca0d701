// convert-cp-to-nccl on a started shift: cp_rt_gpu_shift_start takes the
// stream of its dependency (the transfer starts after that stream's work,
// on the runtime's communication stream) and returns the request; the
// stream goes on at once. cp_rt_gpu_wait makes the waiting op's stream wait
// for the transfer, so the kernel in between overlaps it.
// RUN: cp-opt %s -convert-cp-to-nccl | FileCheck %s

shard.grid @cp(shape = 4)

// CHECK-DAG: llvm.func @cp_rt_gpu_shift_start(i64, i64, !llvm.ptr, i64, !llvm.ptr, i64, i64, !llvm.ptr) -> i64
// CHECK-DAG: llvm.func @cp_rt_gpu_wait(i64, !llvm.ptr)
// CHECK-DAG: llvm.func @cp_rt_gpu_relayout(i64, i64, !llvm.ptr, i64, !llvm.ptr, i64, i64, i64, i64, !llvm.ptr)

// CHECK-LABEL: llvm.func @overlapped
// CHECK: %[[S:.*]] = llvm.call @mgpuStreamCreate()
// CHECK: %[[REQ:.*]] = llvm.call @cp_rt_gpu_shift_start(%{{.*}}, %[[S]]) : {{.*}} -> i64
// CHECK: llvm.call @mgpuMemset32({{.*}}, %[[S]])
// CHECK: llvm.call @cp_rt_gpu_wait(%[[REQ]], %[[S]])
// CHECK: llvm.call @cp_rt_gpu_relayout({{.*}}, %[[S]])
// CHECK: llvm.call @mgpuStreamSynchronize(%[[S]])
// CHECK-NOT: cp.buffer
func.func @overlapped(%k: memref<4x2x16x8xf32>, %k1: memref<4x2x16x8xf32>, %z: memref<4x2x16x8xf32>, %other: memref<64xi32>) {
  %c0 = arith.constant 0 : i32
  %t0 = gpu.wait async
  %r, %t1 = cp.buffer.shift_start async [%t0] %k into %k1 on @cp grid_axes = [0] offset = 1 : memref<4x2x16x8xf32> into memref<4x2x16x8xf32>
  %t2 = gpu.memset async [%t1] %other, %c0 : memref<64xi32>, i32
  %t3 = cp.buffer.wait async [%t2] %r
  %t4 = cp.buffer.relayout async [%t3] %k1 into %z on @cp grid_axes = [0] seq_axis = 0 from contiguous to zigzag : memref<4x2x16x8xf32> into memref<4x2x16x8xf32>
  gpu.wait [%t4]
  return
}
