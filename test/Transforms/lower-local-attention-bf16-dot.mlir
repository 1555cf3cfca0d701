// cp-lower-local-attention{bf16-dot}: bf16 attention on AVX512-BF16 dot
// products. Per query tile Q is packed into pairs of head dims per query
// lane (Qp, unscaled); K is read in place, a pair of adjacent head dims
// broadcast to every lane; each step of the score kernel is one
// x86vector.avx512.dot (two products per lane, f32 accumulation), and the
// scores are scaled once after. V is packed once into pair panels (two
// adjacent rows per lane). After the online softmax the probabilities are
// rounded to bf16 and interleaved into pairs of adjacent keys (Pp), and the
// output kernel is dot products too. Attention in other element types
// keeps the f32 FMA path silently; a bf16 op the kernel does not apply to
// keeps it with a remark that says why.
// RUN: cp-opt %s -cp-lower-local-attention="bf16-dot=true vector-width=16" -canonicalize -cse -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func @bf16_causal
// V's pair panels, once: [B, Hkv, Dv' / 32, ceil(Lkv / 2), 64].
// CHECK: %[[VP:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x2x1x50x64xbf16>
// CHECK: scf.parallel
// CHECK-DAG: %[[QP:.*]] = memref.alloca() {alignment = 64 : i64} : memref<16x64xbf16>
// CHECK-DAG: %[[ST:.*]] = memref.alloca() {alignment = 64 : i64} : memref<64x32xf32>
// CHECK-DAG: %[[PP:.*]] = memref.alloca() {alignment = 64 : i64} : memref<32x64xbf16>
// Scores: K's pair broadcast against Qp's pairs.
// CHECK: %[[QPAIRS:.*]] = vector.load %[[QP]]{{.*}} : memref<16x64xbf16>, vector<32xbf16>
// CHECK: %[[KPAIR:.*]] = vector.load %{{.*}} : memref<1x2x100x32xbf16>, vector<2xbf16>
// CHECK: %[[KWORD:.*]] = vector.bitcast %[[KPAIR]] : vector<2xbf16> to vector<1xi32>
// CHECK: vector.broadcast %{{.*}} : i32 to vector<16xi32>
// CHECK: %[[KLANES:.*]] = vector.bitcast %{{.*}} : vector<16xi32> to vector<32xbf16>
// CHECK: x86vector.avx512.dot %{{.*}}, %[[KLANES]], %[[QPAIRS]] : vector<32xbf16> -> vector<16xf32>
// The scale, after the products.
// CHECK: arith.mulf %{{.*}}, %{{.*}} : vector<16xf32>
// The probabilities as bf16 pairs of adjacent keys.
// CHECK: %[[P0:.*]] = arith.truncf %{{.*}} : vector<16xf32> to vector<16xbf16>
// CHECK: %[[P1:.*]] = arith.truncf %{{.*}} : vector<16xf32> to vector<16xbf16>
// CHECK: %[[PAIRS:.*]] = vector.interleave %[[P0]], %[[P1]] : vector<16xbf16> -> vector<32xbf16>
// CHECK: vector.store %[[PAIRS]], %[[PP]]
// Output: P's pair broadcast against V's pair panel.
// CHECK: %[[VPAIRS:.*]] = vector.load %[[VP]]{{.*}} : memref<1x2x1x50x64xbf16>, vector<32xbf16>
// CHECK: vector.load %[[PP]]{{.*}} : memref<32x64xbf16>, vector<2xbf16>
// CHECK: x86vector.avx512.dot %{{.*}}, %{{.*}}, %[[VPAIRS]] : vector<32xbf16> -> vector<16xf32>
// CHECK: memref.dealloc %[[VP]]
func.func @bf16_causal(%q: memref<1x4x40x32xbf16>, %k: memref<1x2x100x32xbf16>,
                       %v: memref<1x2x100x32xbf16>, %o: memref<1x4x40x32xbf16>) {
  %c0 = arith.constant 0 : index
  %c60 = arith.constant 60 : index
  cp.buffer.local_attention %q, %k, %v offsets(%c60, %c0) into %o mask = causal
      : memref<1x4x40x32xbf16>, memref<1x2x100x32xbf16>, memref<1x2x100x32xbf16> into memref<1x4x40x32xbf16>
  return
}

// CHECK-LABEL: func @f16_keeps_fma
// CHECK-NOT: x86vector.avx512.dot
// CHECK: vector.fma
func.func @f16_keeps_fma(%q: memref<1x4x40x32xf16>, %k: memref<1x2x100x32xf16>,
                         %v: memref<1x2x100x32xf16>, %o: memref<1x4x40x32xf16>) {
  %c0 = arith.constant 0 : index
  cp.buffer.local_attention %q, %k, %v offsets(%c0, %c0) into %o
      : memref<1x4x40x32xf16>, memref<1x2x100x32xf16>, memref<1x2x100x32xf16> into memref<1x4x40x32xf16>
  return
}

// CHECK-LABEL: func @odd_head_dim
// CHECK-NOT: x86vector.avx512.dot
// CHECK: vector.fma
func.func @odd_head_dim(%q: memref<1x4x40x15xbf16>, %k: memref<1x2x100x15xbf16>,
                        %v: memref<1x2x100x15xbf16>, %o: memref<1x4x40x15xbf16>) {
  %c0 = arith.constant 0 : index
  // expected-remark @below {{bf16-dot not used: the head dim D is not a static even number; the products widen to f32 FMAs}}
  cp.buffer.local_attention %q, %k, %v offsets(%c0, %c0) into %o
      : memref<1x4x40x15xbf16>, memref<1x2x100x15xbf16>, memref<1x2x100x15xbf16> into memref<1x4x40x15xbf16>
  return
}
