// convert-cp-to-mpi on what ring and zigzag need: a started shift becomes
// cp_rt_shift_start_<T> (nonblocking MPI), returning the request that
// cp_rt_wait completes; a relayout becomes cp_rt_relayout_<T> with the
// sequence axis and the layouts (0 = contiguous, 1 = zigzag).
// RUN: cp-opt %s -convert-cp-to-mpi | FileCheck %s

shard.grid @cp(shape = 4)

// CHECK-DAG: func.func private @cp_rt_shift_start_f32(i64, memref<*xf32>, memref<*xf32>, i64) -> i64
// CHECK-DAG: func.func private @cp_rt_wait(i64)
// CHECK-DAG: func.func private @cp_rt_relayout_bf16(i64, memref<*xbf16>, memref<*xbf16>, i64, i64, i64)

// CHECK-LABEL: func @started_shift
// CHECK: %[[G:.*]] = call @cp_rt_group
// CHECK: %[[OFFSET:.*]] = arith.constant 1 : i64
// CHECK: %[[REQ:.*]] = call @cp_rt_shift_start_f32(%[[G]], %{{.*}}, %{{.*}}, %[[OFFSET]]) : (i64, memref<*xf32>, memref<*xf32>, i64) -> i64
// CHECK: memref.load
// CHECK: call @cp_rt_wait(%[[REQ]]) : (i64) -> ()
// CHECK-NOT: cp.buffer
func.func @started_shift(%k: memref<1x2x16x8xf32>, %k1: memref<1x2x16x8xf32>, %i: index) -> f32 {
  %r = cp.buffer.shift_start %k into %k1 on @cp grid_axes = [0] offset = 1 : memref<1x2x16x8xf32> into memref<1x2x16x8xf32>
  %x = memref.load %k[%i, %i, %i, %i] : memref<1x2x16x8xf32>
  cp.buffer.wait %r
  return %x : f32
}

// CHECK-LABEL: func @relayout
// CHECK: %[[AXIS:.*]] = arith.constant 2 : i64
// CHECK: %[[FROM:.*]] = arith.constant 0 : i64
// CHECK: %[[TO:.*]] = arith.constant 1 : i64
// CHECK: call @cp_rt_relayout_bf16(%{{.*}}, %{{.*}}, %{{.*}}, %[[AXIS]], %[[FROM]], %[[TO]])
func.func @relayout(%x: memref<1x8x16x8xbf16>, %y: memref<1x8x16x8xbf16>) {
  cp.buffer.relayout %x into %y on @cp grid_axes = [0] seq_axis = 2 from contiguous to zigzag : memref<1x8x16x8xbf16> into memref<1x8x16x8xbf16>
  return
}
