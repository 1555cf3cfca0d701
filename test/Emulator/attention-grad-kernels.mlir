// The SIMT backward kernels of cp-lower-local-attention-grad-to-gpu (two
// launches: dK/dV per key row, dQ per query row) run on the CPU by
// cp-gpu-emulate --grad: o and lse are the reference forward's, dO is
// random, and dq, dk, dv are compared with the reference gradient
// (ReferenceAttentionGrad.h), max abs error (as a fraction of max(1, the
// gradient's largest magnitude)) within 1e-4 for f32 and 8e-3 for bf16.
//
// (attention-grad-mma-*.test run the tensor-core backward.)
// RUN: cp-opt %s -cp-lower-local-attention-grad-to-gpu=kernel=simt -o %t.mlir
// RUN: cp-gpu-emulate %t.mlir --grad --func causal_gqa_mla --mask causal --q-offset 60 --tolerance 1e-4 | FileCheck %s --check-prefix=CAUSAL
// CAUSAL: PASS causal_gqa_mla: B=1 H=4 Hkv=2 Sq=40 Sk=100 D=16 Dv=12 mask=causal dq_error={{.*}} dk_error={{.*}} dv_error={{.*}} kernel=simt
// RUN: cp-gpu-emulate %t.mlir --grad --func window --mask window:13 --q-offset 5 --kv-offset 3 --tolerance 1e-4 | FileCheck %s --check-prefix=WINDOW
// WINDOW: PASS window:
// RUN: cp-gpu-emulate %t.mlir --grad --func softcap --mask causal --softcap 2 --tolerance 1e-4 | FileCheck %s --check-prefix=SOFTCAP
// SOFTCAP: PASS softcap:
// RUN: cp-gpu-emulate %t.mlir --grad --func none_bf16 --tolerance 8e-3 | FileCheck %s --check-prefix=BF16
// BF16: PASS none_bf16:
//
// The comparison can fail: the softcap kernel checked as if there were no
// score_mod.
// RUN: not cp-gpu-emulate %t.mlir --grad --func softcap --mask causal --tolerance 1e-4 | FileCheck %s --check-prefix=WRONG
// WRONG: FAIL softcap:

// GQA, Dv != D, a query offset.
func.func @causal_gqa_mla(%q: memref<1x4x40x16xf32>, %k: memref<1x2x100x16xf32>,
                          %v: memref<1x2x100x12xf32>, %o: memref<1x4x40x12xf32>,
                          %lse: memref<1x4x40xf32>, %do: memref<1x4x40x12xf32>,
                          %dq: memref<1x4x40x16xf32>, %dk: memref<1x2x100x16xf32>,
                          %dv: memref<1x2x100x12xf32>) {
  %qo = arith.constant 60 : index
  %c0 = arith.constant 0 : index
  cp.buffer.local_attention_grad %q, %k, %v, %o, %lse, %do offsets(%qo, %c0)
      into %dq, %dk, %dv mask = causal
      : memref<1x4x40x16xf32>, memref<1x2x100x16xf32>, memref<1x2x100x12xf32>,
        memref<1x4x40x12xf32>, memref<1x4x40xf32>, memref<1x4x40x12xf32>
      into memref<1x4x40x16xf32>, memref<1x2x100x16xf32>, memref<1x2x100x12xf32>
  return
}

// A sliding window with both offsets, two batches.
func.func @window(%q: memref<2x2x50x16xf32>, %k: memref<2x2x70x16xf32>,
                  %v: memref<2x2x70x16xf32>, %o: memref<2x2x50x16xf32>,
                  %lse: memref<2x2x50xf32>, %do: memref<2x2x50x16xf32>,
                  %dq: memref<2x2x50x16xf32>, %dk: memref<2x2x70x16xf32>,
                  %dv: memref<2x2x70x16xf32>) {
  %qo = arith.constant 5 : index
  %ko = arith.constant 3 : index
  cp.buffer.local_attention_grad %q, %k, %v, %o, %lse, %do offsets(%qo, %ko)
      into %dq, %dk, %dv mask = sliding_window(13)
      : memref<2x2x50x16xf32>, memref<2x2x70x16xf32>, memref<2x2x70x16xf32>,
        memref<2x2x50x16xf32>, memref<2x2x50xf32>, memref<2x2x50x16xf32>
      into memref<2x2x50x16xf32>, memref<2x2x70x16xf32>, memref<2x2x70x16xf32>
  return
}

// A score_mod, differentiated in the kernel.
func.func private @cap(%x: f32, %b: index, %h: index, %qi: index, %ki: index) -> f32 {
  %c = arith.constant 2.0 : f32
  %xs = arith.divf %x, %c : f32
  %t = math.tanh %xs : f32
  %y = arith.mulf %t, %c : f32
  return %y : f32
}
func.func @softcap(%q: memref<1x2x48x16xf32>, %k: memref<1x2x48x16xf32>,
                   %v: memref<1x2x48x16xf32>, %o: memref<1x2x48x16xf32>,
                   %lse: memref<1x2x48xf32>, %do: memref<1x2x48x16xf32>,
                   %dq: memref<1x2x48x16xf32>, %dk: memref<1x2x48x16xf32>,
                   %dv: memref<1x2x48x16xf32>) {
  %c0 = arith.constant 0 : index
  cp.buffer.local_attention_grad %q, %k, %v, %o, %lse, %do offsets(%c0, %c0)
      into %dq, %dk, %dv mask = causal score_mod = @cap
      : memref<1x2x48x16xf32>, memref<1x2x48x16xf32>, memref<1x2x48x16xf32>,
        memref<1x2x48x16xf32>, memref<1x2x48xf32>, memref<1x2x48x16xf32>
      into memref<1x2x48x16xf32>, memref<1x2x48x16xf32>, memref<1x2x48x16xf32>
  return
}

// bf16 storage, f32 gradients.
func.func @none_bf16(%q: memref<1x2x40x32xbf16>, %k: memref<1x1x60x32xbf16>,
                     %v: memref<1x1x60x32xbf16>, %o: memref<1x2x40x32xbf16>,
                     %lse: memref<1x2x40xf32>, %do: memref<1x2x40x32xbf16>,
                     %dq: memref<1x2x40x32xf32>, %dk: memref<1x1x60x32xf32>,
                     %dv: memref<1x1x60x32xf32>) {
  %c0 = arith.constant 0 : index
  cp.buffer.local_attention_grad %q, %k, %v, %o, %lse, %do offsets(%c0, %c0)
      into %dq, %dk, %dv
      : memref<1x2x40x32xbf16>, memref<1x1x60x32xbf16>, memref<1x1x60x32xbf16>,
        memref<1x2x40x32xbf16>, memref<1x2x40xf32>, memref<1x2x40x32xbf16>
      into memref<1x2x40x32xf32>, memref<1x1x60x32xf32>, memref<1x1x60x32xf32>
  return
}
