// Source: ROCm/rocMLIR, mlir/test/Conversion/TosaToRock/tosa-to-rock-attention.mlir (index commit 1b9392a9197936b9937f8bcda5c13fe441a5e1eb), function @self_attention_with_reshapes (CHECK: rock.attention).
// Form: (b) TOSA + tensor reshapes (MIGraphX-style): K arrives ALREADY TRANSPOSED as tensor<1x12x64x384> (no transpose op); tensor.collapse_shape [[0,1],[2],[3]] 4-D->3-D of Q and K^T; tosa.matmul [12,384,64]x[12,64,384]; tensor.expand_shape back to [1,12,384,384]; NO scale; softmax on 4-D axis 3 (reduce_max -> [..,1], sub, exp, reduce_sum, reciprocal, mul); collapse P and V to 3-D; tosa.matmul; expand to [1,12,384,64].
// Adapted: dropped `attributes {kernel, arch = ""}`; `"tosa.matmul"(%a, %b)` -> `tosa.matmul %a, %b, %a_zp, %b_zp` (+2 zero-point consts); `"tosa.mul"(..) <{shift = 0 : i8}>` -> `tosa.mul %a, %b, %shift` (+ shift const); added `output_shape [...]` to the two tensor.expand_shape ops. Other ops verbatim (generic syntax kept).
// RUN: cp-opt %s --cp-raise-attention="grid-size=1 report-near-misses=true" -o %t 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s --check-prefix=IR < %t
// RUN: FileCheck %s --check-prefix=LEFT < %t
// Without normalization the same pass stops at the collapse of P.
// RUN: cp-opt %s --cp-raise-attention="grid-size=1 normalize=false" | FileCheck %s --check-prefix=PLAIN
// PLAIN-NOT: cp.attention
// PLAIN: tosa.matmul
// Status: raised after normalization: both tosa.matmuls lifted over the collapse_shapes to 4-D contractions (K arrives transposed: read through the contraction's map).
func.func @self_attention_with_reshapes(%arg0: tensor<1x12x384x64xf32>, %arg1: tensor<1x12x64x384xf32>, %arg2: tensor<1x12x384x64xf32>) -> (tensor<1x12x384x64xf32>) {
  %a_zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %b_zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %collapsed = tensor.collapse_shape %arg0 [[0, 1], [2], [3]] : tensor<1x12x384x64xf32> into tensor<12x384x64xf32>
  %collapsed_0 = tensor.collapse_shape %arg1 [[0, 1], [2], [3]] : tensor<1x12x64x384xf32> into tensor<12x64x384xf32>
  %0 = tosa.matmul %collapsed, %collapsed_0, %a_zp, %b_zp : (tensor<12x384x64xf32>, tensor<12x64x384xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<12x384x384xf32>
  %expanded = tensor.expand_shape %0 [[0, 1], [2], [3]] output_shape [1, 12, 384, 384] : tensor<12x384x384xf32> into tensor<1x12x384x384xf32>
  %1 = "tosa.reduce_max"(%expanded) <{axis = 3 : i32}> : (tensor<1x12x384x384xf32>) -> tensor<1x12x384x1xf32>
  %2 = "tosa.sub"(%expanded, %1) : (tensor<1x12x384x384xf32>, tensor<1x12x384x1xf32>) -> tensor<1x12x384x384xf32>
  %3 = "tosa.exp"(%2) : (tensor<1x12x384x384xf32>) -> tensor<1x12x384x384xf32>
  %4 = "tosa.reduce_sum"(%3) <{axis = 3 : i32}> : (tensor<1x12x384x384xf32>) -> tensor<1x12x384x1xf32>
  %5 = "tosa.reciprocal"(%4) : (tensor<1x12x384x1xf32>) -> tensor<1x12x384x1xf32>
  %6 = tosa.mul %3, %5, %shift : (tensor<1x12x384x384xf32>, tensor<1x12x384x1xf32>, tensor<1xi8>) -> tensor<1x12x384x384xf32>
  %collapsed_1 = tensor.collapse_shape %6 [[0, 1], [2], [3]] : tensor<1x12x384x384xf32> into tensor<12x384x384xf32>
  %collapsed_2 = tensor.collapse_shape %arg2 [[0, 1], [2], [3]] : tensor<1x12x384x64xf32> into tensor<12x384x64xf32>
  %7 = tosa.matmul %collapsed_1, %collapsed_2, %a_zp, %b_zp : (tensor<12x384x384xf32>, tensor<12x384x64xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<12x384x64xf32>
  %expanded_3 = tensor.expand_shape %7 [[0, 1], [2], [3]] output_shape [1, 12, 384, 64] : tensor<12x384x64xf32> into tensor<1x12x384x64xf32>
  return %expanded_3 : tensor<1x12x384x64xf32>
}

// REMARK: rocmlir-tosa-attention-collapse-4d-3d.mlir:28:8: remark: cp-raise-attention: raised linalg, 4-D scores, normalized: batch matmul over reshapes x2
// IR: cp.attention %{{.*}}, %{{.*}}, %{{.*}} on @cp grid_axes = [0] scale = 1.000000e+00
// IR-NOT: cp.attention
// LEFT-NOT: {{math.exp|tosa.exp|arith.maximumf|tosa.reduce_max|linalg.softmax}}
