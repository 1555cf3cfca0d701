// A group of 9223372036854775807 ranks: P times a gathered or concatenated
// size overflows int64. Found by the fuzzer under UBSan (signed overflow in
// the all_gather verifier, on test/Conversion/CPToMPI/errors.mlir with a
// mutated grid); now one diagnostic with the numbers.
// RUN: cp-opt %s -split-input-file -verify-diagnostics

shard.grid @cp(shape = 9223372036854775807)
func.func @gather(%x: memref<4xf32>, %y: memref<16xf32>) {
  // expected-error @+1 {{'cp.buffer.all_gather' op expects result dim 0 to be P * input dim = 9223372036854775807 * 4, which overflows int64; gather fewer rows or ranks}}
  cp.buffer.all_gather %x into %y on @cp grid_axes = [0] gather_axis = 0 : memref<4xf32> into memref<16xf32>
  return
}

// -----

shard.grid @cp(shape = 9223372036854775807)
func.func @gather_tensor(%x: tensor<4xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{'cp.all_gather' op expects result dim 0 to be P * input dim = 9223372036854775807 * 4, which overflows int64}}
  %y = cp.all_gather %x on @cp grid_axes = [0] gather_axis = 0 : tensor<4xf32> -> tensor<16xf32>
  return %y : tensor<16xf32>
}

// -----

shard.grid @cp(shape = 9223372036854775807)
func.func @all_to_all(%x: tensor<9223372036854775807x2xf32>) -> tensor<1x16xf32> {
  // expected-error @+1 {{'cp.all_to_all' op expects result dim 1 to be input dim * P = 2 * 9223372036854775807, which overflows int64; use a smaller concat_axis size}}
  %y = cp.all_to_all %x on @cp grid_axes = [0] split_axis = 0 concat_axis = 1 : tensor<9223372036854775807x2xf32> -> tensor<1x16xf32>
  return %y : tensor<1x16xf32>
}
