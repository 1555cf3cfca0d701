// What a plugin's scheme reports, always naming the plugin: its own
// parameter rule at parse time, and its constraints where a scheme is
// applied.
// RUN: cp-opt --load-dialect-plugin=%cp_example_schemes %s -split-input-file -verify-diagnostics --cp-apply-scheme

shard.grid @cp(shape = 2)
func.func @no_parameter(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{head_chunked_allgather needs its number of head groups c >= 1, e.g. head_chunked_allgather(2); got 0}}
  %o = cp.attention %q, %k, %v on @cp grid_axes = [0] scheme = head_chunked_allgather
      : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}

// -----

shard.grid @cp(shape = 2)
func.func @heads_not_divisible(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{scheme 'head_chunked_allgather' (plugin 'cp-example-schemes'): head_chunked_allgather(4) gathers K/V in 4 groups of heads and needs Hkv (2) divisible by 4; choose c dividing Hkv}}
  %o = cp.attention %q, %k, %v on @cp grid_axes = [0] scheme = head_chunked_allgather(4)
      : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}

// -----

shard.grid @cp(shape = 2)
func.func @typo(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{unknown scheme 'head_chunked_allgahter'; expected allgather, ulysses, hybrid(u), head_tail, ring, zigzag, auto or a scheme a loaded plugin registers (registered: head_chunked_allgather)}}
  %o = cp.attention %q, %k, %v on @cp grid_axes = [0] scheme = head_chunked_allgahter(2)
      : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}

// -----

// A plugin scheme that does not declare supportsSinks() would drop them.
shard.grid @cp(shape = 2)
func.func @sinks(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %s: tensor<4xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{has sinks, which scheme 'head_chunked_allgather' (plugin 'cp-example-schemes') does not take (its definition does not say supportsSinks); use a built-in scheme}}
  %o = cp.attention %q, %k, %v sinks(%s : tensor<4xf32>) on @cp grid_axes = [0] scheme = head_chunked_allgather(2)
      : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}
