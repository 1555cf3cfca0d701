// Both forward GPU kernels of cp-lower-local-attention-to-gpu, run on the
// CPU by cp-gpu-emulate (an interpreter of the lowered IR: a fiber per GPU
// thread, warp ops evaluated with the PTX ISA's fragment layouts, cp.async
// deferred to its wait_group and its destination off limits until then,
// bounds- and alignment-checked memory) and compared with the plain
// reference attention. Tolerances are max abs errors: 8e-3 for bf16
// and 2e-3 for f16, where the tensor-core kernel rounds P to the element
// type; the SIMT kernel computes in f32.
//
// RUN: cp-opt %s -cp-lower-local-attention-to-gpu=kernel=simt -o %t.simt.mlir
// Every case takes the tensor-core kernel under kernel=mma: no remark says
// it fell back to SIMT.
// RUN: cp-opt %s -cp-lower-local-attention-to-gpu=kernel=mma -o %t.mma.mlir 2>%t.mma.err
// RUN: not grep remark %t.mma.err
// RUN: grep -c nvvm.mma.sync %t.mma.mlir | FileCheck %s --check-prefix=MMA-COUNT
// MMA-COUNT: {{[1-9][0-9][0-9]+}}
// RUN: for kernel in simt mma; do \
// RUN:   echo "kernel $kernel"; \
// RUN:   cp-gpu-emulate %t.$kernel.mlir --func causal_gqa --mask causal --q-offset 40 || exit 1; \
// RUN:   cp-gpu-emulate %t.$kernel.mlir --func none_f16 --tolerance 2e-3 || exit 1; \
// RUN:   cp-gpu-emulate %t.$kernel.mlir --func window_offsets --mask window:37 --q-offset 30 --kv-offset 10 || exit 1; \
// RUN:   cp-gpu-emulate %t.$kernel.mlir --func softcap_explicit --mask causal --softcap 2 --tolerance 2e-3 || exit 1; \
// RUN:   cp-gpu-emulate %t.$kernel.mlir --func document --mask causal || exit 1; \
// RUN:   cp-gpu-emulate %t.$kernel.mlir --func wide_heads || exit 1; \
// RUN:   cp-gpu-emulate %t.$kernel.mlir --func rows_without_keys --mask causal --kv-offset 50 || exit 1; \
// RUN:   cp-gpu-emulate %t.$kernel.mlir --func mla --mask causal || exit 1; \
// RUN:   cp-gpu-emulate %t.$kernel.mlir --func zigzag_chunk --mask causal --q-offset 128 || exit 1; \
// RUN:   cp-gpu-emulate %t.$kernel.mlir --func sinks --mask causal --kv-offset 50 || exit 1; \
// RUN: done | FileCheck %s
//
// The comparison can fail: ldmatrix.trans evaluated without transposing
// (V loaded as if it were K) breaks the tensor-core kernel.
// RUN: not cp-gpu-emulate %t.mma.mlir --func causal_gqa --mask causal --q-offset 40 --break-ldmatrix-trans | FileCheck %s --check-prefix=BROKEN
// BROKEN: FAIL causal_gqa
//
// Without the barrier that ends each key tile, the next tile's cp.async
// overwrites a stage another warp still reads (the default warp-first
// schedule runs warp 0 ahead until a barrier stops it).
// RUN: %cp_python %S/Inputs/drop_loop_barrier.py %t.mma.mlir %t.race.mlir
// RUN: not cp-gpu-emulate %t.race.mlir --func causal_gqa --mask causal --q-offset 40 2>&1 | FileCheck %s --check-prefix=RACE
// RACE: cp-gpu-emulate: accesses workgroup memory that a cp.async has not landed in yet (a missing cp.async.wait_group or gpu.barrier) at 'nvgpu.ldmatrix'
//
// The intact kernel also passes with every thread run in turn.
// RUN: cp-gpu-emulate %t.mma.mlir --func causal_gqa --mask causal --q-offset 40 --schedule=round-robin | FileCheck %s --check-prefix=ROUND-ROBIN
// ROUND-ROBIN: PASS causal_gqa
//
// The tensor-core kernel is what ran: its launch has 128 threads and
// dynamic workgroup memory, and mma.sync ops.
// RUN: FileCheck %s --check-prefix=MMA < %t.mma.mlir
// MMA-LABEL: func.func @causal_gqa
// MMA: gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c128{{.*}}) dynamic_shared_memory_size
// MMA: nvgpu.device_async_copy
// MMA: nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = false}
// MMA: nvvm.mma.sync
// MMA: nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = true}

// CHECK-LABEL: kernel simt
// CHECK: PASS causal_gqa: B=1 H=4 Hkv=2 Sq=100 Sk=130 D=32 Dv=16
// CHECK: PASS none_f16:
// CHECK: PASS window_offsets:
// CHECK: PASS softcap_explicit:
// CHECK: PASS document:
// CHECK: PASS wide_heads: {{.*}} D=128 Dv=128
// CHECK: PASS rows_without_keys:
// CHECK: PASS mla: {{.*}} D=48 Dv=32
// CHECK: PASS zigzag_chunk:
// CHECK: PASS sinks:
// CHECK-LABEL: kernel mma
// CHECK: PASS causal_gqa:
// CHECK: PASS none_f16:
// CHECK: PASS window_offsets:
// CHECK: PASS softcap_explicit:
// CHECK: PASS document:
// CHECK: PASS wide_heads:
// CHECK: PASS rows_without_keys:
// CHECK: PASS mla:
// CHECK: PASS zigzag_chunk:
// CHECK: PASS sinks:

// GQA (two query heads per KV head), Dv != D, partial query and key tiles,
// a query offset, f32 output and lse.
func.func @causal_gqa(%q: memref<1x4x100x32xbf16>, %k: memref<1x2x130x32xbf16>, %v: memref<1x2x130x16xbf16>,
                      %o: memref<1x4x100x16xf32>, %lse: memref<1x4x100xf32>) {
  %qo = arith.constant 40 : index
  %ko = arith.constant 0 : index
  cp.buffer.local_attention %q, %k, %v offsets(%qo, %ko) into %o, %lse mask = causal
      : memref<1x4x100x32xbf16>, memref<1x2x130x32xbf16>, memref<1x2x130x16xbf16> into memref<1x4x100x16xf32>, memref<1x4x100xf32>
  return
}

// f16 in and out, two batches, three key tiles, no mask.
func.func @none_f16(%q: memref<2x2x70x64xf16>, %k: memref<2x2x150x64xf16>, %v: memref<2x2x150x64xf16>,
                    %o: memref<2x2x70x64xf16>) {
  %c0 = arith.constant 0 : index
  cp.buffer.local_attention %q, %k, %v offsets(%c0, %c0) into %o
      : memref<2x2x70x64xf16>, memref<2x2x150x64xf16>, memref<2x2x150x64xf16> into memref<2x2x70x64xf16>
  return
}

// A sliding window with both offsets: tiles skipped on both sides.
func.func @window_offsets(%q: memref<1x2x90x32xbf16>, %k: memref<1x2x128x32xbf16>, %v: memref<1x2x128x32xbf16>,
                          %o: memref<1x2x90x32xbf16>, %lse: memref<1x2x90xf32>) {
  %qo = arith.constant 30 : index
  %ko = arith.constant 10 : index
  cp.buffer.local_attention %q, %k, %v offsets(%qo, %ko) into %o, %lse mask = sliding_window(37)
      : memref<1x2x90x32xbf16>, memref<1x2x128x32xbf16>, memref<1x2x128x32xbf16> into memref<1x2x90x32xbf16>, memref<1x2x90xf32>
  return
}

// A score_mod and an explicit boolean mask on every tile.
func.func private @softcap(%x: f32, %b: index, %h: index, %qi: index, %ki: index) -> f32 {
  %cap = arith.constant 2.0 : f32
  %xs = arith.divf %x, %cap : f32
  %t = math.tanh %xs : f32
  %y = arith.mulf %t, %cap : f32
  return %y : f32
}
func.func @softcap_explicit(%q: memref<1x2x64x16xf16>, %k: memref<1x2x64x16xf16>, %v: memref<1x2x64x16xf16>,
                            %m: memref<64x64xi1>, %o: memref<1x2x64x16xf32>) {
  %c0 = arith.constant 0 : index
  cp.buffer.local_attention %q, %k, %v offsets(%c0, %c0) explicit_mask %m into %o mask = causal
      score_mod = @softcap
      : memref<1x2x64x16xf16>, memref<1x2x64x16xf16>, memref<1x2x64x16xf16>, memref<64x64xi1> into memref<1x2x64x16xf32>
  return
}

// A document mask_mod reading segment ids at global positions.
func.func private @same_document(%b: index, %h: index, %qi: index, %ki: index, %s: memref<80xi32>) -> i1 {
  %a = memref.load %s[%qi] : memref<80xi32>
  %c = memref.load %s[%ki] : memref<80xi32>
  %same = arith.cmpi eq, %a, %c : i32
  return %same : i1
}
func.func @document(%q: memref<1x2x80x32xbf16>, %k: memref<1x2x80x32xbf16>, %v: memref<1x2x80x32xbf16>,
                    %seg: memref<80xi32>, %o: memref<1x2x80x32xf32>) {
  %c0 = arith.constant 0 : index
  cp.buffer.local_attention %q, %k, %v offsets(%c0, %c0) mod_operands(%seg : memref<80xi32>) into %o
      mask = causal mask_mod = @same_document
      : memref<1x2x80x32xbf16>, memref<1x2x80x32xbf16>, memref<1x2x80x32xbf16> into memref<1x2x80x32xf32>
  return
}

// The widest heads the tensor-core kernel takes.
func.func @wide_heads(%q: memref<1x1x65x128xbf16>, %k: memref<1x1x70x128xbf16>, %v: memref<1x1x70x128xbf16>,
                      %o: memref<1x1x65x128xbf16>) {
  %c0 = arith.constant 0 : index
  cp.buffer.local_attention %q, %k, %v offsets(%c0, %c0) into %o
      : memref<1x1x65x128xbf16>, memref<1x1x70x128xbf16>, memref<1x1x70x128xbf16> into memref<1x1x65x128xbf16>
  return
}

// Keys start at global position 50: queries 0..49 see none (output 0,
// lse -inf).
func.func @rows_without_keys(%q: memref<1x1x96x32xbf16>, %k: memref<1x1x64x32xbf16>, %v: memref<1x1x64x32xbf16>,
                             %o: memref<1x1x96x32xf32>, %lse: memref<1x1x96xf32>) {
  %c0 = arith.constant 0 : index
  %ko = arith.constant 50 : index
  cp.buffer.local_attention %q, %k, %v offsets(%c0, %ko) into %o, %lse mask = causal
      : memref<1x1x96x32xbf16>, memref<1x1x64x32xbf16>, memref<1x1x64x32xbf16> into memref<1x1x96x32xf32>, memref<1x1x96xf32>
  return
}

// MLA-like head dims: D = 48, Dv = 32.
func.func @mla(%q: memref<1x2x70x48xbf16>, %k: memref<1x1x70x48xbf16>, %v: memref<1x1x70x32xbf16>,
               %o: memref<1x2x70x32xf32>) {
  %c0 = arith.constant 0 : index
  cp.buffer.local_attention %q, %k, %v offsets(%c0, %c0) into %o mask = causal
      : memref<1x2x70x48xbf16>, memref<1x1x70x48xbf16>, memref<1x1x70x32xbf16> into memref<1x2x70x32xf32>
  return
}

// Q a strided chunk of a longer sequence (as zigzag's halves are): rows
// stay 16-byte aligned, so the tensor-core kernel copies them by cp.async.
func.func @zigzag_chunk(%q: memref<1x2x64x32xbf16, strided<[8192, 4096, 32, 1], offset: 2048>>,
                        %k: memref<1x2x192x32xbf16>, %v: memref<1x2x192x32xbf16>, %o: memref<1x2x64x32xf32>) {
  %qo = arith.constant 128 : index
  %c0 = arith.constant 0 : index
  cp.buffer.local_attention %q, %k, %v offsets(%qo, %c0) into %o mask = causal
      : memref<1x2x64x32xbf16, strided<[8192, 4096, 32, 1], offset: 2048>>, memref<1x2x192x32xbf16>, memref<1x2x192x32xbf16> into memref<1x2x64x32xf32>
  return
}

// Attention sinks (sink[h] = 1.5 h - 1, and -inf for head 0: no sink):
// each row's sink joins the denominator once, at the row's end; the first
// 50 rows see no key (the keys start at 50) and give output 0 with the
// sink as their lse (-inf in head 0).
func.func @sinks(%q: memref<1x4x100x32xbf16>, %k: memref<1x2x130x32xbf16>, %v: memref<1x2x130x16xbf16>,
                 %s: memref<4xf32>, %o: memref<1x4x100x16xf32>, %lse: memref<1x4x100xf32>) {
  %qo = arith.constant 0 : index
  %ko = arith.constant 50 : index
  cp.buffer.local_attention %q, %k, %v offsets(%qo, %ko) sinks(%s : memref<4xf32>) into %o, %lse mask = causal
      : memref<1x4x100x32xbf16>, memref<1x2x130x32xbf16>, memref<1x2x130x16xbf16> into memref<1x4x100x16xf32>, memref<1x4x100xf32>
  return
}
