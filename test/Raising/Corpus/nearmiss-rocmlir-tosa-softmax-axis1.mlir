// Source: ROCm/rocMLIR, mlir/test/Conversion/TosaToRock/tosa-to-rock-attention.mlir (index commit 1b9392a9197936b9937f8bcda5c13fe441a5e1eb), functions @self_attention and @self_attention_with_scale_and_bias. rocMLIR's --tosa-to-rock CHECKs that both become rock.attention.
// Form: NEAR-MISS (TOSA, generic-op syntax): tosa.transpose K [0,2,1]; tosa.matmul Q x K^T -> [1,384,384]; "scale" is an elementwise tosa.mul by a full tensor<1x384x384> function argument (not a scalar/splat), optional tosa.add bias; softmax reductions use axis = 1 (the QUERY axis of [B, Lq, Lk]), i.e. tosa.reduce_max/reduce_sum -> tensor<1x1x384>, sub, exp, reciprocal, mul; then tosa.matmul P x V. Because the softmax normalises over the wrong axis this is NOT softmax(QK^T)V (only equal when Lq==Lk and the matrix is treated column-wise); a strict raiser should reject it or handle it only with an explicit transposed-softmax proof. (Lq == Lk == 384 here, so shape checks alone will not catch it.)
// Adapted: extracted two functions; dropped the `attributes {kernel, arch = ""}`; updated to MLIR 22 TOSA: `"tosa.transpose"(%x, %cst)` with an arith.constant perms tensor<3xi64> -> `tosa.transpose %x {perms = array<i32: 0, 2, 1>}` (the perms constant removed), `"tosa.matmul"(%a, %b)` -> `tosa.matmul %a, %b, %a_zp, %b_zp` with zero-point consts, `"tosa.mul"(...) {shift = 0 : i8}` -> `tosa.mul %a, %b, %shift` with a `tosa.const dense<0> : tensor<1xi8>`. reduce/sub/exp/reciprocal/add kept in generic form unchanged.
// RUN: cp-opt %s --cp-raise-attention="grid-size=1 report-near-misses=true" -o %t 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s --check-prefix=IR < %t
// Status: near miss. Not attention as cp.attention states it: the softmax normalizes the query axis (reduce_max and reduce_sum over axis 1) and the scale is a runtime tensor; both functions stay near misses.
func.func @self_attention(%arg0: tensor<1x384x64xf32>, %arg1: tensor<1x384x64xf32>, %arg2: tensor<1x384x64xf32>, %arg3: tensor<1x384x384xf32>) -> tensor<1x384x64xf32> {
  %a_zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %b_zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %0 = tosa.transpose %arg1 {perms = array<i32: 0, 2, 1>} : (tensor<1x384x64xf32>) -> tensor<1x64x384xf32>
  %1 = tosa.matmul %arg0, %0, %a_zp, %b_zp : (tensor<1x384x64xf32>, tensor<1x64x384xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x384x384xf32>
  %2 = tosa.mul %1, %arg3, %shift : (tensor<1x384x384xf32>, tensor<1x384x384xf32>, tensor<1xi8>) -> tensor<1x384x384xf32>
  %3 = "tosa.reduce_max"(%2) {axis = 1 : i32} : (tensor<1x384x384xf32>) -> tensor<1x1x384xf32>
  %4 = "tosa.sub"(%2, %3) : (tensor<1x384x384xf32>, tensor<1x1x384xf32>) -> tensor<1x384x384xf32>
  %5 = "tosa.exp"(%4) : (tensor<1x384x384xf32>) -> tensor<1x384x384xf32>
  %6 = "tosa.reduce_sum"(%5) {axis = 1 : i32} : (tensor<1x384x384xf32>) -> tensor<1x1x384xf32>
  %7 = "tosa.reciprocal"(%6) : (tensor<1x1x384xf32>) -> tensor<1x1x384xf32>
  %8 = tosa.mul %5, %7, %shift : (tensor<1x384x384xf32>, tensor<1x1x384xf32>, tensor<1xi8>) -> tensor<1x384x384xf32>
  %9 = tosa.matmul %8, %arg2, %a_zp, %b_zp : (tensor<1x384x384xf32>, tensor<1x384x64xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x384x64xf32>
  return %9 : tensor<1x384x64xf32>
}

func.func @self_attention_with_scale_and_bias(%arg0: tensor<1x384x64xf32>, %arg1: tensor<1x384x64xf32>, %arg2: tensor<1x384x64xf32>, %arg3: tensor<1x384x384xf32>, %arg4: tensor<1x384x384xf32>) -> tensor<1x384x64xf32> {
  %a_zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %b_zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %0 = tosa.transpose %arg1 {perms = array<i32: 0, 2, 1>} : (tensor<1x384x64xf32>) -> tensor<1x64x384xf32>
  %1 = tosa.matmul %arg0, %0, %a_zp, %b_zp : (tensor<1x384x64xf32>, tensor<1x64x384xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x384x384xf32>
  %2 = tosa.mul %1, %arg3, %shift : (tensor<1x384x384xf32>, tensor<1x384x384xf32>, tensor<1xi8>) -> tensor<1x384x384xf32>
  %3 = "tosa.add"(%2, %arg4) : (tensor<1x384x384xf32>, tensor<1x384x384xf32>) -> tensor<1x384x384xf32>
  %4 = "tosa.reduce_max"(%3) {axis = 1 : i32} : (tensor<1x384x384xf32>) -> tensor<1x1x384xf32>
  %5 = "tosa.sub"(%3, %4) : (tensor<1x384x384xf32>, tensor<1x1x384xf32>) -> tensor<1x384x384xf32>
  %6 = "tosa.exp"(%5) : (tensor<1x384x384xf32>) -> tensor<1x384x384xf32>
  %7 = "tosa.reduce_sum"(%6) {axis = 1 : i32} : (tensor<1x384x384xf32>) -> tensor<1x1x384xf32>
  %8 = "tosa.reciprocal"(%7) : (tensor<1x1x384xf32>) -> tensor<1x1x384xf32>
  %9 = tosa.mul %6, %8, %shift : (tensor<1x384x384xf32>, tensor<1x1x384xf32>, tensor<1xi8>) -> tensor<1x384x384xf32>
  %10 = tosa.matmul %9, %arg2, %a_zp, %b_zp : (tensor<1x384x384xf32>, tensor<1x384x64xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x384x64xf32>
  return %10 : tensor<1x384x64xf32>
}

// REMARK: nearmiss-rocmlir-tosa-softmax-axis1.mlir:17:8: remark: cp-raise-attention: not raised: the softmax's row sum reduces dim 1, not the key dim 2
// REMARK: nearmiss-rocmlir-tosa-softmax-axis1.mlir:35:8: remark: cp-raise-attention: not raised: the softmax's row sum reduces dim 1, not the key dim 2
// IR-NOT: cp.attention
