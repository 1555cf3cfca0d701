// Source: ROCm/rocMLIR, mlir/test/Conversion/TosaToRock/tosa-to-rock-attention-causal.mlir (index commit 04782558e67c9cb0d15743edffe72fa990217987), function @mlir_nokvcache_causal_attention (CHECK: rock.attention ... causal).
// Form: f16 causal attention, packed QKV: %arg0 tensor<24576> -> [1,2,96,128] -> tosa.transpose [0,2,1,3] -> [1,96,2,128] -> tensor.extract_slice heads 0..31 = Q [1,32,2,128] (Lq = 2); K [1,32,64,128] tosa.transpose [0,1,3,2]; collapse 4-D->3-D; tosa.matmul (f16 zero points); expand [1,32,2,64]; scale = tosa.mul by splat tosa.const 8.837890e-02 (1/sqrt(128)); CAUSAL MASK built from constants: col iota [1,1,1,64] and row iota [1,1,2,1] broadcast by tosa.mul with a ones tensor, tosa.greater(col, row), cast i1->i32->i8->i1 chain, tosa.select(mask, -inf (0xFC00), scaled) — i.e. the mask is a select, not an additive bias; softmax axis 3 (reduce_max, sub, exp, reduce_sum, reciprocal, mul); collapse; tosa.matmul P x V; expand; output tosa.transpose [0,2,1,3] and collapse to flat tensor<8192>. Unused constants (%6, %7, %8) as in the original.
// Adapted: dropped `attributes {rock.kernel, rock.arch = "##TOKEN_ARCH##"}`. Source already uses MLIR-22 TOSA syntax; otherwise verbatim.
// RUN: cp-opt %s --cp-raise-attention="grid-size=1 report-near-misses=true" -o %t 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s --check-prefix=IR < %t
// RUN: FileCheck %s --check-prefix=LEFT < %t
// Status: raised as a decode (queries = replicated: Lq = 2 queries against a K/V of 64 keys sharded on the sequence) after normalization: both tosa.matmuls lifted over the reshapes, K read through its tosa.transpose, and the mask replayed from its constants: iotas on the key and query dims, tosa.mul by ones, tosa.greater, the i1 -> i32 -> i8 -> i1 tosa.cast chain, and select(mask, -inf, s) with the scores on the false side, i.e. key <= query: mask = causal with query row i at position i.
func.func @mlir_nokvcache_causal_attention(%arg0: tensor<24576xf16>, %arg1: tensor<262144xf16>, %arg2: tensor<262144xf16>) -> tensor<8192xf16> {
  %expanded = tensor.expand_shape %arg2 [[0, 1, 2, 3]] output_shape [1, 32, 64, 128] : tensor<262144xf16> into tensor<1x32x64x128xf16>
  %expanded_1 = tensor.expand_shape %arg1 [[0, 1, 2, 3]] output_shape [1, 32, 64, 128] : tensor<262144xf16> into tensor<1x32x64x128xf16>
  %expanded_2 = tensor.expand_shape %arg0 [[0, 1, 2, 3]] output_shape [1, 2, 96, 128] : tensor<24576xf16> into tensor<1x2x96x128xf16>
  %5 = tosa.transpose %expanded_2 {perms = array<i32: 0, 2, 1, 3>} : (tensor<1x2x96x128xf16>) -> tensor<1x96x2x128xf16>
  %6 = "tosa.const"() <{values = dense<[1, 2]> : tensor<2xi32>}> : () -> tensor<2xi32>
  %7 = "tosa.const"() <{values = dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63]> : tensor<64xi32>}> : () -> tensor<64xi32>
  %extracted_slice = tensor.extract_slice %5[0, 0, 0, 0] [1, 32, 2, 128] [1, 1, 1, 1] : tensor<1x96x2x128xf16> to tensor<1x32x2x128xf16>
  %8 = "tosa.const"() <{values = dense<[0, 1, 3, 2]> : tensor<4xi32>}> : () -> tensor<4xi32>
  %9 = tosa.transpose %expanded_1 {perms = array<i32: 0, 1, 3, 2>} : (tensor<1x32x64x128xf16>) -> tensor<1x32x128x64xf16>
  %collapsed = tensor.collapse_shape %extracted_slice [[0, 1], [2], [3]] : tensor<1x32x2x128xf16> into tensor<32x2x128xf16>
  %collapsed_3 = tensor.collapse_shape %9 [[0, 1], [2], [3]] : tensor<1x32x128x64xf16> into tensor<32x128x64xf16>
  %a_zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf16>}> : () -> tensor<1xf16>
  %b_zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf16>}> : () -> tensor<1xf16>
  %10 = tosa.matmul %collapsed, %collapsed_3, %a_zp, %b_zp : (tensor<32x2x128xf16>, tensor<32x128x64xf16>, tensor<1xf16>, tensor<1xf16>) -> tensor<32x2x64xf16>
  %expanded_4 = tensor.expand_shape %10 [[0, 1], [2], [3]] output_shape [1, 32, 2, 64] : tensor<32x2x64xf16> into tensor<1x32x2x64xf16>
  %cst = arith.constant dense<[[[[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63]]]]> : tensor<1x1x1x64xi32>
  %11 = "tosa.const"() <{values = dense<1> : tensor<1x32x2x64xi32>}> : () -> tensor<1x32x2x64xi32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %12 = tosa.mul %cst, %11, %shift: (tensor<1x1x1x64xi32>, tensor<1x32x2x64xi32>, tensor<1xi8>) -> tensor<1x32x2x64xi32>
  %13 = "tosa.const"() <{values = dense<0xFC00> : tensor<1x32x2x64xf16>}> : () -> tensor<1x32x2x64xf16>
  %14 = "tosa.const"() <{values = dense<8.837890e-02> : tensor<1x32x2x64xf16>}> : () -> tensor<1x32x2x64xf16>
  %fused = tosa.mul %expanded_4, %14, %shift : (tensor<1x32x2x64xf16>, tensor<1x32x2x64xf16>, tensor<1xi8>) -> tensor<1x32x2x64xf16>
  %cst_6 = arith.constant dense<[[[[0], [1]]]]> : tensor<1x1x2x1xi32>
  %15 = tosa.mul %cst_6, %11, %shift : (tensor<1x1x2x1xi32>, tensor<1x32x2x64xi32>, tensor<1xi8>) -> tensor<1x32x2x64xi32>
  %16 = tosa.greater %12, %15 : (tensor<1x32x2x64xi32>, tensor<1x32x2x64xi32>) -> tensor<1x32x2x64xi1>
  %17 = tosa.cast %16 : (tensor<1x32x2x64xi1>) -> tensor<1x32x2x64xi32>
  %18 = tosa.cast %17 : (tensor<1x32x2x64xi32>) -> tensor<1x32x2x64xi8>
  %19 = tosa.cast %18 : (tensor<1x32x2x64xi8>) -> tensor<1x32x2x64xi1>
  %20 = tosa.select %19, %13, %fused : (tensor<1x32x2x64xi1>, tensor<1x32x2x64xf16>, tensor<1x32x2x64xf16>) -> tensor<1x32x2x64xf16>
  %28 = tosa.reduce_max %20 {axis = 3 : i32} : (tensor<1x32x2x64xf16>) -> tensor<1x32x2x1xf16>
  %29 = tosa.sub %20, %28 : (tensor<1x32x2x64xf16>, tensor<1x32x2x1xf16>) -> tensor<1x32x2x64xf16>
  %30 = tosa.exp %29 : (tensor<1x32x2x64xf16>) -> tensor<1x32x2x64xf16>
  %31 = tosa.reduce_sum %30 {axis = 3 : i32} : (tensor<1x32x2x64xf16>) -> tensor<1x32x2x1xf16>
  %32 = tosa.reciprocal %31 : (tensor<1x32x2x1xf16>) -> tensor<1x32x2x1xf16>
  %33 = tosa.mul %30, %32, %shift : (tensor<1x32x2x64xf16>, tensor<1x32x2x1xf16>, tensor<1xi8>) -> tensor<1x32x2x64xf16>
  %collapsed_8 = tensor.collapse_shape %33 [[0, 1], [2], [3]] : tensor<1x32x2x64xf16> into tensor<32x2x64xf16>
  %expanded_9 = tensor.expand_shape %arg2 [[0, 1, 2]] output_shape [32, 64, 128] : tensor<262144xf16> into tensor<32x64x128xf16>
  %34 = tosa.matmul %collapsed_8, %expanded_9, %a_zp, %b_zp : (tensor<32x2x64xf16>, tensor<32x64x128xf16>, tensor<1xf16>, tensor<1xf16>) -> tensor<32x2x128xf16>
  %expanded_10 = tensor.expand_shape %34 [[0, 1], [2], [3]] output_shape [1, 32, 2, 128] : tensor<32x2x128xf16> into tensor<1x32x2x128xf16>
  %35 = tosa.transpose %expanded_10 {perms = array<i32: 0, 2, 1, 3>} : (tensor<1x32x2x128xf16>) -> tensor<1x2x32x128xf16>
  %collapsed_11 = tensor.collapse_shape %35 [[0], [1], [2, 3]] : tensor<1x2x32x128xf16> into tensor<1x2x4096xf16>
  %collapsed_12 = tensor.collapse_shape %35 [[0, 1, 2, 3]] : tensor<1x2x32x128xf16> into tensor<8192xf16>
  return %collapsed_12 : tensor<8192xf16>
}

// REMARK: rocmlir-tosa-causal-iota-select-f16.mlir:46:9: remark: cp-raise-attention: raised linalg, 4-D scores, normalized: batch matmul over reshapes x2, decode (queries replicated, K/V sharded), index mask
// IR: %[[K:.*]] = tensor.expand_shape %arg1 {{.*}} into tensor<1x32x64x128xf16>
// IR: %[[Q:.*]] = tensor.extract_slice {{.*}} to tensor<1x32x2x128xf16>
// IR: %[[V:.*]] = tensor.expand_shape %arg2 {{.*}} into tensor<1x32x64x128xf16>
// IR: cp.attention %[[Q]], %[[K]], %[[V]] on @cp grid_axes = [0] mask = causal queries = replicated scale = 0.0883789062 : tensor<1x32x2x128xf16>, tensor<1x32x64x128xf16>, tensor<1x32x64x128xf16> -> tensor<1x32x2x128xf16>
// IR-NOT: cp.attention
// LEFT-NOT: {{math.exp|tosa.exp|arith.maximumf|tosa.reduce_max|tosa.select|tosa.greater}}
