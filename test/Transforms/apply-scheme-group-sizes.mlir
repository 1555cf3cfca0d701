// Every scheme at every CP group size its constraints allow, P in
// {1, 2, 3, 4, 8}: the rewritten IR verifies after cp-apply-scheme,
// canonicalize and cse, holds no cp.attention, and at P = 1 keeps no
// collective at all. (hybrid needs 1 < u < P with u | P, so it starts at 4.)
// RUN: cp-opt %s --cp-apply-scheme --canonicalize --cse | FileCheck %s
// CHECK-NOT: cp.attention

shard.grid @g1(shape = 1)
shard.grid @g2(shape = 2)
shard.grid @g3(shape = 3)
shard.grid @g4(shape = 4)
shard.grid @g8(shape = 8)

// CHECK-LABEL: func @allgather_p1
// CHECK-NOT: cp.{{all_gather|all_to_all|exchange|shift}}
// CHECK: cp.local_attention
// CHECK-NOT: cp.attention
// CHECK: return
func.func @allgather_p1(%q: tensor<2x24x8x16xf32>, %k: tensor<2x8x8x16xf32>, %v: tensor<2x8x8x8xf32>) -> tensor<2x24x8x8xf32> {
  %o = cp.attention %q, %k, %v on @g1 grid_axes = [0] mask = causal scheme = allgather
      : tensor<2x24x8x16xf32>, tensor<2x8x8x16xf32>, tensor<2x8x8x8xf32> -> tensor<2x24x8x8xf32>
  return %o : tensor<2x24x8x8xf32>
}

// CHECK-LABEL: func @ulysses_p1
// CHECK-NOT: cp.{{all_gather|all_to_all|exchange|shift}}
// CHECK: cp.local_attention
// CHECK-NOT: cp.attention
// CHECK: return
func.func @ulysses_p1(%q: tensor<2x24x8x16xf32>, %k: tensor<2x24x8x16xf32>, %v: tensor<2x24x8x8xf32>) -> tensor<2x24x8x8xf32> {
  %o = cp.attention %q, %k, %v on @g1 grid_axes = [0] mask = causal scheme = ulysses
      : tensor<2x24x8x16xf32>, tensor<2x24x8x16xf32>, tensor<2x24x8x8xf32> -> tensor<2x24x8x8xf32>
  return %o : tensor<2x24x8x8xf32>
}

// CHECK-LABEL: func @head_tail_p1
// CHECK-NOT: cp.{{all_gather|all_to_all|exchange|shift}}
// CHECK: cp.local_attention
// CHECK-NOT: cp.attention
// CHECK: return
func.func @head_tail_p1(%q: tensor<2x24x8x16xf32>, %k: tensor<2x8x8x16xf32>, %v: tensor<2x8x8x8xf32>) -> tensor<2x24x8x8xf32> {
  %o = cp.attention %q, %k, %v on @g1 grid_axes = [0] mask = causal scheme = head_tail
      : tensor<2x24x8x16xf32>, tensor<2x8x8x16xf32>, tensor<2x8x8x8xf32> -> tensor<2x24x8x8xf32>
  return %o : tensor<2x24x8x8xf32>
}

// CHECK-LABEL: func @allgather_p2
// CHECK: cp.local_attention
// CHECK-NOT: cp.attention
// CHECK: return
func.func @allgather_p2(%q: tensor<2x24x8x16xf32>, %k: tensor<2x8x8x16xf32>, %v: tensor<2x8x8x8xf32>) -> tensor<2x24x8x8xf32> {
  %o = cp.attention %q, %k, %v on @g2 grid_axes = [0] mask = causal scheme = allgather
      : tensor<2x24x8x16xf32>, tensor<2x8x8x16xf32>, tensor<2x8x8x8xf32> -> tensor<2x24x8x8xf32>
  return %o : tensor<2x24x8x8xf32>
}

// CHECK-LABEL: func @ulysses_p2
// CHECK: cp.local_attention
// CHECK-NOT: cp.attention
// CHECK: return
func.func @ulysses_p2(%q: tensor<2x24x8x16xf32>, %k: tensor<2x24x8x16xf32>, %v: tensor<2x24x8x8xf32>) -> tensor<2x24x8x8xf32> {
  %o = cp.attention %q, %k, %v on @g2 grid_axes = [0] mask = causal scheme = ulysses
      : tensor<2x24x8x16xf32>, tensor<2x24x8x16xf32>, tensor<2x24x8x8xf32> -> tensor<2x24x8x8xf32>
  return %o : tensor<2x24x8x8xf32>
}

// CHECK-LABEL: func @head_tail_p2
// CHECK: cp.local_attention
// CHECK-NOT: cp.attention
// CHECK: return
func.func @head_tail_p2(%q: tensor<2x24x8x16xf32>, %k: tensor<2x8x8x16xf32>, %v: tensor<2x8x8x8xf32>) -> tensor<2x24x8x8xf32> {
  %o = cp.attention %q, %k, %v on @g2 grid_axes = [0] mask = causal scheme = head_tail
      : tensor<2x24x8x16xf32>, tensor<2x8x8x16xf32>, tensor<2x8x8x8xf32> -> tensor<2x24x8x8xf32>
  return %o : tensor<2x24x8x8xf32>
}

// CHECK-LABEL: func @allgather_p3
// CHECK: cp.local_attention
// CHECK-NOT: cp.attention
// CHECK: return
func.func @allgather_p3(%q: tensor<2x24x8x16xf32>, %k: tensor<2x8x8x16xf32>, %v: tensor<2x8x8x8xf32>) -> tensor<2x24x8x8xf32> {
  %o = cp.attention %q, %k, %v on @g3 grid_axes = [0] mask = causal scheme = allgather
      : tensor<2x24x8x16xf32>, tensor<2x8x8x16xf32>, tensor<2x8x8x8xf32> -> tensor<2x24x8x8xf32>
  return %o : tensor<2x24x8x8xf32>
}

// CHECK-LABEL: func @ulysses_p3
// CHECK: cp.local_attention
// CHECK-NOT: cp.attention
// CHECK: return
func.func @ulysses_p3(%q: tensor<2x24x8x16xf32>, %k: tensor<2x24x8x16xf32>, %v: tensor<2x24x8x8xf32>) -> tensor<2x24x8x8xf32> {
  %o = cp.attention %q, %k, %v on @g3 grid_axes = [0] mask = causal scheme = ulysses
      : tensor<2x24x8x16xf32>, tensor<2x24x8x16xf32>, tensor<2x24x8x8xf32> -> tensor<2x24x8x8xf32>
  return %o : tensor<2x24x8x8xf32>
}

// CHECK-LABEL: func @head_tail_p3
// CHECK: cp.local_attention
// CHECK-NOT: cp.attention
// CHECK: return
func.func @head_tail_p3(%q: tensor<2x24x8x16xf32>, %k: tensor<2x8x8x16xf32>, %v: tensor<2x8x8x8xf32>) -> tensor<2x24x8x8xf32> {
  %o = cp.attention %q, %k, %v on @g3 grid_axes = [0] mask = causal scheme = head_tail
      : tensor<2x24x8x16xf32>, tensor<2x8x8x16xf32>, tensor<2x8x8x8xf32> -> tensor<2x24x8x8xf32>
  return %o : tensor<2x24x8x8xf32>
}

// CHECK-LABEL: func @allgather_p4
// CHECK: cp.local_attention
// CHECK-NOT: cp.attention
// CHECK: return
func.func @allgather_p4(%q: tensor<2x24x8x16xf32>, %k: tensor<2x8x8x16xf32>, %v: tensor<2x8x8x8xf32>) -> tensor<2x24x8x8xf32> {
  %o = cp.attention %q, %k, %v on @g4 grid_axes = [0] mask = causal scheme = allgather
      : tensor<2x24x8x16xf32>, tensor<2x8x8x16xf32>, tensor<2x8x8x8xf32> -> tensor<2x24x8x8xf32>
  return %o : tensor<2x24x8x8xf32>
}

// CHECK-LABEL: func @ulysses_p4
// CHECK: cp.local_attention
// CHECK-NOT: cp.attention
// CHECK: return
func.func @ulysses_p4(%q: tensor<2x24x8x16xf32>, %k: tensor<2x24x8x16xf32>, %v: tensor<2x24x8x8xf32>) -> tensor<2x24x8x8xf32> {
  %o = cp.attention %q, %k, %v on @g4 grid_axes = [0] mask = causal scheme = ulysses
      : tensor<2x24x8x16xf32>, tensor<2x24x8x16xf32>, tensor<2x24x8x8xf32> -> tensor<2x24x8x8xf32>
  return %o : tensor<2x24x8x8xf32>
}

// CHECK-LABEL: func @head_tail_p4
// CHECK: cp.local_attention
// CHECK-NOT: cp.attention
// CHECK: return
func.func @head_tail_p4(%q: tensor<2x24x8x16xf32>, %k: tensor<2x8x8x16xf32>, %v: tensor<2x8x8x8xf32>) -> tensor<2x24x8x8xf32> {
  %o = cp.attention %q, %k, %v on @g4 grid_axes = [0] mask = causal scheme = head_tail
      : tensor<2x24x8x16xf32>, tensor<2x8x8x16xf32>, tensor<2x8x8x8xf32> -> tensor<2x24x8x8xf32>
  return %o : tensor<2x24x8x8xf32>
}

// CHECK-LABEL: func @hybrid2_p4
// CHECK: cp.local_attention
// CHECK-NOT: cp.attention
// CHECK: return
func.func @hybrid2_p4(%q: tensor<2x24x8x16xf32>, %k: tensor<2x8x8x16xf32>, %v: tensor<2x8x8x8xf32>) -> tensor<2x24x8x8xf32> {
  %o = cp.attention %q, %k, %v on @g4 grid_axes = [0] mask = causal scheme = hybrid(2)
      : tensor<2x24x8x16xf32>, tensor<2x8x8x16xf32>, tensor<2x8x8x8xf32> -> tensor<2x24x8x8xf32>
  return %o : tensor<2x24x8x8xf32>
}

// CHECK-LABEL: func @allgather_p8
// CHECK: cp.local_attention
// CHECK-NOT: cp.attention
// CHECK: return
func.func @allgather_p8(%q: tensor<2x24x8x16xf32>, %k: tensor<2x8x8x16xf32>, %v: tensor<2x8x8x8xf32>) -> tensor<2x24x8x8xf32> {
  %o = cp.attention %q, %k, %v on @g8 grid_axes = [0] mask = causal scheme = allgather
      : tensor<2x24x8x16xf32>, tensor<2x8x8x16xf32>, tensor<2x8x8x8xf32> -> tensor<2x24x8x8xf32>
  return %o : tensor<2x24x8x8xf32>
}

// CHECK-LABEL: func @ulysses_p8
// CHECK: cp.local_attention
// CHECK-NOT: cp.attention
// CHECK: return
func.func @ulysses_p8(%q: tensor<2x24x8x16xf32>, %k: tensor<2x24x8x16xf32>, %v: tensor<2x24x8x8xf32>) -> tensor<2x24x8x8xf32> {
  %o = cp.attention %q, %k, %v on @g8 grid_axes = [0] mask = causal scheme = ulysses
      : tensor<2x24x8x16xf32>, tensor<2x24x8x16xf32>, tensor<2x24x8x8xf32> -> tensor<2x24x8x8xf32>
  return %o : tensor<2x24x8x8xf32>
}

// CHECK-LABEL: func @head_tail_p8
// CHECK: cp.local_attention
// CHECK-NOT: cp.attention
// CHECK: return
func.func @head_tail_p8(%q: tensor<2x24x8x16xf32>, %k: tensor<2x8x8x16xf32>, %v: tensor<2x8x8x8xf32>) -> tensor<2x24x8x8xf32> {
  %o = cp.attention %q, %k, %v on @g8 grid_axes = [0] mask = causal scheme = head_tail
      : tensor<2x24x8x16xf32>, tensor<2x8x8x16xf32>, tensor<2x8x8x8xf32> -> tensor<2x24x8x8xf32>
  return %o : tensor<2x24x8x8xf32>
}

// CHECK-LABEL: func @hybrid2_p8
// CHECK: cp.local_attention
// CHECK-NOT: cp.attention
// CHECK: return
func.func @hybrid2_p8(%q: tensor<2x24x8x16xf32>, %k: tensor<2x8x8x16xf32>, %v: tensor<2x8x8x8xf32>) -> tensor<2x24x8x8xf32> {
  %o = cp.attention %q, %k, %v on @g8 grid_axes = [0] mask = causal scheme = hybrid(2)
      : tensor<2x24x8x16xf32>, tensor<2x8x8x16xf32>, tensor<2x8x8x8xf32> -> tensor<2x24x8x8xf32>
  return %o : tensor<2x24x8x8xf32>
}

// CHECK-LABEL: func @hybrid4_p8
// CHECK: cp.local_attention
// CHECK-NOT: cp.attention
// CHECK: return
func.func @hybrid4_p8(%q: tensor<2x24x8x16xf32>, %k: tensor<2x8x8x16xf32>, %v: tensor<2x8x8x8xf32>) -> tensor<2x24x8x8xf32> {
  %o = cp.attention %q, %k, %v on @g8 grid_axes = [0] mask = causal scheme = hybrid(4)
      : tensor<2x24x8x16xf32>, tensor<2x8x8x16xf32>, tensor<2x8x8x8xf32> -> tensor<2x24x8x8xf32>
  return %o : tensor<2x24x8x8xf32>
}
