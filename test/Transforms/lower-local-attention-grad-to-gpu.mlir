// cp-lower-local-attention-grad-to-gpu{kernel=simt}: two
// SIMT kernels that recompute P = exp(s - lse) per (query, key) pair. The
// dK/dV kernel has a thread per key row, which sums its row over the
// group's query heads (one writer per row, no atomics); the dQ kernel has a
// thread per query row. Each thread's loop is bounded by the structured
// mask; accumulators are per-thread f32 private arrays.
// (lower-local-attention-grad-to-gpu-mma.mlir has the tensor-core kernels.)
// RUN: cp-opt %s -cp-lower-local-attention-grad-to-gpu=kernel=simt -canonicalize -cse -split-input-file -verify-diagnostics | FileCheck %s
// RUN: not cp-opt %s -cp-lower-local-attention-grad-to-gpu=simt-threads=48 -split-input-file 2>&1 | FileCheck %s --check-prefix=OPTIONS
// OPTIONS: error: cp-lower-local-attention-grad-to-gpu: simt-threads must be a multiple of 32 between 32 and 1024, got 48

// GQA 2:1 and MLA (D = 16, Dv = 12), causal at a query offset of 60; 128
// threads per block.
// CHECK-LABEL: func @causal_gqa_mla
// dK/dV: ceil(100 / 128) = 1 block of keys, Hkv = 2, B = 1; dK [D] and
// dV [Dv] accumulators per thread.
// CHECK: gpu.launch blocks(%{{.*}}, %[[KVH:.*]], %{{.*}}) in ({{.*}} = %c1, {{.*}} = %c2, {{.*}} = %c1) threads(%[[TK:.*]], %{{.*}}, %{{.*}}) in ({{.*}} = %c128, {{.*}} = %c1, {{.*}} = %c1)
// CHECK-SAME: private(%[[DK:.*]] : memref<16xf32, #gpu.address_space<private>>, %[[DV:.*]] : memref<12xf32, #gpu.address_space<private>>)
// A causal key j is seen by the queries at global positions >= j: local
// rows from max(0, j - 60).
// CHECK:   scf.if
// CHECK:     %[[FIRST:.*]] = arith.maxsi %{{.*}}, %c0 : index
// CHECK:     %[[LAST:.*]] = arith.maxsi %[[FIRST]], %c40 : index
// The group's two query heads, then the queries that may see the key.
// CHECK:     scf.for %[[H:.*]] = %{{.*}} to %{{.*}} step %c1 {
// CHECK:       scf.for %[[I:.*]] = %[[FIRST]] to %[[LAST]] step %c1 {
// D_i = rowsum(dO o O), the score, P = exp(s - lse) (0 for a masked pair).
// CHECK:         math.fma
// CHECK:         arith.cmpi sle
// CHECK:         math.exp
// CHECK:         arith.select
// dV += P dO, dK += dT Q.
// CHECK:         memref.store %{{.*}}, %[[DV]]
// CHECK:         memref.store %{{.*}}, %[[DK]]
// Each row is written once, by its thread (B = 1 and one block of keys
// fold to batch 0 and key j = the thread id).
// CHECK:     memref.store %{{.*}}, %arg7[%c0, %[[KVH]], %[[TK]], %{{.*}}]
// CHECK:     memref.store %{{.*}}, %arg8[%c0, %[[KVH]], %[[TK]], %{{.*}}]
// CHECK:   gpu.terminator
// dQ: ceil(40 / 128) = 1 block of queries, H = 4; a dQ [D] accumulator.
// CHECK: gpu.launch blocks(%{{.*}}, %[[HQ:.*]], %{{.*}}) in ({{.*}} = %c1, {{.*}} = %c4, {{.*}} = %c1)
// CHECK-SAME: private(%[[DQ:.*]] : memref<16xf32, #gpu.address_space<private>>)
// A causal query sees the keys up to its global position: local keys
// [0, min(100, i + 61)).
// CHECK:   scf.if
// CHECK:     %[[END:.*]] = arith.minsi %{{.*}}, %c100 : index
// CHECK:     scf.for %{{.*}} = %c0 to %{{.*}} step %c1 {
// CHECK:       memref.store %{{.*}}, %[[DQ]]
// CHECK:     memref.store %{{.*}}, %arg6
// CHECK-NOT: cp.buffer.local_attention_grad
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

// -----

// bf16 storage with f32 gradients, a bias and a soft-capping score_mod: the
// bias is added after the score_mod, whose derivative
// m'(s) = 1 - tanh(s / C)^2 scales dT (0 wherever P is); no structured
// mask, so every thread visits every key or query.
// CHECK-LABEL: func @bias_softcap_bf16
// CHECK: gpu.launch
// CHECK:   scf.for %{{.*}} = %c0 to %c64 step %c1 {
// CHECK:       arith.extf {{.*}} : bf16 to f32
// CHECK:       math.tanh
// CHECK:       arith.addf
// CHECK:       math.exp
// CHECK: gpu.launch
// CHECK:   scf.for %{{.*}} = %c0 to %c64 step %c1 {
// CHECK:       math.tanh
// CHECK-NOT: func.func private @softcap
func.func private @softcap(%s: f32, %b: index, %h: index, %q: index, %k: index) -> f32 {
  %c = arith.constant 5.0 : f32
  %x = arith.divf %s, %c : f32
  %t = math.tanh %x : f32
  %y = arith.mulf %t, %c : f32
  return %y : f32
}
func.func @bias_softcap_bf16(%q: memref<2x2x64x8xbf16>, %k: memref<2x2x64x8xbf16>,
                             %v: memref<2x2x64x8xbf16>, %o: memref<2x2x64x8xbf16>,
                             %lse: memref<2x2x64xf32>, %do: memref<2x2x64x8xbf16>,
                             %bias: memref<64x64xbf16>,
                             %dq: memref<2x2x64x8xf32>, %dk: memref<2x2x64x8xf32>,
                             %dv: memref<2x2x64x8xf32>) {
  %c0 = arith.constant 0 : index
  cp.buffer.local_attention_grad %q, %k, %v, %o, %lse, %do offsets(%c0, %c0)
      explicit_mask %bias into %dq, %dk, %dv score_mod = @softcap
      : memref<2x2x64x8xbf16>, memref<2x2x64x8xbf16>, memref<2x2x64x8xbf16>,
        memref<2x2x64x8xbf16>, memref<2x2x64xf32>, memref<2x2x64x8xbf16>,
        memref<64x64xbf16>
      into memref<2x2x64x8xf32>, memref<2x2x64x8xf32>, memref<2x2x64x8xf32>
  return
}

// -----

func.func @dynamic_head_dim(%q: memref<1x4x40x?xf32>, %k: memref<1x2x100x?xf32>,
                            %v: memref<1x2x100x12xf32>, %o: memref<1x4x40x12xf32>,
                            %lse: memref<1x4x40xf32>, %do: memref<1x4x40x12xf32>,
                            %dq: memref<1x4x40x?xf32>, %dk: memref<1x2x100x?xf32>,
                            %dv: memref<1x2x100x12xf32>) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{needs static head dims D and Dv for the GPU backward's per-thread accumulators, got D = ? and Dv = 12}}
  cp.buffer.local_attention_grad %q, %k, %v, %o, %lse, %do offsets(%c0, %c0)
      into %dq, %dk, %dv
      : memref<1x4x40x?xf32>, memref<1x2x100x?xf32>, memref<1x2x100x12xf32>,
        memref<1x4x40x12xf32>, memref<1x4x40xf32>, memref<1x4x40x12xf32>
      into memref<1x4x40x?xf32>, memref<1x2x100x?xf32>, memref<1x2x100x12xf32>
  return
}
