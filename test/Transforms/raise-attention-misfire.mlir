// Misfire detection: a function named in require-in must contain
// attention the pass raises; when it does not, the pass fails and says what
// it searched for and which candidate came nearest, so a front end whose
// attention no longer matches is never silently left unparallelized.
// RUN: cp-opt %s --cp-raise-attention="grid-size=4 require-in=plain_matmul,sdpa" -verify-diagnostics
// RUN: not cp-opt %s --cp-raise-attention="grid-size=4 require-in=nope" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// Without require-in the same module raises @sdpa and leaves @plain_matmul.
// RUN: cp-opt %s --cp-raise-attention=grid-size=4 | FileCheck %s

// UNKNOWN: error: cp-raise-attention: require-in names @nope, which is not a function of this module

// CHECK-LABEL: func @plain_matmul
// CHECK-NOT: cp.attention
// CHECK-LABEL: func @sdpa
// CHECK: cp.attention

// A function that was expected to hold attention but holds a plain matmul:
// the pass says what it searched for and what came nearest.
// expected-error @+1 {{cp-raise-attention: found no attention to raise in @plain_matmul; searched for softmax(scale * Q K^T, masked) V written with linalg}}
func.func @plain_matmul(%a: tensor<16x8xf32>, %b: tensor<8x16xf32>, %c: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
  %s = linalg.matmul ins(%a, %b : tensor<16x8xf32>, tensor<8x16xf32>) outs(%z : tensor<16x16xf32>) -> tensor<16x16xf32>
  // expected-note @+1 {{nearest candidate: P is not a softmax (linalg.softmax, a division by the row sum, or tosa.mul by a reciprocal)}}
  %p = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<16x16xf32>) outs(%e : tensor<16x16xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = math.exp %x : f32
    linalg.yield %r : f32
  } -> tensor<16x16xf32>
  %o = linalg.matmul ins(%p, %c : tensor<16x16xf32>, tensor<16x16xf32>) outs(%z : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %o : tensor<16x16xf32>
}

// Raised: satisfies require-in.
func.func @sdpa(%q: tensor<16x8xf32>, %k: tensor<16x8xf32>, %v: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<16x16xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<16x16xf32>) -> tensor<16x16xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%q, %k : tensor<16x8xf32>, tensor<16x8xf32>) outs(%s0 : tensor<16x16xf32>) -> tensor<16x16xf32>
  %p = linalg.softmax dimension(1) ins(%s : tensor<16x16xf32>) outs(%e0 : tensor<16x16xf32>) -> tensor<16x16xf32>
  %eo = tensor.empty() : tensor<16x8xf32>
  %o0 = linalg.fill ins(%zero : f32) outs(%eo : tensor<16x8xf32>) -> tensor<16x8xf32>
  %o = linalg.matmul ins(%p, %v : tensor<16x16xf32>, tensor<16x8xf32>) outs(%o0 : tensor<16x8xf32>) -> tensor<16x8xf32>
  return %o : tensor<16x8xf32>
}
