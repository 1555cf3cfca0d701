// `report` emits one remark per function counting the ops rewritten per
// scheme (pass statistics are compiled out of release builds of LLVM). A
// scheme on the op wins over the pass option.
// RUN: cp-opt %s --cp-apply-scheme="scheme=allgather report" 2>&1 >/dev/null | FileCheck %s
// RUN: cp-opt %s --cp-apply-scheme="scheme=allgather" | FileCheck %s --check-prefix=IR

shard.grid @cp(shape = 4)
// A per-op scheme wins over the pass option.
// CHECK: remark: cp-apply-scheme rewrote 2 cp.attention: allgather = 1 ulysses = 1
func.func @per_op_scheme_wins(%q: tensor<1x8x16x8xf32>) -> (tensor<1x8x16x8xf32>, tensor<1x8x16x8xf32>) {
  %0 = cp.attention %q, %q, %q on @cp grid_axes = [0] scheme = ulysses
      : tensor<1x8x16x8xf32>, tensor<1x8x16x8xf32>, tensor<1x8x16x8xf32> -> tensor<1x8x16x8xf32>
  %1 = cp.attention %q, %q, %q on @cp grid_axes = [0] scheme = allgather
      : tensor<1x8x16x8xf32>, tensor<1x8x16x8xf32>, tensor<1x8x16x8xf32> -> tensor<1x8x16x8xf32>
  // IR: cp.all_to_all
  // IR: cp.local_attention {{.*}} cp.scheme = #cp.scheme<ulysses>
  // IR: cp.local_attention {{.*}} cp.scheme = #cp.scheme<allgather>
  return %0, %1 : tensor<1x8x16x8xf32>, tensor<1x8x16x8xf32>
}
