// cp-raise-attention on attention written with linalg: each accepted form
// becomes one cp.attention on @cp with the scale, masks and transforms it
// had, and nothing of the original computation is left.
// RUN: cp-opt %s --cp-raise-attention=grid-size=4 | FileCheck %s
// The scheme option sets the ops' scheme.
// RUN: cp-opt %s "--cp-raise-attention=grid-size=4 scheme=ring" | FileCheck %s --check-prefix=SCHEME

// CHECK: shard.grid @cp(shape = 4)
// SCHEME-COUNT-6: cp.attention {{.*}} scheme = ring

#qmap = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#kmap = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#smap = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#id4 = affine_map<(b, h, i, j) -> (b, h, i, j)>
#row4 = affine_map<(b, h, i, j) -> (b, h, i)>
#pmap = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#vmap = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#omap = affine_map<(b, h, i, d, j) -> (b, h, i, d)>
#kgqa = affine_map<(b, h, i, j, d) -> (b, h floordiv 4, j, d)>
#vgqa = affine_map<(b, h, i, d, j) -> (b, h floordiv 4, j, d)>
#id5 = affine_map<(b, h, g, s, d) -> (b, h, g, s, d)>
#bc5 = affine_map<(b, h, g, s, d) -> (b, h, s, d)>

// 4-D mul/add generic contractions; scale and a causal mask built from
// linalg.index in one generic; max / sub+exp / sum / div generics.
// CHECK-LABEL: func @generic_causal
// CHECK-SAME: (%[[Q:.*]]: tensor<1x4x16x8xf32>, %[[K:.*]]: tensor<1x4x16x8xf32>, %[[V:.*]]: tensor<1x4x16x8xf32>)
// CHECK-NEXT: %[[O:.*]] = cp.attention %[[Q]], %[[K]], %[[V]] on @cp grid_axes = [0] mask = causal scale = 0.353553385 : tensor<1x4x16x8xf32>, tensor<1x4x16x8xf32>, tensor<1x4x16x8xf32> -> tensor<1x4x16x8xf32>
// CHECK-NEXT: return %[[O]]
func.func @generic_causal(%q: tensor<1x4x16x8xf32>, %k: tensor<1x4x16x8xf32>, %v: tensor<1x4x16x8xf32>) -> tensor<1x4x16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %scale = arith.constant 0.353553385 : f32
  %e0 = tensor.empty() : tensor<1x4x16x16xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32>
  %s = linalg.generic {indexing_maps = [#qmap, #kmap, #smap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<1x4x16x8xf32>, tensor<1x4x16x8xf32>) outs(%s0 : tensor<1x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16x16xf32>
  %scaled = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<1x4x16x16xf32>) outs(%e0 : tensor<1x4x16x16xf32>) {
  ^bb0(%a: f32, %c: f32):
    %m = arith.mulf %a, %scale : f32
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %ok = arith.cmpi ule, %j, %i : index
    %r = arith.select %ok, %m, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16x16xf32>
  %er = tensor.empty() : tensor<1x4x16xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%er : tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
  %max = linalg.generic {indexing_maps = [#id4, #row4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%scaled : tensor<1x4x16x16xf32>) outs(%m0 : tensor<1x4x16xf32>) {
  ^bb0(%a: f32, %c: f32):
    %r = arith.maximumf %a, %c : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16xf32>
  %exp = linalg.generic {indexing_maps = [#id4, #row4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%scaled, %max : tensor<1x4x16x16xf32>, tensor<1x4x16xf32>) outs(%e0 : tensor<1x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %d = arith.subf %a, %b : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16x16xf32>
  %z0 = linalg.fill ins(%zero : f32) outs(%er : tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
  %sum = linalg.generic {indexing_maps = [#id4, #row4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%exp : tensor<1x4x16x16xf32>) outs(%z0 : tensor<1x4x16xf32>) {
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

// 3-D batch_matmul with K^T as linalg.transpose, the scores divided by a
// constant, linalg.softmax. The batch dim becomes the heads (B = 1).
// CHECK-LABEL: func @batch_matmul_softmax
// CHECK-SAME: (%[[Q:.*]]: tensor<8x16x8xf32>, %[[K:.*]]: tensor<8x16x8xf32>, %[[V:.*]]: tensor<8x16x8xf32>)
// CHECK-NEXT: %[[Q4:.*]] = tensor.expand_shape %[[Q]] {{\[\[}}0, 1], [2], [3]] output_shape [1, 8, 16, 8]
// CHECK-NEXT: %[[K4:.*]] = tensor.expand_shape %[[K]]
// CHECK-NEXT: %[[V4:.*]] = tensor.expand_shape %[[V]]
// CHECK-NEXT: %[[O:.*]] = cp.attention %[[Q4]], %[[K4]], %[[V4]] on @cp grid_axes = [0] scale = 0.353553385 :
// CHECK-NEXT: %[[O3:.*]] = tensor.collapse_shape %[[O]] {{\[\[}}0, 1], [2], [3]] : tensor<1x8x16x8xf32> into tensor<8x16x8xf32>
// CHECK-NEXT: return %[[O3]]
func.func @batch_matmul_softmax(%q: tensor<8x16x8xf32>, %k: tensor<8x16x8xf32>, %v: tensor<8x16x8xf32>) -> tensor<8x16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %c = arith.constant 2.828427 : f32
  %et = tensor.empty() : tensor<8x8x16xf32>
  %kt = linalg.transpose ins(%k : tensor<8x16x8xf32>) outs(%et : tensor<8x8x16xf32>) permutation = [0, 2, 1]
  %e0 = tensor.empty() : tensor<8x16x16xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<8x16x16xf32>) -> tensor<8x16x16xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x16x8xf32>, tensor<8x8x16xf32>) outs(%s0 : tensor<8x16x16xf32>) -> tensor<8x16x16xf32>
  %scaled = linalg.generic {indexing_maps = [affine_map<(n, i, j) -> (n, i, j)>, affine_map<(n, i, j) -> (n, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<8x16x16xf32>) outs(%e0 : tensor<8x16x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.divf %a, %c : f32
    linalg.yield %r : f32
  } -> tensor<8x16x16xf32>
  %p = linalg.softmax dimension(2) ins(%scaled : tensor<8x16x16xf32>) outs(%e0 : tensor<8x16x16xf32>) -> tensor<8x16x16xf32>
  %eo = tensor.empty() : tensor<8x16x8xf32>
  %o0 = linalg.fill ins(%zero : f32) outs(%eo : tensor<8x16x8xf32>) -> tensor<8x16x8xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x16x16xf32>, tensor<8x16x8xf32>) outs(%o0 : tensor<8x16x8xf32>) -> tensor<8x16x8xf32>
  return %o : tensor<8x16x8xf32>
}

// 2-D linalg.matmul with K transposed by its indexing map; no scale.
// CHECK-LABEL: func @matmul_maps
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1, 2], [3]] output_shape [1, 1, 16, 8]
// CHECK: cp.attention {{.*}} on @cp grid_axes = [0] scale = 1.000000e+00 : tensor<1x1x16x8xf32>
// CHECK-NOT: linalg.
// CHECK: return
func.func @matmul_maps(%q: tensor<16x8xf32>, %k: tensor<16x8xf32>, %v: tensor<16x8xf32>) -> tensor<16x8xf32> {
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

// GQA as a floordiv head map in both contractions; soft-capping before a
// causal sliding window (becomes score_mod and mask = sliding_window(4));
// linalg.reduce for max and sum, separate sub and exp generics, a
// reciprocal generic.
// CHECK-LABEL: func @gqa_floordiv_softcap
// CHECK-SAME: (%[[Q:.*]]: tensor<1x8x16x8xf32>, %[[K:.*]]: tensor<1x2x16x8xf32>, %[[V:.*]]: tensor<1x2x16x8xf32>)
// CHECK-NEXT: cp.attention %[[Q]], %[[K]], %[[V]] on @cp grid_axes = [0] mask = sliding_window(4) scale = 0.353553385 score_mod {
// CHECK-NEXT: ^bb0(%[[S:.*]]: f32, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index):
// CHECK-NEXT: %[[CAP:.*]] = arith.constant 2.000000e+01 : f32
// CHECK-NEXT: %[[D:.*]] = arith.divf %[[S]], %[[CAP]] : f32
// CHECK-NEXT: %[[T:.*]] = math.tanh %[[D]] : f32
// CHECK-NEXT: %[[C:.*]] = arith.mulf %[[T]], %[[CAP]] : f32
// CHECK-NEXT: cp.yield %[[C]] : f32
// CHECK-NEXT: } : tensor<1x8x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x8x16x8xf32>
func.func @gqa_floordiv_softcap(%q: tensor<1x8x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x8x16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e0 = tensor.empty() : tensor<1x8x16x16xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32>
  %s = linalg.generic {indexing_maps = [#qmap, #kgqa, #smap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<1x8x16x8xf32>, tensor<1x2x16x8xf32>) outs(%s0 : tensor<1x8x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x8x16x16xf32>
  %x = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<1x8x16x16xf32>) outs(%e0 : tensor<1x8x16x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c8 = arith.constant 0.353553385 : f32
    %cap = arith.constant 20.0 : f32
    %sc = arith.mulf %a, %c8 : f32
    %d = arith.divf %sc, %cap : f32
    %t = math.tanh %d : f32
    %capped = arith.mulf %t, %cap : f32
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %past = arith.cmpi sge, %i, %j : index
    %diff = arith.subi %i, %j : index
    %w = arith.constant 4 : index
    %near = arith.cmpi slt, %diff, %w : index
    %ok = arith.andi %past, %near : i1
    %r = arith.select %ok, %capped, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<1x8x16x16xf32>
  %er = tensor.empty() : tensor<1x8x16xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%er : tensor<1x8x16xf32>) -> tensor<1x8x16xf32>
  %max = linalg.reduce ins(%x : tensor<1x8x16x16xf32>) outs(%m0 : tensor<1x8x16xf32>) dimensions = [3]
    (%in: f32, %acc: f32) {
      %r = arith.maximumf %in, %acc : f32
      linalg.yield %r : f32
    }
  %sub = linalg.generic {indexing_maps = [#id4, #row4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %max : tensor<1x8x16x16xf32>, tensor<1x8x16xf32>) outs(%e0 : tensor<1x8x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %d = arith.subf %a, %b : f32
    linalg.yield %d : f32
  } -> tensor<1x8x16x16xf32>
  %exp = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%sub : tensor<1x8x16x16xf32>) outs(%e0 : tensor<1x8x16x16xf32>) {
  ^bb0(%a: f32, %c: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<1x8x16x16xf32>
  %z0 = linalg.fill ins(%zero : f32) outs(%er : tensor<1x8x16xf32>) -> tensor<1x8x16xf32>
  %sum = linalg.reduce ins(%exp : tensor<1x8x16x16xf32>) outs(%z0 : tensor<1x8x16xf32>) dimensions = [3]
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  %inv = linalg.generic {indexing_maps = [affine_map<(b, h, i) -> (b, h, i)>, affine_map<(b, h, i) -> (b, h, i)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%sum : tensor<1x8x16xf32>) outs(%er : tensor<1x8x16xf32>) {
  ^bb0(%a: f32, %c: f32):
    %r = arith.divf %one, %a : f32
    linalg.yield %r : f32
  } -> tensor<1x8x16xf32>
  %p = linalg.generic {indexing_maps = [#id4, #row4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%exp, %inv : tensor<1x8x16x16xf32>, tensor<1x8x16xf32>) outs(%e0 : tensor<1x8x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %r = arith.mulf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<1x8x16x16xf32>
  %eo = tensor.empty() : tensor<1x8x16x8xf32>
  %o0 = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x8x16x8xf32>) -> tensor<1x8x16x8xf32>
  %o = linalg.generic {indexing_maps = [#pmap, #vgqa, #omap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<1x8x16x16xf32>, tensor<1x2x16x8xf32>) outs(%o0 : tensor<1x8x16x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x8x16x8xf32>
  return %o : tensor<1x8x16x8xf32>
}

// GQA as linalg.broadcast + collapse_shape (query head h reads K/V head
// h / 4); Q scaled before the contraction; a block-diagonal mask on
// positions, kept as a mask_mod (on global positions once raised).
// CHECK-LABEL: func @gqa_broadcast_blocks
// CHECK-SAME: (%[[Q:.*]]: tensor<1x8x16x8xf32>, %[[K:.*]]: tensor<1x2x16x8xf32>, %[[V:.*]]: tensor<1x2x16x8xf32>)
// CHECK-NEXT: cp.attention %[[Q]], %[[K]], %[[V]] on @cp grid_axes = [0] scale = 0.353553385 mask_mod {
// CHECK-NEXT: ^bb0(%{{.*}}: index, %{{.*}}: index, %[[QI:.*]]: index, %[[KI:.*]]: index):
// CHECK-NEXT: %[[C8:.*]] = arith.constant 8 : index
// CHECK-NEXT: %[[BQ:.*]] = arith.divui %[[QI]], %[[C8]] : index
// CHECK-NEXT: %[[BK:.*]] = arith.divui %[[KI]], %[[C8]] : index
// CHECK-NEXT: %[[SAME:.*]] = arith.cmpi eq, %[[BQ]], %[[BK]] : index
// CHECK-NEXT: cp.yield %[[SAME]] : i1
func.func @gqa_broadcast_blocks(%q: tensor<1x8x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x8x16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %scale = arith.constant 0.353553385 : f32
  %eq = tensor.empty() : tensor<1x8x16x8xf32>
  %qs = linalg.generic {indexing_maps = [affine_map<(b, h, i, d) -> (b, h, i, d)>, affine_map<(b, h, i, d) -> (b, h, i, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%q : tensor<1x8x16x8xf32>) outs(%eq : tensor<1x8x16x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.mulf %a, %scale : f32
    linalg.yield %r : f32
  } -> tensor<1x8x16x8xf32>
  %eb = tensor.empty() : tensor<1x2x4x16x8xf32>
  %kb = linalg.broadcast ins(%k : tensor<1x2x16x8xf32>) outs(%eb : tensor<1x2x4x16x8xf32>) dimensions = [2]
  %kr = tensor.collapse_shape %kb [[0], [1, 2], [3], [4]] : tensor<1x2x4x16x8xf32> into tensor<1x8x16x8xf32>
  %vb = linalg.broadcast ins(%v : tensor<1x2x16x8xf32>) outs(%eb : tensor<1x2x4x16x8xf32>) dimensions = [2]
  %vr = tensor.collapse_shape %vb [[0], [1, 2], [3], [4]] : tensor<1x2x4x16x8xf32> into tensor<1x8x16x8xf32>
  %e0 = tensor.empty() : tensor<1x8x16x16xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32>
  %s = linalg.generic {indexing_maps = [#qmap, #kmap, #smap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%qs, %kr : tensor<1x8x16x8xf32>, tensor<1x8x16x8xf32>) outs(%s0 : tensor<1x8x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x8x16x16xf32>
  %x = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<1x8x16x16xf32>) outs(%e0 : tensor<1x8x16x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %c8 = arith.constant 8 : index
    %bi = arith.divui %i, %c8 : index
    %bj = arith.divui %j, %c8 : index
    %same = arith.cmpi eq, %bi, %bj : index
    %r = arith.select %same, %a, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<1x8x16x16xf32>
  %p = linalg.softmax dimension(3) ins(%x : tensor<1x8x16x16xf32>) outs(%e0 : tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32>
  %eo = tensor.empty() : tensor<1x8x16x8xf32>
  %o0 = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x8x16x8xf32>) -> tensor<1x8x16x8xf32>
  %o = linalg.generic {indexing_maps = [#pmap, #vmap, #omap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %vr : tensor<1x8x16x16xf32>, tensor<1x8x16x8xf32>) outs(%o0 : tensor<1x8x16x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x8x16x8xf32>
  return %o : tensor<1x8x16x8xf32>
}

// GQA as a repeat written as a copy generic + collapse_shape; masked scores
// set to 0 rather than -inf: that is not a mask but a transform of the
// score (masked keys keep weight exp(0)), raised faithfully as a score_mod.
// CHECK-LABEL: func @gqa_repeat_zero_fill
// CHECK-SAME: (%[[Q:.*]]: tensor<1x8x16x8xf32>, %[[K:.*]]: tensor<1x2x16x8xf32>, %[[V:.*]]: tensor<1x2x16x8xf32>)
// CHECK-NEXT: cp.attention %[[Q]], %[[K]], %[[V]] on @cp grid_axes = [0] scale = 1.000000e+00 score_mod {
// CHECK-NEXT: ^bb0(%[[S:.*]]: f32, %{{.*}}: index, %{{.*}}: index, %[[QI:.*]]: index, %[[KI:.*]]: index):
// CHECK-NEXT: %[[PAST:.*]] = arith.cmpi ule, %[[KI]], %[[QI]] : index
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[R:.*]] = arith.select %[[PAST]], %[[S]], %[[ZERO]] : f32
// CHECK-NEXT: cp.yield %[[R]] : f32
func.func @gqa_repeat_zero_fill(%q: tensor<1x8x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x8x16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %eb = tensor.empty() : tensor<1x2x4x16x8xf32>
  %kb = linalg.generic {indexing_maps = [#bc5, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%k : tensor<1x2x16x8xf32>) outs(%eb : tensor<1x2x4x16x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<1x2x4x16x8xf32>
  %kr = tensor.collapse_shape %kb [[0], [1, 2], [3], [4]] : tensor<1x2x4x16x8xf32> into tensor<1x8x16x8xf32>
  %vb = linalg.generic {indexing_maps = [#bc5, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%v : tensor<1x2x16x8xf32>) outs(%eb : tensor<1x2x4x16x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<1x2x4x16x8xf32>
  %vr = tensor.collapse_shape %vb [[0], [1, 2], [3], [4]] : tensor<1x2x4x16x8xf32> into tensor<1x8x16x8xf32>
  %e0 = tensor.empty() : tensor<1x8x16x16xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32>
  %s = linalg.generic {indexing_maps = [#qmap, #kmap, #smap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %kr : tensor<1x8x16x8xf32>, tensor<1x8x16x8xf32>) outs(%s0 : tensor<1x8x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x8x16x16xf32>
  %x = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<1x8x16x16xf32>) outs(%e0 : tensor<1x8x16x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %past = arith.cmpi ule, %j, %i : index
    %r = arith.select %past, %a, %zero : f32
    linalg.yield %r : f32
  } -> tensor<1x8x16x16xf32>
  %p = linalg.softmax dimension(3) ins(%x : tensor<1x8x16x16xf32>) outs(%e0 : tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32>
  %eo = tensor.empty() : tensor<1x8x16x8xf32>
  %o0 = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x8x16x8xf32>) -> tensor<1x8x16x8xf32>
  %o = linalg.generic {indexing_maps = [#pmap, #vmap, #omap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %vr : tensor<1x8x16x16xf32>, tensor<1x8x16x8xf32>) outs(%o0 : tensor<1x8x16x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x8x16x8xf32>
  return %o : tensor<1x8x16x8xf32>
}
