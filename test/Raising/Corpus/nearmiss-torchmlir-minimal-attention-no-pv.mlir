// Source: unidentified public GitHub repository (torch-mlir TorchToLinalg output of a `MinimalAttention` nn.Module, module attribute torch.debug_module_name = "MinimalAttention"; 7396-char file returned by the code index by content only).
// Form: NEAR-MISS (a): Q = x Wq, K = x Wk (batch_matmul with broadcast generics), K^T via transpose generic (d0,d2,d1), scores = Q K^T, then torch-mlir keepdim softmax (max+argmax 2-result generic into [1,32,1], sub/exp/sum/div). There is NO scale and NO final P*V matmul: the function returns softmax(Q K^T) itself. A raiser must not produce cp.attention here (no V).
// Adapted: extracted @forward, dropped ml_program.global; the two 64x64 weight constants were stored truncated (hex blobs cut off) so they are replaced by splat `dense<1.000000e-02> : tensor<64x64xf32>`; `arith.maxf` -> `arith.maximumf`. Everything else verbatim.
// RUN: cp-opt %s --cp-raise-attention="grid-size=1 report-near-misses=true" -o %t 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s --check-prefix=IR < %t
// Status: near miss. Not attention: softmax(Q K^T) is returned with no contraction with V.
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d1, d0)>
#map2 = affine_map<(d0, d1, d2) -> (0, d1, d2)>
#map3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map4 = affine_map<(d0, d1, d2) -> (d1, d2)>
#map5 = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
#map6 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#map7 = affine_map<(d0, d1, d2) -> (0, d1, 0)>
func.func @forward(%arg0: tensor<1x32x64xf32>) -> tensor<1x32x32xf32> {
  %c0_i64 = arith.constant 0 : i64
  %cst = arith.constant dense<1.000000e-02> : tensor<64x64xf32>
  %cst_0 = arith.constant dense<1.000000e-02> : tensor<64x64xf32>
  %cst_1 = arith.constant 0.000000e+00 : f32
  %cst_2 = arith.constant 0xFF800000 : f32
  %0 = tensor.empty() : tensor<64x64xf32>
  %1 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel"]} ins(%cst_0 : tensor<64x64xf32>) outs(%0 : tensor<64x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<64x64xf32>
  %2 = tensor.empty() : tensor<1x32x64xf32>
  %3 = linalg.generic {indexing_maps = [#map2, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0 : tensor<1x32x64xf32>) outs(%2 : tensor<1x32x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x32x64xf32>
  %4 = tensor.empty() : tensor<1x64x64xf32>
  %5 = linalg.generic {indexing_maps = [#map4, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%1 : tensor<64x64xf32>) outs(%4 : tensor<1x64x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x64x64xf32>
  %6 = linalg.fill ins(%cst_1 : f32) outs(%2 : tensor<1x32x64xf32>) -> tensor<1x32x64xf32>
  %7 = linalg.batch_matmul ins(%3, %5 : tensor<1x32x64xf32>, tensor<1x64x64xf32>) outs(%6 : tensor<1x32x64xf32>) -> tensor<1x32x64xf32>
  %8 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel"]} ins(%cst : tensor<64x64xf32>) outs(%0 : tensor<64x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<64x64xf32>
  %9 = linalg.generic {indexing_maps = [#map4, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%8 : tensor<64x64xf32>) outs(%4 : tensor<1x64x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x64x64xf32>
  %10 = linalg.batch_matmul ins(%3, %9 : tensor<1x32x64xf32>, tensor<1x64x64xf32>) outs(%6 : tensor<1x32x64xf32>) -> tensor<1x32x64xf32>
  %11 = tensor.empty() : tensor<1x64x32xf32>
  %12 = linalg.generic {indexing_maps = [#map3, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%10 : tensor<1x32x64xf32>) outs(%11 : tensor<1x64x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x64x32xf32>
  %13 = tensor.empty() : tensor<1x32x32xf32>
  %14 = linalg.fill ins(%cst_1 : f32) outs(%13 : tensor<1x32x32xf32>) -> tensor<1x32x32xf32>
  %15 = linalg.batch_matmul ins(%7, %12 : tensor<1x32x64xf32>, tensor<1x64x32xf32>) outs(%14 : tensor<1x32x32xf32>) -> tensor<1x32x32xf32>
  %16 = tensor.empty() : tensor<1x32x1xi64>
  %17 = linalg.fill ins(%c0_i64 : i64) outs(%16 : tensor<1x32x1xi64>) -> tensor<1x32x1xi64>
  %18 = tensor.empty() : tensor<1x32x1xf32>
  %19 = linalg.fill ins(%cst_2 : f32) outs(%18 : tensor<1x32x1xf32>) -> tensor<1x32x1xf32>
  %20:2 = linalg.generic {indexing_maps = [#map3, #map6, #map6], iterator_types = ["parallel", "parallel", "reduction"]} ins(%15 : tensor<1x32x32xf32>) outs(%19, %17 : tensor<1x32x1xf32>, tensor<1x32x1xi64>) {
  ^bb0(%in: f32, %out: f32, %out_3: i64):
    %26 = linalg.index 2 : index
    %27 = arith.index_cast %26 : index to i64
    %28 = arith.maximumf %in, %out : f32
    %29 = arith.cmpf ogt, %in, %out : f32
    %30 = arith.select %29, %27, %out_3 : i64
    linalg.yield %28, %30 : f32, i64
  } -> (tensor<1x32x1xf32>, tensor<1x32x1xi64>)
  %21 = linalg.generic {indexing_maps = [#map2, #map7, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%15, %20#0 : tensor<1x32x32xf32>, tensor<1x32x1xf32>) outs(%13 : tensor<1x32x32xf32>) {
  ^bb0(%in: f32, %in_3: f32, %out: f32):
    %26 = arith.subf %in, %in_3 : f32
    linalg.yield %26 : f32
  } -> tensor<1x32x32xf32>
  %22 = linalg.generic {indexing_maps = [#map2, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%21 : tensor<1x32x32xf32>) outs(%13 : tensor<1x32x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %26 = math.exp %in : f32
    linalg.yield %26 : f32
  } -> tensor<1x32x32xf32>
  %23 = linalg.fill ins(%cst_1 : f32) outs(%18 : tensor<1x32x1xf32>) -> tensor<1x32x1xf32>
  %24 = linalg.generic {indexing_maps = [#map3, #map6], iterator_types = ["parallel", "parallel", "reduction"]} ins(%22 : tensor<1x32x32xf32>) outs(%23 : tensor<1x32x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %26 = arith.addf %in, %out : f32
    linalg.yield %26 : f32
  } -> tensor<1x32x1xf32>
  %25 = linalg.generic {indexing_maps = [#map2, #map7, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%22, %24 : tensor<1x32x32xf32>, tensor<1x32x1xf32>) outs(%13 : tensor<1x32x32xf32>) {
  ^bb0(%in: f32, %in_3: f32, %out: f32):
    %26 = arith.divf %in, %in_3 : f32
    linalg.yield %26 : f32
  } -> tensor<1x32x32xf32>
  return %25 : tensor<1x32x32xf32>
}

// REMARK: nearmiss-torchmlir-minimal-attention-no-pv.mlir:37:8: remark: cp-raise-attention: not raised: P is not a softmax (linalg.softmax, a division by the row sum, or tosa.mul by a reciprocal)
// IR-NOT: cp.attention
