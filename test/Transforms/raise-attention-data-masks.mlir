// Mask tensors read elementwise with the scores become cp.attention's
// explicit_mask: an i1 mask (select(m, s, -inf)) or an additive one
// (s + m), indexed by (q, k) or by every score dim. Such a mask covers the
// local keys only, so it is raised on a one-process group (here); on a
// larger group it is a near miss (raise-attention-near-misses.mlir).
// RUN: cp-opt %s --cp-raise-attention | FileCheck %s

shard.grid @cp(shape = 1)

#qmap = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#kmap = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#smap = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#pmap = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#vmap = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#omap = affine_map<(b, h, i, d, j) -> (b, h, i, d)>
#id4 = affine_map<(b, h, i, j) -> (b, h, i, j)>
#ij = affine_map<(b, h, i, j) -> (i, j)>

// CHECK-LABEL: func @boolean_matrix
// CHECK-SAME: %[[M:[^:]*]]: tensor<16x16xi1>
// CHECK-NEXT: cp.attention %{{.*}}, %{{.*}}, %{{.*}} explicit_mask %[[M]] on @cp grid_axes = [0] scale = 0.353553385 : tensor<1x4x16x8xf32>, tensor<1x4x16x8xf32>, tensor<1x4x16x8xf32>, tensor<16x16xi1> -> tensor<1x4x16x8xf32>
func.func @boolean_matrix(%q: tensor<1x4x16x8xf32>, %k: tensor<1x4x16x8xf32>, %v: tensor<1x4x16x8xf32>, %m: tensor<16x16xi1>) -> tensor<1x4x16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e0 = tensor.empty() : tensor<1x4x16x16xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32>
  %s = linalg.generic {indexing_maps = [#qmap, #kmap, #smap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<1x4x16x8xf32>, tensor<1x4x16x8xf32>) outs(%s0 : tensor<1x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %c, %p : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16x16xf32>
  %x = linalg.generic {indexing_maps = [#id4, #ij, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %m : tensor<1x4x16x16xf32>, tensor<16x16xi1>) outs(%e0 : tensor<1x4x16x16xf32>) {
  ^bb0(%a: f32, %keep: i1, %o: f32):
    %c = arith.constant 0.353553385 : f32
    %sc = arith.mulf %a, %c : f32
    %r = arith.select %keep, %sc, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16x16xf32>
  %p = linalg.softmax dimension(3) ins(%x : tensor<1x4x16x16xf32>) outs(%e0 : tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32>
  %eo = tensor.empty() : tensor<1x4x16x8xf32>
  %o0 = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x4x16x8xf32>) -> tensor<1x4x16x8xf32>
  %o = linalg.generic {indexing_maps = [#pmap, #vmap, #omap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<1x4x16x16xf32>, tensor<1x4x16x8xf32>) outs(%o0 : tensor<1x4x16x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %pm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %pm : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16x8xf32>
  return %o : tensor<1x4x16x8xf32>
}

// An additive mask indexed like the scores, added after the scale, in its
// own generic.
// CHECK-LABEL: func @additive_full
// CHECK-SAME: %[[B:[^:]*]]: tensor<1x4x16x16xf32>
// CHECK-NEXT: cp.attention %{{.*}}, %{{.*}}, %{{.*}} explicit_mask %[[B]] on @cp grid_axes = [0] scale = 5.000000e-01 :
func.func @additive_full(%q: tensor<1x4x16x8xf32>, %k: tensor<1x4x16x8xf32>, %v: tensor<1x4x16x8xf32>, %bias: tensor<1x4x16x16xf32>) -> tensor<1x4x16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %two = arith.constant 2.0 : f32
  %e0 = tensor.empty() : tensor<1x4x16x16xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32>
  %s = linalg.generic {indexing_maps = [#qmap, #kmap, #smap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<1x4x16x8xf32>, tensor<1x4x16x8xf32>) outs(%s0 : tensor<1x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %c, %p : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16x16xf32>
  %sc = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<1x4x16x16xf32>) outs(%e0 : tensor<1x4x16x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.divf %a, %two : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16x16xf32>
  %x = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%sc, %bias : tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>) outs(%e0 : tensor<1x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16x16xf32>
  %p = linalg.softmax dimension(3) ins(%x : tensor<1x4x16x16xf32>) outs(%e0 : tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32>
  %eo = tensor.empty() : tensor<1x4x16x8xf32>
  %o0 = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x4x16x8xf32>) -> tensor<1x4x16x8xf32>
  %o = linalg.generic {indexing_maps = [#pmap, #vmap, #omap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<1x4x16x16xf32>, tensor<1x4x16x8xf32>) outs(%o0 : tensor<1x4x16x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %pm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %pm : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16x8xf32>
  return %o : tensor<1x4x16x8xf32>
}

// tosa.select with an i1 mask shaped like the (3-D) scores.
// CHECK-LABEL: func @tosa_select
// CHECK-SAME: %[[M:[^:]*]]: tensor<8x16x16xi1>
// CHECK: %[[M4:.*]] = tensor.expand_shape %[[M]] {{\[\[}}0, 1], [2], [3]] output_shape [1, 8, 16, 16]
// CHECK: cp.attention %{{.*}}, %{{.*}}, %{{.*}} explicit_mask %[[M4]] on @cp grid_axes = [0] scale = 1.000000e+00 : tensor<1x8x16x8xf32>, tensor<1x8x16x8xf32>, tensor<1x8x16x8xf32>, tensor<1x8x16x16xi1>
func.func @tosa_select(%q: tensor<8x16x8xf32>, %k: tensor<8x16x8xf32>, %v: tensor<8x16x8xf32>, %m: tensor<8x16x16xi1>) -> tensor<8x16x8xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %ninf = "tosa.const"() <{values = dense<0xFF800000> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %kt = tosa.transpose %k {perms = array<i32: 0, 2, 1>} : (tensor<8x16x8xf32>) -> tensor<8x8x16xf32>
  %s = tosa.matmul %q, %kt, %zp, %zp : (tensor<8x16x8xf32>, tensor<8x8x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<8x16x16xf32>
  %x = tosa.select %m, %s, %ninf : (tensor<8x16x16xi1>, tensor<8x16x16xf32>, tensor<1x1x1xf32>) -> tensor<8x16x16xf32>
  %mx = tosa.reduce_max %x {axis = 2 : i32} : (tensor<8x16x16xf32>) -> tensor<8x16x1xf32>
  %d = tosa.sub %x, %mx : (tensor<8x16x16xf32>, tensor<8x16x1xf32>) -> tensor<8x16x16xf32>
  %e = tosa.exp %d : (tensor<8x16x16xf32>) -> tensor<8x16x16xf32>
  %z = tosa.reduce_sum %e {axis = 2 : i32} : (tensor<8x16x16xf32>) -> tensor<8x16x1xf32>
  %r = tosa.reciprocal %z : (tensor<8x16x1xf32>) -> tensor<8x16x1xf32>
  %p = tosa.mul %e, %r, %shift : (tensor<8x16x16xf32>, tensor<8x16x1xf32>, tensor<1xi8>) -> tensor<8x16x16xf32>
  %o = tosa.matmul %p, %v, %zp, %zp : (tensor<8x16x16xf32>, tensor<8x16x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<8x16x8xf32>
  return %o : tensor<8x16x8xf32>
}
