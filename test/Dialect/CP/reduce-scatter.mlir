// cp.reduce_scatter and cp.buffer.reduce_scatter: round trip, the verifier
// rules with their numbers, the fold for a group of one, bufferization and
// the MPI lowering.
// RUN: cp-opt %s -split-input-file -verify-diagnostics | FileCheck %s --check-prefix=ROUNDTRIP
// RUN: cp-opt %s -split-input-file -verify-diagnostics -canonicalize | FileCheck %s --check-prefix=FOLD
// RUN: cp-opt %s -split-input-file -verify-diagnostics -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" | FileCheck %s --check-prefix=BUFFER
// RUN: cp-opt %s -split-input-file -verify-diagnostics -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -convert-cp-to-mpi | FileCheck %s --check-prefix=MPI

shard.grid @cp(shape = 4)
shard.grid @single(shape = 1)

// The backward of an all_gather along the sequence: rank r keeps rows
// [64 r, 64 r + 64) of the sum of every rank's dK.
// ROUNDTRIP-LABEL: func @dk
// ROUNDTRIP: cp.reduce_scatter %{{.*}} on @cp grid_axes = [0] scatter_axis = 2 : tensor<1x2x256x32xf32> -> tensor<1x2x64x32xf32>
// ROUNDTRIP: cp.reduce_scatter %{{.*}} on @single grid_axes = [0] scatter_axis = 2 : tensor<1x2x256x32xf32> -> tensor<1x2x256x32xf32>
// A group of one: the sum of one input is the input.
// FOLD-LABEL: func @dk
// FOLD: %[[R:.*]] = cp.reduce_scatter
// FOLD-NOT: cp.reduce_scatter
// FOLD: return %[[R]], %arg0
// BUFFER-LABEL: func @dk
// BUFFER: %[[OUT:.*]] = memref.alloc() {{.*}} : memref<1x2x64x32xf32>
// BUFFER: cp.buffer.reduce_scatter %{{.*}} into %[[OUT]] on @cp grid_axes = [0] scatter_axis = 2 : memref<1x2x256x32xf32> into memref<1x2x64x32xf32>
// MPI-LABEL: func @dk
// MPI: %[[AXIS:.*]] = arith.constant 2 : i64
// MPI: call @cp_rt_reduce_scatter_f32(%{{.*}}, %{{.*}}, %{{.*}}, %[[AXIS]]) : (i64, memref<*xf32>, memref<*xf32>, i64) -> ()
func.func @dk(%x: tensor<1x2x256x32xf32>) -> (tensor<1x2x64x32xf32>, tensor<1x2x256x32xf32>) {
  %0 = cp.reduce_scatter %x on @cp grid_axes = [0] scatter_axis = 2 : tensor<1x2x256x32xf32> -> tensor<1x2x64x32xf32>
  %1 = cp.reduce_scatter %x on @single grid_axes = [0] scatter_axis = 2 : tensor<1x2x256x32xf32> -> tensor<1x2x256x32xf32>
  return %0, %1 : tensor<1x2x64x32xf32>, tensor<1x2x256x32xf32>
}

// -----

shard.grid @cp(shape = 4)
// ROUNDTRIP-LABEL: func @buffers
// ROUNDTRIP: cp.buffer.reduce_scatter %{{.*}} into %{{.*}} on @cp grid_axes = [0] scatter_axis = 0 : memref<8x3xbf16> into memref<2x3xbf16>
func.func @buffers(%x: memref<8x3xbf16>, %y: memref<2x3xbf16>) {
  cp.buffer.reduce_scatter %x into %y on @cp grid_axes = [0] scatter_axis = 0 : memref<8x3xbf16> into memref<2x3xbf16>
  return
}

// -----

shard.grid @cp(shape = 4)
func.func @not_divisible(%x: tensor<1x2x250x32xf32>) -> tensor<1x2x62x32xf32> {
  // expected-error @+1 {{'cp.reduce_scatter' op scatter_axis 2 has size 250, which the group size P = 4 does not divide; pad it to a multiple of 4}}
  %0 = cp.reduce_scatter %x on @cp grid_axes = [0] scatter_axis = 2 : tensor<1x2x250x32xf32> -> tensor<1x2x62x32xf32>
  return %0 : tensor<1x2x62x32xf32>
}

// -----

shard.grid @cp(shape = 4)
func.func @wrong_result(%x: tensor<1x2x256x32xf32>) -> tensor<1x2x128x32xf32> {
  // expected-error @+1 {{'cp.reduce_scatter' op expects result dim 2 to be input dim / P = 256 / 4 = 64, got 128}}
  %0 = cp.reduce_scatter %x on @cp grid_axes = [0] scatter_axis = 2 : tensor<1x2x256x32xf32> -> tensor<1x2x128x32xf32>
  return %0 : tensor<1x2x128x32xf32>
}

// -----

shard.grid @cp(shape = 4)
func.func @booleans(%x: tensor<8xi1>) -> tensor<2xi1> {
  // expected-error @+1 {{'cp.reduce_scatter' op sums its inputs, so it needs a float or an integer element type of 8 bits or more, got 'i1'}}
  %0 = cp.reduce_scatter %x on @cp grid_axes = [0] scatter_axis = 0 : tensor<8xi1> -> tensor<2xi1>
  return %0 : tensor<2xi1>
}

// -----

shard.grid @cp(shape = 4)
func.func @axis(%x: tensor<8xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'cp.reduce_scatter' op scatter_axis (1) is out of range for a rank-1 tensor}}
  %0 = cp.reduce_scatter %x on @cp grid_axes = [0] scatter_axis = 1 : tensor<8xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

shard.grid @cp(shape = 4)
func.func @other_dims(%x: tensor<8x3xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'cp.reduce_scatter' op expects result dim 1 (4) to equal input dim 1 (3)}}
  %0 = cp.reduce_scatter %x on @cp grid_axes = [0] scatter_axis = 0 : tensor<8x3xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
