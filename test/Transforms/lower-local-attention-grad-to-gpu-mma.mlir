// cp-lower-local-attention-grad-to-gpu{kernel=mma}: FlashAttention-2's
// backward on tensor cores (docs/GPU.md, "The tensor-core backward"). Its
// numerics are checked on the CPU by test/Emulator/attention-grad-mma-*.test
// and its registers by test/GPU/ptxas-resources.test.
// RUN: cp-opt %s -cp-lower-local-attention-grad-to-gpu=kernel=mma -canonicalize -cse -split-input-file -verify-diagnostics | FileCheck %s
// dq=recompute: a dQ kernel per query tile instead of atomics.
// RUN: cp-opt %s -cp-lower-local-attention-grad-to-gpu="kernel=mma dq=recompute" -canonicalize -cse -split-input-file 2>/dev/null | FileCheck %s --check-prefix=RECOMPUTE
// The default (kernel=auto) is mma on sm_80 and newer with no remarks, the
// SIMT kernels before sm_80.
// RUN: grep -v expected- %s | cp-opt -cp-lower-local-attention-grad-to-gpu -split-input-file 2>%t.auto.err | FileCheck %s --check-prefix=AUTO
// RUN: not grep remark %t.auto.err
// RUN: grep -v expected- %s | cp-opt -cp-lower-local-attention-grad-to-gpu=chip=sm_75 -split-input-file 2>&1 | FileCheck %s --check-prefix=OLD-CHIP
// AUTO: nvvm.mma.sync
// OLD-CHIP-NOT: remark
// OLD-CHIP-NOT: nvvm.mma.sync
// A sm_86 block may use 99 KiB of workgroup memory: D = Dv = 128 needs more.
// RUN: grep -v expected- %s | cp-opt -cp-lower-local-attention-grad-to-gpu="kernel=mma chip=sm_86" -split-input-file 2>&1 | FileCheck %s --check-prefix=SM86
// SM86: remark: uses the SIMT backward, not kernel=mma: D = 128 and Dv = 128 need 114688 bytes of workgroup memory, over the 101376 a block may use on sm_86
// RUN: not cp-opt %s -cp-lower-local-attention-grad-to-gpu="kernel=mma chip=sm_75" -split-input-file 2>&1 | FileCheck %s --check-prefix=MMA-OLD-CHIP
// MMA-OLD-CHIP: error: cp-lower-local-attention-grad-to-gpu: kernel=mma needs sm_80 or newer (cp.async, ldmatrix and bf16 mma.sync), got chip=sm_75; use kernel=simt
// RUN: not cp-opt %s -cp-lower-local-attention-grad-to-gpu=dq=sorted -split-input-file 2>&1 | FileCheck %s --check-prefix=BAD-DQ
// BAD-DQ: error: cp-lower-local-attention-grad-to-gpu: dq must be atomic or recompute, got 'sorted'
// RUN: not cp-opt %s -cp-lower-local-attention-grad-to-gpu=kernel=fast -split-input-file 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: error: cp-lower-local-attention-grad-to-gpu: kernel must be auto, simt or mma, got 'fast'

// GQA 2:1, D = 32, Dv = 16, causal at a query offset, bf16 gradients.
// CHECK-LABEL: func @causal_gqa
// f32 scratch: lse and D_i padded to whole 64-row tiles (100 -> 128), and
// the f32 dQ the atomics add to.
// CHECK: %[[LSE:.*]] = memref.alloc() : memref<1x4x128xf32>
// CHECK: %[[DELTA:.*]] = memref.alloc() : memref<1x4x128xf32>
// CHECK: %[[DQACC:.*]] = memref.alloc() : memref<1x4x100x32xf32>
// Preprocessing, a thread per row of the padded tiles: D_i = rowsum(dO o O)
// and the lse (+inf where it is -inf: a row that saw no key), 0 and +inf
// for the padding; dQ zeroed.
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}} = %c4, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c128, {{.*}} = %c1, {{.*}} = %c1)
// CHECK:   math.fma
// CHECK:   arith.cmpf oeq
// CHECK:   memref.store {{.*}}, %[[DELTA]]
// CHECK:   memref.store {{.*}}, %[[LSE]]
// CHECK:   memref.store {{.*}}, %[[DQACC]]
// dK/dV: a block of 4 warps per (key tile of 64: ceil(130 / 64) = 3, KV
// head, batch). Workgroup memory: K [64][40], V [64][24], two stages of
// Q [64][40], dO [64][24], lse [64] and D_i [64] (f32), and dS [64][72]:
// 2 * (2560 + 1536 + 5120 + 3072 + 4608) + 4 * 256 = 34816 bytes.
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c3, {{.*}} = %c2, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c128, {{.*}} = %c1, {{.*}} = %c1) dynamic_shared_memory_size %c34816_i32
// CHECK:   %[[KS:.*]] = memref.view {{.*}} to memref<64x40xbf16, #gpu.address_space<workgroup>>
// CHECK:   %[[VS:.*]] = memref.view {{.*}} to memref<64x24xbf16, #gpu.address_space<workgroup>>
// CHECK:   %[[QS:.*]] = memref.view {{.*}} to memref<2x64x40xbf16, #gpu.address_space<workgroup>>
// CHECK:   %[[DOS:.*]] = memref.view {{.*}} to memref<2x64x24xbf16, #gpu.address_space<workgroup>>
// CHECK:   %[[LSES:.*]] = memref.view {{.*}} to memref<2x64xf32, #gpu.address_space<workgroup>>
// CHECK:   %[[DELTAS:.*]] = memref.view {{.*}} to memref<2x64xf32, #gpu.address_space<workgroup>>
// CHECK:   %[[DSS:.*]] = memref.view {{.*}} to memref<64x72xbf16, #gpu.address_space<workgroup>>
// The key tile once; lse and D_i rows by 16 threads each (4 floats).
// CHECK:   nvgpu.device_async_copy {{.*}}, %[[KS]]{{.*}}, 8
// CHECK:   nvgpu.device_async_copy {{.*}}, %[[VS]]{{.*}}, 8
// CHECK:   nvgpu.device_async_copy {{.*}}, %[[LSES]]{{.*}}, 4
// CHECK:   nvgpu.device_async_copy {{.*}}, %[[DELTAS]]{{.*}}, 4
// CHECK:   nvvm.cp.async.commit.group
// The loop over (query head of the group, visible query tile) carries dK
// (D / 8 = 4 tiles of 4) and dV (2 tiles of 4) in registers.
// CHECK:   scf.for {{.*}} -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) {
// Addresses derive from a lane id LLVM cannot hoist out of the loop.
// CHECK:     llvm.inline_asm has_side_effects "mov.u32 $0, $1;", "=r,r"
// The next iteration's tiles into the other stage, then this one's wait.
// CHECK:     scf.if
// CHECK:       nvgpu.device_async_copy {{.*}}, %[[QS]]
// CHECK:       nvgpu.device_async_copy {{.*}}, %[[DOS]]
// CHECK:     nvvm.cp.async.commit.group
// CHECK:     nvvm.cp.async.wait.group 1
// CHECK:     gpu.barrier
// Two slices of 32 queries: S^T = K Q^T and dP^T = V dO^T (no .trans) ...
// CHECK:     scf.for {{.*}} = %c0 to %c64 step %c32
// CHECK:       nvgpu.ldmatrix %[[KS]]{{.*}} {numTiles = 4 : i32, transpose = false}
// CHECK:       nvgpu.ldmatrix %[[QS]]{{.*}} {numTiles = 4 : i32, transpose = false}
// CHECK:       nvvm.mma.sync
// CHECK:       nvgpu.ldmatrix %[[VS]]{{.*}} {numTiles = 4 : i32, transpose = false}
// CHECK:       nvgpu.ldmatrix %[[DOS]]{{.*}} {numTiles = 4 : i32, transpose = false}
// ... P = exp(s - lse) with the masks only where the tile is partial or
// cut ...
// CHECK:       scf.if %{{.*}} -> (f32,
// CHECK:         memref.load %[[LSES]]
// CHECK:         math.exp
// CHECK:         memref.load %[[DELTAS]]
// ... dV += P^T dO and dK += dS^T Q with dO and Q by ldmatrix.trans ...
// CHECK:       nvgpu.ldmatrix %[[DOS]]{{.*}} {numTiles = 4 : i32, transpose = true}
// CHECK:       nvgpu.ldmatrix %[[QS]]{{.*}} {numTiles = 4 : i32, transpose = true}
// ... and dS^T written transposed for the dQ.
// CHECK:       memref.store {{.*}}, %[[DSS]]
// CHECK:     gpu.barrier
// dQ = dS K (K by ldmatrix.trans), added to the f32 dQ.
// CHECK:     nvgpu.ldmatrix %[[DSS]]{{.*}} {numTiles = 4 : i32, transpose = false}
// CHECK:     nvgpu.ldmatrix %[[KS]]{{.*}} {numTiles = 4 : i32, transpose = true}
// CHECK:     memref.atomic_rmw addf {{.*}}, %[[DQACC]]
// CHECK:   nvvm.cp.async.wait.group 0
// dK and dV written once, rounded to bf16.
// CHECK:   arith.truncf {{.*}} : f32 to bf16
// CHECK:   memref.store {{.*}} : memref<1x2x130x32xbf16>
// CHECK:   memref.store {{.*}} : memref<1x2x130x16xbf16>
// The f32 dQ rounded into dq.
// CHECK: gpu.launch
// CHECK:   memref.load %[[DQACC]]
// CHECK:   arith.truncf
// CHECK:   memref.store {{.*}} : memref<1x4x100x32xbf16>
// CHECK: memref.dealloc %[[LSE]]
// CHECK: memref.dealloc %[[DELTA]]
// CHECK: memref.dealloc %[[DQACC]]

// RECOMPUTE-LABEL: func @causal_gqa
// RECOMPUTE-NOT: memref.atomic_rmw
// Preprocessing, dK/dV (no dS buffer: 25600 bytes), then the dQ kernel
// per (query tile: ceil(100 / 64) = 2, head, batch) with Q and dO resident
// and two stages of K and V: 2 * (2560 + 1536 + 5120 + 3072) = 24576 bytes.
// RECOMPUTE: gpu.launch
// RECOMPUTE: gpu.launch {{.*}} dynamic_shared_memory_size %c25600_i32
// RECOMPUTE: gpu.launch blocks({{.*}}) in ({{.*}} = %c2, {{.*}} = %c4, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c128, {{.*}} = %c1, {{.*}} = %c1) dynamic_shared_memory_size %c24576_i32
// The key loop carries dQ: D / 8 = 4 tiles of 4.
// RECOMPUTE:   scf.for {{.*}} -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) {
// RECOMPUTE:     nvvm.mma.sync
// RECOMPUTE:   memref.store {{.*}} : memref<1x4x100x32xbf16>
// RECOMPUTE-NOT: gpu.launch
// RECOMPUTE: return
func.func @causal_gqa(%q: memref<1x4x100x32xbf16>, %k: memref<1x2x130x32xbf16>, %v: memref<1x2x130x16xbf16>,
                      %o: memref<1x4x100x16xbf16>, %lse: memref<1x4x100xf32>, %do: memref<1x4x100x16xbf16>,
                      %dq: memref<1x4x100x32xbf16>, %dk: memref<1x2x130x32xbf16>, %dv: memref<1x2x130x16xbf16>,
                      %qo: index) {
  %c0 = arith.constant 0 : index
  cp.buffer.local_attention_grad %q, %k, %v, %o, %lse, %do offsets(%qo, %c0)
      into %dq, %dk, %dv mask = causal
      : memref<1x4x100x32xbf16>, memref<1x2x130x32xbf16>, memref<1x2x130x16xbf16>,
        memref<1x4x100x16xbf16>, memref<1x4x100xf32>, memref<1x4x100x16xbf16>
      into memref<1x4x100x32xbf16>, memref<1x2x130x32xbf16>, memref<1x2x130x16xbf16>
  return
}

// -----

// An f32 dq is the atomics' accumulator itself: no scratch dQ and no
// rounding launch.
// CHECK-LABEL: func @f32_gradients
// CHECK-COUNT-2: memref.alloc()
// CHECK-NOT: memref.alloc()
// CHECK: memref.atomic_rmw addf {{.*}}, %arg6
// CHECK-COUNT-2: memref.dealloc
// CHECK-NEXT: return
func.func @f32_gradients(%q: memref<1x2x64x64xf16>, %o: memref<1x2x64x64xf16>, %lse: memref<1x2x64xf32>,
                         %dq: memref<1x2x64x64xf32>, %dk: memref<1x2x64x64xf32>) {
  %c0 = arith.constant 0 : index
  cp.buffer.local_attention_grad %q, %q, %q, %o, %lse, %o offsets(%c0, %c0)
      into %dq, %dk, %dk
      : memref<1x2x64x64xf16>, memref<1x2x64x64xf16>, memref<1x2x64x64xf16>,
        memref<1x2x64x64xf16>, memref<1x2x64xf32>, memref<1x2x64x64xf16>
      into memref<1x2x64x64xf32>, memref<1x2x64x64xf32>, memref<1x2x64x64xf32>
  return
}

// -----

// The widest heads: 2 * (2 * 64 * 136 + 4 * 64 * 136 + 64 * 72) + 1024 =
// 114688 bytes, within sm_90's 227 KiB (not sm_86's 99 KiB).
// CHECK-LABEL: func @wide_heads
// CHECK: dynamic_shared_memory_size %c114688_i32
// CHECK: nvvm.mma.sync
func.func @wide_heads(%q: memref<1x1x64x128xbf16>, %lse: memref<1x1x64xf32>) {
  %c0 = arith.constant 0 : index
  cp.buffer.local_attention_grad %q, %q, %q, %q, %lse, %q offsets(%c0, %c0)
      into %q, %q, %q
      : memref<1x1x64x128xbf16>, memref<1x1x64x128xbf16>, memref<1x1x64x128xbf16>,
        memref<1x1x64x128xbf16>, memref<1x1x64xf32>, memref<1x1x64x128xbf16>
      into memref<1x1x64x128xbf16>, memref<1x1x64x128xbf16>, memref<1x1x64x128xbf16>
  return
}

// -----

// What the tensor-core kernels do not take gets the SIMT kernels, with a
// remark under kernel=mma naming the reason.
// CHECK-LABEL: func @f32_falls_back
// CHECK-NOT: nvvm.mma.sync
// CHECK: private(
func.func @f32_falls_back(%q: memref<1x2x64x64xf32>, %lse: memref<1x2x64xf32>) {
  %c0 = arith.constant 0 : index
  // expected-remark @below {{uses the SIMT backward, not kernel=mma: Q is f32; mma.sync takes f16 or bf16}}
  cp.buffer.local_attention_grad %q, %q, %q, %q, %lse, %q offsets(%c0, %c0)
      into %q, %q, %q
      : memref<1x2x64x64xf32>, memref<1x2x64x64xf32>, memref<1x2x64x64xf32>,
        memref<1x2x64x64xf32>, memref<1x2x64xf32>, memref<1x2x64x64xf32>
      into memref<1x2x64x64xf32>, memref<1x2x64x64xf32>, memref<1x2x64x64xf32>
  return
}

// -----

// CHECK-LABEL: func @odd_head_dim
// CHECK-NOT: nvvm.mma.sync
func.func @odd_head_dim(%q: memref<1x2x64x24xbf16>, %lse: memref<1x2x64xf32>) {
  %c0 = arith.constant 0 : index
  // expected-remark @below {{uses the SIMT backward, not kernel=mma: D = 24 and Dv = 24 must be multiples of 16 and at most 128}}
  cp.buffer.local_attention_grad %q, %q, %q, %q, %lse, %q offsets(%c0, %c0)
      into %q, %q, %q
      : memref<1x2x64x24xbf16>, memref<1x2x64x24xbf16>, memref<1x2x64x24xbf16>,
        memref<1x2x64x24xbf16>, memref<1x2x64xf32>, memref<1x2x64x24xbf16>
      into memref<1x2x64x24xbf16>, memref<1x2x64x24xbf16>, memref<1x2x64x24xbf16>
  return
}

// -----

// An f32 dO beside a bf16 Q: the kernel has one 16-bit operand type.
// CHECK-LABEL: func @mixed_types
// CHECK-NOT: nvvm.mma.sync
func.func @mixed_types(%q: memref<1x2x64x32xbf16>, %do: memref<1x2x64x32xf32>, %lse: memref<1x2x64xf32>) {
  %c0 = arith.constant 0 : index
  // expected-remark @below {{uses the SIMT backward, not kernel=mma: Q is bf16 but dO is f32; mma.sync takes one element type}}
  cp.buffer.local_attention_grad %q, %q, %q, %q, %lse, %do offsets(%c0, %c0)
      into %q, %q, %q
      : memref<1x2x64x32xbf16>, memref<1x2x64x32xbf16>, memref<1x2x64x32xbf16>,
        memref<1x2x64x32xbf16>, memref<1x2x64xf32>, memref<1x2x64x32xf32>
      into memref<1x2x64x32xbf16>, memref<1x2x64x32xbf16>, memref<1x2x64x32xbf16>
  return
}
