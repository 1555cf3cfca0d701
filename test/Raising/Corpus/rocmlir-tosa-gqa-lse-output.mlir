// Source: ROCm/rocMLIR, mlir/test/Conversion/TosaToRock/tosa-to-rock-attention-lse.mlir (index commit 02855fdd6e7804e6337bbd409cfd92b1df9047a5), function @mlir_lse_attention (CHECK: rock.attention with an `lse` output).
// Form: (c)+(d): GQA (K/V 2 heads broadcast to 4 via tosa.add with zeros [2,2,1,32,32]+[2,2,2,32,32]) and a SECOND RESULT: log-sum-exp = log(reduce_sum(exp(s - max))) + max, i.e. the softmax reductions (%12 max, %15 sum) have extra users (tosa.log, tosa.add) besides the softmax. No scale. K: collapse 5-D->4-D, tosa.transpose [0,1,3,2], collapse to [8,32,32]; Q expanded from flat %arg1 straight to [8,32,32]; V collapsed 5-D->3-D. Returns (out tensor<8192>, lse tensor<256>). Unused tosa.const_shape values are present as in the original.
// Adapted: replaced `arch = "##TOKEN_ARCH##"` attributes by nothing (dropped `attributes {kernel, arch = ...}`). Source already uses MLIR-22 TOSA syntax; otherwise verbatim.
// RUN: cp-opt %s --cp-raise-attention="grid-size=1 report-near-misses=true" -o %t 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s --check-prefix=IR < %t
// RUN: FileCheck %s --check-prefix=LEFT < %t
// RUN: cp-opt %s --cp-raise-attention="grid-size=2" | FileCheck %s --check-prefix=GROUP
// Status: raised after normalization (K and V repeated by tosa.add of zeros read as GQA 2:1, both tosa.matmuls lifted over the reshapes), with the returned log(rowsum) + rowmax as cp.attention's lse result. Nothing here covers only the local keys, so it raises on a group of P > 1 too (GROUP).
func.func @mlir_lse_attention(%arg0: tensor<4096xf32>, %arg1: tensor<8192xf32>, %arg2: tensor<4096xf32>) -> (tensor<8192xf32>, tensor<256xf32>) {
  %0 = tosa.const_shape  {values = dense<8192> : tensor<1xindex>} : () -> !tosa.shape<1>
  %1 = tosa.const_shape  {values = dense<256> : tensor<1xindex>} : () -> !tosa.shape<1>
  %2 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %3 = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xf32>}> : () -> tensor<1xf32>
  %4 = tosa.const_shape  {values = dense<[8, 32, 32]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %5 = "tosa.const"() <{values = dense<0.000000e+00> : tensor<2x2x2x32x32xf32>}> : () -> tensor<2x2x2x32x32xf32>
  %6 = tosa.const_shape  {values = dense<[2, 2, 1, 32, 32]> : tensor<5xindex>} : () -> !tosa.shape<5>
  %7 = tosa.const_shape  {values = dense<[2, 4, 32, 32]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %expanded = tensor.expand_shape %arg0 [[0, 1, 2, 3, 4]] output_shape [2, 2, 1, 32, 32] : tensor<4096xf32> into tensor<2x2x1x32x32xf32>
  %8 = tosa.add %expanded, %5 : (tensor<2x2x1x32x32xf32>, tensor<2x2x2x32x32xf32>) -> tensor<2x2x2x32x32xf32>
  %expanded_0 = tensor.expand_shape %arg2 [[0, 1, 2, 3, 4]] output_shape [2, 2, 1, 32, 32] : tensor<4096xf32> into tensor<2x2x1x32x32xf32>
  %9 = tosa.add %expanded_0, %5 : (tensor<2x2x1x32x32xf32>, tensor<2x2x2x32x32xf32>) -> tensor<2x2x2x32x32xf32>
  %collapsed = tensor.collapse_shape %9 [[0], [1, 2], [3], [4]] : tensor<2x2x2x32x32xf32> into tensor<2x4x32x32xf32>
  %10 = tosa.transpose %collapsed {perms = array<i32: 0, 1, 3, 2>} : (tensor<2x4x32x32xf32>) -> tensor<2x4x32x32xf32>
  %expanded_1 = tensor.expand_shape %arg1 [[0, 1, 2]] output_shape [8, 32, 32] : tensor<8192xf32> into tensor<8x32x32xf32>
  %collapsed_2 = tensor.collapse_shape %10 [[0, 1], [2], [3]] : tensor<2x4x32x32xf32> into tensor<8x32x32xf32>
  %11 = tosa.matmul %expanded_1, %collapsed_2, %3, %3 : (tensor<8x32x32xf32>, tensor<8x32x32xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<8x32x32xf32>
  %expanded_3 = tensor.expand_shape %11 [[0, 1], [2], [3]] output_shape [2, 4, 32, 32] : tensor<8x32x32xf32> into tensor<2x4x32x32xf32>
  %12 = tosa.reduce_max %expanded_3 {axis = 3 : i32} : (tensor<2x4x32x32xf32>) -> tensor<2x4x32x1xf32>
  %13 = tosa.sub %expanded_3, %12 : (tensor<2x4x32x32xf32>, tensor<2x4x32x1xf32>) -> tensor<2x4x32x32xf32>
  %14 = tosa.exp %13 : (tensor<2x4x32x32xf32>) -> tensor<2x4x32x32xf32>
  %15 = tosa.reduce_sum %14 {axis = 3 : i32} : (tensor<2x4x32x32xf32>) -> tensor<2x4x32x1xf32>
  %16 = tosa.reciprocal %15 : (tensor<2x4x32x1xf32>) -> tensor<2x4x32x1xf32>
  %17 = tosa.mul %14, %16, %2 : (tensor<2x4x32x32xf32>, tensor<2x4x32x1xf32>, tensor<1xi8>) -> tensor<2x4x32x32xf32>
  %18 = tosa.log %15 : (tensor<2x4x32x1xf32>) -> tensor<2x4x32x1xf32>
  %19 = tosa.add %18, %12 : (tensor<2x4x32x1xf32>, tensor<2x4x32x1xf32>) -> tensor<2x4x32x1xf32>
  %collapsed_4 = tensor.collapse_shape %19 [[0, 1, 2, 3]] : tensor<2x4x32x1xf32> into tensor<256xf32>
  %collapsed_5 = tensor.collapse_shape %17 [[0, 1], [2], [3]] : tensor<2x4x32x32xf32> into tensor<8x32x32xf32>
  %collapsed_6 = tensor.collapse_shape %8 [[0, 1, 2], [3], [4]] : tensor<2x2x2x32x32xf32> into tensor<8x32x32xf32>
  %20 = tosa.matmul %collapsed_5, %collapsed_6, %3, %3 : (tensor<8x32x32xf32>, tensor<8x32x32xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<8x32x32xf32>
  %collapsed_7 = tensor.collapse_shape %20 [[0, 1, 2]] : tensor<8x32x32xf32> into tensor<8192xf32>
  return %collapsed_7, %collapsed_4 : tensor<8192xf32>, tensor<256xf32>
}

// REMARK: rocmlir-tosa-gqa-lse-output.mlir:39:9: remark: cp-raise-attention: raised linalg, 4-D scores, normalized: batch matmul over reshapes x2, broadcast as an add of zeros x2, GQA 2:1, log-sum-exp returned
// IR: %[[V:.*]] = tensor.expand_shape %arg0 {{.*}} into tensor<2x2x32x32xf32>
// IR: %[[K:.*]] = tensor.expand_shape %arg2 {{.*}} into tensor<2x2x32x32xf32>
// IR: %[[Q:.*]] = tensor.expand_shape %arg1 {{.*}} into tensor<2x4x32x32xf32>
// IR: %[[O:.*]], %[[LSE:.*]] = cp.attention %[[Q]], %[[K]], %[[V]] on @cp grid_axes = [0] scale = 1.000000e+00 : tensor<2x4x32x32xf32>, tensor<2x2x32x32xf32>, tensor<2x2x32x32xf32> -> tensor<2x4x32x32xf32>, tensor<2x4x32xf32>
// IR: %[[L1:.*]] = tensor.collapse_shape %[[LSE]] {{.*}} into tensor<256xf32>
// IR: %[[L2:.*]] = tensor.expand_shape %[[L1]] {{.*}} into tensor<2x4x32x1xf32>
// IR: %[[L3:.*]] = tensor.collapse_shape %[[L2]] {{.*}} into tensor<256xf32>
// IR: %[[O1:.*]] = tensor.collapse_shape %[[O]] {{.*}} into tensor<8192xf32>
// IR: return %[[O1]], %[[L3]]
// IR-NOT: cp.attention
// LEFT-NOT: {{tosa.exp|tosa.log|tosa.reduce_max|tosa.reduce_sum|tosa.matmul}}
// GROUP: shard.grid @cp(shape = 2)
// GROUP: cp.attention {{.*}} -> tensor<2x4x32x32xf32>, tensor<2x4x32xf32>
