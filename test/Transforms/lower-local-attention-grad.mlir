// cp-lower-local-attention on cp.buffer.local_attention_grad: the tiled
// FlashAttention-2 backward of docs/Training.md §4. Threads run over
// (batch, KV head), so dK/dV (scratch per key tile) and the f32 dQ
// accumulator have one writer each; P is recomputed from lse per tile
// pair. Shapes are not multiples of the tiles (tile-q 32, tile-kv 64).
// RUN: cp-opt %s -cp-lower-local-attention -canonicalize -cse -split-input-file | FileCheck %s

// Nothing of size Lq x Lkv (40 x 100 here) is ever allocated.
// RUN: cp-opt %s -cp-lower-local-attention -split-input-file | FileCheck %s --check-prefix=NO-LQ-LKV
// NO-LQ-LKV-NOT: memref.alloc{{.*}}40x100

// GQA 2:1 and MLA (D = 16, Dv = 12), causal at a query offset of 60.
// CHECK-LABEL: func @causal_gqa_mla
// K is packed to f32 rows padded to whole register blocks; dQ accumulates
// in f32 [B, H, Lq, D'].
// CHECK: %[[KEY:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x2x100x16xf32>
// CHECK: %[[DQACC:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x4x40x16xf32>
// One parallel iteration per KV head (B = 1).
// CHECK: scf.parallel (%[[KVH:.*]]) = (%{{.*}}) to (%c2)
// Per query tile Qt [D, Tq], Qr [Tq, D'], dOt [Dv, Tq], dOr [Tq, Dv'],
// lse and D_i; per tile pair St and dPt [Tk, Tq]; per key tile dK, dV.
// CHECK-DAG: memref.alloca() {alignment = 64 : i64} : memref<16x32xf32>
// CHECK-DAG: memref.alloca() {alignment = 64 : i64} : memref<12x32xf32>
// CHECK-DAG: memref.alloca() {alignment = 64 : i64} : memref<64x32xf32>
// CHECK-DAG: %[[DK:.*]] = memref.alloca() {alignment = 64 : i64} : memref<64x16xf32>
// Fully masked (query tile, key tile) pairs are skipped.
// CHECK: scf.if
// D_i = rowsum(dO o O).
// CHECK: math.fma
// P = exp(s - lse), then dV, dP, dT, dK and dQ as FMA kernels.
// CHECK: math.exp %{{.*}} : vector<8xf32>
// CHECK: vector.fma
// The tile's dK, summed over the group's query heads, is stored once.
// CHECK: memref.load %[[DK]]
// CHECK: memref.store %{{.*}}, %arg7[%c0, %[[KVH]]
// CHECK: memref.dealloc %[[KEY]]
// CHECK: memref.dealloc %[[DQACC]]
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

// Soft-capping: the score_mod is inlined with its forward-mode derivative,
// m'(s) = 1 - tanh(s / C)^2 (the chain rule through the divf by C), which
// scales dT; both run on a row of scores' vector lanes at once. dT is 0
// wherever P is (a slope that is not finite on a masked score must not
// leak); the mod function is erased once lowered.
// CHECK-LABEL: func @softcap
// CHECK-NOT: func.func private @cap
// CHECK: %[[S:.*]] = vector.load %{{.*}} : memref<64x32xf32>, vector<8xf32>
// CHECK: %[[XS:.*]] = arith.divf %[[S]], %{{.*}} : vector<8xf32>
// CHECK: %[[T:.*]] = math.tanh %[[XS]] : vector<8xf32>
// CHECK: %[[TT:.*]] = arith.mulf %[[T]], %[[T]] : vector<8xf32>
// CHECK: arith.subf %{{.*}}, %[[TT]] : vector<8xf32>
// CHECK: %[[HIDDEN:.*]] = arith.cmpf oeq, %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK: arith.select %[[HIDDEN]], %{{.*}}, %{{.*}} : vector<8xi1>, vector<8xf32>
func.func private @cap(%x: f32, %b: index, %h: index, %qi: index, %ki: index) -> f32 {
  %c = arith.constant 3.0e+01 : f32
  %xs = arith.divf %x, %c : f32
  %t = math.tanh %xs : f32
  %y = arith.mulf %t, %c : f32
  return %y : f32
}
func.func @softcap(%q: memref<1x2x40x16xf32>, %k: memref<1x2x40x16xf32>,
                   %v: memref<1x2x40x16xf32>, %o: memref<1x2x40x16xf32>,
                   %lse: memref<1x2x40xf32>, %do: memref<1x2x40x16xf32>,
                   %dq: memref<1x2x40x16xf32>, %dk: memref<1x2x40x16xf32>,
                   %dv: memref<1x2x40x16xf32>) {
  %c0 = arith.constant 0 : index
  cp.buffer.local_attention_grad %q, %k, %v, %o, %lse, %do offsets(%c0, %c0)
      into %dq, %dk, %dv score_mod = @cap
      : memref<1x2x40x16xf32>, memref<1x2x40x16xf32>, memref<1x2x40x16xf32>,
        memref<1x2x40x16xf32>, memref<1x2x40xf32>, memref<1x2x40x16xf32>
      into memref<1x2x40x16xf32>, memref<1x2x40x16xf32>, memref<1x2x40x16xf32>
  return
}

