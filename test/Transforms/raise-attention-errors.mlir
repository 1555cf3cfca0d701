// cp-raise-attention's errors on the grid and the options (misfire
// detection: raise-attention-misfire.mlir). Each is one diagnostic, exit code 1.
// RUN: not cp-opt %s --cp-raise-attention="scheme=sideways" 2>&1 | FileCheck %s --check-prefix=SCHEME
// RUN: not cp-opt %s --cp-raise-attention -split-input-file 2>&1 | FileCheck %s --check-prefix=GRID
// RUN: not cp-opt %s --cp-raise-attention=grid-size=2 -split-input-file 2>&1 | FileCheck %s --check-prefix=SIZE
// With grid-size the grid is declared.
// RUN: cp-opt %s --cp-raise-attention=grid-size=4 -split-input-file | FileCheck %s --check-prefix=DECLARED

// SCHEME: cp-raise-attention: invalid scheme option 'sideways': unknown scheme 'sideways'; expected allgather, ulysses, hybrid(u), head_tail, ring, zigzag, auto or a scheme a loaded plugin registers (none is registered)

// Without a grid: raising needs one, declared or asked for.
// GRID: error: cp-raise-attention: grid @cp does not exist; declare `shard.grid @cp(shape = P)` or pass grid-size=P
// DECLARED: shard.grid @cp(shape = 4)
// DECLARED: cp.attention
func.func @no_grid(%q: tensor<16x8xf32>, %k: tensor<16x8xf32>, %v: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<16x16xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<16x16xf32>) -> tensor<16x16xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%q, %k : tensor<16x8xf32>, tensor<16x8xf32>) outs(%s0 : tensor<16x16xf32>) -> tensor<16x16xf32>
  %p = linalg.softmax dimension(1) ins(%s : tensor<16x16xf32>) outs(%e0 : tensor<16x16xf32>) -> tensor<16x16xf32>
  %eo = tensor.empty() : tensor<16x8xf32>
  %o0 = linalg.fill ins(%zero : f32) outs(%eo : tensor<16x8xf32>) -> tensor<16x8xf32>
  %o = linalg.matmul ins(%p, %v : tensor<16x16xf32>, tensor<16x8xf32>) outs(%o0 : tensor<16x8xf32>) -> tensor<16x8xf32>
  return %o : tensor<16x8xf32>
}

// -----

// A grid-size that contradicts the declared grid.
// SIZE: error: cp-raise-attention: grid-size=2 but shard.grid @cp already exists with shape 4; drop grid-size or name another grid
shard.grid @cp(shape = 4)
func.func @other_size(%q: tensor<16x8xf32>, %k: tensor<16x8xf32>, %v: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<16x16xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<16x16xf32>) -> tensor<16x16xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%q, %k : tensor<16x8xf32>, tensor<16x8xf32>) outs(%s0 : tensor<16x16xf32>) -> tensor<16x16xf32>
  %p = linalg.softmax dimension(1) ins(%s : tensor<16x16xf32>) outs(%e0 : tensor<16x16xf32>) -> tensor<16x16xf32>
  %eo = tensor.empty() : tensor<16x8xf32>
  %o0 = linalg.fill ins(%zero : f32) outs(%eo : tensor<16x8xf32>) -> tensor<16x8xf32>
  %o = linalg.matmul ins(%p, %v : tensor<16x16xf32>, tensor<16x8xf32>) outs(%o0 : tensor<16x8xf32>) -> tensor<16x8xf32>
  return %o : tensor<16x8xf32>
}
