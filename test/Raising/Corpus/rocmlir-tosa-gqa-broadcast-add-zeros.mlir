// Source: ROCm/rocMLIR, mlir/test/Conversion/TosaToRock/tosa-to-rock-attention-gqa.mlir (index commit 19956115a4d59ae0f46fc4af3ac6e413913e9357), function @self_attention_gqa_scale_bias (CHECK: rock.attention).
// Form: (d) GQA, MIGraphX->TOSA style with FLAT 1-D arguments: Q=%arg2 tensor<8192> expanded straight to 3-D [8,32,32]; K=%arg3 and V=%arg0 tensor<4096> expanded to 5-D [2,2,1,32,32] and BROADCAST to [2,2,2,32,32] by `tosa.add` with a zero tosa.const (GQA: 2 KV heads -> 4 Q heads), K: collapse [[0],[1,2],[3],[4]] -> [2,4,32,32], tosa.transpose [0,1,3,2], collapse -> [8,32,32]; V: collapse 5-D -> 3-D [[0,1,2],[3],[4]] directly; tosa.matmul (with zero-point operands); expand to [2,4,32,32]; scale = tosa.mul by a full-size tensor argument %arg1; bias = tosa.add %arg4; softmax axis 3 (reduce_max, sub, exp, reduce_sum, reciprocal, mul); collapse; tosa.matmul P x V; collapse to flat tensor<8192>. Several dead expand_shape ops are present (as in the original).
// Adapted: dropped `attributes {kernel, arch = ""}` and the {mhal.read_access}/{mhal.write_access} arg/result attributes. Already MLIR-22 TOSA syntax in the source (values=, perms attr, matmul zero points, mul shift operand); otherwise verbatim (SSA numbering gap %3 is in the original).
// RUN: cp-opt %s --cp-raise-attention="grid-size=1 report-near-misses=true" -o %t 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s --check-prefix=IR < %t
// RUN: FileCheck %s --check-prefix=LEFT < %t
// Status: raised after normalization: K and V repeated by tosa.add of zeros become linalg.broadcast, both tosa.matmuls lifted over the reshapes (the 5-D V collapse [2, 2, 2] read as the batch [2, 4] of P), GQA 2:1 read from the broadcast, the bias tensor as explicit_mask and the runtime scale tensor as a score_mod mod operand (one-process group only, as the mask).
func.func @self_attention_gqa_scale_bias(%arg0: tensor<4096xf32>, %arg1: tensor<8192xf32>, %arg2: tensor<8192xf32>, %arg3: tensor<4096xf32>, %arg4: tensor<8192xf32>) -> (tensor<8192xf32>) {
  %expanded = tensor.expand_shape %arg4 [[0, 1, 2, 3]] output_shape [2, 4, 32, 32] : tensor<8192xf32> into tensor<2x4x32x32xf32>
  %expanded_0 = tensor.expand_shape %arg1 [[0, 1, 2, 3]] output_shape [2, 4, 32, 32] : tensor<8192xf32> into tensor<2x4x32x32xf32>
  %expanded_1 = tensor.expand_shape %arg2 [[0, 1, 2, 3]] output_shape [2, 4, 32, 32] : tensor<8192xf32> into tensor<2x4x32x32xf32>
  %expanded_2 = tensor.expand_shape %arg3 [[0, 1, 2, 3]] output_shape [2, 2, 32, 32] : tensor<4096xf32> into tensor<2x2x32x32xf32>
  %expanded_3 = tensor.expand_shape %arg0 [[0, 1, 2, 3]] output_shape [2, 2, 32, 32] : tensor<4096xf32> into tensor<2x2x32x32xf32>
  %expanded_4 = tensor.expand_shape %arg0 [[0, 1, 2, 3, 4]] output_shape [2, 2, 1, 32, 32] : tensor<4096xf32> into tensor<2x2x1x32x32xf32>
  %0 = "tosa.const"() <{values = dense<0.000000e+00> : tensor<2x2x2x32x32xf32>}> : () -> tensor<2x2x2x32x32xf32>
  %1 = tosa.add %expanded_4, %0 : (tensor<2x2x1x32x32xf32>, tensor<2x2x2x32x32xf32>) -> tensor<2x2x2x32x32xf32>
  %collapsed = tensor.collapse_shape %1 [[0], [1, 2], [3], [4]] : tensor<2x2x2x32x32xf32> into tensor<2x4x32x32xf32>
  %expanded_5 = tensor.expand_shape %arg3 [[0, 1, 2, 3, 4]] output_shape [2, 2, 1, 32, 32] : tensor<4096xf32> into tensor<2x2x1x32x32xf32>
  %2 = tosa.add %expanded_5, %0 : (tensor<2x2x1x32x32xf32>, tensor<2x2x2x32x32xf32>) -> tensor<2x2x2x32x32xf32>
  %collapsed_6 = tensor.collapse_shape %2 [[0], [1, 2], [3], [4]] : tensor<2x2x2x32x32xf32> into tensor<2x4x32x32xf32>
  %4 = tosa.transpose %collapsed_6 {perms = array<i32: 0, 1, 3, 2>} : (tensor<2x4x32x32xf32>) -> tensor<2x4x32x32xf32>
  %expanded_7 = tensor.expand_shape %arg2 [[0, 1, 2]] output_shape [8, 32, 32] : tensor<8192xf32> into tensor<8x32x32xf32>
  %collapsed_8 = tensor.collapse_shape %4 [[0, 1], [2], [3]] : tensor<2x4x32x32xf32> into tensor<8x32x32xf32>
  %a_zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %b_zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %5 = tosa.matmul %expanded_7, %collapsed_8, %a_zp, %b_zp : (tensor<8x32x32xf32>, tensor<8x32x32xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<8x32x32xf32>
  %expanded_9 = tensor.expand_shape %5 [[0, 1], [2], [3]] output_shape [2, 4, 32, 32] : tensor<8x32x32xf32> into tensor<2x4x32x32xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %6 = tosa.mul %expanded_9, %expanded_0, %shift : (tensor<2x4x32x32xf32>, tensor<2x4x32x32xf32>, tensor<1xi8>) -> tensor<2x4x32x32xf32>
  %7 = tosa.add %6, %expanded : (tensor<2x4x32x32xf32>, tensor<2x4x32x32xf32>) -> tensor<2x4x32x32xf32>
  %8 = tosa.reduce_max %7 {axis = 3 : i32} : (tensor<2x4x32x32xf32>) -> tensor<2x4x32x1xf32>
  %9 = tosa.sub %7, %8 : (tensor<2x4x32x32xf32>, tensor<2x4x32x1xf32>) -> tensor<2x4x32x32xf32>
  %10 = tosa.exp %9 : (tensor<2x4x32x32xf32>) -> tensor<2x4x32x32xf32>
  %11 = tosa.reduce_sum %10 {axis = 3 : i32} : (tensor<2x4x32x32xf32>) -> tensor<2x4x32x1xf32>
  %12 = tosa.reciprocal %11 : (tensor<2x4x32x1xf32>) -> tensor<2x4x32x1xf32>
  %13 = tosa.mul %10, %12, %shift : (tensor<2x4x32x32xf32>, tensor<2x4x32x1xf32>, tensor<1xi8>) -> tensor<2x4x32x32xf32>
  %collapsed_10 = tensor.collapse_shape %13 [[0, 1], [2], [3]] : tensor<2x4x32x32xf32> into tensor<8x32x32xf32>
  %collapsed_11 = tensor.collapse_shape %1 [[0, 1, 2], [3], [4]] : tensor<2x2x2x32x32xf32> into tensor<8x32x32xf32>
  %14 = tosa.matmul %collapsed_10, %collapsed_11, %a_zp, %b_zp : (tensor<8x32x32xf32>, tensor<8x32x32xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<8x32x32xf32>
  %expanded_12 = tensor.expand_shape %14 [[0, 1], [2], [3]] output_shape [2, 4, 32, 32] : tensor<8x32x32xf32> into tensor<2x4x32x32xf32>
  %collapsed_13 = tensor.collapse_shape %14 [[0, 1, 2]] : tensor<8x32x32xf32> into tensor<8192xf32>
  return %collapsed_13 : tensor<8192xf32>
}

// REMARK: rocmlir-tosa-gqa-broadcast-add-zeros.mlir:39:9: remark: cp-raise-attention: raised linalg, 4-D scores, normalized: batch matmul over reshapes x2, broadcast as an add of zeros x2, GQA 2:1, mask tensor, score transform
// IR: %[[BIAS:.*]] = tensor.expand_shape %arg4 {{.*}} into tensor<2x4x32x32xf32>
// IR: %[[SCALE:.*]] = tensor.expand_shape %arg1 {{.*}} into tensor<2x4x32x32xf32>
// IR: %[[V:.*]] = tensor.expand_shape %arg0 {{.*}} into tensor<2x2x32x32xf32>
// IR: %[[K:.*]] = tensor.expand_shape %arg3 {{.*}} into tensor<2x2x32x32xf32>
// IR: %[[Q:.*]] = tensor.expand_shape %arg2 {{.*}} into tensor<2x4x32x32xf32>
// IR: cp.attention %[[Q]], %[[K]], %[[V]] explicit_mask %[[BIAS]] mod_operands(%[[SCALE]] : tensor<2x4x32x32xf32>) on @cp grid_axes = [0] scale = 1.000000e+00 score_mod {
// IR: arith.mulf
// IR: } : tensor<2x4x32x32xf32>, tensor<2x2x32x32xf32>, tensor<2x2x32x32xf32>, tensor<2x4x32x32xf32> -> tensor<2x4x32x32xf32>
// IR-NOT: cp.attention
// LEFT-NOT: {{math.exp|tosa.exp|arith.maximumf|tosa.reduce_max|tosa.matmul|tosa.add}}
