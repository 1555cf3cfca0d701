// cp.local_attention_grad and cp.buffer.local_attention_grad: round trip,
// the verifier rules with their numbers (the forward's, then dO, lse and
// the gradients), a score_mod that cannot be differentiated, and
// bufferization (the regions become private functions, as for the
// forward).
// RUN: cp-opt %s -split-input-file -verify-diagnostics | FileCheck %s --check-prefix=ROUNDTRIP
// RUN: cp-opt %s -split-input-file -verify-diagnostics -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" | FileCheck %s --check-prefix=BUFFER

// GQA (8 query heads, 2 KV heads) and MLA (Dv = 24 != D = 32); a causal
// block at offsets; f32 gradients of bf16 operands.
// ROUNDTRIP-LABEL: func @gqa_mla
// ROUNDTRIP: %{{.*}}, %{{.*}}, %{{.*}} = cp.local_attention_grad %arg0, %arg1, %arg2, %arg3, %arg4, %arg5 offsets(%{{.*}}, %{{.*}}) mask = causal : tensor<1x8x64x32xbf16>, tensor<1x2x128x32xbf16>, tensor<1x2x128x24xbf16>, tensor<1x8x64x24xbf16>, tensor<1x8x64xf32>, tensor<1x8x64x24xbf16> -> tensor<1x8x64x32xf32>, tensor<1x2x128x32xf32>, tensor<1x2x128x24xf32>
// BUFFER-LABEL: func @gqa_mla
// BUFFER-DAG: %[[DQ:.*]] = memref.alloc() {{.*}} : memref<1x8x64x32xf32>
// BUFFER-DAG: %[[DK:.*]] = memref.alloc() {{.*}} : memref<1x2x128x32xf32>
// BUFFER-DAG: %[[DV:.*]] = memref.alloc() {{.*}} : memref<1x2x128x24xf32>
// BUFFER: cp.buffer.local_attention_grad %{{.*}} into %[[DQ]], %[[DK]], %[[DV]] mask = causal
func.func @gqa_mla(%q: tensor<1x8x64x32xbf16>, %k: tensor<1x2x128x32xbf16>,
                   %v: tensor<1x2x128x24xbf16>, %o: tensor<1x8x64x24xbf16>,
                   %lse: tensor<1x8x64xf32>, %do: tensor<1x8x64x24xbf16>)
    -> (tensor<1x8x64x32xf32>, tensor<1x2x128x32xf32>, tensor<1x2x128x24xf32>) {
  %qo = arith.constant 64 : index
  %c0 = arith.constant 0 : index
  %dq, %dk, %dv = cp.local_attention_grad %q, %k, %v, %o, %lse, %do
      offsets(%qo, %c0) mask = causal
      : tensor<1x8x64x32xbf16>, tensor<1x2x128x32xbf16>,
        tensor<1x2x128x24xbf16>, tensor<1x8x64x24xbf16>, tensor<1x8x64xf32>,
        tensor<1x8x64x24xbf16>
      -> tensor<1x8x64x32xf32>, tensor<1x2x128x32xf32>, tensor<1x2x128x24xf32>
  return %dq, %dk, %dv
      : tensor<1x8x64x32xf32>, tensor<1x2x128x32xf32>, tensor<1x2x128x24xf32>
}

// -----

// A document mask_mod and a soft-capping score_mod: both are outlined into
// private functions that the buffer op names.
// ROUNDTRIP-LABEL: func @regions
// ROUNDTRIP: cp.local_attention_grad {{.*}} mod_operands(%{{.*}} : tensor<64xi32>)
// ROUNDTRIP: mask_mod
// ROUNDTRIP: score_mod
// BUFFER: func.func private @cp_mask_mod(
// BUFFER: func.func private @cp_score_mod(
// BUFFER-LABEL: func @regions
// BUFFER: cp.buffer.local_attention_grad {{.*}} mod_operands(%{{.*}} : memref<64xi32>) into {{.*}} mask_mod = @cp_mask_mod score_mod = @cp_score_mod
func.func @regions(%q: tensor<1x2x64x16xf32>, %k: tensor<1x2x64x16xf32>,
                   %v: tensor<1x2x64x16xf32>, %o: tensor<1x2x64x16xf32>,
                   %lse: tensor<1x2x64xf32>, %do: tensor<1x2x64x16xf32>,
                   %seg: tensor<64xi32>)
    -> (tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>) {
  %c0 = arith.constant 0 : index
  %dq, %dk, %dv = cp.local_attention_grad %q, %k, %v, %o, %lse, %do
      offsets(%c0, %c0) mod_operands(%seg : tensor<64xi32>)
      mask_mod {
      ^bb0(%b: index, %h: index, %qi: index, %ki: index, %s: tensor<64xi32>):
        %a = tensor.extract %s[%qi] : tensor<64xi32>
        %c = tensor.extract %s[%ki] : tensor<64xi32>
        %same = arith.cmpi eq, %a, %c : i32
        cp.yield %same : i1
      } score_mod {
      ^bb0(%x: f32, %b: index, %h: index, %qi: index, %ki: index, %s: tensor<64xi32>):
        %cap = arith.constant 3.0e+01 : f32
        %xs = arith.divf %x, %cap : f32
        %t = math.tanh %xs : f32
        %y = arith.mulf %t, %cap : f32
        cp.yield %y : f32
      }
      : tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>,
        tensor<1x2x64x16xf32>, tensor<1x2x64xf32>, tensor<1x2x64x16xf32>
      -> tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>
  return %dq, %dk, %dv
      : tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>
}

// -----

func.func @grad_output_shape(%q: tensor<1x8x64x32xf32>, %k: tensor<1x2x64x32xf32>,
                             %v: tensor<1x2x64x32xf32>, %o: tensor<1x8x64x32xf32>,
                             %lse: tensor<1x8x64xf32>, %do: tensor<1x8x32x32xf32>, %i: index) {
  // expected-error @+1 {{expects grad_output to have the output's shape 'tensor<1x8x64x32xf32>', got 'tensor<1x8x32x32xf32>'}}
  %dq, %dk, %dv = cp.local_attention_grad %q, %k, %v, %o, %lse, %do offsets(%i, %i)
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>,
        tensor<1x8x64x32xf32>, tensor<1x8x64xf32>, tensor<1x8x32x32xf32>
      -> tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>
  return
}

// -----

func.func @lse_shape(%q: tensor<1x8x64x32xf32>, %k: tensor<1x2x64x32xf32>,
                     %v: tensor<1x2x64x32xf32>, %o: tensor<1x8x64x32xf32>,
                     %lse: tensor<1x2x64xf32>, %do: tensor<1x8x64x32xf32>, %i: index) {
  // expected-error @+1 {{expects the lse result to have shape [B, H, Lq] = [1, 8, 64], got 'tensor<1x2x64xf32>'}}
  %dq, %dk, %dv = cp.local_attention_grad %q, %k, %v, %o, %lse, %do offsets(%i, %i)
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>,
        tensor<1x8x64x32xf32>, tensor<1x2x64xf32>, tensor<1x8x64x32xf32>
      -> tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>
  return
}

// -----

// dK has Hkv heads: the group's contributions are summed, K is never
// expanded to H heads.
func.func @grad_key_expanded(%q: tensor<1x8x64x32xf32>, %k: tensor<1x2x64x32xf32>,
                             %v: tensor<1x2x64x32xf32>, %o: tensor<1x8x64x32xf32>,
                             %lse: tensor<1x8x64xf32>, %do: tensor<1x8x64x32xf32>, %i: index) {
  // expected-error @+1 {{expects grad_key to have the shape of its operand 'tensor<1x2x64x32xf32>', got 'tensor<1x8x64x32xf32>'}}
  %dq, %dk, %dv = cp.local_attention_grad %q, %k, %v, %o, %lse, %do offsets(%i, %i)
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>,
        tensor<1x8x64x32xf32>, tensor<1x8x64xf32>, tensor<1x8x64x32xf32>
      -> tensor<1x8x64x32xf32>, tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>
  return
}

// -----

func.func @grad_type(%q: tensor<1x8x64x32xf16>, %k: tensor<1x2x64x32xf16>,
                     %v: tensor<1x2x64x32xf16>, %o: tensor<1x8x64x32xf16>,
                     %lse: tensor<1x8x64xf32>, %do: tensor<1x8x64x32xf16>, %i: index) {
  // expected-error @+1 {{expects grad_value element type ('bf16') to be the query element type ('f16') or f32}}
  %dq, %dk, %dv = cp.local_attention_grad %q, %k, %v, %o, %lse, %do offsets(%i, %i)
      : tensor<1x8x64x32xf16>, tensor<1x2x64x32xf16>, tensor<1x2x64x32xf16>,
        tensor<1x8x64x32xf16>, tensor<1x8x64xf32>, tensor<1x8x64x32xf16>
      -> tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xbf16>
  return
}

// -----

// The forward's rules apply: H must be a multiple of Hkv.
func.func @forward_rules(%q: tensor<1x6x64x32xf32>, %k: tensor<1x4x64x32xf32>,
                         %v: tensor<1x4x64x32xf32>, %o: tensor<1x6x64x32xf32>,
                         %lse: tensor<1x6x64xf32>, %do: tensor<1x6x64x32xf32>, %i: index) {
  // expected-error @+1 {{expects query heads H (6) to be a multiple of key/value heads Hkv (4) for grouped-query attention}}
  %dq, %dk, %dv = cp.local_attention_grad %q, %k, %v, %o, %lse, %do offsets(%i, %i)
      : tensor<1x6x64x32xf32>, tensor<1x4x64x32xf32>, tensor<1x4x64x32xf32>,
        tensor<1x6x64x32xf32>, tensor<1x6x64xf32>, tensor<1x6x64x32xf32>
      -> tensor<1x6x64x32xf32>, tensor<1x4x64x32xf32>, tensor<1x4x64x32xf32>
  return
}

// -----

// The score flows through math.erf, which has no derivative rule. Ops that
// do not depend on the score (the ALiBi distance here) may be anything.
func.func @not_differentiable(%q: tensor<1x2x64x16xf32>, %k: tensor<1x2x64x16xf32>,
                              %v: tensor<1x2x64x16xf32>, %o: tensor<1x2x64x16xf32>,
                              %lse: tensor<1x2x64xf32>, %do: tensor<1x2x64x16xf32>, %i: index) {
  // expected-error @+1 {{score_mod cannot be differentiated: 'math.erf' depends on the score and has no derivative rule; the score may only flow through arith.addf, arith.subf, arith.mulf, arith.divf, arith.negf, arith.select, arith.maximumf, arith.minimumf, arith.cmpf, math.exp, math.tanh}}
  %dq, %dk, %dv = cp.local_attention_grad %q, %k, %v, %o, %lse, %do offsets(%i, %i)
      score_mod {
      ^bb0(%x: f32, %b: index, %h: index, %qi: index, %ki: index):
        %qq = arith.index_cast %qi : index to i64
        %kk = arith.index_cast %ki : index to i64
        %d = arith.subi %kk, %qq : i64
        %df = arith.sitofp %d : i64 to f32
        %y = arith.addf %x, %df : f32
        // expected-note @+1 {{the op without a derivative}}
        %e = math.erf %y : f32
        cp.yield %e : f32
      }
      : tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>,
        tensor<1x2x64x16xf32>, tensor<1x2x64xf32>, tensor<1x2x64x16xf32>
      -> tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>
  return
}
