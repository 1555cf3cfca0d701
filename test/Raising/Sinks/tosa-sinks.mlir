// Attention sinks written with tosa, as a TOSA front end gives PyTorch's
// `softmax(cat([scores, sinks.reshape(H, 1, 1).expand(H, L, 1)], -1))[..., :-1] @ V`:
// tosa.matmul with a transposed K, the scale as tosa.mul, the sinks
// tosa.reshape'd to [H, 1, 1] and tosa.tile'd along the query rows,
// tosa.concat on the key axis, reduce_max / sub / exp / reduce_sum /
// reciprocal / mul, tosa.slice dropping the sink's column, tosa.matmul
// with V. H = 4, S = 64, D = 16, f32.
// RUN: cp-opt %s --cp-raise-attention="grid-size=4 require-in=sdpa" | FileCheck %s
// CHECK-LABEL: func @sdpa
// CHECK: %[[COLUMN:.*]] = tosa.tile
// CHECK: %[[SINKS:.*]] = tensor.extract_slice %[[COLUMN]][0, 0, 0] [4, 1, 1] [1, 1, 1] : tensor<4x64x1xf32> to tensor<4xf32>
// CHECK: cp.attention {{.*}} sinks(%[[SINKS]] : tensor<4xf32>) on @cp grid_axes = [0] scale = 2.500000e-01
// CHECK-NOT: tosa.concat
// CHECK-NOT: tosa.matmul
func.func @sdpa(%q: tensor<4x64x16xf32>, %k: tensor<4x64x16xf32>, %v: tensor<4x64x16xf32>, %sinks: tensor<4xf32>) -> tensor<4x64x16xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %scale = "tosa.const"() <{values = dense<0.25> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %kt = tosa.transpose %k {perms = array<i32: 0, 2, 1>} : (tensor<4x64x16xf32>) -> tensor<4x16x64xf32>
  %s = tosa.matmul %q, %kt, %zp, %zp : (tensor<4x64x16xf32>, tensor<4x16x64xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x64x64xf32>
  %ss = tosa.mul %s, %scale, %shift : (tensor<4x64x64xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<4x64x64xf32>
  %shape = tosa.const_shape {values = dense<[4, 1, 1]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s3 = tosa.reshape %sinks, %shape : (tensor<4xf32>, !tosa.shape<3>) -> tensor<4x1x1xf32>
  %multiples = tosa.const_shape {values = dense<[1, 64, 1]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %column = tosa.tile %s3, %multiples : (tensor<4x1x1xf32>, !tosa.shape<3>) -> tensor<4x64x1xf32>
  %cat = tosa.concat %ss, %column {axis = 2 : i32} : (tensor<4x64x64xf32>, tensor<4x64x1xf32>) -> tensor<4x64x65xf32>
  %m = tosa.reduce_max %cat {axis = 2 : i32} : (tensor<4x64x65xf32>) -> tensor<4x64x1xf32>
  %d = tosa.sub %cat, %m : (tensor<4x64x65xf32>, tensor<4x64x1xf32>) -> tensor<4x64x65xf32>
  %e = tosa.exp %d : (tensor<4x64x65xf32>) -> tensor<4x64x65xf32>
  %z = tosa.reduce_sum %e {axis = 2 : i32} : (tensor<4x64x65xf32>) -> tensor<4x64x1xf32>
  %r = tosa.reciprocal %z : (tensor<4x64x1xf32>) -> tensor<4x64x1xf32>
  %w = tosa.mul %e, %r, %shift : (tensor<4x64x65xf32>, tensor<4x64x1xf32>, tensor<1xi8>) -> tensor<4x64x65xf32>
  %start = tosa.const_shape {values = dense<[0, 0, 0]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %size = tosa.const_shape {values = dense<[4, 64, 64]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %p = tosa.slice %w, %start, %size : (tensor<4x64x65xf32>, !tosa.shape<3>, !tosa.shape<3>) -> tensor<4x64x64xf32>
  %o = tosa.matmul %p, %v, %zp, %zp : (tensor<4x64x64xf32>, tensor<4x64x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x64x16xf32>
  return %o : tensor<4x64x16xf32>
}
