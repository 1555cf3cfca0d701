// cp-lower-local-attention: cp.buffer.local_attention becomes a tiled
// online-softmax loop nest (docs/Lowering.md §2). Shapes here are small and
// not multiples of the tiles (tile-q 32, tile-kv 64), so every bound is
// exercised.
// RUN: cp-opt %s -cp-lower-local-attention -canonicalize -cse -split-input-file | FileCheck %s
// RUN: not cp-opt %s -cp-lower-local-attention=tile-q=20 -split-input-file 2>&1 | FileCheck %s --check-prefix=OPTIONS

// OPTIONS: error: cp-lower-local-attention: tile-q (20) must be a multiple of vector-width * micro-vectors (8 * 2 = 16)
// RUN: not cp-opt %s -cp-lower-local-attention=tile-q=-3 -split-input-file 2>&1 | FileCheck %s --check-prefix=NONPOSITIVE
// NONPOSITIVE: error: cp-lower-local-attention: tile-q, tile-kv, grad-tile-kv, vector-width, micro-rows and micro-vectors must be positive, got -3, 64, 128, 8, 6, 2

// Nothing of size Lq x Lkv (40 x 100 here) is ever allocated.
// RUN: cp-opt %s -cp-lower-local-attention -split-input-file | FileCheck %s --check-prefix=NO-LQ-LKV
// NO-LQ-LKV-NOT: memref.alloc{{.*}}40x100

// No mask, f32 K in place: K is read where it is; V is packed once into
// panels of 16 lanes; one parallel iteration per (head, pair of q tiles)
// holds Qt (D x 32), St (64 x 32), Acc (32 x 16) and three row vectors.
// CHECK-LABEL: func @unmasked
// CHECK-SAME: (%[[Q:.*]]: memref<1x4x40x16xf32>, %[[K:.*]]: memref<1x2x100x16xf32>, %[[V:.*]]: memref<1x2x100x16xf32>, %[[O:.*]]: memref<1x4x40x16xf32>
// CHECK: %[[PANELS:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x2x1x100x16xf32>
// CHECK: scf.parallel
// CHECK:   memref.load %[[V]]
// CHECK:   memref.store {{.*}}, %[[PANELS]]
// CHECK: scf.parallel (%[[H:.*]]) =
// CHECK-DAG: %[[QT:.*]] = memref.alloca() {alignment = 64 : i64} : memref<16x32xf32>
// CHECK-DAG: %[[ST:.*]] = memref.alloca() {alignment = 64 : i64} : memref<64x32xf32>
// CHECK-DAG: %[[ACC:.*]] = memref.alloca() {alignment = 64 : i64} : memref<32x16xf32>
// Queries are packed transposed and pre-scaled by 1/sqrt(D).
// CHECK:     memref.load %[[Q]]
// CHECK:     arith.mulf
// CHECK:     memref.store {{.*}}, %[[QT]]
// Scores: 6 key rows x 2 vectors of query lanes per register block.
// CHECK:     scf.for {{.*}} iter_args({{.*}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// CHECK:       vector.load %[[QT]]
// CHECK:       memref.load %[[K]]
// CHECK-COUNT-12: vector.fma
// CHECK:     vector.store {{.*}}, %[[ST]]
// No mask: no tile is cut.
// CHECK-NOT: scf.if
// Online softmax: running max, exp, sum, rescale.
// CHECK:     arith.maximumf
// CHECK:     math.exp
// CHECK:     math.exp
// CHECK:     vector.fma
// Output: probabilities broadcast against V's panel lanes.
// CHECK:     memref.load %[[ST]]
// CHECK:     vector.load %[[PANELS]]
// CHECK:     vector.fma
// CHECK:     vector.store {{.*}}, %[[ACC]]
// Normalize; a row that saw nothing stays 0.
// CHECK:     arith.cmpf ogt
// CHECK:     arith.divf
// CHECK:     memref.store {{.*}}, %[[O]]
// CHECK: memref.dealloc %[[PANELS]]
func.func @unmasked(%q: memref<1x4x40x16xf32>, %k: memref<1x2x100x16xf32>, %v: memref<1x2x100x16xf32>,
                    %o: memref<1x4x40x16xf32>) {
  %c0 = arith.constant 0 : index
  cp.buffer.local_attention %q, %k, %v offsets(%c0, %c0) into %o
      : memref<1x4x40x16xf32>, memref<1x2x100x16xf32>, memref<1x2x100x16xf32> into memref<1x4x40x16xf32>
  return
}

// -----

// Causal at offset %qo: the q tile [qo + q0, qo + q0 + n - 1] sees keys up
// to its last row, so the kv-tile loop stops at ceil(min(Lkv, last + 1) /
// 64); only tiles that reach past the tile's first row are masked.
// CHECK-LABEL: func @causal
// CHECK-SAME: %[[QO:[a-z0-9]+]]: index)
// CHECK: scf.parallel
// CHECK: scf.parallel
// CHECK:   %[[QFIRST:.*]] = arith.addi %[[QO]], %{{.*}} : index
// CHECK:   %[[END:.*]] = arith.minsi %{{.*}}, %c100 : index
// CHECK:   %[[TILES:.*]] = arith.ceildivsi %[[END]], %c64 : index
// CHECK:   %[[LAST:.*]] = arith.select %{{.*}}, %[[TILES]], %c0 : index
// CHECK:   scf.for %[[KT:.*]] = %c0 to %[[LAST]] step %c1 {
// CHECK:     %[[KLAST:.*]] = arith.subi %{{.*}}, %c1 : index
// CHECK:     %[[CUT:.*]] = arith.cmpi sgt, %[[KLAST]], %[[QFIRST]] : index
// CHECK:     scf.if %[[CUT]] {
// CHECK:       %[[KPOS:.*]] = vector.broadcast {{.*}} : index to vector<8xindex>
// CHECK:       %[[QPOS:.*]] = arith.addi {{.*}} : vector<8xindex>
// CHECK:       %[[ALLOWED:.*]] = arith.cmpi sle, %[[KPOS]], %[[QPOS]] : vector<8xindex>
// CHECK:       arith.select %[[ALLOWED]], %{{.*}}, %cst : vector<8xi1>, vector<8xf32>
// CHECK:     }
// CHECK:     arith.maximumf
func.func @causal(%q: memref<1x4x40x16xf32>, %k: memref<1x2x100x16xf32>, %v: memref<1x2x100x16xf32>,
                  %o: memref<1x4x40x16xf32>, %qo: index) {
  %c0 = arith.constant 0 : index
  cp.buffer.local_attention %q, %k, %v offsets(%qo, %c0) into %o mask = causal
      : memref<1x4x40x16xf32>, memref<1x2x100x16xf32>, memref<1x2x100x16xf32> into memref<1x4x40x16xf32>
  return
}

// -----

// bf16 storage with a sliding window and the lse result: K is packed to f32
// once, V's 12 lanes are padded to a 16-lane panel, the window bounds the
// visible keys on both sides, the output is truncated once.
// CHECK-LABEL: func @window_bf16_lse
// CHECK-SAME: %[[O:[a-z0-9]+]]: memref<1x4x40x12xbf16>, %[[LSE:[a-z0-9]+]]: memref<1x4x40xf32>
// CHECK: %[[KD:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x2x100x16xf32>
// CHECK:   arith.extf {{.*}} : bf16 to f32
// CHECK:   memref.store {{.*}}, %[[KD]]
// CHECK: %[[PANELS:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x2x1x100x16xf32>
// CHECK:   scf.for %{{.*}} = %c12 to %c16 step %c1 {
// CHECK:     memref.store %{{.*}}, %[[PANELS]]
// CHECK: scf.parallel
// The window's first visible key is qFirst - 8 + 1.
// CHECK:   arith.addi %{{.*}}, %c-7 : index
// CHECK:   arith.maxsi
// CHECK:   memref.load %[[KD]]
// CHECK:   scf.if
// CHECK:     arith.cmpi sle
// CHECK:     arith.cmpi slt
// CHECK:     arith.andi
// CHECK:   arith.truncf {{.*}} : f32 to bf16
// CHECK:   memref.store {{.*}}, %[[O]]
// CHECK:   math.log
// CHECK:   memref.store {{.*}}, %[[LSE]]
// CHECK: memref.dealloc %[[KD]]
// CHECK: memref.dealloc %[[PANELS]]
func.func @window_bf16_lse(%q: memref<1x4x40x16xbf16>, %k: memref<1x2x100x16xbf16>, %v: memref<1x2x100x12xbf16>,
                           %o: memref<1x4x40x12xbf16>, %lse: memref<1x4x40xf32>, %qo: index, %ko: index) {
  cp.buffer.local_attention %q, %k, %v offsets(%qo, %ko) into %o, %lse mask = sliding_window(8)
      : memref<1x4x40x16xbf16>, memref<1x2x100x16xbf16>, memref<1x2x100x12xbf16> into memref<1x4x40x12xbf16>, memref<1x4x40xf32>
  return
}

// -----

// Explicit masks are applied on every visited tile: an i1 mask selects
// -inf, a float mask is added. A head extent of 1 is broadcast.
// CHECK-LABEL: func @explicit_masks
// CHECK-SAME: %[[M:[a-z0-9]+]]: memref<1x1x40x100xi1>, %[[BIAS:[a-z0-9]+]]: memref<40x100xf16>
// CHECK: scf.parallel
// CHECK:   %[[ALLOWED:.*]] = memref.load %[[M]]
// CHECK:   arith.select %[[ALLOWED]], %{{.*}}, %{{.*}} : f32
// CHECK: scf.parallel
// CHECK:   %[[B:.*]] = memref.load %[[BIAS]]
// CHECK:   %[[BF:.*]] = arith.extf %[[B]] : f16 to f32
// CHECK:   arith.addf %{{.*}}, %[[BF]] : f32
func.func @explicit_masks(%q: memref<1x4x40x16xf16>, %k: memref<1x2x100x16xf16>, %v: memref<1x2x100x16xf16>,
                          %o: memref<1x4x40x16xf16>, %m: memref<1x1x40x100xi1>, %bias: memref<40x100xf16>) {
  %c0 = arith.constant 0 : index
  cp.buffer.local_attention %q, %k, %v offsets(%c0, %c0) explicit_mask %m into %o
      : memref<1x4x40x16xf16>, memref<1x2x100x16xf16>, memref<1x2x100x16xf16>, memref<1x1x40x100xi1> into memref<1x4x40x16xf16>
  cp.buffer.local_attention %q, %k, %v offsets(%c0, %c0) explicit_mask %bias into %o
      : memref<1x4x40x16xf16>, memref<1x2x100x16xf16>, memref<1x2x100x16xf16>, memref<40x100xf16> into memref<1x4x40x16xf16>
  return
}
