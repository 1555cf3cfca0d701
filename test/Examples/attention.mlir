// The README's example round-trips through cp-opt, and cp-opt lists the cp
// dialect next to the upstream ones.
// RUN: cp-opt %cp_src_root/examples/attention.mlir | cp-opt | FileCheck %s
// RUN: cp-opt %cp_src_root/examples/attention.mlir --mlir-print-op-generic | cp-opt | FileCheck %s
// RUN: cp-opt --show-dialects | FileCheck %s --check-prefix=DIALECTS
// RUN: cp-opt --help | FileCheck %s --check-prefix=HELP

// CHECK: shard.grid @cp(shape = 4)
// CHECK: cp.attention %{{.*}}, %{{.*}}, %{{.*}} on @cp grid_axes = [0] mask = causal : tensor<1x8x64x32xf32>, tensor<1x4x64x32xf32>, tensor<1x4x64x32xf32> -> tensor<1x8x64x32xf32>

// DIALECTS: Available Dialects:
// DIALECTS-SAME: cp
// DIALECTS-SAME: shard
// HELP: --cp-apply-scheme
