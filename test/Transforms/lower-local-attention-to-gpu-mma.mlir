// cp-lower-local-attention-to-gpu{kernel=mma}: the tensor-core forward
// kernel (docs/GPU.md, "The tensor-core kernel"). Its numerics are checked
// on the CPU by test/Emulator/attention-kernels.mlir and its PTX by
// test/GPU/mma-ptx.test.
// RUN: cp-opt %s -cp-lower-local-attention-to-gpu=kernel=mma -canonicalize -cse -split-input-file -verify-diagnostics | FileCheck %s
// The default (kernel=auto) is mma on sm_80 and newer, simt before, with no
// remarks (`not`: the last case is an error under every kernel).
// RUN: grep -v expected- %s | not cp-opt -cp-lower-local-attention-to-gpu -split-input-file 2>%t.auto.err | FileCheck %s --check-prefix=AUTO
// RUN: not grep remark %t.auto.err
// RUN: not cp-opt %s -cp-lower-local-attention-to-gpu=chip=sm_75 -split-input-file 2>/dev/null | FileCheck %s --check-prefix=OLD-CHIP
// AUTO: nvvm.mma.sync
// OLD-CHIP: gpu.launch
// OLD-CHIP-NOT: nvvm.mma.sync
// RUN: not cp-opt %s -cp-lower-local-attention-to-gpu="kernel=mma chip=sm_75" -split-input-file 2>&1 | FileCheck %s --check-prefix=MMA-OLD-CHIP
// MMA-OLD-CHIP: error: cp-lower-local-attention-to-gpu: kernel=mma needs sm_80 or newer (cp.async, ldmatrix and bf16 mma.sync), got chip=sm_75; use kernel=simt
// RUN: not cp-opt %s -cp-lower-local-attention-to-gpu=kernel=wgmma -split-input-file 2>&1 | FileCheck %s --check-prefix=WGMMA
// WGMMA: error: cp-lower-local-attention-to-gpu: kernel=wgmma (warpgroup MMA with TMA loads, sm_90a) is not implemented; kernel=mma runs mma.sync tensor cores on sm_90 too (docs/GPU.md, "Why no wgmma kernel")
// RUN: not cp-opt %s -cp-lower-local-attention-to-gpu=kernel=fast -split-input-file 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: error: cp-lower-local-attention-to-gpu: kernel must be auto, simt or mma, got 'fast'
// RUN: not cp-opt %s -cp-lower-local-attention-to-gpu=chip=volta -split-input-file 2>&1 | FileCheck %s --check-prefix=CHIP
// CHIP: error: cp-lower-local-attention-to-gpu: chip must be sm_XY (for example sm_80 or sm_90a), got 'volta'

// Lq = 100 over 64-row blocks: 2 blocks along x; 128 threads (4 warps of
// 16 rows); the Q tile and two stages of K and V tiles in dynamic
// workgroup memory, rows padded by 8 elements:
// 2 * (64*40 + 2*64*40 + 2*64*24) = 21504 bytes.
// CHECK-LABEL: func @causal_bf16
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c2, {{.*}} = %c4, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c128, {{.*}} = %c1, {{.*}} = %c1) dynamic_shared_memory_size %c21504_i32
// CHECK:   %[[SHARED:.*]] = gpu.dynamic_shared_memory
// CHECK:   %[[QS:.*]] = memref.view %[[SHARED]][%c0][] {{.*}} to memref<64x40xbf16, #gpu.address_space<workgroup>>
// CHECK:   %[[KS:.*]] = memref.view %[[SHARED]][%c5120][] {{.*}} to memref<2x64x40xbf16, #gpu.address_space<workgroup>>
// CHECK:   %[[VS:.*]] = memref.view %[[SHARED]][%c15360][] {{.*}} to memref<2x64x24xbf16, #gpu.address_space<workgroup>>
// Q is copied by cp.async (16 bytes, zero-filled past the last row)...
// CHECK:   nvgpu.device_async_copy {{.*}}, %[[QS]][{{.*}}], 8, %{{.*}} {bypassL1}
// CHECK:   nvvm.cp.async.commit.group
// ... then the first visible key tile into stage 0, when there is one.
// CHECK:   scf.if
// CHECK:     nvgpu.device_async_copy {{.*}}, %[[KS]][%c0, {{.*}}], 8
// CHECK:     nvgpu.device_async_copy {{.*}}, %[[VS]][%c0, {{.*}}], 8
// CHECK:   nvvm.cp.async.commit.group
// CHECK:   nvvm.cp.async.wait.group 1
// CHECK:   gpu.barrier
// Q's A fragments, once, one ldmatrix.x4 per 16 columns of D = 32.
// CHECK:   nvgpu.ldmatrix %[[QS]]{{.*}} {numTiles = 4 : i32, transpose = false}
// CHECK:   nvgpu.ldmatrix %[[QS]]{{.*}} {numTiles = 4 : i32, transpose = false}
// The key loop carries the row max and sum of 2 rows and Dv / 8 = 2
// accumulator tiles of 4.
// CHECK:   scf.for {{.*}} -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) {
// The next tile's copies go to the other stage, then this tile's wait.
// CHECK:     scf.if
// CHECK:       nvgpu.device_async_copy {{.*}}, %[[KS]]
// CHECK:     nvvm.cp.async.commit.group
// CHECK:     nvvm.cp.async.wait.group 1
// CHECK:     gpu.barrier
// S = Q K^T: K's B fragments without .trans, bf16 mma.sync on i32 pairs.
// CHECK:     nvgpu.ldmatrix %[[KS]]{{.*}} {numTiles = 4 : i32, transpose = false}
// CHECK:     llvm.bitcast {{.*}} : vector<2xbf16> to i32
// CHECK:     nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// The masks only where the tile is partial or cut.
// CHECK:     scf.if %{{.*}} -> (f32,
// Row max over the quad.
// CHECK:     gpu.shuffle  xor %{{.*}}, %c1_i32, %c32_i32 : f32
// CHECK:     gpu.shuffle  xor %{{.*}}, %c2_i32, %c32_i32 : f32
// CHECK:     math.exp
// P in registers becomes the A operand: rounded to bf16 in pairs.
// CHECK:     arith.truncf {{.*}} : f32 to bf16
// CHECK:     vector.from_elements {{.*}} : vector<2xbf16>
// CHECK:     nvgpu.ldmatrix %[[VS]]{{.*}} {numTiles = 4 : i32, transpose = true}
// CHECK:     nvvm.mma.sync
// CHECK:     gpu.barrier
// CHECK:   nvvm.cp.async.wait.group 0
// Per row: the sum over the quad, its lse and 1 / l, then the stores.
// CHECK:   gpu.shuffle  xor
// CHECK:   math.log
// CHECK:   memref.store {{.*}} : memref<1x4x100x16xbf16>
// CHECK:   memref.store {{.*}} : memref<1x4x100xf32>
// CHECK:   gpu.terminator
func.func @causal_bf16(%q: memref<1x4x100x32xbf16>, %k: memref<1x2x130x32xbf16>, %v: memref<1x2x130x16xbf16>,
                       %o: memref<1x4x100x16xbf16>, %lse: memref<1x4x100xf32>, %qo: index) {
  %c0 = arith.constant 0 : index
  cp.buffer.local_attention %q, %k, %v offsets(%qo, %c0) into %o, %lse mask = causal
      : memref<1x4x100x32xbf16>, memref<1x2x130x32xbf16>, memref<1x2x130x16xbf16> into memref<1x4x100x16xbf16>, memref<1x4x100xf32>
  return
}

// -----

// f16 operands stay vector<2xf16> for mma.sync.
// CHECK-LABEL: func @none_f16
// CHECK: nvvm.mma.sync {{.*}} : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
func.func @none_f16(%q: memref<1x2x64x64xf16>, %o: memref<1x2x64x64xf16>) {
  %c0 = arith.constant 0 : index
  cp.buffer.local_attention %q, %q, %q offsets(%c0, %c0) into %o
      : memref<1x2x64x64xf16>, memref<1x2x64x64xf16>, memref<1x2x64x64xf16> into memref<1x2x64x64xf16>
  return
}

// -----

// What the tensor-core kernel does not take gets the SIMT kernel, with a
// remark under kernel=mma naming the reason.
// CHECK-LABEL: func @f32_falls_back
// CHECK-NOT: nvvm.mma.sync
// CHECK: workgroup(
func.func @f32_falls_back(%q: memref<1x2x64x64xf32>, %o: memref<1x2x64x64xf32>) {
  %c0 = arith.constant 0 : index
  // expected-remark @below {{uses the SIMT kernel, not kernel=mma: Q is f32; mma.sync takes f16 or bf16}}
  cp.buffer.local_attention %q, %q, %q offsets(%c0, %c0) into %o
      : memref<1x2x64x64xf32>, memref<1x2x64x64xf32>, memref<1x2x64x64xf32> into memref<1x2x64x64xf32>
  return
}

// -----

// CHECK-LABEL: func @odd_head_dim
// CHECK-NOT: nvvm.mma.sync
func.func @odd_head_dim(%q: memref<1x2x64x24xbf16>, %o: memref<1x2x64x24xbf16>) {
  %c0 = arith.constant 0 : index
  // expected-remark @below {{uses the SIMT kernel, not kernel=mma: D = 24 and Dv = 24 must be multiples of 16 and at most 128}}
  cp.buffer.local_attention %q, %q, %q offsets(%c0, %c0) into %o
      : memref<1x2x64x24xbf16>, memref<1x2x64x24xbf16>, memref<1x2x64x24xbf16> into memref<1x2x64x24xbf16>
  return
}

// -----

// CHECK-LABEL: func @head_dim_160
// CHECK-NOT: nvvm.mma.sync
func.func @head_dim_160(%q: memref<1x1x64x160xbf16>, %o: memref<1x1x64x160xbf16>) {
  %c0 = arith.constant 0 : index
  // expected-remark @below {{uses the SIMT kernel, not kernel=mma: D = 160 and Dv = 160 must be multiples of 16 and at most 128}}
  cp.buffer.local_attention %q, %q, %q offsets(%c0, %c0) into %o
      : memref<1x1x64x160xbf16>, memref<1x1x64x160xbf16>, memref<1x1x64x160xbf16> into memref<1x1x64x160xbf16>
  return
}

// -----

// Subviews whose rows stay 16-byte aligned (a zigzag chunk: offset 4096)
// take the tensor-core kernel...
// CHECK-LABEL: func @aligned_chunk
// CHECK: nvvm.mma.sync
func.func @aligned_chunk(%q: memref<1x2x64x32xbf16, strided<[8192, 4096, 32, 1], offset: 4096>>, %k: memref<1x2x64x32xbf16>,
                         %o: memref<1x2x64x32xbf16>) {
  %c0 = arith.constant 0 : index
  cp.buffer.local_attention %q, %k, %k offsets(%c0, %c0) into %o
      : memref<1x2x64x32xbf16, strided<[8192, 4096, 32, 1], offset: 4096>>, memref<1x2x64x32xbf16>, memref<1x2x64x32xbf16> into memref<1x2x64x32xbf16>
  return
}

// -----

// ... rows 72 bytes apart do not.
// CHECK-LABEL: func @misaligned_rows
// CHECK-NOT: nvvm.mma.sync
func.func @misaligned_rows(%q: memref<1x2x64x32xbf16, strided<[8192, 4096, 36, 1]>>, %k: memref<1x2x64x32xbf16>,
                           %o: memref<1x2x64x32xbf16>) {
  %c0 = arith.constant 0 : index
  // expected-remark @below {{uses the SIMT kernel, not kernel=mma: Q has layout strided<[8192, 4096, 36, 1]>; cp.async copies 16-byte rows: the last dim must be contiguous, and the offset and the other strides static multiples of 8 elements}}
  cp.buffer.local_attention %q, %k, %k offsets(%c0, %c0) into %o
      : memref<1x2x64x32xbf16, strided<[8192, 4096, 36, 1]>>, memref<1x2x64x32xbf16>, memref<1x2x64x32xbf16> into memref<1x2x64x32xbf16>
  return
}

// -----

// Dynamic head dims are the SIMT kernel's error, not a crash.
func.func @dynamic_head_dim(%q: memref<1x4x40x?xbf16>, %o: memref<1x4x40x?xbf16>) {
  %c0 = arith.constant 0 : index
  // expected-remark @below {{uses the SIMT kernel, not kernel=mma: D or Dv is dynamic; the kernel's tiles need them static}}
  // expected-error @below {{needs static head dims D and Dv for the GPU kernel's workgroup memory, got D = ? and Dv = ?}}
  cp.buffer.local_attention %q, %q, %q offsets(%c0, %c0) into %o
      : memref<1x4x40x?xbf16>, memref<1x4x40x?xbf16>, memref<1x4x40x?xbf16> into memref<1x4x40x?xbf16>
  return
}
