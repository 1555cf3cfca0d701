// GQA attention written with linalg (B=1 H=8 Hkv=2 L=64 D=16), one
// function per cp-run-attention case of raise-attention.test.
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

// GQA: K and V broadcast to the 8 query heads (head h reads h / 4); causal.
func.func @gqa_broadcast(%q: tensor<1x8x64x16xf32>, %k: tensor<1x2x64x16xf32>, %v: tensor<1x2x64x16xf32>) -> tensor<1x8x64x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %eb = tensor.empty() : tensor<1x2x4x64x16xf32>
  %kb = linalg.broadcast ins(%k : tensor<1x2x64x16xf32>) outs(%eb : tensor<1x2x4x64x16xf32>) dimensions = [2]
  %kr = tensor.collapse_shape %kb [[0], [1, 2], [3], [4]] : tensor<1x2x4x64x16xf32> into tensor<1x8x64x16xf32>
  %vb = linalg.broadcast ins(%v : tensor<1x2x64x16xf32>) outs(%eb : tensor<1x2x4x64x16xf32>) dimensions = [2]
  %vr = tensor.collapse_shape %vb [[0], [1, 2], [3], [4]] : tensor<1x2x4x64x16xf32> into tensor<1x8x64x16xf32>
  %e0 = tensor.empty() : tensor<1x8x64x64xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<1x8x64x64xf32>) -> tensor<1x8x64x64xf32>
  %s = linalg.generic {indexing_maps = [#qmap, #kmap, #smap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %kr : tensor<1x8x64x16xf32>, tensor<1x8x64x16xf32>) outs(%s0 : tensor<1x8x64x64xf32>) {
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
  %p = linalg.softmax dimension(3) ins(%x : tensor<1x8x64x64xf32>) outs(%e0 : tensor<1x8x64x64xf32>) -> tensor<1x8x64x64xf32>
  %eo = tensor.empty() : tensor<1x8x64x16xf32>
  %o0 = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x8x64x16xf32>) -> tensor<1x8x64x16xf32>
  %o = linalg.generic {indexing_maps = [#pmap, #vmap, #omap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %vr : tensor<1x8x64x64xf32>, tensor<1x8x64x16xf32>) outs(%o0 : tensor<1x8x64x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x8x64x16xf32>
  return %o : tensor<1x8x64x16xf32>
}

// GQA as h floordiv 4 head maps; a causal window of 23.
func.func @gqa_floordiv(%q: tensor<1x8x64x16xf32>, %k: tensor<1x2x64x16xf32>, %v: tensor<1x2x64x16xf32>) -> tensor<1x8x64x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e0 = tensor.empty() : tensor<1x8x64x64xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<1x8x64x64xf32>) -> tensor<1x8x64x64xf32>
  %s = linalg.generic {indexing_maps = [#qmap, #kgqa, #smap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<1x8x64x16xf32>, tensor<1x2x64x16xf32>) outs(%s0 : tensor<1x8x64x64xf32>) {
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
    %d = arith.subi %i, %j : index
    %w = arith.constant 23 : index
    %near = arith.cmpi ult, %d, %w : index
    %ok = arith.andi %past, %near : i1
    %r = arith.select %ok, %sc, %ninf : f32
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
  %o = linalg.generic {indexing_maps = [#pmap, #vgqa, #omap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<1x8x64x64xf32>, tensor<1x2x64x16xf32>) outs(%o0 : tensor<1x8x64x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x8x64x16xf32>
  return %o : tensor<1x8x64x16xf32>
}
