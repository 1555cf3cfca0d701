// The out-of-tree scheme head_chunked_allgather(c) of CPExampleSchemes.so
// (HeadChunkedAllGather.cpp here), loaded into cp-opt as a dialect plugin:
// #cp.scheme names it, cp-apply-scheme rewrites through its definition as
// through a built-in's, and cp-choose-scheme costs it beside the built-ins.
// RUN: cp-opt --load-dialect-plugin=%cp_example_schemes %s | cp-opt --load-dialect-plugin=%cp_example_schemes | FileCheck %s --check-prefix=ROUNDTRIP
// RUN: cp-opt --load-dialect-plugin=%cp_example_schemes %s --cp-apply-scheme | FileCheck %s
// RUN: cp-opt --load-dialect-plugin=%cp_example_schemes %s --cp-apply-scheme=report -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK

shard.grid @cp(shape = 2)

// ROUNDTRIP-LABEL: func @forward
// ROUNDTRIP: scheme = head_chunked_allgather(2)
// ROUNDTRIP-LABEL: func @backward
// ROUNDTRIP: scheme = head_chunked_allgather(2)

// Two groups: K/V heads [0, 1) and [1, 2) gathered one group at a time,
// each attended by its two query heads (GQA groups stay whole), the
// outputs put back together along the heads.
// CHECK-LABEL: func @forward
// CHECK-SAME: (%[[Q:.*]]: tensor<1x4x8x16xf32>, %[[K:.*]]: tensor<1x2x8x16xf32>, %[[V:.*]]: tensor<1x2x8x16xf32>)
// CHECK: %[[R:.*]] = shard.process_multi_index on @cp
// CHECK: %[[QOFF:.*]] = arith.muli %[[R]], %c8
// CHECK: %[[K0:.*]] = tensor.extract_slice %[[K]][0, %{{.*}}, 0, 0] [1, 1, 8, 16]
// CHECK: %[[KG0:.*]] = cp.all_gather %[[K0]] on @cp grid_axes = [0] gather_axis = 2 : tensor<1x1x8x16xf32> -> tensor<1x1x16x16xf32>
// CHECK: %[[VG0:.*]] = cp.all_gather
// CHECK: %[[Q0:.*]] = tensor.extract_slice %[[Q]][0, %{{.*}}, 0, 0] [1, 2, 8, 16]
// CHECK: %[[O0:.*]] = cp.local_attention %[[Q0]], %[[KG0]], %[[VG0]] offsets(%[[QOFF]], %{{.*}}) mask = causal {cp.bytes_per_rank = 2048 : i64, cp.scheme = #cp.scheme<head_chunked_allgather(2)>} : tensor<1x2x8x16xf32>, tensor<1x1x16x16xf32>, tensor<1x1x16x16xf32> -> tensor<1x2x8x16xf32>
// CHECK: cp.all_gather {{.*}} -> tensor<1x1x16x16xf32>
// CHECK: cp.all_gather {{.*}} -> tensor<1x1x16x16xf32>
// CHECK: %[[O1:.*]] = cp.local_attention
// CHECK: %[[E:.*]] = tensor.empty() : tensor<1x4x8x16xf32>
// CHECK: %[[P0:.*]] = tensor.insert_slice %[[O0]] into %[[E]][0, 0, 0, 0] [1, 2, 8, 16]
// CHECK: %[[P1:.*]] = tensor.insert_slice %[[O1]] into %[[P0]][0, 2, 0, 0] [1, 2, 8, 16]
// CHECK: return %[[P1]]
func.func @forward(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x4x8x16xf32> {
  %o = cp.attention %q, %k, %v on @cp grid_axes = [0] mask = causal scheme = head_chunked_allgather(2)
      : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}

// The backward: per group, K/V gathered, one local gradient, dK/dV
// reduce-scattered back to their rows.
// CHECK-LABEL: func @backward
// CHECK-COUNT-2: cp.all_gather
// CHECK: cp.local_attention_grad {{.*}} -> tensor<1x2x8x16xf32>, tensor<1x1x16x16xf32>, tensor<1x1x16x16xf32>
// CHECK: cp.reduce_scatter {{.*}} : tensor<1x1x16x16xf32> -> tensor<1x1x8x16xf32>
// CHECK: cp.reduce_scatter {{.*}} : tensor<1x1x16x16xf32> -> tensor<1x1x8x16xf32>
// CHECK-COUNT-2: cp.all_gather
// CHECK: cp.local_attention_grad
// CHECK-COUNT-2: cp.reduce_scatter
// CHECK: tensor.insert_slice {{.*}} into tensor<1x4x8x16xf32>
// CHECK: tensor.insert_slice {{.*}} into tensor<1x4x8x16xf32>
// CHECK: tensor.insert_slice {{.*}} into tensor<1x2x8x16xf32>
// CHECK: tensor.insert_slice {{.*}} into tensor<1x2x8x16xf32>
// CHECK: tensor.insert_slice {{.*}} into tensor<1x2x8x16xf32>
// CHECK: tensor.insert_slice {{.*}} into tensor<1x2x8x16xf32>
func.func @backward(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>,
                    %o: tensor<1x4x8x16xf32>, %lse: tensor<1x4x8xf32>, %do: tensor<1x4x8x16xf32>)
    -> (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) {
  %dq, %dk, %dv = cp.attention_grad %q, %k, %v, %o, %lse, %do on @cp grid_axes = [0] mask = causal scheme = head_chunked_allgather(2)
      : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8xf32>, tensor<1x4x8x16xf32>
      -> tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  return %dq, %dk, %dv : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
}

// REMARK-COUNT-2: remark: cp-apply-scheme rewrote 1 cp.attention: head_chunked_allgather = 1
