// convert-cp-to-mpi refuses what it cannot lower, with one error per op.
// RUN: cp-opt %s -convert-cp-to-mpi -split-input-file -verify-diagnostics

shard.grid @dyn(shape = ?x4)
func.func @f(%x: memref<4xf32>, %y: memref<16xf32>) {
  // expected-error @+1 {{needs grid @dyn to have a static shape to be lowered to the runtime}}
  cp.buffer.all_gather %x into %y on @dyn grid_axes = [1] gather_axis = 0 : memref<4xf32> into memref<16xf32>
  return
}

// -----

shard.grid @cp(shape = 4)
func.func @f(%x: memref<4xi4>, %y: memref<16xi4>) {
  // expected-error @+1 {{has no runtime entry for element type 'i4'; use f64, f32, f16, bf16 or i1/i8/i16/i32/i64}}
  cp.buffer.all_gather %x into %y on @cp grid_axes = [0] gather_axis = 0 : memref<4xi4> into memref<16xi4>
  return
}

// -----

shard.grid @cp(shape = 4)
func.func @f(%x: tensor<4xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{has no lowering in convert-cp-to-mpi; bufferize cp ops (one-shot-bufferize) and lower cp.buffer.local_attention (cp-lower-local-attention) first}}
  %0 = cp.all_gather %x on @cp grid_axes = [0] gather_axis = 0 : tensor<4xf32> -> tensor<16xf32>
  return %0 : tensor<16xf32>
}

// -----

shard.grid @cp(shape = 4)
func.func @f(%x: tensor<4xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{has no lowering in convert-cp-to-mpi; only shard.process_multi_index and shard.process_linear_index are lowered}}
  %0 = shard.all_gather %x on @cp grid_axes = [0] gather_axis = 0 : tensor<4xf32> -> tensor<16xf32>
  return %0 : tensor<16xf32>
}

// -----

shard.grid @cp(shape = 4)
func.func @f(%x: memref<4xf32>, %y: memref<16xf32>) {
  %t0 = gpu.wait async
  // expected-error @+1 {{is asynchronous (a GPU stream op); lower it with convert-cp-to-nccl, not convert-cp-to-mpi}}
  %t1 = cp.buffer.all_gather async [%t0] %x into %y on @cp grid_axes = [0] gather_axis = 0 : memref<4xf32> into memref<16xf32>
  gpu.wait [%t1]
  return
}
