// cp-lower-local-attention-to-gpu: one gpu.launch per local attention, a
// block per (query tile, head, batch), 4 threads per query row.
// The SIMT kernel (kernel=simt); lower-local-attention-to-gpu-mma.mlir has
// the tensor-core one.
// RUN: cp-opt %s -cp-lower-local-attention-to-gpu=kernel=simt -canonicalize -cse -split-input-file -verify-diagnostics | FileCheck %s
// RUN: not cp-opt %s -cp-lower-local-attention-to-gpu=threads-per-row=3 -split-input-file 2>&1 | FileCheck %s --check-prefix=OPTIONS
// OPTIONS: error: cp-lower-local-attention-to-gpu: threads-per-row must be a power of two between 1 and 32, got 3
// RUN: not cp-opt %s -cp-lower-local-attention-to-gpu=tile-q=70 -split-input-file 2>&1 | FileCheck %s --check-prefix=TILES
// TILES: error: cp-lower-local-attention-to-gpu: need tile-q * threads-per-row a multiple of 32 and at most 1024 (got 70 * 4), and tile-kv a multiple of threads-per-row (got 0)

// Lq = 40 over tiles of 32: 2 blocks along x, H = 4 along y, B = 1 along z.
// Workgroup memory: Qs 32 x (D+1), Ks 64 x (D+1), Vs 64 x 12, Ps 32 x 65.
// CHECK-LABEL: func @causal_f16_lse
// CHECK-SAME: %[[O:[a-z0-9]+]]: memref<1x4x40x12xf16>, %[[LSE:[a-z0-9]+]]: memref<1x4x40xf32>
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c2, {{.*}} = %c4, {{.*}} = %c1) threads(%[[TID:.*]], %{{.*}}, %{{.*}}) in ({{.*}} = %c128, {{.*}} = %c1, {{.*}} = %c1)
// CHECK-SAME: workgroup(%[[QS:.*]] : memref<32x17xf32, #gpu.address_space<workgroup>>, %[[KS:.*]] : memref<64x17xf32, #gpu.address_space<workgroup>>, %[[VS:.*]] : memref<64x12xf32, #gpu.address_space<workgroup>>, %[[PS:.*]] : memref<32x65xf32, #gpu.address_space<workgroup>>)
// The block stages its query tile cooperatively, 128 elements per step.
// CHECK:   scf.for %{{.*}} = %[[TID]] to %c512 step %c128 {
// CHECK:     arith.extf {{.*}} : f16 to f32
// CHECK:     memref.store %{{.*}}, %[[QS]]
// CHECK:   gpu.barrier
// Key tiles are the visible ones only (causal).
// CHECK:   %[[END:.*]] = arith.select %{{.*}}, %{{.*}}, %c0 : index
// CHECK:   scf.for %{{.*}} = %c0 to %[[END]] step %c1 iter_args(
// CHECK:     memref.store %{{.*}}, %[[KS]]
// CHECK:     memref.store %{{.*}}, %[[VS]]
// CHECK:     gpu.barrier
// 64 keys / 4 threads: 16 scores per thread, from workgroup memory.
// CHECK:     scf.for %{{.*}} = %c0 to %c16 step %c1 iter_args({{.*}}) -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)
// CHECK:       memref.load %[[QS]]
// CHECK:       memref.load %[[KS]]
// CHECK:       math.fma
// The row's 4 threads reduce max and sum by shuffles.
// CHECK:     gpu.shuffle  xor %{{.*}}, %c1_i32, %c32_i32 : f32
// CHECK:     gpu.shuffle  xor %{{.*}}, %c2_i32, %c32_i32 : f32
// CHECK:     math.exp
// CHECK:     memref.store %{{.*}}, %[[PS]]
// CHECK:     gpu.barrier
// CHECK:     memref.load %[[PS]]
// CHECK:     memref.load %[[VS]]
// CHECK:     math.fma
// CHECK:     gpu.barrier
// The row's lse (m + log l) and 1 / l, then the stores.
// CHECK:   math.log
// CHECK:   arith.truncf {{.*}} : f32 to f16
// CHECK:   memref.store {{.*}}, %[[O]]
// CHECK:   memref.store {{.*}}, %[[LSE]]
// CHECK:   gpu.terminator
func.func @causal_f16_lse(%q: memref<1x4x40x16xf16>, %k: memref<1x2x100x16xf16>, %v: memref<1x2x100x12xf16>,
                          %o: memref<1x4x40x12xf16>, %lse: memref<1x4x40xf32>, %qo: index, %ko: index) {
  cp.buffer.local_attention %q, %k, %v offsets(%qo, %ko) into %o, %lse mask = causal
      : memref<1x4x40x16xf16>, memref<1x2x100x16xf16>, memref<1x2x100x12xf16> into memref<1x4x40x12xf16>, memref<1x4x40xf32>
  return
}

// -----

// D = Dv = 128: a 64-key tile would overflow 48 KiB, so tile-kv is 16.
// CHECK-LABEL: func @wide_heads
// CHECK: workgroup(%{{.*}} : memref<32x129xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<16x129xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<16x128xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<32x17xf32, #gpu.address_space<workgroup>>)
func.func @wide_heads(%q: memref<2x8x256x128xbf16>, %o: memref<2x8x256x128xbf16>) {
  %c0 = arith.constant 0 : index
  cp.buffer.local_attention %q, %q, %q offsets(%c0, %c0) into %o
      : memref<2x8x256x128xbf16>, memref<2x8x256x128xbf16>, memref<2x8x256x128xbf16> into memref<2x8x256x128xbf16>
  return
}

// -----

func.func @dynamic_head_dim(%q: memref<1x4x40x?xf32>, %o: memref<1x4x40x?xf32>) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{needs static head dims D and Dv for the GPU kernel's workgroup memory, got D = ? and Dv = ?}}
  cp.buffer.local_attention %q, %q, %q offsets(%c0, %c0) into %o
      : memref<1x4x40x?xf32>, memref<1x4x40x?xf32>, memref<1x4x40x?xf32> into memref<1x4x40x?xf32>
  return
}
