// Source: unidentified public GitHub repository (a lit test whose RUN line is `tpuc-test %s --codegen-decompose-linalg-generic ...`, a TPU codegen project consuming torch-mlir output; the IR carries torch-mlir locations loc("/workspace/torch-mlir/examples/attention.py":38..57) and aten::matmul/aten::softmax/aten::div names). The code index returned the text (18733 chars) but not the repo/path.
// Form: (a)+(b): full single-layer BERT-style MHA emitted by torch-mlir (TorchToLinalg, 2023): Q/K/V projections as batch_matmul with broadcast generics + bias add; expand_shape [1,384,768]->[1,384,12,64]; head transpose generic (d0,d2,d1,d3); K^T via transpose generic (d0,d1,d3,d2); identity "broadcast" generics (0,d1,d2,d3)->(d0,..) before each matmul; collapse_shape 4-D->3-D [12,384,64] and batch_matmul, expand_shape 3-D->4-D; scale as DIV by a tensor<f64> constant 8.0 with arith.truncf f64->f32 inside the generic; keepdim softmax with the 2-result max+argmax reduction generic (maps (d0,d1,d2,0)), sub/exp/sum/div generics whose first operand map is (0,d1,d2,d3); P*V again via collapse/batch_matmul/expand; output transpose + collapse [1,384,768] + out-projection + bias + final `+ 1` (i64 tensor sitofp).
// Adapted: extracted @forward; stripped all loc(...) annotations and #loc aliases; removed the ml_program.global; replaced the 8 elided weight/bias constants `dense_resource<__elided__>` with splat `dense<...>` values (weights 1.0e-02, biases 0.0); `arith.maxf` -> `arith.maximumf`; added `output_shape [...]` to the 5 tensor.expand_shape ops (required since MLIR 19). Op order, maps and types otherwise verbatim.
// RUN: cp-opt %s --cp-raise-attention="grid-size=1 report-near-misses=true" -o %t 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s --check-prefix=IR < %t
// RUN: FileCheck %s --check-prefix=LEFT < %t
// Status: raised after normalization (the projections stay): batch_matmuls lifted over the collapses, torch's identity and broadcast copy generics read through, (0, d1, ..) maps on the batch of one read at the loop, keepdim max and sum, argmax dropped, divf by truncf(8.0) as the scale; the remaining remark is the nearest miss among the projections.
#map = affine_map<(d0, d1, d2) -> (0, d1, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map2 = affine_map<(d0, d1, d2) -> (d1, d2)>
#map3 = affine_map<(d0, d1, d2) -> (0, 0, d2)>
#map4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map5 = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>
#map6 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>
#map7 = affine_map<(d0, d1, d2, d3) -> (0, d1, d2, d3)>
#map8 = affine_map<(d0, d1, d2, d3) -> ()>
#map9 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#map10 = affine_map<(d0, d1, d2, d3) -> (0, d1, d2, 0)>
#map11 = affine_map<(d0, d1, d2) -> ()>
func.func @forward(%arg0: tensor<1x384x768xf32>) -> tensor<1x384x768xf32> {
  %cst = arith.constant dense<1> : tensor<i64>
  %cst_0 = arith.constant dense<0.000000e+00> : tensor<1x1x768xf32>
  %cst_1 = arith.constant dense<1.000000e-02> : tensor<768x768xf32>
  %cst_2 = arith.constant dense<0.000000e+00> : tensor<1x1x768xf32>
  %cst_3 = arith.constant dense<1.000000e-02> : tensor<768x768xf32>
  %cst_4 = arith.constant dense<8.000000e+00> : tensor<f64>
  %cst_5 = arith.constant dense<0.000000e+00> : tensor<1x1x768xf32>
  %cst_6 = arith.constant dense<1.000000e-02> : tensor<768x768xf32>
  %cst_7 = arith.constant dense<0.000000e+00> : tensor<1x1x768xf32>
  %cst_8 = arith.constant dense<1.000000e-02> : tensor<768x768xf32>
  %c0_i64 = arith.constant 0 : i64
  %cst_9 = arith.constant 0.000000e+00 : f32
  %cst_10 = arith.constant 0xFF800000 : f32
  %0 = tensor.empty() : tensor<1x384x768xf32>
  %1 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0 : tensor<1x384x768xf32>) outs(%0 : tensor<1x384x768xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x384x768xf32>
  %2 = tensor.empty() : tensor<1x768x768xf32>
  %3 = linalg.generic {indexing_maps = [#map2, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%cst_8 : tensor<768x768xf32>) outs(%2 : tensor<1x768x768xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x768x768xf32>
  %4 = linalg.fill ins(%cst_9 : f32) outs(%0 : tensor<1x384x768xf32>) -> tensor<1x384x768xf32>
  %5 = linalg.batch_matmul ins(%1, %3 : tensor<1x384x768xf32>, tensor<1x768x768xf32>) outs(%4 : tensor<1x384x768xf32>) -> tensor<1x384x768xf32>
  %6 = linalg.generic {indexing_maps = [#map, #map3, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%5, %cst_7 : tensor<1x384x768xf32>, tensor<1x1x768xf32>) outs(%0 : tensor<1x384x768xf32>) {
  ^bb0(%in: f32, %in_19: f32, %out: f32):
    %48 = arith.addf %in, %in_19 : f32
    linalg.yield %48 : f32
  } -> tensor<1x384x768xf32>
  %expanded = tensor.expand_shape %6 [[0], [1], [2, 3]] output_shape [1, 384, 12, 64] : tensor<1x384x768xf32> into tensor<1x384x12x64xf32>
  %7 = tensor.empty() : tensor<1x12x384x64xf32>
  %8 = linalg.generic {indexing_maps = [#map4, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded : tensor<1x384x12x64xf32>) outs(%7 : tensor<1x12x384x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x12x384x64xf32>
  %9 = linalg.generic {indexing_maps = [#map2, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%cst_6 : tensor<768x768xf32>) outs(%2 : tensor<1x768x768xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x768x768xf32>
  %10 = linalg.batch_matmul ins(%1, %9 : tensor<1x384x768xf32>, tensor<1x768x768xf32>) outs(%4 : tensor<1x384x768xf32>) -> tensor<1x384x768xf32>
  %11 = linalg.generic {indexing_maps = [#map, #map3, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%10, %cst_5 : tensor<1x384x768xf32>, tensor<1x1x768xf32>) outs(%0 : tensor<1x384x768xf32>) {
  ^bb0(%in: f32, %in_19: f32, %out: f32):
    %48 = arith.addf %in, %in_19 : f32
    linalg.yield %48 : f32
  } -> tensor<1x384x768xf32>
  %expanded_11 = tensor.expand_shape %11 [[0], [1], [2, 3]] output_shape [1, 384, 12, 64] : tensor<1x384x768xf32> into tensor<1x384x12x64xf32>
  %12 = linalg.generic {indexing_maps = [#map4, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_11 : tensor<1x384x12x64xf32>) outs(%7 : tensor<1x12x384x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x12x384x64xf32>
  %13 = tensor.empty() : tensor<1x12x64x384xf32>
  %14 = linalg.generic {indexing_maps = [#map4, #map6], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%12 : tensor<1x12x384x64xf32>) outs(%13 : tensor<1x12x64x384xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x12x64x384xf32>
  %15 = linalg.generic {indexing_maps = [#map7, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%8 : tensor<1x12x384x64xf32>) outs(%7 : tensor<1x12x384x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x12x384x64xf32>
  %16 = linalg.generic {indexing_maps = [#map7, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%14 : tensor<1x12x64x384xf32>) outs(%13 : tensor<1x12x64x384xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x12x64x384xf32>
  %collapsed = tensor.collapse_shape %15 [[0, 1], [2], [3]] : tensor<1x12x384x64xf32> into tensor<12x384x64xf32>
  %collapsed_12 = tensor.collapse_shape %16 [[0, 1], [2], [3]] : tensor<1x12x64x384xf32> into tensor<12x64x384xf32>
  %17 = tensor.empty() : tensor<12x384x384xf32>
  %18 = linalg.fill ins(%cst_9 : f32) outs(%17 : tensor<12x384x384xf32>) -> tensor<12x384x384xf32>
  %19 = linalg.batch_matmul ins(%collapsed, %collapsed_12 : tensor<12x384x64xf32>, tensor<12x64x384xf32>) outs(%18 : tensor<12x384x384xf32>) -> tensor<12x384x384xf32>
  %expanded_13 = tensor.expand_shape %19 [[0, 1], [2], [3]] output_shape [1, 12, 384, 384] : tensor<12x384x384xf32> into tensor<1x12x384x384xf32>
  %20 = tensor.empty() : tensor<1x12x384x384xf32>
  %21 = linalg.generic {indexing_maps = [#map7, #map8, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_13, %cst_4 : tensor<1x12x384x384xf32>, tensor<f64>) outs(%20 : tensor<1x12x384x384xf32>) {
  ^bb0(%in: f32, %in_19: f64, %out: f32):
    %48 = arith.truncf %in_19 : f64 to f32
    %49 = arith.divf %in, %48 : f32
    linalg.yield %49 : f32
  } -> tensor<1x12x384x384xf32>
  %22 = tensor.empty() : tensor<1x12x384x1xi64>
  %23 = linalg.fill ins(%c0_i64 : i64) outs(%22 : tensor<1x12x384x1xi64>) -> tensor<1x12x384x1xi64>
  %24 = tensor.empty() : tensor<1x12x384x1xf32>
  %25 = linalg.fill ins(%cst_10 : f32) outs(%24 : tensor<1x12x384x1xf32>) -> tensor<1x12x384x1xf32>
  %26:2 = linalg.generic {indexing_maps = [#map4, #map9, #map9], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%21 : tensor<1x12x384x384xf32>) outs(%25, %23 : tensor<1x12x384x1xf32>, tensor<1x12x384x1xi64>) {
  ^bb0(%in: f32, %out: f32, %out_19: i64):
    %48 = linalg.index 3 : index
    %49 = arith.index_cast %48 : index to i64
    %50 = arith.maximumf %in, %out : f32
    %51 = arith.cmpf ogt, %in, %out : f32
    %52 = arith.select %51, %49, %out_19 : i64
    linalg.yield %50, %52 : f32, i64
  } -> (tensor<1x12x384x1xf32>, tensor<1x12x384x1xi64>)
  %27 = linalg.generic {indexing_maps = [#map7, #map10, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%21, %26#0 : tensor<1x12x384x384xf32>, tensor<1x12x384x1xf32>) outs(%20 : tensor<1x12x384x384xf32>) {
  ^bb0(%in: f32, %in_19: f32, %out: f32):
    %48 = arith.subf %in, %in_19 : f32
    linalg.yield %48 : f32
  } -> tensor<1x12x384x384xf32>
  %28 = linalg.generic {indexing_maps = [#map7, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%27 : tensor<1x12x384x384xf32>) outs(%20 : tensor<1x12x384x384xf32>) {
  ^bb0(%in: f32, %out: f32):
    %48 = math.exp %in : f32
    linalg.yield %48 : f32
  } -> tensor<1x12x384x384xf32>
  %29 = linalg.fill ins(%cst_9 : f32) outs(%24 : tensor<1x12x384x1xf32>) -> tensor<1x12x384x1xf32>
  %30 = linalg.generic {indexing_maps = [#map4, #map9], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%28 : tensor<1x12x384x384xf32>) outs(%29 : tensor<1x12x384x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %48 = arith.addf %in, %out : f32
    linalg.yield %48 : f32
  } -> tensor<1x12x384x1xf32>
  %31 = linalg.generic {indexing_maps = [#map7, #map10, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%28, %30 : tensor<1x12x384x384xf32>, tensor<1x12x384x1xf32>) outs(%20 : tensor<1x12x384x384xf32>) {
  ^bb0(%in: f32, %in_19: f32, %out: f32):
    %48 = arith.divf %in, %in_19 : f32
    linalg.yield %48 : f32
  } -> tensor<1x12x384x384xf32>
  %32 = linalg.generic {indexing_maps = [#map2, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%cst_3 : tensor<768x768xf32>) outs(%2 : tensor<1x768x768xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x768x768xf32>
  %33 = linalg.batch_matmul ins(%1, %32 : tensor<1x384x768xf32>, tensor<1x768x768xf32>) outs(%4 : tensor<1x384x768xf32>) -> tensor<1x384x768xf32>
  %34 = linalg.generic {indexing_maps = [#map, #map3, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%33, %cst_2 : tensor<1x384x768xf32>, tensor<1x1x768xf32>) outs(%0 : tensor<1x384x768xf32>) {
  ^bb0(%in: f32, %in_19: f32, %out: f32):
    %48 = arith.addf %in, %in_19 : f32
    linalg.yield %48 : f32
  } -> tensor<1x384x768xf32>
  %expanded_14 = tensor.expand_shape %34 [[0], [1], [2, 3]] output_shape [1, 384, 12, 64] : tensor<1x384x768xf32> into tensor<1x384x12x64xf32>
  %35 = linalg.generic {indexing_maps = [#map4, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_14 : tensor<1x384x12x64xf32>) outs(%7 : tensor<1x12x384x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x12x384x64xf32>
  %36 = linalg.generic {indexing_maps = [#map7, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%31 : tensor<1x12x384x384xf32>) outs(%20 : tensor<1x12x384x384xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x12x384x384xf32>
  %37 = linalg.generic {indexing_maps = [#map7, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%35 : tensor<1x12x384x64xf32>) outs(%7 : tensor<1x12x384x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x12x384x64xf32>
  %collapsed_15 = tensor.collapse_shape %36 [[0, 1], [2], [3]] : tensor<1x12x384x384xf32> into tensor<12x384x384xf32>
  %collapsed_16 = tensor.collapse_shape %37 [[0, 1], [2], [3]] : tensor<1x12x384x64xf32> into tensor<12x384x64xf32>
  %38 = tensor.empty() : tensor<12x384x64xf32>
  %39 = linalg.fill ins(%cst_9 : f32) outs(%38 : tensor<12x384x64xf32>) -> tensor<12x384x64xf32>
  %40 = linalg.batch_matmul ins(%collapsed_15, %collapsed_16 : tensor<12x384x384xf32>, tensor<12x384x64xf32>) outs(%39 : tensor<12x384x64xf32>) -> tensor<12x384x64xf32>
  %expanded_17 = tensor.expand_shape %40 [[0, 1], [2], [3]] output_shape [1, 12, 384, 64] : tensor<12x384x64xf32> into tensor<1x12x384x64xf32>
  %41 = tensor.empty() : tensor<1x384x12x64xf32>
  %42 = linalg.generic {indexing_maps = [#map4, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_17 : tensor<1x12x384x64xf32>) outs(%41 : tensor<1x384x12x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x384x12x64xf32>
  %collapsed_18 = tensor.collapse_shape %42 [[0], [1], [2, 3]] : tensor<1x384x12x64xf32> into tensor<1x384x768xf32>
  %43 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%collapsed_18 : tensor<1x384x768xf32>) outs(%0 : tensor<1x384x768xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x384x768xf32>
  %44 = linalg.generic {indexing_maps = [#map2, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%cst_1 : tensor<768x768xf32>) outs(%2 : tensor<1x768x768xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x768x768xf32>
  %45 = linalg.batch_matmul ins(%43, %44 : tensor<1x384x768xf32>, tensor<1x768x768xf32>) outs(%4 : tensor<1x384x768xf32>) -> tensor<1x384x768xf32>
  %46 = linalg.generic {indexing_maps = [#map, #map3, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%45, %cst_0 : tensor<1x384x768xf32>, tensor<1x1x768xf32>) outs(%0 : tensor<1x384x768xf32>) {
  ^bb0(%in: f32, %in_19: f32, %out: f32):
    %48 = arith.addf %in, %in_19 : f32
    linalg.yield %48 : f32
  } -> tensor<1x384x768xf32>
  %47 = linalg.generic {__linalg_tiling__ = array<i64: 0, 64, 32>, indexing_maps = [#map, #map11, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%46, %cst : tensor<1x384x768xf32>, tensor<i64>) outs(%0 : tensor<1x384x768xf32>) {
  ^bb0(%in: f32, %in_19: i64, %out: f32):
    %48 = arith.sitofp %in_19 : i64 to f32
    %49 = arith.addf %in, %48 : f32
    linalg.yield %49 : f32
  } -> tensor<1x384x768xf32>
  return %47 : tensor<1x384x768xf32>
}

// REMARK: torchmlir-bert-mha-keepdim-argmax-4d.mlir:159:9: remark: cp-raise-attention: raised linalg, 4-D scores, normalized: filled input x10, unit batch read at 0 x13, identity copy x2, batch matmul over reshapes x2, broadcast or transpose copy x4, keepdim statistic x3, unit-dim reshape read through x4, unused generic result x1
// REMARK: torchmlir-bert-mha-keepdim-argmax-4d.mlir:166:19: remark: cp-raise-attention: not raised: P is not a softmax (linalg.softmax, a division by the row sum, or tosa.mul by a reciprocal)
// IR: cp.attention %{{.*}}, %{{.*}}, %{{.*}} on @cp grid_axes = [0] scale = 1.250000e-01
// IR-NOT: cp.attention
// LEFT-NOT: {{math.exp|tosa.exp|arith.maximumf|tosa.reduce_max|linalg.softmax}}
