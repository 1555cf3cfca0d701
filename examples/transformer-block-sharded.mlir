// A small transformer block written on the whole sequence with upstream's
// sharding annotations: the token ids split along the sequence over the
// grid @seq, the weights whole. One-hot embedding, RMS norm, per-head Q/K/V
// projections, causal attention (cp.local_attention), the output
// projection with its residual, and a ReLU MLP with its residual. Shapes:
// S = 64 tokens, a vocabulary of 50, width E = 16, H = 4 heads (2 K/V
// heads) of D = 8, MLP width F = 32. GRID is the number of processes.
//
// cp-opt --pass-pipeline="builtin.module(func.func(sharding-propagation,
//   shard-partition),canonicalize)" gives each process its 64 / GRID tokens:
// every op but the attention is local, and the attention is cp.attention on
// the shards, whose K/V a cp scheme moves (docs/Sharding.md).
//
// Each linalg.fill's result is annotated: upstream's sharding-propagation
// (MLIR 22.1.8) leaves a second fill unannotated, and shard-partition then
// crashes on it. The embedding is a one-hot product so that the table is an
// operand: the partitioner crashes on a tensor argument it only sees inside
// a region.
shard.grid @seq(shape = GRID)

// Embedding: (b, s, e, t)
#etok = affine_map<(b, s, e, t) -> (b, s)>
#etab = affine_map<(b, s, e, t) -> (t, e)>
#eout = affine_map<(b, s, e, t) -> (b, s, e)>
#act = affine_map<(b, s, e) -> (b, s, e)>
#row = affine_map<(b, s, e) -> (b, s)>
#vec = affine_map<(b, s, e) -> (e)>
// Projections: (b, h, s, d, e)
#pin = affine_map<(b, h, s, d, e) -> (b, s, e)>
#pw = affine_map<(b, h, s, d, e) -> (h, e, d)>
#pout = affine_map<(b, h, s, d, e) -> (b, h, s, d)>
// Output projection: (b, s, e, h, d)
#oin = affine_map<(b, s, e, h, d) -> (b, h, s, d)>
#ow = affine_map<(b, s, e, h, d) -> (h, d, e)>
#oout = affine_map<(b, s, e, h, d) -> (b, s, e)>
// MLP: (b, s, f, e) and (b, s, e, f)
#m1in = affine_map<(b, s, f, e) -> (b, s, e)>
#m1w = affine_map<(b, s, f, e) -> (e, f)>
#m1out = affine_map<(b, s, f, e) -> (b, s, f)>
#m2in = affine_map<(b, s, e, f) -> (b, s, f)>
#m2w = affine_map<(b, s, e, f) -> (f, e)>
#m2out = affine_map<(b, s, e, f) -> (b, s, e)>

func.func @block(%ids: tensor<1x64xi32>, %table: tensor<50x16xf32>,
                 %gain: tensor<16xf32>, %wq: tensor<4x16x8xf32>,
                 %wk: tensor<2x16x8xf32>, %wv: tensor<2x16x8xf32>,
                 %wo: tensor<4x8x16xf32>, %w1: tensor<16x32xf32>,
                 %w2: tensor<32x16xf32>) -> tensor<1x64x16xf32> {
  %seq = shard.sharding @seq split_axes = [[], [0]] : !shard.sharding
  %tokens = shard.shard %ids to %seq : tensor<1x64xi32>
  %heads = shard.sharding @seq split_axes = [[], [], [0]] : !shard.sharding
  %zero = arith.constant 0.0 : f32

  // Embedding as a one-hot product: x[b, s, e] = sum_t (ids[b, s] == t)
  // table[t, e] (the table is an operand, which the partitioner sees).
  %xe = tensor.empty() : tensor<1x64x16xf32>
  %x0_fill = linalg.fill ins(%zero : f32) outs(%xe : tensor<1x64x16xf32>) -> tensor<1x64x16xf32>
  %x0 = shard.shard %x0_fill to %seq : tensor<1x64x16xf32>
  %x = linalg.generic {indexing_maps = [#etok, #etab, #eout],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%tokens, %table : tensor<1x64xi32>, tensor<50x16xf32>)
      outs(%x0 : tensor<1x64x16xf32>) {
  ^bb0(%id: i32, %w: f32, %acc: f32):
    %t = linalg.index 3 : index
    %ti = arith.index_cast %t : index to i32
    %hit = arith.cmpi eq, %id, %ti : i32
    %sum = arith.addf %acc, %w : f32
    %r = arith.select %hit, %sum, %acc : f32
    linalg.yield %r : f32
  } -> tensor<1x64x16xf32>

  // RMS norm over e: n = x / sqrt(mean(x^2) + 1e-5) * gain.
  %sse = tensor.empty() : tensor<1x64xf32>
  %ss0_fill = linalg.fill ins(%zero : f32) outs(%sse : tensor<1x64xf32>) -> tensor<1x64xf32>
  %ss0 = shard.shard %ss0_fill to %seq : tensor<1x64xf32>
  %ss = linalg.generic {indexing_maps = [#act, #row],
                        iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<1x64x16xf32>) outs(%ss0 : tensor<1x64xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %sq = arith.mulf %a, %a : f32
    %sum = arith.addf %acc, %sq : f32
    linalg.yield %sum : f32
  } -> tensor<1x64xf32>
  %n = linalg.generic {indexing_maps = [#act, #row, #vec, #act],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %ss, %gain : tensor<1x64x16xf32>, tensor<1x64xf32>, tensor<16xf32>)
      outs(%xe : tensor<1x64x16xf32>) {
  ^bb0(%a: f32, %s: f32, %g: f32, %out: f32):
    %width = arith.constant 16.0 : f32
    %eps = arith.constant 1.0e-5 : f32
    %mean = arith.divf %s, %width : f32
    %m = arith.addf %mean, %eps : f32
    %r = math.rsqrt %m : f32
    %y = arith.mulf %a, %r : f32
    %z = arith.mulf %y, %g : f32
    linalg.yield %z : f32
  } -> tensor<1x64x16xf32>

  // Q, K, V per head: q[b, h, s, d] = sum_e n[b, s, e] wq[h, e, d].
  %qe = tensor.empty() : tensor<1x4x64x8xf32>
  %q0_fill = linalg.fill ins(%zero : f32) outs(%qe : tensor<1x4x64x8xf32>) -> tensor<1x4x64x8xf32>
  %q0 = shard.shard %q0_fill to %heads : tensor<1x4x64x8xf32>
  %q = linalg.generic {indexing_maps = [#pin, #pw, #pout],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%n, %wq : tensor<1x64x16xf32>, tensor<4x16x8xf32>) outs(%q0 : tensor<1x4x64x8xf32>) {
  ^bb0(%a: f32, %w: f32, %acc: f32):
    %p = arith.mulf %a, %w : f32
    %sum = arith.addf %acc, %p : f32
    linalg.yield %sum : f32
  } -> tensor<1x4x64x8xf32>
  %kve = tensor.empty() : tensor<1x2x64x8xf32>
  %kv0_fill = linalg.fill ins(%zero : f32) outs(%kve : tensor<1x2x64x8xf32>) -> tensor<1x2x64x8xf32>
  %kv0 = shard.shard %kv0_fill to %heads : tensor<1x2x64x8xf32>
  %k = linalg.generic {indexing_maps = [#pin, #pw, #pout],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%n, %wk : tensor<1x64x16xf32>, tensor<2x16x8xf32>) outs(%kv0 : tensor<1x2x64x8xf32>) {
  ^bb0(%a: f32, %w: f32, %acc: f32):
    %p = arith.mulf %a, %w : f32
    %sum = arith.addf %acc, %p : f32
    linalg.yield %sum : f32
  } -> tensor<1x2x64x8xf32>
  %v = linalg.generic {indexing_maps = [#pin, #pw, #pout],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%n, %wv : tensor<1x64x16xf32>, tensor<2x16x8xf32>) outs(%kv0 : tensor<1x2x64x8xf32>) {
  ^bb0(%a: f32, %w: f32, %acc: f32):
    %p = arith.mulf %a, %w : f32
    %sum = arith.addf %acc, %p : f32
    linalg.yield %sum : f32
  } -> tensor<1x2x64x8xf32>

  // Causal attention over the whole sequence.
  %c0 = arith.constant 0 : index
  %o = cp.local_attention %q, %k, %v offsets(%c0, %c0) mask = causal
      : tensor<1x4x64x8xf32>, tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32> -> tensor<1x4x64x8xf32>

  // Output projection with the residual: h[b, s, e] = x + sum_{h,d} o wo.
  %h = linalg.generic {indexing_maps = [#oin, #ow, #oout],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%o, %wo : tensor<1x4x64x8xf32>, tensor<4x8x16xf32>) outs(%x : tensor<1x64x16xf32>) {
  ^bb0(%a: f32, %w: f32, %acc: f32):
    %p = arith.mulf %a, %w : f32
    %sum = arith.addf %acc, %p : f32
    linalg.yield %sum : f32
  } -> tensor<1x64x16xf32>

  // MLP with the residual: out = h + relu(h w1) w2.
  %me = tensor.empty() : tensor<1x64x32xf32>
  %m0_fill = linalg.fill ins(%zero : f32) outs(%me : tensor<1x64x32xf32>) -> tensor<1x64x32xf32>
  %m0 = shard.shard %m0_fill to %seq : tensor<1x64x32xf32>
  %m = linalg.generic {indexing_maps = [#m1in, #m1w, #m1out],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%h, %w1 : tensor<1x64x16xf32>, tensor<16x32xf32>) outs(%m0 : tensor<1x64x32xf32>) {
  ^bb0(%a: f32, %w: f32, %acc: f32):
    %p = arith.mulf %a, %w : f32
    %sum = arith.addf %acc, %p : f32
    linalg.yield %sum : f32
  } -> tensor<1x64x32xf32>
  %relu = linalg.generic {indexing_maps = [#act, #act],
                          iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%m : tensor<1x64x32xf32>) outs(%me : tensor<1x64x32xf32>) {
  ^bb0(%a: f32, %out: f32):
    %r = arith.maximumf %a, %zero : f32
    linalg.yield %r : f32
  } -> tensor<1x64x32xf32>
  %out = linalg.generic {indexing_maps = [#m2in, #m2w, #m2out],
                         iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%relu, %w2 : tensor<1x64x32xf32>, tensor<32x16xf32>) outs(%h : tensor<1x64x16xf32>) {
  ^bb0(%a: f32, %w: f32, %acc: f32):
    %p = arith.mulf %a, %w : f32
    %sum = arith.addf %acc, %p : f32
    linalg.yield %sum : f32
  } -> tensor<1x64x16xf32>
  return %out : tensor<1x64x16xf32>
}
