// An attention layer's core under context parallelism: causal GQA attention
// (H = 8 query heads, Hkv = 4 key/value heads, D = Dv = 32) over a sequence
// of S = 256 tokens split across a CP group of P = 4 processes (L = 64 each).
// No scheme is fixed here: `cp-apply-scheme{scheme=...}` picks one.
shard.grid @cp(shape = 4)

func.func @attention(%q: tensor<1x8x64x32xf32>, %k: tensor<1x4x64x32xf32>,
                     %v: tensor<1x4x64x32xf32>) -> tensor<1x8x64x32xf32> {
  %o = cp.attention %q, %k, %v on @cp grid_axes = [0] mask = causal
      : tensor<1x8x64x32xf32>, tensor<1x4x64x32xf32>, tensor<1x4x64x32xf32>
      -> tensor<1x8x64x32xf32>
  return %o : tensor<1x8x64x32xf32>
}
