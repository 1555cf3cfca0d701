// Invalid input gives exactly one diagnostic on the op and exit code 1 (the
// `not` fails on any other code, a crash included).
// RUN: not cp-opt %s 2>&1 | FileCheck %s
// RUN: bash -c 'cp-opt %s 2>/dev/null; test $? -eq 1'
// CHECK-COUNT-1: error:
// CHECK-NOT: error:
// CHECK-NOT: Assertion
// CHECK-NOT: Stack dump

shard.grid @cp(shape = 4)

func.func @f(%q: tensor<1x6x64x32xf32>, %k: tensor<1x6x64x32xf32>, %v: tensor<1x6x64x32xf32>) {
  // CHECK: 'cp.attention' op cannot use scheme #cp.scheme<ulysses>: ulysses needs H (6) divisible by the CP group size (4)
  %0 = cp.attention %q, %k, %v on @cp grid_axes = [0] scheme = ulysses
      : tensor<1x6x64x32xf32>, tensor<1x6x64x32xf32>, tensor<1x6x64x32xf32> -> tensor<1x6x64x32xf32>
  return
}
