// convert-shard-to-cp: shard.all_to_all is cp.all_to_all with the same split
// and concat axes (Ulysses' sequence-to-heads exchange and back).
// RUN: cp-opt %s -convert-shard-to-cp | FileCheck %s

shard.grid @grid(shape = 4)

// CHECK-LABEL: func @seq_to_heads
// CHECK: %[[H:.*]] = cp.all_to_all %arg0 on @grid grid_axes = [0] split_axis = 1 concat_axis = 2 : tensor<1x8x16x32xf32> -> tensor<1x2x64x32xf32>
// CHECK: %[[S:.*]] = cp.all_to_all %[[H]] on @grid grid_axes = [0] split_axis = 2 concat_axis = 1 : tensor<1x2x64x32xf32> -> tensor<1x8x16x32xf32>
// CHECK: return %[[S]]
func.func @seq_to_heads(%x: tensor<1x8x16x32xf32>) -> tensor<1x8x16x32xf32> {
  %h = shard.all_to_all %x on @grid grid_axes = [0] split_axis = 1 concat_axis = 2
      : tensor<1x8x16x32xf32> -> tensor<1x2x64x32xf32>
  %s = shard.all_to_all %h on @grid grid_axes = [0] split_axis = 2 concat_axis = 1
      : tensor<1x2x64x32xf32> -> tensor<1x8x16x32xf32>
  return %s : tensor<1x8x16x32xf32>
}
