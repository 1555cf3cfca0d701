// Attention written with linalg and tosa, one function per
// cp-run-attention case of raise-attention.test (B=1 H=8 L=64 D=16).
#qmap = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#kmap = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#kgqa = affine_map<(b, h, i, j, d) -> (b, h floordiv 4, j, d)>
#smap = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#pmap = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#vmap = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#vgqa = affine_map<(b, h, i, d, j) -> (b, h floordiv 4, j, d)>
#omap = affine_map<(b, h, i, d, j) -> (b, h, i, d)>
#id4 = affine_map<(b, h, i, j) -> (b, h, i, j)>
#row4 = affine_map<(b, h, i, j) -> (b, h, i)>

// Causal, decomposed softmax.
func.func @causal(%q: tensor<1x8x64x16xf32>, %k: tensor<1x8x64x16xf32>, %v: tensor<1x8x64x16xf32>) -> tensor<1x8x64x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e0 = tensor.empty() : tensor<1x8x64x64xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<1x8x64x64xf32>) -> tensor<1x8x64x64xf32>
  %s = linalg.generic {indexing_maps = [#qmap, #kmap, #smap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<1x8x64x16xf32>, tensor<1x8x64x16xf32>) outs(%s0 : tensor<1x8x64x64xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x8x64x64xf32>
  %x = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<1x8x64x64xf32>) outs(%e0 : tensor<1x8x64x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = arith.constant 0.25 : f32
    %sc = arith.mulf %a, %c : f32
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %past = arith.cmpi ule, %j, %i : index
    %r = arith.select %past, %sc, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<1x8x64x64xf32>
  %er = tensor.empty() : tensor<1x8x64xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%er : tensor<1x8x64xf32>) -> tensor<1x8x64xf32>
  %max = linalg.generic {indexing_maps = [#id4, #row4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x : tensor<1x8x64x64xf32>) outs(%m0 : tensor<1x8x64xf32>) {
  ^bb0(%a: f32, %c: f32):
    %r = arith.maximumf %a, %c : f32
    linalg.yield %r : f32
  } -> tensor<1x8x64xf32>
  %exp = linalg.generic {indexing_maps = [#id4, #row4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %max : tensor<1x8x64x64xf32>, tensor<1x8x64xf32>) outs(%e0 : tensor<1x8x64x64xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %d = arith.subf %a, %b : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  } -> tensor<1x8x64x64xf32>
  %z0 = linalg.fill ins(%zero : f32) outs(%er : tensor<1x8x64xf32>) -> tensor<1x8x64xf32>
  %sum = linalg.generic {indexing_maps = [#id4, #row4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%exp : tensor<1x8x64x64xf32>) outs(%z0 : tensor<1x8x64xf32>) {
  ^bb0(%a: f32, %c: f32):
    %r = arith.addf %a, %c : f32
    linalg.yield %r : f32
  } -> tensor<1x8x64xf32>
  %p = linalg.generic {indexing_maps = [#id4, #row4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%exp, %sum : tensor<1x8x64x64xf32>, tensor<1x8x64xf32>) outs(%e0 : tensor<1x8x64x64xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %r = arith.divf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<1x8x64x64xf32>
  %eo = tensor.empty() : tensor<1x8x64x16xf32>
  %o0 = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x8x64x16xf32>) -> tensor<1x8x64x16xf32>
  %o = linalg.generic {indexing_maps = [#pmap, #vmap, #omap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<1x8x64x64xf32>, tensor<1x8x64x16xf32>) outs(%o0 : tensor<1x8x64x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x8x64x16xf32>
  return %o : tensor<1x8x64x16xf32>
}

// A causal window of 23 keys from index comparisons; linalg.softmax.
func.func @window(%q: tensor<1x8x64x16xf32>, %k: tensor<1x8x64x16xf32>, %v: tensor<1x8x64x16xf32>) -> tensor<1x8x64x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e0 = tensor.empty() : tensor<1x8x64x64xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<1x8x64x64xf32>) -> tensor<1x8x64x64xf32>
  %s = linalg.generic {indexing_maps = [#qmap, #kmap, #smap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<1x8x64x16xf32>, tensor<1x8x64x16xf32>) outs(%s0 : tensor<1x8x64x64xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x8x64x64xf32>
  %x = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<1x8x64x64xf32>) outs(%e0 : tensor<1x8x64x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = arith.constant 4.0 : f32
    %sc = arith.divf %a, %c : f32
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %past = arith.cmpi ule, %j, %i : index
    %d = arith.subi %i, %j : index
    %w = arith.constant 23 : index
    %near = arith.cmpi ult, %d, %w : index
    %ok = arith.andi %past, %near : i1
    %r = arith.select %ok, %sc, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<1x8x64x64xf32>
  %p = linalg.softmax dimension(3) ins(%x : tensor<1x8x64x64xf32>) outs(%e0 : tensor<1x8x64x64xf32>) -> tensor<1x8x64x64xf32>
  %eo = tensor.empty() : tensor<1x8x64x16xf32>
  %o0 = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x8x64x16xf32>) -> tensor<1x8x64x16xf32>
  %o = linalg.generic {indexing_maps = [#pmap, #vmap, #omap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<1x8x64x64xf32>, tensor<1x8x64x16xf32>) outs(%o0 : tensor<1x8x64x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x8x64x16xf32>
  return %o : tensor<1x8x64x16xf32>
}

// tanh soft-capping at 2 before a causal mask.
func.func @softcap(%q: tensor<1x8x64x16xf32>, %k: tensor<1x8x64x16xf32>, %v: tensor<1x8x64x16xf32>) -> tensor<1x8x64x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e0 = tensor.empty() : tensor<1x8x64x64xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<1x8x64x64xf32>) -> tensor<1x8x64x64xf32>
  %s = linalg.generic {indexing_maps = [#qmap, #kmap, #smap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<1x8x64x16xf32>, tensor<1x8x64x16xf32>) outs(%s0 : tensor<1x8x64x64xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x8x64x64xf32>
  %x = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<1x8x64x64xf32>) outs(%e0 : tensor<1x8x64x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = arith.constant 0.25 : f32
    %sc = arith.mulf %a, %c : f32
    %cap = arith.constant 2.0 : f32
    %xs = arith.divf %sc, %cap : f32
    %t = math.tanh %xs : f32
    %capped = arith.mulf %t, %cap : f32
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %past = arith.cmpi ule, %j, %i : index
    %r = arith.select %past, %capped, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<1x8x64x64xf32>
  %er = tensor.empty() : tensor<1x8x64xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%er : tensor<1x8x64xf32>) -> tensor<1x8x64xf32>
  %max = linalg.generic {indexing_maps = [#id4, #row4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x : tensor<1x8x64x64xf32>) outs(%m0 : tensor<1x8x64xf32>) {
  ^bb0(%a: f32, %c: f32):
    %r = arith.maximumf %a, %c : f32
    linalg.yield %r : f32
  } -> tensor<1x8x64xf32>
  %exp = linalg.generic {indexing_maps = [#id4, #row4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %max : tensor<1x8x64x64xf32>, tensor<1x8x64xf32>) outs(%e0 : tensor<1x8x64x64xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %d = arith.subf %a, %b : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  } -> tensor<1x8x64x64xf32>
  %z0 = linalg.fill ins(%zero : f32) outs(%er : tensor<1x8x64xf32>) -> tensor<1x8x64xf32>
  %sum = linalg.generic {indexing_maps = [#id4, #row4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%exp : tensor<1x8x64x64xf32>) outs(%z0 : tensor<1x8x64xf32>) {
  ^bb0(%a: f32, %c: f32):
    %r = arith.addf %a, %c : f32
    linalg.yield %r : f32
  } -> tensor<1x8x64xf32>
  %p = linalg.generic {indexing_maps = [#id4, #row4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%exp, %sum : tensor<1x8x64x64xf32>, tensor<1x8x64xf32>) outs(%e0 : tensor<1x8x64x64xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %r = arith.divf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<1x8x64x64xf32>
  %eo = tensor.empty() : tensor<1x8x64x16xf32>
  %o0 = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x8x64x16xf32>) -> tensor<1x8x64x16xf32>
  %o = linalg.generic {indexing_maps = [#pmap, #vmap, #omap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<1x8x64x64xf32>, tensor<1x8x64x16xf32>) outs(%o0 : tensor<1x8x64x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x8x64x16xf32>
  return %o : tensor<1x8x64x16xf32>
}

// ALiBi: slope 2^(-8 (h + 1) / H) times (k - q), then causal.
func.func @alibi(%q: tensor<1x8x64x16xf32>, %k: tensor<1x8x64x16xf32>, %v: tensor<1x8x64x16xf32>) -> tensor<1x8x64x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e0 = tensor.empty() : tensor<1x8x64x64xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<1x8x64x64xf32>) -> tensor<1x8x64x64xf32>
  %s = linalg.generic {indexing_maps = [#qmap, #kmap, #smap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<1x8x64x16xf32>, tensor<1x8x64x16xf32>) outs(%s0 : tensor<1x8x64x64xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x8x64x64xf32>
  %x = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<1x8x64x64xf32>) outs(%e0 : tensor<1x8x64x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = arith.constant 0.25 : f32
    %sc = arith.mulf %a, %c : f32
    %h = linalg.index 1 : index
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %past = arith.cmpi ule, %j, %i : index
    %one = arith.constant 1 : index
    %h1 = arith.addi %h, %one : index
    %h1i = arith.index_cast %h1 : index to i64
    %h1f = arith.sitofp %h1i : i64 to f32
    %rate = arith.constant -1.0 : f32
    %e = arith.mulf %h1f, %rate : f32
    %slope = math.exp2 %e : f32
    %ii = arith.index_cast %i : index to i64
    %ji = arith.index_cast %j : index to i64
    %dist = arith.subi %ji, %ii : i64
    %distf = arith.sitofp %dist : i64 to f32
    %bias = arith.mulf %slope, %distf : f32
    %biased = arith.addf %sc, %bias : f32
    %r = arith.select %past, %biased, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<1x8x64x64xf32>
  %p = linalg.softmax dimension(3) ins(%x : tensor<1x8x64x64xf32>) outs(%e0 : tensor<1x8x64x64xf32>) -> tensor<1x8x64x64xf32>
  %eo = tensor.empty() : tensor<1x8x64x16xf32>
  %o0 = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x8x64x16xf32>) -> tensor<1x8x64x16xf32>
  %o = linalg.generic {indexing_maps = [#pmap, #vmap, #omap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<1x8x64x64xf32>, tensor<1x8x64x16xf32>) outs(%o0 : tensor<1x8x64x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x8x64x16xf32>
  return %o : tensor<1x8x64x16xf32>
}

// tosa on [B*H, L, D], between collapse_shape and expand_shape.
func.func @tosa(%q4: tensor<1x8x64x16xf32>, %k4: tensor<1x8x64x16xf32>, %v4: tensor<1x8x64x16xf32>) -> tensor<1x8x64x16xf32> {
  %q = tensor.collapse_shape %q4 [[0, 1], [2], [3]] : tensor<1x8x64x16xf32> into tensor<8x64x16xf32>
  %k = tensor.collapse_shape %k4 [[0, 1], [2], [3]] : tensor<1x8x64x16xf32> into tensor<8x64x16xf32>
  %v = tensor.collapse_shape %v4 [[0, 1], [2], [3]] : tensor<1x8x64x16xf32> into tensor<8x64x16xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %scale = "tosa.const"() <{values = dense<0.25> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %kt = tosa.transpose %k {perms = array<i32: 0, 2, 1>} : (tensor<8x64x16xf32>) -> tensor<8x16x64xf32>
  %s = tosa.matmul %q, %kt, %zp, %zp : (tensor<8x64x16xf32>, tensor<8x16x64xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<8x64x64xf32>
  %ss = tosa.mul %s, %scale, %shift : (tensor<8x64x64xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<8x64x64xf32>
  %m = tosa.reduce_max %ss {axis = 2 : i32} : (tensor<8x64x64xf32>) -> tensor<8x64x1xf32>
  %d = tosa.sub %ss, %m : (tensor<8x64x64xf32>, tensor<8x64x1xf32>) -> tensor<8x64x64xf32>
  %e = tosa.exp %d : (tensor<8x64x64xf32>) -> tensor<8x64x64xf32>
  %z = tosa.reduce_sum %e {axis = 2 : i32} : (tensor<8x64x64xf32>) -> tensor<8x64x1xf32>
  %r = tosa.reciprocal %z : (tensor<8x64x1xf32>) -> tensor<8x64x1xf32>
  %p = tosa.mul %e, %r, %shift : (tensor<8x64x64xf32>, tensor<8x64x1xf32>, tensor<1xi8>) -> tensor<8x64x64xf32>
  %o = tosa.matmul %p, %v, %zp, %zp : (tensor<8x64x64xf32>, tensor<8x64x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<8x64x16xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [1, 8, 64, 16] : tensor<8x64x16xf32> into tensor<1x8x64x16xf32>
  return %o4 : tensor<1x8x64x16xf32>
}
