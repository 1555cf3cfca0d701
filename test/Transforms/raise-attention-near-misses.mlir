// Near misses: attention-like code cp-raise-attention must leave alone,
// one function each. With report-near-misses each function's nearest
// candidate is a remark saying why it was not raised.
// RUN: cp-opt %s --cp-raise-attention="grid-size=4 report-near-misses" -verify-diagnostics -o /dev/null
// RUN: cp-opt %s --cp-raise-attention=grid-size=4 | FileCheck %s

// Nothing is raised, and no grid is declared for nothing.
// CHECK-NOT: shard.grid
// CHECK-NOT: cp.attention
// CHECK-COUNT-11: return

#qmap = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#qtmap = affine_map<(b, h, i, j, d) -> (b, h, d, i)>
#kmap = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#smap = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#pmap = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#ptmap = affine_map<(b, h, i, d, j) -> (b, h, j, i)>
#vmap = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#omap = affine_map<(b, h, i, d, j) -> (b, h, i, d)>
#id4 = affine_map<(b, h, i, j) -> (b, h, i, j)>
#row4 = affine_map<(b, h, i, j) -> (b, h, i)>
#ij = affine_map<(b, h, i, j) -> (i, j)>

// The softmax normalizes over the queries.
func.func @softmax_over_queries(%q: tensor<1x4x16x8xf32>, %k: tensor<1x4x16x8xf32>, %v: tensor<1x4x16x8xf32>) -> tensor<1x4x16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e0 = tensor.empty() : tensor<1x4x16x16xf32>
  %er = tensor.empty() : tensor<1x4x16xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32>
  %s = linalg.generic {indexing_maps = [#qmap, #kmap, #smap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<1x4x16x8xf32>, tensor<1x4x16x8xf32>) outs(%s0 : tensor<1x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16x16xf32>
  // expected-remark @+1 {{cp-raise-attention: not raised: linalg.softmax normalizes dim 2, not the key dim 3}}
  %p = linalg.softmax dimension(2) ins(%s : tensor<1x4x16x16xf32>) outs(%e0 : tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32>
  %eo = tensor.empty() : tensor<1x4x16x8xf32>
  %o0 = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x4x16x8xf32>) -> tensor<1x4x16x8xf32>
  %o = linalg.generic {indexing_maps = [#pmap, #vmap, #omap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<1x4x16x16xf32>, tensor<1x4x16x8xf32>) outs(%o0 : tensor<1x4x16x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16x8xf32>
  return %o : tensor<1x4x16x8xf32>
}

// Q read through a transposing map ([.., D, L] storage): only K and V are
// accepted transposed.
func.func @contraction_over_rows(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x16x8xf32>, %v: tensor<1x4x16x8xf32>) -> tensor<1x4x16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e0 = tensor.empty() : tensor<1x4x16x16xf32>
  %er = tensor.empty() : tensor<1x4x16xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32>
  // expected-remark @+1 {{cp-raise-attention: not raised: the contraction does not reduce Q's last dim (Q must be [batch..., rows, reduced])}}
  %s = linalg.generic {indexing_maps = [#qtmap, #kmap, #smap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<1x4x8x16xf32>, tensor<1x4x16x8xf32>) outs(%s0 : tensor<1x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16x16xf32>
  %p = linalg.softmax dimension(3) ins(%s : tensor<1x4x16x16xf32>) outs(%e0 : tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32>
  %eo = tensor.empty() : tensor<1x4x16x8xf32>
  %o0 = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x4x16x8xf32>) -> tensor<1x4x16x8xf32>
  %o = linalg.generic {indexing_maps = [#pmap, #vmap, #omap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<1x4x16x16xf32>, tensor<1x4x16x8xf32>) outs(%o0 : tensor<1x4x16x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16x8xf32>
  return %o : tensor<1x4x16x8xf32>
}

// P^T V: the contraction with V reduces over the queries.
func.func @transposed_probabilities(%q: tensor<1x4x16x8xf32>, %k: tensor<1x4x16x8xf32>, %v: tensor<1x4x16x8xf32>) -> tensor<1x4x16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e0 = tensor.empty() : tensor<1x4x16x16xf32>
  %er = tensor.empty() : tensor<1x4x16xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32>
  %s = linalg.generic {indexing_maps = [#qmap, #kmap, #smap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<1x4x16x8xf32>, tensor<1x4x16x8xf32>) outs(%s0 : tensor<1x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16x16xf32>
  %p = linalg.softmax dimension(3) ins(%s : tensor<1x4x16x16xf32>) outs(%e0 : tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32>
  %eo = tensor.empty() : tensor<1x4x16x8xf32>
  %o0 = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x4x16x8xf32>) -> tensor<1x4x16x8xf32>
  // expected-remark @+1 {{cp-raise-attention: not raised: the contraction does not reduce P's last dim (P must be [batch..., rows, reduced])}}
  %o = linalg.generic {indexing_maps = [#ptmap, #vmap, #omap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<1x4x16x16xf32>, tensor<1x4x16x8xf32>) outs(%o0 : tensor<1x4x16x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16x8xf32>
  return %o : tensor<1x4x16x8xf32>
}

// exp(s) / sum exp(s) without the max subtraction.
func.func @no_max_subtraction(%q: tensor<1x4x16x8xf32>, %k: tensor<1x4x16x8xf32>, %v: tensor<1x4x16x8xf32>) -> tensor<1x4x16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e0 = tensor.empty() : tensor<1x4x16x16xf32>
  %er = tensor.empty() : tensor<1x4x16xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32>
  %s = linalg.generic {indexing_maps = [#qmap, #kmap, #smap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<1x4x16x8xf32>, tensor<1x4x16x8xf32>) outs(%s0 : tensor<1x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16x16xf32>
  %max0 = linalg.fill ins(%ninf : f32) outs(%er : tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
  %max = linalg.generic {indexing_maps = [#id4, #row4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%s : tensor<1x4x16x16xf32>) outs(%max0 : tensor<1x4x16xf32>) {
  ^bb0(%a: f32, %c: f32):
    %r = arith.maximumf %a, %c : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16xf32>
  // expected-remark @+1 {{cp-raise-attention: not raised: the softmax exponentiates the scores without subtracting the row max}}
  %exp = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<1x4x16x16xf32>) outs(%e0 : tensor<1x4x16x16xf32>) {
  ^bb0(%a: f32, %c: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16x16xf32>
  %sum0 = linalg.fill ins(%zero : f32) outs(%er : tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
  %sum = linalg.generic {indexing_maps = [#id4, #row4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%exp : tensor<1x4x16x16xf32>) outs(%sum0 : tensor<1x4x16xf32>) {
  ^bb0(%a: f32, %c: f32):
    %r = arith.addf %a, %c : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16xf32>
  %p = linalg.generic {indexing_maps = [#id4, #row4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%exp, %sum : tensor<1x4x16x16xf32>, tensor<1x4x16xf32>) outs(%e0 : tensor<1x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %r = arith.divf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16x16xf32>
  %eo = tensor.empty() : tensor<1x4x16x8xf32>
  %o0 = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x4x16x8xf32>) -> tensor<1x4x16x8xf32>
  %o = linalg.generic {indexing_maps = [#pmap, #vmap, #omap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<1x4x16x16xf32>, tensor<1x4x16x8xf32>) outs(%o0 : tensor<1x4x16x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16x8xf32>
  return %o : tensor<1x4x16x8xf32>
}

// max over the keys but sum over the queries.
func.func @sum_over_queries(%q: tensor<1x4x16x8xf32>, %k: tensor<1x4x16x8xf32>, %v: tensor<1x4x16x8xf32>) -> tensor<1x4x16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e0 = tensor.empty() : tensor<1x4x16x16xf32>
  %er = tensor.empty() : tensor<1x4x16xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32>
  %s = linalg.generic {indexing_maps = [#qmap, #kmap, #smap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<1x4x16x8xf32>, tensor<1x4x16x8xf32>) outs(%s0 : tensor<1x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16x16xf32>
  %max0 = linalg.fill ins(%ninf : f32) outs(%er : tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
  %max = linalg.generic {indexing_maps = [#id4, #row4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%s : tensor<1x4x16x16xf32>) outs(%max0 : tensor<1x4x16xf32>) {
  ^bb0(%a: f32, %c: f32):
    %r = arith.maximumf %a, %c : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16xf32>
  %exp = linalg.generic {indexing_maps = [#id4, #row4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %max : tensor<1x4x16x16xf32>, tensor<1x4x16xf32>) outs(%e0 : tensor<1x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %d = arith.subf %a, %b : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16x16xf32>
  %sum0 = linalg.fill ins(%zero : f32) outs(%er : tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
  // expected-remark @+1 {{cp-raise-attention: not raised: the softmax's row sum reduces dim 2, not the key dim 3}}
  %sum = linalg.generic {indexing_maps = [#id4, affine_map<(b, h, i, j) -> (b, h, j)>], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%exp : tensor<1x4x16x16xf32>) outs(%sum0 : tensor<1x4x16xf32>) {
  ^bb0(%a: f32, %c: f32):
    %r = arith.addf %a, %c : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16xf32>
  %p = linalg.generic {indexing_maps = [#id4, #row4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%exp, %sum : tensor<1x4x16x16xf32>, tensor<1x4x16xf32>) outs(%e0 : tensor<1x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %r = arith.divf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16x16xf32>
  %eo = tensor.empty() : tensor<1x4x16x8xf32>
  %o0 = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x4x16x8xf32>) -> tensor<1x4x16x8xf32>
  %o = linalg.generic {indexing_maps = [#pmap, #vmap, #omap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<1x4x16x16xf32>, tensor<1x4x16x8xf32>) outs(%o0 : tensor<1x4x16x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16x8xf32>
  return %o : tensor<1x4x16x8xf32>
}

// The row max starts from 0 instead of -inf.
func.func @max_from_zero(%q: tensor<1x4x16x8xf32>, %k: tensor<1x4x16x8xf32>, %v: tensor<1x4x16x8xf32>) -> tensor<1x4x16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e0 = tensor.empty() : tensor<1x4x16x16xf32>
  %er = tensor.empty() : tensor<1x4x16xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32>
  %s = linalg.generic {indexing_maps = [#qmap, #kmap, #smap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<1x4x16x8xf32>, tensor<1x4x16x8xf32>) outs(%s0 : tensor<1x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16x16xf32>
  %max0 = linalg.fill ins(%zero : f32) outs(%er : tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
  // expected-remark @+1 {{cp-raise-attention: not raised: the row max does not start from -inf}}
  %max = linalg.generic {indexing_maps = [#id4, #row4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%s : tensor<1x4x16x16xf32>) outs(%max0 : tensor<1x4x16xf32>) {
  ^bb0(%a: f32, %c: f32):
    %r = arith.maximumf %a, %c : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16xf32>
  %exp = linalg.generic {indexing_maps = [#id4, #row4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %max : tensor<1x4x16x16xf32>, tensor<1x4x16xf32>) outs(%e0 : tensor<1x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %d = arith.subf %a, %b : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16x16xf32>
  %sum0 = linalg.fill ins(%zero : f32) outs(%er : tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
  %sum = linalg.generic {indexing_maps = [#id4, #row4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%exp : tensor<1x4x16x16xf32>) outs(%sum0 : tensor<1x4x16xf32>) {
  ^bb0(%a: f32, %c: f32):
    %r = arith.addf %a, %c : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16xf32>
  %p = linalg.generic {indexing_maps = [#id4, #row4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%exp, %sum : tensor<1x4x16x16xf32>, tensor<1x4x16xf32>) outs(%e0 : tensor<1x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %r = arith.divf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16x16xf32>
  %eo = tensor.empty() : tensor<1x4x16x8xf32>
  %o0 = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x4x16x8xf32>) -> tensor<1x4x16x8xf32>
  %o = linalg.generic {indexing_maps = [#pmap, #vmap, #omap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<1x4x16x16xf32>, tensor<1x4x16x8xf32>) outs(%o0 : tensor<1x4x16x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16x8xf32>
  return %o : tensor<1x4x16x8xf32>
}

// A scale that is not a constant (a temperature argument).
func.func @runtime_scale(%q: tensor<1x4x16x8xf32>, %k: tensor<1x4x16x8xf32>, %v: tensor<1x4x16x8xf32>, %t: f32) -> tensor<1x4x16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e0 = tensor.empty() : tensor<1x4x16x16xf32>
  %er = tensor.empty() : tensor<1x4x16xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32>
  %s = linalg.generic {indexing_maps = [#qmap, #kmap, #smap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<1x4x16x8xf32>, tensor<1x4x16x8xf32>) outs(%s0 : tensor<1x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16x16xf32>
  // expected-remark @+1 {{cp-raise-attention: not raised: an elementwise op on the scores reads a value from outside that is not a constant}}
  %x = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<1x4x16x16xf32>) outs(%e0 : tensor<1x4x16x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.mulf %a, %t : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16x16xf32>
  %p = linalg.softmax dimension(3) ins(%x : tensor<1x4x16x16xf32>) outs(%e0 : tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32>
  %eo = tensor.empty() : tensor<1x4x16x8xf32>
  %o0 = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x4x16x8xf32>) -> tensor<1x4x16x8xf32>
  %o = linalg.generic {indexing_maps = [#pmap, #vmap, #omap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<1x4x16x16xf32>, tensor<1x4x16x8xf32>) outs(%o0 : tensor<1x4x16x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16x8xf32>
  return %o : tensor<1x4x16x8xf32>
}

// GQA copies before the K/V heads ([B, G, Hkv, ..]): query head h would
// read K/V head h mod Hkv.
func.func @gqa_wrong_order(%q: tensor<1x8x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x8x16x8xf32>) -> tensor<1x8x16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %eb = tensor.empty() : tensor<1x4x2x16x8xf32>
  // expected-remark @+1 {{cp-raise-attention: not raised: K is repeated for GQA with the copies before the K/V heads ([.., G, Hkv, ..]): query head h would read K/V head h mod Hkv, but cp.attention reads h / G}}
  %kb = linalg.broadcast ins(%k : tensor<1x2x16x8xf32>) outs(%eb : tensor<1x4x2x16x8xf32>) dimensions = [1]
  %kr = tensor.collapse_shape %kb [[0], [1, 2], [3], [4]] : tensor<1x4x2x16x8xf32> into tensor<1x8x16x8xf32>
  %e0 = tensor.empty() : tensor<1x8x16x16xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32>
  %s = linalg.generic {indexing_maps = [#qmap, #kmap, #smap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %kr : tensor<1x8x16x8xf32>, tensor<1x8x16x8xf32>) outs(%s0 : tensor<1x8x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x8x16x16xf32>
  %p = linalg.softmax dimension(3) ins(%s : tensor<1x8x16x16xf32>) outs(%e0 : tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32>
  %eo = tensor.empty() : tensor<1x8x16x8xf32>
  %o0 = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x8x16x8xf32>) -> tensor<1x8x16x8xf32>
  %o = linalg.generic {indexing_maps = [#pmap, #vmap, #omap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<1x8x16x16xf32>, tensor<1x8x16x8xf32>) outs(%o0 : tensor<1x8x16x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x8x16x8xf32>
  return %o : tensor<1x8x16x8xf32>
}

// The probabilities are also returned: raising would drop them.
func.func @probabilities_escape(%q: tensor<1x4x16x8xf32>, %k: tensor<1x4x16x8xf32>, %v: tensor<1x4x16x8xf32>) -> (tensor<1x4x16x8xf32>, tensor<1x4x16x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e0 = tensor.empty() : tensor<1x4x16x16xf32>
  %er = tensor.empty() : tensor<1x4x16xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32>
  %s = linalg.generic {indexing_maps = [#qmap, #kmap, #smap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<1x4x16x8xf32>, tensor<1x4x16x8xf32>) outs(%s0 : tensor<1x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16x16xf32>
  %p = linalg.softmax dimension(3) ins(%s : tensor<1x4x16x16xf32>) outs(%e0 : tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32>
  %eo = tensor.empty() : tensor<1x4x16x8xf32>
  %o0 = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x4x16x8xf32>) -> tensor<1x4x16x8xf32>
  %o = linalg.generic {indexing_maps = [#pmap, #vmap, #omap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<1x4x16x16xf32>, tensor<1x4x16x8xf32>) outs(%o0 : tensor<1x4x16x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16x8xf32>
  // expected-remark @+1 {{cp-raise-attention: not raised: an intermediate of the attention (linalg.softmax) is also used here; raising would have to keep computing it}}
  return %o, %p : tensor<1x4x16x8xf32>, tensor<1x4x16x16xf32>
}

// A mask tensor over the 16 local keys, on a group of 4.
func.func @local_mask_tensor(%q: tensor<1x4x16x8xf32>, %k: tensor<1x4x16x8xf32>, %v: tensor<1x4x16x8xf32>, %mask: tensor<16x16xi1>) -> tensor<1x4x16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e0 = tensor.empty() : tensor<1x4x16x16xf32>
  %er = tensor.empty() : tensor<1x4x16xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32>
  %s = linalg.generic {indexing_maps = [#qmap, #kmap, #smap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<1x4x16x8xf32>, tensor<1x4x16x8xf32>) outs(%s0 : tensor<1x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16x16xf32>
  %x = linalg.generic {indexing_maps = [#id4, #ij, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %mask : tensor<1x4x16x16xf32>, tensor<16x16xi1>) outs(%e0 : tensor<1x4x16x16xf32>) {
  ^bb0(%a: f32, %keep: i1, %o: f32):
    %r = arith.select %keep, %a, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16x16xf32>
  %p = linalg.softmax dimension(3) ins(%x : tensor<1x4x16x16xf32>) outs(%e0 : tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32>
  %eo = tensor.empty() : tensor<1x4x16x8xf32>
  %o0 = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x4x16x8xf32>) -> tensor<1x4x16x8xf32>
  // expected-remark @+1 {{cp-raise-attention: not raised: the mask tensor covers the 16 local keys; on a CP group of 4 a mask must cover all 64 global keys: build it from linalg.index (raised to a mask on global positions) or pass the global mask to cp.attention directly}}
  %o = linalg.generic {indexing_maps = [#pmap, #vmap, #omap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<1x4x16x16xf32>, tensor<1x4x16x8xf32>) outs(%o0 : tensor<1x4x16x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16x8xf32>
  return %o : tensor<1x4x16x8xf32>
}

// tosa: the max over the queries (axis 1).
func.func @tosa_max_over_queries(%q: tensor<8x16x8xf32>, %k: tensor<8x16x8xf32>, %v: tensor<8x16x8xf32>) -> tensor<8x16x8xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %kt = tosa.transpose %k {perms = array<i32: 0, 2, 1>} : (tensor<8x16x8xf32>) -> tensor<8x8x16xf32>
  %s = tosa.matmul %q, %kt, %zp, %zp : (tensor<8x16x8xf32>, tensor<8x8x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<8x16x16xf32>
  // expected-remark @+1 {{cp-raise-attention: not raised: the softmax's row max reduces dim 1, not the key dim 2}}
  %m = tosa.reduce_max %s {axis = 1 : i32} : (tensor<8x16x16xf32>) -> tensor<8x1x16xf32>
  %d = tosa.sub %s, %m : (tensor<8x16x16xf32>, tensor<8x1x16xf32>) -> tensor<8x16x16xf32>
  %e = tosa.exp %d : (tensor<8x16x16xf32>) -> tensor<8x16x16xf32>
  %z = tosa.reduce_sum %e {axis = 2 : i32} : (tensor<8x16x16xf32>) -> tensor<8x16x1xf32>
  %r = tosa.reciprocal %z : (tensor<8x16x1xf32>) -> tensor<8x16x1xf32>
  %p = tosa.mul %e, %r, %shift : (tensor<8x16x16xf32>, tensor<8x16x1xf32>, tensor<1xi8>) -> tensor<8x16x16xf32>
  %o = tosa.matmul %p, %v, %zp, %zp : (tensor<8x16x16xf32>, tensor<8x16x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<8x16x8xf32>
  return %o : tensor<8x16x8xf32>
}

