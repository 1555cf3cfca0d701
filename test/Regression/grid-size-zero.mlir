// A grid axis of size 0 used to reach divisions by the group size: in the
// all_to_all verifier (SIGFPE during a plain parse), in ShiftOp::fold under
// -canonicalize and in the bytes-per-rank estimate of cp-apply-scheme. The
// group rule now rejects it first, with one diagnostic, on every path.
// RUN: cp-opt %s -split-input-file -verify-diagnostics
// RUN: not cp-opt %s -split-input-file -canonicalize 2>&1 | FileCheck %s
// RUN: not cp-opt %s -split-input-file --cp-apply-scheme=scheme=ring 2>&1 | FileCheck %s
// CHECK: has size 0; a CP group needs at least one process on every axis it uses
// CHECK-NOT: Stack dump

shard.grid @cp(shape = 0)
func.func @all_to_all(%x: tensor<1x8x16x8xf32>) -> tensor<1x2x64x8xf32> {
  // expected-error @+1 {{'cp.all_to_all' op grid axis 0 of @cp has size 0; a CP group needs at least one process on every axis it uses (declare e.g. `shard.grid @cp(shape = 4)`)}}
  %y = cp.all_to_all %x on @cp grid_axes = [0] split_axis = 1 concat_axis = 2 : tensor<1x8x16x8xf32> -> tensor<1x2x64x8xf32>
  return %y : tensor<1x2x64x8xf32>
}

// -----

shard.grid @cp(shape = 0x7)
func.func @shift(%x: tensor<1x8x16x8xf32>) -> tensor<1x8x16x8xf32> {
  // expected-error @+1 {{grid axis 0 of @cp has size 0}}
  %y = cp.shift %x on @cp grid_axes = [0, 1] offset = 1 : tensor<1x8x16x8xf32>
  return %y : tensor<1x8x16x8xf32>
}

// -----

shard.grid @cp(shape = 0x4)
func.func @attention(%q: tensor<1x8x16x8xf32>, %k: tensor<1x8x16x8xf32>, %v: tensor<1x8x16x8xf32>) -> tensor<1x8x16x8xf32> {
  // expected-error @+1 {{grid axis 0 of @cp has size 0}}
  %o = cp.attention %q, %k, %v on @cp grid_axes = [0] mask = causal
      : tensor<1x8x16x8xf32>, tensor<1x8x16x8xf32>, tensor<1x8x16x8xf32> -> tensor<1x8x16x8xf32>
  return %o : tensor<1x8x16x8xf32>
}

// -----

// Axes of size 1 and above are fine; the product of axes must fit in int64.
shard.grid @cp(shape = 4294967296x4294967296)
func.func @overflow(%x: tensor<1x8x16x8xf32>) -> tensor<1x8x16x8xf32> {
  // expected-error @+1 {{the CP group of grid_axes on @cp has more than 9223372036854775807 processes (the product of the axes' sizes overflows int64)}}
  %y = cp.shift %x on @cp grid_axes = [0, 1] offset = 1 : tensor<1x8x16x8xf32>
  return %y : tensor<1x8x16x8xf32>
}
