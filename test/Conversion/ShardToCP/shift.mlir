// convert-shard-to-cp: shard.shift gives device r the input of device
// r + offset (data moves to lower indices); cp.shift gives rank r the input
// of rank r - offset. So the rewrite negates the offset, modulo the size of
// the grid axis shifted along, and shifts within that axis alone (the other
// grid axes only pick the group). Both directions, a wrap-around offset and
// a non-rotating shift (whose devices without a source are undefined; the
// rotation is one such result). Integration/shard-collectives.test runs the
// two directions on 3 ranks and checks which rank's data arrives.
// RUN: cp-opt %s -convert-shard-to-cp -split-input-file -verify-diagnostics | FileCheck %s

shard.grid @grid(shape = 2x4)

// Device r receives from r + 1: data moves back, cp.shift offset 3 (= -1).
// CHECK-LABEL: func @from_next
// CHECK: cp.shift %arg0 on @grid grid_axes = [1] offset = 3 : tensor<8xf32>
func.func @from_next(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = shard.shift %x on @grid grid_axes = [1] shift_axis = 1 offset = 1 rotate
      : tensor<8xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// Device r receives from r - 1: data moves forward, cp.shift offset 1.
// CHECK-LABEL: func @from_previous
// CHECK: cp.shift %arg0 on @grid grid_axes = [1] offset = 1 : tensor<8xf32>
func.func @from_previous(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = shard.shift %x on @grid grid_axes = [1] shift_axis = 1 offset = -1 rotate
      : tensor<8xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// Upstream's example: offset 2 on 4 devices; -2 mod 4 = 2. The group is the
// shifted axis alone, though grid_axes names both.
// CHECK-LABEL: func @upstream_example
// CHECK: cp.shift %arg0 on @grid grid_axes = [1] offset = 2 : tensor<2xi8>
func.func @upstream_example(%x: tensor<2xi8>) -> tensor<2xi8> {
  %0 = shard.shift %x on @grid grid_axes = [0, 1] shift_axis = 1 offset = 2 rotate
      : tensor<2xi8> -> tensor<2xi8>
  return %0 : tensor<2xi8>
}

// Along grid axis 0 (2 devices), without rotate, offset 5: -5 mod 2 = 1.
// CHECK-LABEL: func @no_rotate
// CHECK: cp.shift %arg0 on @grid grid_axes = [0] offset = 1 : tensor<8xf32>
func.func @no_rotate(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = shard.shift %x on @grid grid_axes = [0] shift_axis = 0 offset = 5
      : tensor<8xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// A group of 3 (an odd size: offsets read back unsigned must still negate
// as signed values).
shard.grid @three(shape = 3)

// CHECK-LABEL: func @three_from_next
// CHECK: cp.shift %arg0 on @three grid_axes = [0] offset = 2 : tensor<8xf32>
func.func @three_from_next(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = shard.shift %x on @three grid_axes = [0] shift_axis = 0 offset = 1 rotate
      : tensor<8xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// CHECK-LABEL: func @three_from_previous
// CHECK: cp.shift %arg0 on @three grid_axes = [0] offset = 1 : tensor<8xf32>
func.func @three_from_previous(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = shard.shift %x on @three grid_axes = [0] shift_axis = 0 offset = -1 rotate
      : tensor<8xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

shard.grid @dyn(shape = ?)

func.func @dynamic_axis(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'shard.shift' op shifts along grid axis 0 of @dyn, whose size is dynamic; cp.shift needs a static group size}}
  %0 = shard.shift %x on @dyn grid_axes = [0] shift_axis = 0 offset = 1 rotate
      : tensor<8xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// Upstream's grid verifier takes a size 0; the offset modulo 0 was a SIGFPE
// (found by scripts/fuzz.py under cp-lower-to-cpu).
shard.grid @empty(shape = 0)

func.func @empty_axis(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'shard.shift' op shifts along grid axis 0 of @empty, which has size 0; a CP group needs at least one process on every axis it uses}}
  %0 = shard.shift %x on @empty grid_axes = [0] shift_axis = 0 offset = 1 rotate
      : tensor<8xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
