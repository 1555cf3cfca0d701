// cp-place-buffers-on-gpu: the host program's buffers live on the device.
// RUN: cp-opt %s -cp-place-buffers-on-gpu -split-input-file -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func @buffers
// CHECK-SAME: (%[[A:.*]]: memref<4x8xf32>, %[[S:.*]]: memref<2x8xf32, strided<[8, 1], offset: 8>>, %[[N:.*]]: index)
// CHECK: %[[B:.*]] = gpu.alloc () : memref<4x8xf32>
// CHECK: %[[D:.*]] = gpu.alloc (%[[N]]) : memref<?x8xf32>
// Dense to dense is a memcpy, strided a copy kernel (linalg.copy for now).
// CHECK: gpu.memcpy  %[[B]], %[[A]] : memref<4x8xf32>, memref<4x8xf32>
// CHECK: %[[V:.*]] = memref.subview %[[B]][0, 0] [2, 8] [1, 1]
// CHECK: linalg.copy ins(%[[S]] : memref<2x8xf32, strided<[8, 1], offset: 8>>) outs(%[[V]] : memref<2x8xf32, strided<[8, 1]>>)
// CHECK: gpu.dealloc  %[[B]] : memref<4x8xf32>
// CHECK: gpu.dealloc  %[[D]] : memref<?x8xf32>
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
func.func @buffers(%a: memref<4x8xf32>, %s: memref<2x8xf32, strided<[8, 1], offset: 8>>, %n: index) {
  %b = memref.alloc() : memref<4x8xf32>
  %d = memref.alloc(%n) : memref<?x8xf32>
  memref.copy %a, %b : memref<4x8xf32> to memref<4x8xf32>
  %v = memref.subview %b[0, 0] [2, 8] [1, 1] : memref<4x8xf32> to memref<2x8xf32, strided<[8, 1]>>
  memref.copy %s, %v : memref<2x8xf32, strided<[8, 1], offset: 8>> to memref<2x8xf32, strided<[8, 1]>>
  memref.dealloc %b : memref<4x8xf32>
  memref.dealloc %d : memref<?x8xf32>
  return
}

// -----

func.func @host_reads_device(%a: memref<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{reads or writes a device buffer from host code; GPU programs touch their buffers only in kernels}}
  %x = memref.load %a[%c0] : memref<4xf32>
  return %x : f32
}
