// cp-lower-local-attention on cp.buffer.local_attention_grad: the tiled
// FlashAttention-2 backward of docs/Training.md §4. Threads run over
// (batch, KV head), so dK/dV and dQ have one writer each. Per query head of
// the group, its Q, dO, lse and D_i are packed once per call; every key
// tile then meets every query tile it can see, recomputing P = exp(s - lse)
// per tile pair. Shapes are not multiples of the tiles (tile-q 32,
// grad-tile-kv 128; Lq = 40 has two query tiles).
// RUN: cp-opt %s -cp-lower-local-attention -canonicalize -cse -split-input-file | FileCheck %s

// Nothing of size Lq x Lkv (40 x 100 here) is ever allocated.
// RUN: cp-opt %s -cp-lower-local-attention -split-input-file | FileCheck %s --check-prefix=NO-LQ-LKV
// NO-LQ-LKV-NOT: memref.alloc{{.*}}40x100

// grad-tile-kv sets the backward's key tile alone; the forward keeps tile-kv.
// RUN: cp-opt %s -cp-lower-local-attention=grad-tile-kv=64 -split-input-file | FileCheck %s --check-prefix=TILE64
// TILE64-LABEL: func @causal_gqa_mla
// TILE64: memref.alloca() {alignment = 64 : i64} : memref<64x32xf32>

// GQA 2:1 and MLA (D = 16, Dv = 12), causal at a query offset of 60.
// CHECK-LABEL: func @causal_gqa_mla
// K is packed to f32 rows padded to whole register blocks.
// CHECK: %[[KEY:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x2x100x16xf32>
// One parallel iteration per KV head (B = 1).
// CHECK: scf.parallel (%[[KVH:.*]]) = (%{{.*}}) to (%c2)
// The query head's pack, on the thread's heap: Qt [T, D, Tq], dOt [T, Dv,
// Tq], Qr and dOr [T Tq, D'] and [T Tq, Dv'], the dQ accumulator, lse and
// D_i [T Tq]; then the KV head's dK and dV accumulators [Lkv, D'].
// CHECK: %[[QT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x16x32xf32>
// CHECK: %[[DOT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x12x32xf32>
// CHECK-COUNT-3: memref.alloc() {alignment = 64 : i64} : memref<64x16xf32>
// CHECK-COUNT-2: memref.alloc() {alignment = 64 : i64} : memref<64xf32>
// CHECK: %[[DK:.*]] = memref.alloc() {alignment = 64 : i64} : memref<100x16xf32>
// CHECK: %[[DV:.*]] = memref.alloc() {alignment = 64 : i64} : memref<100x16xf32>
// Per tile pair, St and dPt [Tk, Tq] on the stack.
// CHECK: memref.alloca() {alignment = 64 : i64} : memref<128x32xf32>
// For each query head of the group, its rows are packed once (Q scaled and
// transposed into Qt) ...
// CHECK: scf.for %[[MEMBER:.*]] = %c0 to %c2
// CHECK: memref.store %{{.*}}, %[[QT]]
// D_i = rowsum(dO o O).
// CHECK: math.fma
// ... then the key tile meets the query tiles: fully masked pairs are
// skipped.
// CHECK: scf.if
// P = exp(s - lse), then dV, dP, dT, dK and dQ as FMA kernels.
// CHECK: vector.load %[[QT]]
// CHECK: vector.fma
// CHECK: math.exp %{{.*}} : vector<8xf32>
// CHECK: vector.fma
// The dK of the KV head, summed over the group's query heads, is stored
// once, after every head of the group.
// CHECK: memref.load %[[DK]]
// CHECK: memref.store %{{.*}}, %arg7[%c0, %[[KVH]]
// CHECK: memref.dealloc %[[QT]]
// CHECK: memref.dealloc %[[KEY]]
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
// CHECK: %[[S:.*]] = vector.load %{{.*}} : memref<128x32xf32>, vector<8xf32>
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

