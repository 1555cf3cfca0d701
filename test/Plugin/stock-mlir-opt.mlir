// The stock mlir-opt of the LLVM installation, not cp-opt, with cp loaded
// as a dialect and pass plugin: it parses cp IR, applies a scheme and runs
// the whole CPU pipeline.
//
// RUN: %stock_mlir_opt --load-dialect-plugin=%cp_plugin --load-pass-plugin=%cp_plugin %s \
// RUN:   --pass-pipeline='builtin.module(cp-apply-scheme{scheme=allgather},canonicalize)' \
// RUN:   | FileCheck %s
// RUN: %stock_mlir_opt --load-dialect-plugin=%cp_plugin --load-pass-plugin=%cp_plugin %s \
// RUN:   --pass-pipeline='builtin.module(cp-lower-to-cpu{scheme=head_tail})' \
// RUN:   | FileCheck %s --check-prefix=CPU
//
// Without the plugin the same tool does not know cp: the test above is not
// passing by accident.
// RUN: not %stock_mlir_opt %s 2>&1 | FileCheck %s --check-prefix=STOCK
// RUN: not %stock_mlir_opt --load-dialect-plugin=%cp_plugin %s \
// RUN:   --pass-pipeline='builtin.module(cp-apply-scheme{scheme=allgather})' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NOPASSES

// STOCK: error: Dialect `cp' not found for custom op 'cp.attention'
// NOPASSES: 'cp-apply-scheme' does not refer to a registered pass or pass pipeline

shard.grid @cp(shape = 4)

// CHECK-LABEL: func.func @attention
// CHECK-SAME: (%[[Q:.*]]: tensor<1x8x16x32xf32>, %[[K:.*]]: tensor<1x2x16x32xf32>, %[[V:.*]]: tensor<1x2x16x32xf32>)
// CHECK: %[[R:.*]] = shard.process_multi_index on @cp axes = [0] : index
// CHECK: %[[KF:.*]] = cp.all_gather %[[K]] on @cp grid_axes = [0] gather_axis = 2 : tensor<1x2x16x32xf32> -> tensor<1x2x64x32xf32>
// CHECK: %[[VF:.*]] = cp.all_gather %[[V]] on @cp grid_axes = [0] gather_axis = 2
// CHECK: %[[QO:.*]] = arith.muli %[[R]], %{{.*}} : index
// CHECK: cp.local_attention %[[Q]], %[[KF]], %[[VF]] offsets(%[[QO]], %{{.*}}) mask = causal

// CPU-LABEL: llvm.func @attention
// CPU: llvm.call @cp_rt_exchange_mirror_f32
// CPU: llvm.call @cp_rt_all_gather_f32
func.func @attention(%q: tensor<1x8x16x32xf32>, %k: tensor<1x2x16x32xf32>,
                     %v: tensor<1x2x16x32xf32>) -> tensor<1x8x16x32xf32> {
  %o = cp.attention %q, %k, %v on @cp grid_axes = [0] mask = causal
      : tensor<1x8x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32>
      -> tensor<1x8x16x32xf32>
  return %o : tensor<1x8x16x32xf32>
}
