// The same plugin in the LLVM installation's own mlir-opt: cp comes from
// CPPlugin.so, the scheme from CPExampleSchemes.so, which resolves cp's
// symbols against the first. The whole CPU pipeline runs under the plugin's
// scheme.
// RUN: %stock_mlir_opt --load-dialect-plugin=%cp_plugin --load-pass-plugin=%cp_plugin \
// RUN:   --load-dialect-plugin=%cp_example_schemes %s \
// RUN:   --pass-pipeline='builtin.module(cp-apply-scheme{scheme=head_chunked_allgather(2)})' \
// RUN:   | FileCheck %s
// RUN: %stock_mlir_opt --load-dialect-plugin=%cp_plugin --load-pass-plugin=%cp_plugin \
// RUN:   --load-dialect-plugin=%cp_example_schemes %s \
// RUN:   --pass-pipeline='builtin.module(cp-lower-to-cpu{scheme=head_chunked_allgather(2)})' \
// RUN:   | FileCheck %s --check-prefix=CPU
//
// Without the scheme plugin the name means nothing, and the message says
// what is registered.
// RUN: not %stock_mlir_opt --load-dialect-plugin=%cp_plugin --load-pass-plugin=%cp_plugin %s \
// RUN:   --pass-pipeline='builtin.module(cp-apply-scheme{scheme=head_chunked_allgather(2)})' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=MISSING

shard.grid @cp(shape = 4)

// CHECK-LABEL: func @attention
// CHECK-COUNT-2: cp.all_gather {{.*}} : tensor<1x1x16x8xf32> -> tensor<1x1x64x8xf32>
// CHECK: cp.local_attention {{.*}}cp.scheme = #cp.scheme<head_chunked_allgather(2)>
// CHECK-COUNT-2: cp.all_gather {{.*}} : tensor<1x1x16x8xf32> -> tensor<1x1x64x8xf32>
// CHECK: cp.local_attention {{.*}}cp.scheme = #cp.scheme<head_chunked_allgather(2)>
// CPU-LABEL: llvm.func @attention
// CPU-COUNT-4: llvm.call @cp_rt_all_gather
// MISSING: error: cp-apply-scheme: invalid scheme option 'head_chunked_allgather(2)': unknown scheme 'head_chunked_allgather'; {{.*}} (none is registered)
func.func @attention(%q: tensor<1x4x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x4x16x8xf32> {
  %o = cp.attention %q, %k, %v on @cp grid_axes = [0] mask = causal
      : tensor<1x4x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x4x16x8xf32>
  return %o : tensor<1x4x16x8xf32>
}
