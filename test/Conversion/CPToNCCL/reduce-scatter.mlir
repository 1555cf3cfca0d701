// convert-cp-to-nccl on a reduce-scatter: the entry names the element type
// (NCCL sums f64/f32/f16/bf16/i64/i32/i8), then the usual (rank,
// descriptor) buffers, the element bytes, the scatter axis and the stream.
// 16-bit integers, which NCCL cannot sum, are a diagnostic.
// RUN: cp-opt %s -convert-cp-to-nccl -split-input-file -verify-diagnostics | FileCheck %s

shard.grid @cp(shape = 4)

// CHECK-DAG: llvm.func @cp_rt_gpu_reduce_scatter_bf16(i64, i64, !llvm.ptr, i64, !llvm.ptr, i64, i64, !llvm.ptr)
// CHECK-LABEL: llvm.func @dk
// CHECK: %[[S:.*]] = llvm.call @mgpuStreamCreate()
// CHECK: %[[G:.*]] = llvm.call @cp_rt_group
// CHECK: %[[BYTES:.*]] = llvm.mlir.constant(2 : i64) : i64
// CHECK: %[[AXIS:.*]] = llvm.mlir.constant(0 : i64) : i64
// CHECK: llvm.call @cp_rt_gpu_reduce_scatter_bf16(%[[G]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[BYTES]], %[[AXIS]], %[[S]])
// CHECK-NOT: cp.buffer
func.func @dk(%x: memref<8x2x64x32xbf16>, %y: memref<2x2x64x32xbf16>) {
  %t0 = gpu.wait async
  %t1 = cp.buffer.reduce_scatter async [%t0] %x into %y on @cp grid_axes = [0] scatter_axis = 0 : memref<8x2x64x32xbf16> into memref<2x2x64x32xbf16>
  gpu.wait [%t1]
  return
}

// -----

shard.grid @cp(shape = 4)
func.func @i16(%x: memref<8xi16>, %y: memref<2xi16>) {
  %t0 = gpu.wait async
  // expected-error @+1 {{sums 'i16' elements, which NCCL cannot; use i32 or a float type on GPUs}}
  %t1 = cp.buffer.reduce_scatter async [%t0] %x into %y on @cp grid_axes = [0] scatter_axis = 0 : memref<8xi16> into memref<2xi16>
  gpu.wait [%t1]
  return
}
