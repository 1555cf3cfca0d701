// convert-shard-to-cp reports each collective cp has no counterpart for on
// the op, and the pass fails (cp-opt exits 1): nothing is left half
// converted silently.
// RUN: cp-opt %s -convert-shard-to-cp -split-input-file -verify-diagnostics

shard.grid @grid(shape = 4)

func.func @all_reduce(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'shard.all_reduce' op has no cp counterpart: convert-shard-to-cp converts shard.all_gather, shard.all_to_all, shard.reduce_scatter (sum) and shard.shift; express this collective with those, or lower it through upstream's shard-to-mpi}}
  %0 = shard.all_reduce %x on @grid grid_axes = [0] : tensor<8xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

shard.grid @grid(shape = 4)

func.func @all_slice(%x: tensor<8xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'shard.all_slice' op has no cp counterpart}}
  %0 = shard.all_slice %x on @grid grid_axes = [0] slice_axis = 0 : tensor<8xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
