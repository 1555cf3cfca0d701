// cp.attention_grad: round trip and the verifier rules with their numbers
// (the forward's, the scheme's, then lse, dO and the gradients), and no
// buffer form before a scheme is applied.
// RUN: cp-opt %s -split-input-file -verify-diagnostics | FileCheck %s
// RUN: not cp-opt %s -split-input-file -one-shot-bufferize 2>&1 | FileCheck %s --check-prefix=BUFFER

shard.grid @cp(shape = 4)

// CHECK-LABEL: func @roundtrip
// CHECK: cp.attention_grad %arg0, %arg1, %arg2, %arg3, %arg4, %arg5 on @cp grid_axes = [0] mask = causal layout = zigzag scheme = allgather : tensor<1x8x64x32xbf16>, tensor<1x2x64x32xbf16>, tensor<1x2x64x32xbf16>, tensor<1x8x64x32xbf16>, tensor<1x8x64xf32>, tensor<1x8x64x32xbf16> -> tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>
// BUFFER: error: 'cp.attention_grad' op has no buffer form: apply a CP scheme first (cp-apply-scheme, or cp-lower-to-cpu{scheme=...})
func.func @roundtrip(%q: tensor<1x8x64x32xbf16>, %k: tensor<1x2x64x32xbf16>,
                     %v: tensor<1x2x64x32xbf16>, %o: tensor<1x8x64x32xbf16>,
                     %lse: tensor<1x8x64xf32>, %do: tensor<1x8x64x32xbf16>)
    -> (tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>) {
  %dq, %dk, %dv = cp.attention_grad %q, %k, %v, %o, %lse, %do
      on @cp grid_axes = [0] mask = causal layout = zigzag scheme = allgather
      : tensor<1x8x64x32xbf16>, tensor<1x2x64x32xbf16>, tensor<1x2x64x32xbf16>,
        tensor<1x8x64x32xbf16>, tensor<1x8x64xf32>, tensor<1x8x64x32xbf16>
      -> tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>
  return %dq, %dk, %dv
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>
}

// -----

shard.grid @cp(shape = 4)

func.func @lse_shape(%q: tensor<1x8x64x32xf32>, %k: tensor<1x2x64x32xf32>,
                     %v: tensor<1x2x64x32xf32>, %o: tensor<1x8x64x32xf32>,
                     %lse: tensor<1x8x256xf32>, %do: tensor<1x8x64x32xf32>) {
  // expected-error @+1 {{expects lse to have shape [B, H, L] of the query, got 'tensor<1x8x256xf32>' for query 'tensor<1x8x64x32xf32>'}}
  %dq, %dk, %dv = cp.attention_grad %q, %k, %v, %o, %lse, %do on @cp grid_axes = [0]
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>,
        tensor<1x8x64x32xf32>, tensor<1x8x256xf32>, tensor<1x8x64x32xf32>
      -> tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>
  return
}

// -----

shard.grid @cp(shape = 4)

func.func @grad_value_shape(%q: tensor<1x8x64x32xf32>, %k: tensor<1x2x64x32xf32>,
                            %v: tensor<1x2x64x32xf32>, %o: tensor<1x8x64x32xf32>,
                            %lse: tensor<1x8x64xf32>, %do: tensor<1x8x64x32xf32>) {
  // expected-error @+1 {{expects grad_value to have the shape of its operand 'tensor<1x2x64x32xf32>', got 'tensor<1x2x256x32xf32>'}}
  %dq, %dk, %dv = cp.attention_grad %q, %k, %v, %o, %lse, %do on @cp grid_axes = [0]
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>,
        tensor<1x8x64x32xf32>, tensor<1x8x64xf32>, tensor<1x8x64x32xf32>
      -> tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x256x32xf32>
  return
}

// -----

shard.grid @cp(shape = 4)

func.func @grad_output_shape(%q: tensor<1x8x64x32xf32>, %k: tensor<1x2x64x32xf32>,
                             %v: tensor<1x2x64x32xf32>, %o: tensor<1x8x64x32xf32>,
                             %lse: tensor<1x8x64xf32>, %do: tensor<1x8x64x16xf32>) {
  // expected-error @+1 {{expects grad_output to have the output's shape 'tensor<1x8x64x32xf32>', got 'tensor<1x8x64x16xf32>'}}
  %dq, %dk, %dv = cp.attention_grad %q, %k, %v, %o, %lse, %do on @cp grid_axes = [0]
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>,
        tensor<1x8x64x32xf32>, tensor<1x8x64xf32>, tensor<1x8x64x16xf32>
      -> tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>
  return
}

// -----

shard.grid @cp(shape = 4)

// The scheme's rules are the forward's: Ulysses splits heads over P = 4.
func.func @scheme_rules(%q: tensor<1x6x64x32xf32>, %k: tensor<1x2x64x32xf32>,
                        %v: tensor<1x2x64x32xf32>, %o: tensor<1x6x64x32xf32>,
                        %lse: tensor<1x6x64xf32>, %do: tensor<1x6x64x32xf32>) {
  // expected-error @+1 {{cannot use scheme #cp.scheme<ulysses>: ulysses needs H (6) divisible by the CP group size (4)}}
  %dq, %dk, %dv = cp.attention_grad %q, %k, %v, %o, %lse, %do on @cp grid_axes = [0] scheme = ulysses
      : tensor<1x6x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>,
        tensor<1x6x64x32xf32>, tensor<1x6x64xf32>, tensor<1x6x64x32xf32>
      -> tensor<1x6x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>
  return
}

// -----

shard.grid @cp(shape = 4)

// An explicit mask covers the global key length S = P * L.
func.func @mask_keys(%q: tensor<1x8x64x32xf32>, %k: tensor<1x2x64x32xf32>,
                     %v: tensor<1x2x64x32xf32>, %o: tensor<1x8x64x32xf32>,
                     %lse: tensor<1x8x64xf32>, %do: tensor<1x8x64x32xf32>,
                     %m: tensor<64x64xi1>) {
  // expected-error @+1 {{explicit_mask key extent (64) must equal the global sequence length S = P * L = 4 * 64 = 256}}
  %dq, %dk, %dv = cp.attention_grad %q, %k, %v, %o, %lse, %do explicit_mask %m on @cp grid_axes = [0]
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>,
        tensor<1x8x64x32xf32>, tensor<1x8x64xf32>, tensor<1x8x64x32xf32>, tensor<64x64xi1>
      -> tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>
  return
}

// -----

shard.grid @cp(shape = 4)

func.func @not_differentiable(%q: tensor<1x8x64x32xf32>, %k: tensor<1x2x64x32xf32>,
                              %v: tensor<1x2x64x32xf32>, %o: tensor<1x8x64x32xf32>,
                              %lse: tensor<1x8x64xf32>, %do: tensor<1x8x64x32xf32>) {
  // expected-error @+1 {{score_mod cannot be differentiated: 'math.sin' depends on the score}}
  %dq, %dk, %dv = cp.attention_grad %q, %k, %v, %o, %lse, %do on @cp grid_axes = [0]
      score_mod {
      ^bb0(%x: f32, %b: index, %h: index, %qi: index, %ki: index):
        // expected-note @+1 {{the op without a derivative}}
        %y = math.sin %x : f32
        cp.yield %y : f32
      }
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>,
        tensor<1x8x64x32xf32>, tensor<1x8x64xf32>, tensor<1x8x64x32xf32>
      -> tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>
  return
}

// -----

shard.grid @cp(shape = 4)

func.func @grad_kv_types(%q: tensor<1x8x64x32xbf16>, %k: tensor<1x2x64x32xbf16>,
                         %v: tensor<1x2x64x32xbf16>, %o: tensor<1x8x64x32xbf16>,
                         %lse: tensor<1x8x64xf32>, %do: tensor<1x8x64x32xbf16>) {
  // expected-error @+1 {{expects grad_key and grad_value to have one element type (their partial sums travel together), got 'f32' and 'bf16'}}
  %dq, %dk, %dv = cp.attention_grad %q, %k, %v, %o, %lse, %do on @cp grid_axes = [0]
      : tensor<1x8x64x32xbf16>, tensor<1x2x64x32xbf16>, tensor<1x2x64x32xbf16>,
        tensor<1x8x64x32xbf16>, tensor<1x8x64xf32>, tensor<1x8x64x32xbf16>
      -> tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xbf16>
  return
}

// -----

// The backward of a causal forward stated without its mask: it would
// recompute probabilities of another attention from the forward's lse.
shard.grid @cp(shape = 4)

func.func @lse_of_another_mask(%q: tensor<1x8x64x32xf32>, %k: tensor<1x2x64x32xf32>,
                               %v: tensor<1x2x64x32xf32>, %do: tensor<1x8x64x32xf32>) {
  %o, %lse = cp.attention %q, %k, %v on @cp grid_axes = [0] mask = causal
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>
      -> tensor<1x8x64x32xf32>, tensor<1x8x64xf32>
  // expected-error @+1 {{differentiates a cp.attention with mask = causal, but has mask = none; the backward recomputes the forward's probabilities from its lse, so it must state the forward's mask, scale, grid, layout and regions}}
  %dq, %dk, %dv = cp.attention_grad %q, %k, %v, %o, %lse, %do on @cp grid_axes = [0]
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>,
        tensor<1x8x64x32xf32>, tensor<1x8x64xf32>, tensor<1x8x64x32xf32>
      -> tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>
  return
}

// -----

shard.grid @cp(shape = 4)

func.func @lse_of_another_scale(%q: tensor<1x8x64x32xf32>, %k: tensor<1x2x64x32xf32>,
                                %v: tensor<1x2x64x32xf32>, %do: tensor<1x8x64x32xf32>) {
  %o, %lse = cp.attention %q, %k, %v on @cp grid_axes = [0] scale = 0.5
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>
      -> tensor<1x8x64x32xf32>, tensor<1x8x64xf32>
  // expected-error @+1 {{differentiates a cp.attention with scale = 5.000000e-01, but has scale = none}}
  %dq, %dk, %dv = cp.attention_grad %q, %k, %v, %o, %lse, %do on @cp grid_axes = [0]
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>,
        tensor<1x8x64x32xf32>, tensor<1x8x64xf32>, tensor<1x8x64x32xf32>
      -> tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>
  return
}

// -----

shard.grid @cp(shape = 4)

func.func @output_of_another_forward(%q: tensor<1x8x64x32xf32>, %k: tensor<1x2x64x32xf32>,
                                     %v: tensor<1x2x64x32xf32>, %do: tensor<1x8x64x32xf32>) {
  %o, %lse = cp.attention %q, %k, %v on @cp grid_axes = [0]
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>
      -> tensor<1x8x64x32xf32>, tensor<1x8x64xf32>
  %o2 = cp.attention %q, %k, %v on @cp grid_axes = [0] mask = causal
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>
      -> tensor<1x8x64x32xf32>
  // expected-error @+1 {{takes its output and its lse from two different cp.attention ops; both must come from the forward it differentiates}}
  %dq, %dk, %dv = cp.attention_grad %q, %k, %v, %o2, %lse, %do on @cp grid_axes = [0]
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>,
        tensor<1x8x64x32xf32>, tensor<1x8x64xf32>, tensor<1x8x64x32xf32>
      -> tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>
  return
}
