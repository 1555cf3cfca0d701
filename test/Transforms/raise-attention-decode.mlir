// Attention whose queries and keys differ in length (16 queries against 32
// keys and values) is raised as a decode step: cp.attention with
// queries = replicated, the queries the same on every rank and K/V the
// rank's shard of the cache (S = P * 32 keys). This was a near miss
// ("cross-attention") before cp.attention could state replicated queries.
// RUN: cp-opt %s --cp-raise-attention="grid-size=4 report-near-misses" -verify-diagnostics -o /dev/null
// RUN: cp-opt %s --cp-raise-attention=grid-size=4 | FileCheck %s

#qmap = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#kmap = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#smap = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#pmap = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#vmap = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#omap = affine_map<(b, h, i, d, j) -> (b, h, i, d)>

// CHECK: shard.grid @cp(shape = 4)
// CHECK-LABEL: func.func @decode
// CHECK: %[[O:.*]] = cp.attention %arg0, %arg1, %arg2 on @cp grid_axes = [0] queries = replicated scale = 1.000000e+00 : tensor<1x4x16x8xf32>, tensor<1x4x32x8xf32>, tensor<1x4x32x8xf32> -> tensor<1x4x16x8xf32>
// CHECK: return %[[O]]
func.func @decode(%q: tensor<1x4x16x8xf32>, %k: tensor<1x4x32x8xf32>, %v: tensor<1x4x32x8xf32>) -> tensor<1x4x16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<1x4x16x32xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<1x4x16x32xf32>) -> tensor<1x4x16x32xf32>
  %s = linalg.generic {indexing_maps = [#qmap, #kmap, #smap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<1x4x16x8xf32>, tensor<1x4x32x8xf32>) outs(%s0 : tensor<1x4x16x32xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16x32xf32>
  %p = linalg.softmax dimension(3) ins(%s : tensor<1x4x16x32xf32>) outs(%e0 : tensor<1x4x16x32xf32>) -> tensor<1x4x16x32xf32>
  %eo = tensor.empty() : tensor<1x4x16x8xf32>
  %o0 = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x4x16x8xf32>) -> tensor<1x4x16x8xf32>
  // expected-remark @+1 {{cp-raise-attention: raised linalg, 4-D scores, decode (queries replicated, K/V sharded)}}
  %o = linalg.generic {indexing_maps = [#pmap, #vmap, #omap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<1x4x16x32xf32>, tensor<1x4x32x8xf32>) outs(%o0 : tensor<1x4x16x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16x8xf32>
  return %o : tensor<1x4x16x8xf32>
}
