// cp-lower-to-nvvm: cp tensor IR to the LLVM dialect for GPUs. Kernels are
// embedded as gpu.binary; every launch, copy, allocation and collective of
// the host function runs on one stream, in program order, and the function
// waits for that stream before it returns. format=isa (PTX) needs no CUDA.
// DEFINE: %{nvvm} = format=isa libdevice= toolkit=
// RUN: cp-opt %s --cp-lower-to-nvvm="scheme=allgather %{nvvm}" | FileCheck %s --check-prefixes=CHECK,AG,ONE
// RUN: cp-opt %s --cp-lower-to-nvvm="scheme=ulysses %{nvvm}" | FileCheck %s --check-prefixes=CHECK,UL,ONE
// RUN: cp-opt %s --cp-lower-to-nvvm="scheme=hybrid(2) %{nvvm}" | FileCheck %s --check-prefixes=CHECK,HY,ONE
// RUN: cp-opt %s --cp-lower-to-nvvm="scheme=head_tail %{nvvm}" | FileCheck %s --check-prefixes=CHECK,HT,ONE
// RUN: cp-opt %s --cp-lower-to-nvvm="scheme=ring %{nvvm}" | FileCheck %s --check-prefixes=CHECK,RING
// RUN: cp-opt %s --cp-lower-to-nvvm="scheme=head_tail %{nvvm}" | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=LLVMIR
// examples/attention.mlir under every scheme becomes LLVM IR.
// RUN: for s in allgather ulysses 'hybrid(2)' head_tail ring zigzag; do \
// RUN:   cp-opt %cp_src_root/examples/attention.mlir "--cp-lower-to-nvvm=scheme=$s %{nvvm}" \
// RUN:     | mlir-translate --mlir-to-llvmir -o /dev/null && echo "translated $s" || exit 1; \
// RUN: done | FileCheck %s --check-prefix=TRANSLATE
// TRANSLATE: translated allgather
// TRANSLATE-NEXT: translated ulysses
// TRANSLATE-NEXT: translated hybrid(2)
// TRANSLATE-NEXT: translated head_tail
// TRANSLATE-NEXT: translated ring
// TRANSLATE-NEXT: translated zigzag

shard.grid @cp(shape = 4)

func.func @attention(%q: tensor<1x8x64x32xf32>, %k: tensor<1x4x64x32xf32>,
                     %v: tensor<1x4x64x32xf32>) -> tensor<1x8x64x32xf32> {
  %o = cp.attention %q, %k, %v on @cp grid_axes = [0] mask = causal
      : tensor<1x8x64x32xf32>, tensor<1x4x64x32xf32>, tensor<1x4x64x32xf32>
      -> tensor<1x8x64x32xf32>
  return %o : tensor<1x8x64x32xf32>
}

// CHECK-NOT: cp.buffer
// CHECK-NOT: shard.
// CHECK-LABEL: llvm.func @attention(
// CHECK: %[[S:.*]] = llvm.call @mgpuStreamCreate()

// allgather: K and V gathered (NCCL) into stacked buffers, each unpacked
// along the sequence by one copy kernel (not one per rank; K and V launch
// the same one, cp-share-equal-kernels), then the attention kernel; all on
// stream %S.
// AG: llvm.call @cp_rt_gpu_all_gather({{.*}}, %[[S]])
// AG-NEXT: gpu.launch_func <%[[S]] : !llvm.ptr> @attention_kernel::@attention_kernel
// AG-NOT: gpu.launch_func
// AG: llvm.call @cp_rt_gpu_all_gather({{.*}}, %[[S]])
// AG-NEXT: gpu.launch_func <%[[S]] : !llvm.ptr> @attention_kernel::@attention_kernel
// AG-NOT: gpu.launch_func
// AG: gpu.launch_func <%[[S]] : !llvm.ptr> @attention_kernel_1::@attention_kernel blocks in ({{.*}}) threads in ({{.*}})
// AG-NOT: gpu.launch_func

// ulysses: Q, K, V to heads, attention, output back: four all-to-alls.
// UL-COUNT-3: llvm.call @cp_rt_gpu_all_to_all({{.*}}, %[[S]])
// UL: gpu.launch_func <%[[S]] : !llvm.ptr>
// UL: llvm.call @cp_rt_gpu_all_to_all({{.*}}, %[[S]])

// hybrid(2): Ulysses on the inner axis, K/V gathered on the outer one.
// HY: llvm.call @cp_rt_gpu_all_to_all({{.*}}, %[[S]])
// HY: llvm.call @cp_rt_gpu_all_gather({{.*}}, %[[S]])
// HY: llvm.call @cp_rt_gpu_all_gather({{.*}}, %[[S]])
// HY: llvm.call @cp_rt_gpu_all_to_all({{.*}}, %[[S]])

// head_tail: the query tail goes to the mirror rank, K/V are gathered, the
// tail output comes back.
// HT: llvm.call @cp_rt_gpu_exchange_mirror({{.*}}, %[[S]])
// HT: llvm.call @cp_rt_gpu_all_gather({{.*}}, %[[S]])
// HT: llvm.call @cp_rt_gpu_all_gather({{.*}}, %[[S]])
// HT: llvm.call @cp_rt_gpu_exchange_mirror({{.*}}, %[[S]])

// ring: K and V for step 1 are started (on the runtime's communication
// stream, after %S's work so far) before step 0's attention kernel is
// launched on %S, and %S waits for them only after it. The middle steps are
// one loop (a branch back to its header), whose body does the same: start
// the next blocks, attend, wait. Host bookkeeping of the loop's buffers
// (which to free) stays in host memory.
// RING: %[[K1:.*]] = llvm.call @cp_rt_gpu_shift_start({{.*}}, %[[S]]) : {{.*}} -> i64
// RING: %[[V1:.*]] = llvm.call @cp_rt_gpu_shift_start({{.*}}, %[[S]]) : {{.*}} -> i64
// RING: gpu.launch_func <%[[S]] : !llvm.ptr> @attention_kernel::@attention_kernel
// RING: llvm.call @cp_rt_gpu_wait(%[[K1]], %[[S]])
// RING-NEXT: llvm.call @cp_rt_gpu_wait(%[[V1]], %[[S]])
// RING: ^[[HEADER:bb[0-9]+]](
// RING: %[[K2:.*]] = llvm.call @cp_rt_gpu_shift_start(
// RING: gpu.launch_func
// RING: llvm.call @cp_rt_gpu_wait(%[[K2]],
// RING: llvm.br ^[[HEADER]](
// RING-NOT: llvm.call @cp_rt_gpu_shift_start

// Without branches %S is the function's one stream, waited for before it
// returns. The ring's branches each run on a stream of their own (from
// gpu-async-region), waited for before the branch ends.
// ONE: llvm.call @mgpuStreamSynchronize(%[[S]])
// ONE: llvm.call @mgpuStreamDestroy(%[[S]])
// RING: llvm.call @mgpuStreamSynchronize(
// RING-NEXT: llvm.call @mgpuStreamDestroy(
// CHECK: llvm.func @_mlir_ciface_attention(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
// The kernels, as PTX for sm_90.
// CHECK: gpu.binary @attention_kernel {{.*}}#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">{{.*}}assembly = "{{.*}}.target sm_90

// The translated module loads its kernels in a global constructor and
// launches them through the mgpu* ABI of libcp_runtime_gpu.
// LLVMIR: @llvm.global_ctors
// LLVMIR: call void @cp_rt_gpu_exchange_mirror(
// LLVMIR: call void @mgpuLaunchKernel(
// LLVMIR: call ptr @mgpuModuleLoadJIT(
