// Attention with sinks as gpt-oss's PyTorch reference writes it
// (`QK = cat([QK, S], -1); W = softmax(QK, -1)[..., :-1]; W @ V`, the sinks
// S [H] reshaped to [H, 1, 1] and expanded along the query rows), in the
// linalg torch-mlir's TorchToLinalg gives it: batch_matmul with a
// linalg.transpose'd K, the scale and a causal mask from linalg.index in
// generics (the mask selects -inf where j > i, as triu(-inf) comes out; it
// is raised to mask = causal), tensor.expand_shape + a broadcasting generic for the sink
// column, tensor.concat along the key dim, max / sub+exp / sum / div
// generics, tensor.extract_slice dropping the sink's column, batch_matmul
// with V. H = 4, S = 64, D = 16, f32.
// RUN: cp-opt %s --cp-raise-attention="grid-size=4 require-in=sdpa" | FileCheck %s
// CHECK-LABEL: func @sdpa
// CHECK-SAME: (%[[Q:.*]]: tensor<4x64x16xf32>, %[[K:.*]]: tensor<4x64x16xf32>, %[[V:.*]]: tensor<4x64x16xf32>, %[[S:.*]]: tensor<4xf32>)
// CHECK: %[[COLUMN:.*]] = linalg.generic
// CHECK: %[[SINKS:.*]] = tensor.extract_slice %[[COLUMN]][0, 0, 0] [4, 1, 1] [1, 1, 1] : tensor<4x64x1xf32> to tensor<4xf32>
// CHECK: cp.attention {{.*}} sinks(%[[SINKS]] : tensor<4xf32>) on @cp grid_axes = [0] mask = causal scale = 2.500000e-01
// CHECK-NOT: score_mod
// CHECK-NOT: tensor.concat
// CHECK-NOT: linalg.batch_matmul
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row3 = affine_map<(d0, d1, d2) -> (d0, d1)>
#bcast = affine_map<(d0, d1, d2) -> (d0, 0, d2)>
func.func @sdpa(%q: tensor<4x64x16xf32>, %k: tensor<4x64x16xf32>, %v: tensor<4x64x16xf32>, %sinks: tensor<4xf32>) -> tensor<4x64x16xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %scale = arith.constant 2.500000e-01 : f32
  %et = tensor.empty() : tensor<4x16x64xf32>
  %kt = linalg.transpose ins(%k : tensor<4x64x16xf32>) outs(%et : tensor<4x16x64xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<4x64x64xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
  %qk = linalg.batch_matmul ins(%q, %kt : tensor<4x64x16xf32>, tensor<4x16x64xf32>) outs(%zs : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
  %masked = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%qk : tensor<4x64x64xf32>) outs(%es : tensor<4x64x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.mulf %in, %scale : f32
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %later = arith.cmpi ugt, %j, %i : index
    %m = arith.select %later, %ninf, %s : f32
    linalg.yield %m : f32
  } -> tensor<4x64x64xf32>
  %s3 = tensor.expand_shape %sinks [[0, 1, 2]] output_shape [4, 1, 1] : tensor<4xf32> into tensor<4x1x1xf32>
  %ec = tensor.empty() : tensor<4x64x1xf32>
  %column = linalg.generic {indexing_maps = [#bcast, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s3 : tensor<4x1x1xf32>) outs(%ec : tensor<4x64x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<4x64x1xf32>
  %cat = tensor.concat dim(2) %masked, %column : (tensor<4x64x64xf32>, tensor<4x64x1xf32>) -> tensor<4x64x65xf32>
  %er = tensor.empty() : tensor<4x64xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%er : tensor<4x64xf32>) -> tensor<4x64xf32>
  %max = linalg.generic {indexing_maps = [#id3, #row3], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%cat : tensor<4x64x65xf32>) outs(%m0 : tensor<4x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<4x64xf32>
  %ew = tensor.empty() : tensor<4x64x65xf32>
  %e = linalg.generic {indexing_maps = [#id3, #row3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%cat, %max : tensor<4x64x65xf32>, tensor<4x64xf32>) outs(%ew : tensor<4x64x65xf32>) {
  ^bb0(%in: f32, %mx: f32, %out: f32):
    %d = arith.subf %in, %mx : f32
    %x = math.exp %d : f32
    linalg.yield %x : f32
  } -> tensor<4x64x65xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%er : tensor<4x64xf32>) -> tensor<4x64xf32>
  %sum = linalg.generic {indexing_maps = [#id3, #row3], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%e : tensor<4x64x65xf32>) outs(%s0 : tensor<4x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<4x64xf32>
  %w = linalg.generic {indexing_maps = [#id3, #row3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%e, %sum : tensor<4x64x65xf32>, tensor<4x64xf32>) outs(%ew : tensor<4x64x65xf32>) {
  ^bb0(%in: f32, %sm: f32, %out: f32):
    %r = arith.divf %in, %sm : f32
    linalg.yield %r : f32
  } -> tensor<4x64x65xf32>
  %p = tensor.extract_slice %w[0, 0, 0] [4, 64, 64] [1, 1, 1] : tensor<4x64x65xf32> to tensor<4x64x64xf32>
  %eo = tensor.empty() : tensor<4x64x16xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x64x16xf32>) -> tensor<4x64x16xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<4x64x64xf32>, tensor<4x64x16xf32>) outs(%zo : tensor<4x64x16xf32>) -> tensor<4x64x16xf32>
  return %o : tensor<4x64x16xf32>
}
