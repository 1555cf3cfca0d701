// convert-shard-to-cp: shard.all_gather is cp.all_gather on the same group
// (grid_axes of the grid, ranked row-major in both dialects) and axis.
// RUN: cp-opt %s -convert-shard-to-cp | FileCheck %s

shard.grid @grid(shape = 2x4)

// CHECK-LABEL: func @gather_seq
// CHECK: %[[R:.*]] = cp.all_gather %arg0 on @grid grid_axes = [1] gather_axis = 1 : tensor<2x16x8xf32> -> tensor<2x64x8xf32>
// CHECK: return %[[R]]
func.func @gather_seq(%x: tensor<2x16x8xf32>) -> tensor<2x64x8xf32> {
  %0 = shard.all_gather %x on @grid grid_axes = [1] gather_axis = 1
      : tensor<2x16x8xf32> -> tensor<2x64x8xf32>
  return %0 : tensor<2x64x8xf32>
}

// Both grid axes: a group of 8, in row-major order.
// CHECK-LABEL: func @gather_both_axes
// CHECK: cp.all_gather %arg0 on @grid grid_axes = [0, 1] gather_axis = 0 : tensor<3x5xi32> -> tensor<24x5xi32>
func.func @gather_both_axes(%x: tensor<3x5xi32>) -> tensor<24x5xi32> {
  %0 = shard.all_gather %x on @grid grid_axes = [0, 1] gather_axis = 0
      : tensor<3x5xi32> -> tensor<24x5xi32>
  return %0 : tensor<24x5xi32>
}

// No grid axes: a group of one, the input itself.
// CHECK-LABEL: func @gather_alone
// CHECK-NOT: all_gather
// CHECK: return %arg0
func.func @gather_alone(%x: tensor<3x5xf32>) -> tensor<3x5xf32> {
  %0 = shard.all_gather %x on @grid gather_axis = 0 : tensor<3x5xf32> -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}
