// convert-cp-to-mpi: each bufferized collective becomes a libcp_runtime call
// on unranked memrefs (any shape and stride). The group is described by two
// constant globals, the grid's name and [grid rank, shape..., #axes, axes...].
// RUN: cp-opt %s -convert-cp-to-mpi | FileCheck %s

shard.grid @cp(shape = 4)
shard.grid @dp_cp(shape = 2x4)

// CHECK-DAG: memref.global "private" constant @__cp_grid_name_cp : memref<3xi8> = dense<[99, 112, 0]>
// CHECK-DAG: memref.global "private" constant @__cp_group_cp_0 : memref<4xi64> = dense<[1, 4, 1, 0]>
// CHECK-DAG: memref.global "private" constant @__cp_group_dp_cp_1 : memref<5xi64> = dense<[2, 2, 4, 1, 1]>
// CHECK-DAG: func.func private @cp_rt_group(memref<*xi8>, memref<*xi64>) -> i64
// CHECK-DAG: func.func private @cp_rt_all_gather_f32(i64, memref<*xf32>, memref<*xf32>, i64)
// CHECK-DAG: func.func private @cp_rt_all_to_all_bf16(i64, memref<*xbf16>, memref<*xbf16>, i64, i64)
// CHECK-DAG: func.func private @cp_rt_exchange_mirror_f32(i64, memref<*xf32>, memref<*xf32>)
// CHECK-DAG: func.func private @cp_rt_shift_i1(i64, memref<*xi1>, memref<*xi1>, i64)
// Grids nothing refers to any more are gone.
// CHECK-NOT: shard.grid

// CHECK-LABEL: func @all_gather
// CHECK-SAME: (%[[X:.*]]: memref<1x2x64x32xf32>, %[[Y:.*]]: memref<1x2x256x32xf32>)
// CHECK: %[[NAME:.*]] = memref.get_global @__cp_grid_name_cp : memref<3xi8>
// CHECK: %[[NAMEU:.*]] = memref.cast %[[NAME]] : memref<3xi8> to memref<*xi8>
// CHECK: %[[SPEC:.*]] = memref.get_global @__cp_group_cp_0 : memref<4xi64>
// CHECK: %[[SPECU:.*]] = memref.cast %[[SPEC]] : memref<4xi64> to memref<*xi64>
// CHECK: %[[G:.*]] = call @cp_rt_group(%[[NAMEU]], %[[SPECU]])
// CHECK: %[[XU:.*]] = memref.cast %[[X]] : memref<1x2x64x32xf32> to memref<*xf32>
// CHECK: %[[YU:.*]] = memref.cast %[[Y]] : memref<1x2x256x32xf32> to memref<*xf32>
// CHECK: %[[AXIS:.*]] = arith.constant 2 : i64
// CHECK: call @cp_rt_all_gather_f32(%[[G]], %[[XU]], %[[YU]], %[[AXIS]])
// CHECK-NOT: cp.buffer
func.func @all_gather(%x: memref<1x2x64x32xf32>, %y: memref<1x2x256x32xf32>) {
  cp.buffer.all_gather %x into %y on @cp grid_axes = [0] gather_axis = 2 : memref<1x2x64x32xf32> into memref<1x2x256x32xf32>
  return
}

// CHECK-LABEL: func @all_to_all
// CHECK: %[[SPLIT:.*]] = arith.constant 1 : i64
// CHECK: %[[CONCAT:.*]] = arith.constant 2 : i64
// CHECK: call @cp_rt_all_to_all_bf16(%{{.*}}, %{{.*}}, %{{.*}}, %[[SPLIT]], %[[CONCAT]])
func.func @all_to_all(%x: memref<1x8x64x32xbf16>, %y: memref<1x2x256x32xbf16>) {
  cp.buffer.all_to_all %x into %y on @cp grid_axes = [0] split_axis = 1 concat_axis = 2 : memref<1x8x64x32xbf16> into memref<1x2x256x32xbf16>
  return
}

// A strided view goes to the runtime as it is; the runtime packs it.
// CHECK-LABEL: func @exchange_strided_on_a_sub_grid
// CHECK: memref.get_global @__cp_group_dp_cp_1 : memref<5xi64>
// CHECK: memref.cast %{{.*}} : memref<1x8x32x32xf32, strided<[16384, 2048, 32, 1], offset: 1024>> to memref<*xf32>
// CHECK: call @cp_rt_exchange_mirror_f32
func.func @exchange_strided_on_a_sub_grid(%x: memref<1x8x32x32xf32, strided<[16384, 2048, 32, 1], offset: 1024>>,
                                          %y: memref<1x8x32x32xf32>) {
  cp.buffer.exchange %x into %y on @dp_cp grid_axes = [1] partner = mirror : memref<1x8x32x32xf32, strided<[16384, 2048, 32, 1], offset: 1024>> into memref<1x8x32x32xf32>
  return
}

// CHECK-LABEL: func @shift_mask
// CHECK: %[[OFFSET:.*]] = arith.constant -1 : i64
// CHECK: call @cp_rt_shift_i1(%{{.*}}, %{{.*}}, %{{.*}}, %[[OFFSET]])
func.func @shift_mask(%x: memref<64x256xi1>, %y: memref<64x256xi1>) {
  cp.buffer.shift %x into %y on @cp grid_axes = [0] offset = -1 : memref<64x256xi1> into memref<64x256xi1>
  return
}
