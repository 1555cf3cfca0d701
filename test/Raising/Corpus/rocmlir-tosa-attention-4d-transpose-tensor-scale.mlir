// Source: ROCm/rocMLIR, mlir/test/Conversion/TosaToRock/tosa-to-rock-attention.mlir (index commit 1b9392a9197936b9937f8bcda5c13fe441a5e1eb), function @self_attention_with_4d_scale (CHECK: rock.attention).
// Form: (b) TOSA: argument order is (V=%arg0, scale=%arg1, Q=%arg2, K=%arg3); 4-D tosa.transpose of K with perms [0,1,3,2]; collapse Q and K^T 4-D->3-D; tosa.matmul; expand to [1,12,256,256]; scale is an elementwise tosa.mul by a FULL tensor<1x12x256x256> argument (not a splat); softmax axis 3 with reciprocal; collapse P, V; tosa.matmul; expand. Lq = Lk = D = 256 (all dims equal, so shape-based operand-role inference is ambiguous).
// Adapted: dropped `attributes {kernel, mhal.arch = ...}`; `"tosa.transpose"(%arg3, %cst)` with arith.constant perms tensor<4xi64> -> `tosa.transpose %arg3 {perms = array<i32: 0, 1, 3, 2>}`; `"tosa.matmul"(a, b)` -> `tosa.matmul a, b, %a_zp, %b_zp`; `"tosa.mul"(..) <{shift = 0 : i8}>` -> `tosa.mul a, b, %shift`; added `output_shape` to the two expand_shape ops.
// RUN: cp-opt %s --cp-raise-attention="grid-size=1 report-near-misses=true" -o %t 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s --check-prefix=IR < %t
// RUN: FileCheck %s --check-prefix=LEFT < %t
// RUN: cp-opt %s --cp-raise-attention="grid-size=2 report-near-misses=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=GROUP
// Status: raised after normalization (the tosa.matmuls lifted over the reshapes, K read through its tosa.transpose) with the runtime scale tensor as a score_mod reading it as a mod operand at (b, h, q, k). On a CP group of P > 1 the tensor covers only the local queries and keys, so the function stays a near miss there (GROUP).
func.func @self_attention_with_4d_scale(%arg0: tensor<1x12x256x256xf32> , %arg1: tensor<1x12x256x256xf32>, %arg2: tensor<1x12x256x256xf32>, %arg3: tensor<1x12x256x256xf32>) -> (tensor<1x12x256x256xf32>) {
  %a_zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %b_zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %0 = tosa.transpose %arg3 {perms = array<i32: 0, 1, 3, 2>} : (tensor<1x12x256x256xf32>) -> tensor<1x12x256x256xf32>
  %collapsed = tensor.collapse_shape %arg2 [[0, 1], [2], [3]] : tensor<1x12x256x256xf32> into tensor<12x256x256xf32>
  %collapsed_0 = tensor.collapse_shape %0 [[0, 1], [2], [3]] : tensor<1x12x256x256xf32> into tensor<12x256x256xf32>
  %1 = tosa.matmul %collapsed, %collapsed_0, %a_zp, %b_zp : (tensor<12x256x256xf32>, tensor<12x256x256xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<12x256x256xf32>
  %expanded = tensor.expand_shape %1 [[0, 1], [2], [3]] output_shape [1, 12, 256, 256] : tensor<12x256x256xf32> into tensor<1x12x256x256xf32>
  %2 = tosa.mul %expanded, %arg1, %shift : (tensor<1x12x256x256xf32>, tensor<1x12x256x256xf32>, tensor<1xi8>) -> tensor<1x12x256x256xf32>
  %3 = "tosa.reduce_max"(%2) <{axis = 3 : i32}> : (tensor<1x12x256x256xf32>) -> tensor<1x12x256x1xf32>
  %4 = "tosa.sub"(%2, %3) : (tensor<1x12x256x256xf32>, tensor<1x12x256x1xf32>) -> tensor<1x12x256x256xf32>
  %5 = "tosa.exp"(%4) : (tensor<1x12x256x256xf32>) -> tensor<1x12x256x256xf32>
  %6 = "tosa.reduce_sum"(%5) <{axis = 3 : i32}> : (tensor<1x12x256x256xf32>) -> tensor<1x12x256x1xf32>
  %7 = "tosa.reciprocal"(%6) : (tensor<1x12x256x1xf32>) -> tensor<1x12x256x1xf32>
  %8 = tosa.mul %5, %7, %shift : (tensor<1x12x256x256xf32>, tensor<1x12x256x1xf32>, tensor<1xi8>) -> tensor<1x12x256x256xf32>
  %collapsed_1 = tensor.collapse_shape %8 [[0, 1], [2], [3]] : tensor<1x12x256x256xf32> into tensor<12x256x256xf32>
  %collapsed_2 = tensor.collapse_shape %arg0 [[0, 1], [2], [3]] : tensor<1x12x256x256xf32> into tensor<12x256x256xf32>
  %9 = tosa.matmul %collapsed_1, %collapsed_2, %a_zp, %b_zp : (tensor<12x256x256xf32>, tensor<12x256x256xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<12x256x256xf32>
  %expanded_3 = tensor.expand_shape %9 [[0, 1], [2], [3]] output_shape [1, 12, 256, 256] : tensor<12x256x256xf32> into tensor<1x12x256x256xf32>
  return %expanded_3 : tensor<1x12x256x256xf32>
}

// REMARK: rocmlir-tosa-attention-4d-transpose-tensor-scale.mlir:27:8: remark: cp-raise-attention: raised linalg, 4-D scores, normalized: batch matmul over reshapes x2, score transform
// IR: cp.attention %arg2, %arg3, %arg0 mod_operands(%arg1 : tensor<1x12x256x256xf32>) on @cp grid_axes = [0] scale = 1.000000e+00 score_mod {
// IR-NEXT: ^bb0(%[[S:.*]]: f32, %[[B:.*]]: index, %[[H:.*]]: index, %[[Q:.*]]: index, %[[K:.*]]: index, %[[T:.*]]: tensor<1x12x256x256xf32>):
// IR-NEXT: %[[F:.*]] = tensor.extract %[[T]][%[[B]], %[[H]], %[[Q]], %[[K]]]
// IR-NEXT: %[[X:.*]] = arith.mulf %[[S]], %[[F]] : f32
// IR-NEXT: cp.yield %[[X]] : f32
// IR-NOT: cp.attention
// LEFT-NOT: {{math.exp|tosa.exp|arith.maximumf|tosa.reduce_max|tosa.mul}}
// GROUP: remark: cp-raise-attention: not raised: the score transform reads a tensor at the query and key positions, which covers only the local keys on a CP group of 2
