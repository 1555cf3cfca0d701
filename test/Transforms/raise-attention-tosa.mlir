// cp-raise-attention on attention written with tosa: matmul with a
// transposed K, the scale as tosa.mul by a constant (of the scores or of Q),
// and the softmax as reduce_max / sub / exp / reduce_sum / reciprocal /
// mul over the last axis. tosa.matmul is 3-D: its batch dim becomes the
// heads.
// RUN: cp-opt %s --cp-raise-attention=grid-size=2 | FileCheck %s

// CHECK-LABEL: func @tosa_sdpa
// CHECK-SAME: (%[[Q:.*]]: tensor<8x16x8xf32>, %[[K:.*]]: tensor<8x16x8xf32>, %[[V:.*]]: tensor<8x16x8xf32>)
// CHECK-NEXT: %[[Q4:.*]] = tensor.expand_shape %[[Q]] {{\[\[}}0, 1], [2], [3]] output_shape [1, 8, 16, 8]
// CHECK-NEXT: %[[K4:.*]] = tensor.expand_shape %[[K]]
// CHECK-NEXT: %[[V4:.*]] = tensor.expand_shape %[[V]]
// CHECK-NEXT: %[[O:.*]] = cp.attention %[[Q4]], %[[K4]], %[[V4]] on @cp grid_axes = [0] scale = 0.353553385 :
// CHECK-NEXT: %[[O3:.*]] = tensor.collapse_shape %[[O]]
// CHECK-NEXT: return %[[O3]]
func.func @tosa_sdpa(%q: tensor<8x16x8xf32>, %k: tensor<8x16x8xf32>, %v: tensor<8x16x8xf32>) -> tensor<8x16x8xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %scale = "tosa.const"() <{values = dense<0.353553385> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %kt = tosa.transpose %k {perms = array<i32: 0, 2, 1>} : (tensor<8x16x8xf32>) -> tensor<8x8x16xf32>
  %s = tosa.matmul %q, %kt, %zp, %zp : (tensor<8x16x8xf32>, tensor<8x8x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<8x16x16xf32>
  %ss = tosa.mul %s, %scale, %shift : (tensor<8x16x16xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<8x16x16xf32>
  %m = tosa.reduce_max %ss {axis = 2 : i32} : (tensor<8x16x16xf32>) -> tensor<8x16x1xf32>
  %d = tosa.sub %ss, %m : (tensor<8x16x16xf32>, tensor<8x16x1xf32>) -> tensor<8x16x16xf32>
  %e = tosa.exp %d : (tensor<8x16x16xf32>) -> tensor<8x16x16xf32>
  %z = tosa.reduce_sum %e {axis = 2 : i32} : (tensor<8x16x16xf32>) -> tensor<8x16x1xf32>
  %r = tosa.reciprocal %z : (tensor<8x16x1xf32>) -> tensor<8x16x1xf32>
  %p = tosa.mul %e, %r, %shift : (tensor<8x16x16xf32>, tensor<8x16x1xf32>, tensor<1xi8>) -> tensor<8x16x16xf32>
  %o = tosa.matmul %p, %v, %zp, %zp : (tensor<8x16x16xf32>, tensor<8x16x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<8x16x8xf32>
  return %o : tensor<8x16x8xf32>
}

// Q scaled by a constant before the matmul; the reciprocal multiplied from
// the left; K stored as [N, D, L] (no transpose to look through): the
// raised op transposes it.
// CHECK-LABEL: func @tosa_prescaled_query
// CHECK-SAME: (%[[Q:.*]]: tensor<4x32x16xf32>, %[[KT:.*]]: tensor<4x16x32xf32>, %[[V:.*]]: tensor<4x32x16xf32>)
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4x32x16xf32>
// CHECK: %[[K:.*]] = linalg.transpose ins(%[[KT]] : tensor<4x16x32xf32>) outs(%[[E]] : tensor<4x32x16xf32>) permutation = [0, 2, 1]
// CHECK: %[[K4:.*]] = tensor.expand_shape %[[K]]
// CHECK: cp.attention %{{.*}}, %[[K4]], %{{.*}} on @cp grid_axes = [0] scale = 2.500000e-01 :
// CHECK-NOT: tosa.
// CHECK: return
func.func @tosa_prescaled_query(%q: tensor<4x32x16xf32>, %kt: tensor<4x16x32xf32>, %v: tensor<4x32x16xf32>) -> tensor<4x32x16xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %scale = "tosa.const"() <{values = dense<0.25> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %qs = tosa.mul %q, %scale, %shift : (tensor<4x32x16xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<4x32x16xf32>
  %s = tosa.matmul %qs, %kt, %zp, %zp : (tensor<4x32x16xf32>, tensor<4x16x32xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x32x32xf32>
  %m = tosa.reduce_max %s {axis = 2 : i32} : (tensor<4x32x32xf32>) -> tensor<4x32x1xf32>
  %d = tosa.sub %s, %m : (tensor<4x32x32xf32>, tensor<4x32x1xf32>) -> tensor<4x32x32xf32>
  %e = tosa.exp %d : (tensor<4x32x32xf32>) -> tensor<4x32x32xf32>
  %z = tosa.reduce_sum %e {axis = 2 : i32} : (tensor<4x32x32xf32>) -> tensor<4x32x1xf32>
  %r = tosa.reciprocal %z : (tensor<4x32x1xf32>) -> tensor<4x32x1xf32>
  %p = tosa.mul %r, %e, %shift : (tensor<4x32x1xf32>, tensor<4x32x32xf32>, tensor<1xi8>) -> tensor<4x32x32xf32>
  %o = tosa.matmul %p, %v, %zp, %zp : (tensor<4x32x32xf32>, tensor<4x32x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x32x16xf32>
  return %o : tensor<4x32x16xf32>
}
