shard.grid @cp(shape = 4)
func.func @attention(%q: tensor<1x8x16x32xf32>, %k: tensor<1x4x16x32xf32>,
                     %v: tensor<1x4x16x32xf32>) -> tensor<1x8x16x32xf32> {
  %o = cp.attention %q, %k, %v on @cp grid_axes = [0] mask = causal
      : tensor<1x8x16x32xf32>, tensor<1x4x16x32xf32>, tensor<1x4x16x32xf32>
      -> tensor<1x8x16x32xf32>
  return %o : tensor<1x8x16x32xf32>
}
