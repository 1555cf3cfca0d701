// convert-cp-to-nccl needs collectives on a stream.
// RUN: cp-opt %s -convert-cp-to-nccl -split-input-file -verify-diagnostics

shard.grid @cp(shape = 4)
func.func @f(%x: memref<4xf32>, %y: memref<16xf32>) {
  // expected-error @+1 {{must be asynchronous with exactly one dependency to run on a stream; run gpu-async-region first}}
  cp.buffer.all_gather %x into %y on @cp grid_axes = [0] gather_axis = 0 : memref<4xf32> into memref<16xf32>
  return
}
