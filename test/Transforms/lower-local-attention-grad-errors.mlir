// cp-lower-local-attention checks the outlined score_mod of a
// cp.buffer.local_attention_grad before it differentiates it (buffer passes
// may have rewritten the function since the tensor op's verifier ran).
// The outlined score_mod is checked again before it is differentiated.
// RUN: cp-opt %s -cp-lower-local-attention -verify-diagnostics
func.func private @erf(%x: f32, %b: index, %h: index, %qi: index, %ki: index) -> f32 {
  // expected-note @+1 {{the op without a derivative}}
  %y = math.erf %x : f32
  return %y : f32
}
func.func @erf_score(%q: memref<1x2x40x16xf32>, %k: memref<1x2x40x16xf32>,
                     %v: memref<1x2x40x16xf32>, %o: memref<1x2x40x16xf32>,
                     %lse: memref<1x2x40xf32>, %do: memref<1x2x40x16xf32>,
                     %dq: memref<1x2x40x16xf32>, %dk: memref<1x2x40x16xf32>,
                     %dv: memref<1x2x40x16xf32>) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{score_mod cannot be differentiated: 'math.erf' depends on the score}}
  cp.buffer.local_attention_grad %q, %k, %v, %o, %lse, %do offsets(%c0, %c0)
      into %dq, %dk, %dv score_mod = @erf
      : memref<1x2x40x16xf32>, memref<1x2x40x16xf32>, memref<1x2x40x16xf32>,
        memref<1x2x40x16xf32>, memref<1x2x40xf32>, memref<1x2x40x16xf32>
      into memref<1x2x40x16xf32>, memref<1x2x40x16xf32>, memref<1x2x40x16xf32>
  return
}
