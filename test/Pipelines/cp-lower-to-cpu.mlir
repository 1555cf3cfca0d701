// cp-lower-to-cpu: cp tensor IR all the way to the LLVM dialect, with the
// collectives as libcp_runtime calls, the attention on OpenMP threads and a
// C entry point whose last argument is the result buffer.
// RUN: cp-opt %s --cp-lower-to-cpu=scheme=allgather | FileCheck %s
// RUN: cp-opt %s --cp-lower-to-cpu="scheme=head_tail threads=false" | FileCheck %s --check-prefix=SERIAL
// RUN: cp-opt %s --cp-lower-to-cpu=scheme=ulysses | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=LLVMIR
// RUN: cp-opt %s --cp-lower-to-cpu=scheme=ring | FileCheck %s --check-prefix=RING
// RUN: not cp-opt %s --cp-lower-to-cpu="scheme=hybrid(3)" 2>&1 | FileCheck %s --check-prefix=REFUSED
// RUN: not cp-opt %s --cp-lower-to-cpu="scheme=sideways" 2>&1 | FileCheck %s --check-prefix=UNKNOWN

shard.grid @cp(shape = 4)

func.func @attention(%q: tensor<1x8x64x32xf32>, %k: tensor<1x4x64x32xf32>,
                     %v: tensor<1x4x64x32xf32>) -> tensor<1x8x64x32xf32> {
  %o = cp.attention %q, %k, %v on @cp grid_axes = [0] mask = causal
      : tensor<1x8x64x32xf32>, tensor<1x4x64x32xf32>, tensor<1x4x64x32xf32>
      -> tensor<1x8x64x32xf32>
  return %o : tensor<1x8x64x32xf32>
}

// The pipeline's scheme option is parsed once and handed to its passes; the
// first that uses it reports text that names no scheme, once.
// UNKNOWN: error: cp-choose-scheme: invalid scheme option 'sideways': unknown scheme 'sideways'
// UNKNOWN-NOT: invalid scheme option

// Nothing of cp or shard is left, only LLVM (and OpenMP) ops.
// CHECK-NOT: cp.
// CHECK-NOT: shard.
// CHECK-DAG: llvm.func @cp_rt_group(
// CHECK-DAG: llvm.func @cp_rt_all_gather_f32(
// CHECK-DAG: llvm.func @cp_rt_grid_coord(
// The attention loop nest is a private kernel function the layer calls
// (cp-outline-local-attention), after the C entry point.
// CHECK: llvm.func @attention(
// CHECK:   llvm.call @cp_rt_grid_coord
// CHECK:   llvm.call @cp_rt_all_gather_f32
// CHECK:   llvm.call @cp_rt_all_gather_f32
// CHECK:   llvm.call @cp_local_attention(
// CHECK: llvm.func @_mlir_ciface_attention(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
// CHECK: llvm.func internal @cp_local_attention(
// CHECK:   omp.parallel
// CHECK:   llvm.intr.fma

// SERIAL-NOT: omp.
// SERIAL: llvm.call @cp_rt_exchange_mirror_f32
// SERIAL: llvm.call @cp_rt_all_gather_f32
// SERIAL-NOT: omp.
// SERIAL: llvm.func @_mlir_ciface_attention

// LLVMIR: call void @cp_rt_all_to_all_f32(
// LLVMIR: call void @cp_local_attention(
// LLVMIR: define void @_mlir_ciface_attention(ptr %0, ptr %1, ptr %2, ptr %3)
// LLVMIR: define internal void @cp_local_attention(
// LLVMIR: call void (ptr, i32, ptr, ...) @__kmpc_fork_call(

// Ring: 3 steps of shifted K and V, each started before the attention it
// overlaps and waited for after it: the shifts of step 0, then those of the
// loop over the middle steps (the IR holds each once, whatever P is).
// RING: llvm.func @attention(
// RING-COUNT-4: llvm.call @cp_rt_shift_start_f32
// RING-NOT: llvm.call @cp_rt_shift_start_f32
// RING-NOT: llvm.call @cp_rt_shift_f32
// RING: llvm.func @_mlir_ciface_attention

// REFUSED: error: 'cp.attention' op cannot use scheme #cp.scheme<hybrid(3)>: hybrid needs the CP group size P (4) divisible by the Ulysses degree u (3); choose u dividing P
