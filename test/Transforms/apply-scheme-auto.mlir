// `scheme = auto` reaches cp-apply-scheme from every entry point (the
// Python package's apply_scheme and compile_cpu, the C API's pipelines,
// a hand-written pipeline): the pass resolves it by running
// cp-choose-scheme first, on its own `scheme` and `machine` options, so it
// chooses exactly as the cp-lower-to-cpu and cp-lower-to-nvvm pipelines do.
// The choice depends on the machine: hybrid(2) on the default
// h200-nvlink, ulysses on host-mpi for this shape.
//
// RUN: cp-opt %s --cp-apply-scheme=scheme=auto | FileCheck %s --check-prefix=NVLINK
// RUN: cp-opt %s --cp-apply-scheme="scheme=auto machine=host-mpi" | FileCheck %s --check-prefix=HOST
// RUN: cp-opt %s --cp-choose-scheme="scheme=auto machine=host-mpi" --cp-apply-scheme | FileCheck %s --check-prefix=HOST
// RUN: not cp-opt %s --cp-apply-scheme="scheme=auto machine=laptop" 2>&1 | FileCheck %s --check-prefix=MACHINE

shard.grid @cp(shape = 4)

// NVLINK-LABEL: func.func @forward
// NVLINK: cp.all_to_all %{{.*}} on @cp_hybrid_2x2 grid_axes = [1]
// NVLINK: cp.all_gather %{{.*}} on @cp_hybrid_2x2 grid_axes = [0]
// NVLINK: cp.local_attention {{.*}} cp.scheme = #cp.scheme<hybrid(2)>
// HOST-LABEL: func.func @forward
// HOST-NOT: cp.all_gather
// HOST: cp.local_attention {{.*}} cp.scheme = #cp.scheme<ulysses>
func.func @forward(%q: tensor<1x8x64x32xf32>, %k: tensor<1x8x64x32xf32>,
                   %v: tensor<1x8x64x32xf32>) -> tensor<1x8x64x32xf32> {
  %o = cp.attention %q, %k, %v on @cp grid_axes = [0] mask = causal
      : tensor<1x8x64x32xf32>, tensor<1x8x64x32xf32>, tensor<1x8x64x32xf32>
      -> tensor<1x8x64x32xf32>
  return %o : tensor<1x8x64x32xf32>
}

// The backward of an op carrying `scheme = auto` is resolved the same way.
// NVLINK-LABEL: func.func @backward
// NVLINK: cp.shift
// NVLINK: cp.local_attention_grad {{.*}} cp.scheme = #cp.scheme<ring>
// HOST-LABEL: func.func @backward
// HOST: cp.exchange
// HOST: cp.local_attention_grad {{.*}} cp.scheme = #cp.scheme<head_tail>
func.func @backward(%q: tensor<1x8x64x32xf32>, %k: tensor<1x2x64x32xf32>,
                    %v: tensor<1x2x64x32xf32>, %o: tensor<1x8x64x32xf32>,
                    %lse: tensor<1x8x64xf32>, %do: tensor<1x8x64x32xf32>)
    -> (tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>) {
  %dq, %dk, %dv = cp.attention_grad %q, %k, %v, %o, %lse, %do
      on @cp grid_axes = [0] mask = causal scheme = auto
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>,
        tensor<1x8x64x32xf32>, tensor<1x8x64xf32>, tensor<1x8x64x32xf32>
      -> tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>
  return %dq, %dk, %dv : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>
}

// MACHINE: error: cp-choose-scheme: unknown machine 'laptop'; expected one of h200-nvlink, multinode-ib, host-mpi
