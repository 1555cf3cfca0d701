// convert-shard-to-cp: shard.reduce_scatter with the (default) sum is
// cp.reduce_scatter on the same group and axis; another reduction is an
// error on the op, since cp.reduce_scatter only sums.
// RUN: cp-opt %s -convert-shard-to-cp -split-input-file -verify-diagnostics | FileCheck %s

shard.grid @grid(shape = 2x2)

// CHECK-LABEL: func @sum
// CHECK: cp.reduce_scatter %arg0 on @grid grid_axes = [0] scatter_axis = 1 : tensor<4x8xf32> -> tensor<4x4xf32>
// CHECK: cp.reduce_scatter %arg0 on @grid grid_axes = [0, 1] scatter_axis = 0 : tensor<4x8xf32> -> tensor<1x8xf32>
func.func @sum(%x: tensor<4x8xf32>) -> (tensor<4x4xf32>, tensor<1x8xf32>) {
  %0 = shard.reduce_scatter %x on @grid grid_axes = [0] scatter_axis = 1
      : tensor<4x8xf32> -> tensor<4x4xf32>
  %1 = shard.reduce_scatter %x on @grid grid_axes = [0, 1] reduction = sum scatter_axis = 0
      : tensor<4x8xf32> -> tensor<1x8xf32>
  return %0, %1 : tensor<4x4xf32>, tensor<1x8xf32>
}

// -----

shard.grid @grid(shape = 2)

func.func @max(%x: tensor<4x8xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'shard.reduce_scatter' op reduces with 'max'; cp.reduce_scatter sums only, so shard-to-cp converts reduction = sum}}
  %0 = shard.reduce_scatter %x on @grid grid_axes = [0] reduction = max scatter_axis = 1
      : tensor<4x8xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
