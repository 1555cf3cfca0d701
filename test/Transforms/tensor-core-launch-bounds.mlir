// cp-tensor-core-launch-bounds: kernels issuing mma.sync ask for one
// resident block per SM (PTX .minnctapersm 1); others are left alone.
// RUN: cp-opt %s -pass-pipeline='builtin.module(gpu.module(cp-tensor-core-launch-bounds))' | FileCheck %s

// CHECK-LABEL: gpu.module @kernels
gpu.module @kernels {
  // CHECK: gpu.func @tensor_cores({{.*}}) kernel attributes {known_block_size = array<i32: 128, 1, 1>, nvvm.minctasm = 1 : i32}
  gpu.func @tensor_cores(%a: i32, %c: f32) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %d = nvvm.mma.sync A[%a, %a, %a, %a] B[%a, %a] C[%c, %c, %c, %c]
        {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>,
         multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>,
         shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
    gpu.return
  }
  // An explicit bound is kept.
  // CHECK: gpu.func @already_bounded({{.*}}) kernel attributes {nvvm.minctasm = 2 : i32}
  gpu.func @already_bounded(%a: i32, %c: f32) kernel attributes {nvvm.minctasm = 2 : i32} {
    %d = nvvm.mma.sync A[%a, %a, %a, %a] B[%a, %a] C[%c, %c, %c, %c]
        {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>,
         multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>,
         shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
    gpu.return
  }
  // CHECK: gpu.func @simt() kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
  gpu.func @simt() kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    gpu.return
  }
}
