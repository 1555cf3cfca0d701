// Sink-like code cp-raise-attention must leave alone, one function each:
// what the softmax normalizes is the scores with extra columns, but not
// one sink logit per head. With report-near-misses each says why.
// RUN: cp-opt %s --cp-raise-attention="grid-size=4 report-near-misses" -verify-diagnostics -o /dev/null
// RUN: cp-opt %s --cp-raise-attention=grid-size=4 | FileCheck %s
// CHECK-NOT: cp.attention

// A column that differs from row to row is a per-row logit, not a sink.
func.func @per_row_column(%q: tensor<4x64x16xf32>, %kt: tensor<4x16x64xf32>, %v: tensor<4x64x16xf32>, %c: tensor<4x64x1xf32>) -> tensor<4x64x16xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %es = tensor.empty() : tensor<4x64x64xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
  %qk = linalg.batch_matmul ins(%q, %kt : tensor<4x64x16xf32>, tensor<4x16x64xf32>) outs(%zs : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
  // expected-remark @+1 {{cp-raise-attention: not raised: the sink column concatenated onto the scores is not one value per head broadcast along the query rows (cp.attention's sinks are one logit per head)}}
  %cat = tensor.concat dim(2) %qk, %c : (tensor<4x64x64xf32>, tensor<4x64x1xf32>) -> tensor<4x64x65xf32>
  %ew = tensor.empty() : tensor<4x64x65xf32>
  %w = linalg.softmax dimension(2) ins(%cat : tensor<4x64x65xf32>) outs(%ew : tensor<4x64x65xf32>) -> tensor<4x64x65xf32>
  %p = tensor.extract_slice %w[0, 0, 0] [4, 64, 64] [1, 1, 1] : tensor<4x64x65xf32> to tensor<4x64x64xf32>
  %eo = tensor.empty() : tensor<4x64x16xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x64x16xf32>) -> tensor<4x64x16xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<4x64x64xf32>, tensor<4x64x16xf32>) outs(%zo : tensor<4x64x16xf32>) -> tensor<4x64x16xf32>
  return %o : tensor<4x64x16xf32>
}

// The softmax's last column is dropped, but it was not concatenated on.
func.func @no_concat(%q: tensor<4x64x16xf32>, %kt: tensor<4x16x65xf32>, %v: tensor<4x64x16xf32>) -> tensor<4x64x16xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %es = tensor.empty() : tensor<4x64x65xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<4x64x65xf32>) -> tensor<4x64x65xf32>
  // expected-remark @+1 {{cp-raise-attention: not raised: the contraction drops the softmax's last column, but the softmax does not normalize the scores concatenated with a sink column (tensor.concat or tosa.concat along the key dim)}}
  %qk = linalg.batch_matmul ins(%q, %kt : tensor<4x64x16xf32>, tensor<4x16x65xf32>) outs(%zs : tensor<4x64x65xf32>) -> tensor<4x64x65xf32>
  %w = linalg.softmax dimension(2) ins(%qk : tensor<4x64x65xf32>) outs(%es : tensor<4x64x65xf32>) -> tensor<4x64x65xf32>
  %p = tensor.extract_slice %w[0, 0, 0] [4, 64, 64] [1, 1, 1] : tensor<4x64x65xf32> to tensor<4x64x64xf32>
  %eo = tensor.empty() : tensor<4x64x16xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x64x16xf32>) -> tensor<4x64x16xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<4x64x64xf32>, tensor<4x64x16xf32>) outs(%zo : tensor<4x64x16xf32>) -> tensor<4x64x16xf32>
  return %o : tensor<4x64x16xf32>
}
