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

// -----

// Host bookkeeping stays on the host: buffer deallocation's ownership
// arrays (pointers and flags, filled and read by the host and handed to a
// private helper) keep memref.alloc / memref.dealloc, and the helper's
// loads and stores are allowed. The device buffer %d they describe moves
// to the device; freeing it stays conditional on the host's flag.
// CHECK-LABEL: func @bookkeeping
// CHECK: %[[D:.*]] = gpu.alloc () : memref<16xf32>
// CHECK: %[[P:.*]] = memref.alloc() : memref<1xindex>
// CHECK: %[[F:.*]] = memref.alloc() : memref<1xi1>
// CHECK: memref.extract_aligned_pointer_as_index %[[D]]
// CHECK: call @helper
// CHECK: %[[OWN:.*]] = memref.load %[[F]]
// CHECK: scf.if %[[OWN]] {
// CHECK-NEXT: gpu.dealloc  %[[D]] : memref<16xf32>
// CHECK: memref.dealloc %[[P]] : memref<1xindex>
// CHECK: memref.dealloc %[[F]] : memref<1xi1>
// CHECK-LABEL: func private @helper
// CHECK: memref.load %{{.*}} : memref<?xindex>
// CHECK: memref.store %{{.*}} : memref<?xi1>
func.func @bookkeeping(%owned: i1) {
  %c0 = arith.constant 0 : index
  %d = memref.alloc() : memref<16xf32>
  %pointers = memref.alloc() : memref<1xindex>
  %flags = memref.alloc() : memref<1xi1>
  %p = memref.extract_aligned_pointer_as_index %d : memref<16xf32> -> index
  memref.store %p, %pointers[%c0] : memref<1xindex>
  memref.store %owned, %flags[%c0] : memref<1xi1>
  %pc = memref.cast %pointers : memref<1xindex> to memref<?xindex>
  %fc = memref.cast %flags : memref<1xi1> to memref<?xi1>
  call @helper(%pc, %fc) : (memref<?xindex>, memref<?xi1>) -> ()
  %own = memref.load %flags[%c0] : memref<1xi1>
  scf.if %own {
    memref.dealloc %d : memref<16xf32>
  }
  memref.dealloc %pointers : memref<1xindex>
  memref.dealloc %flags : memref<1xi1>
  return
}
func.func private @helper(%pointers: memref<?xindex>, %flags: memref<?xi1>) {
  %c0 = arith.constant 0 : index
  %p = memref.load %pointers[%c0] : memref<?xindex>
  %nonzero = arith.cmpi ne, %p, %c0 : index
  memref.store %nonzero, %flags[%c0] : memref<?xi1>
  return
}

// -----

// A private function whose argument is a device buffer at some call site
// is not bookkeeping: its host load is still an error.
func.func @mixed(%a: memref<4xf32>) {
  %h = memref.alloc() : memref<4xf32>
  call @reads(%h) : (memref<4xf32>) -> ()
  call @reads(%a) : (memref<4xf32>) -> ()
  memref.dealloc %h : memref<4xf32>
  return
}
func.func private @reads(%b: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{reads or writes a device buffer from host code; GPU programs touch their buffers only in kernels}}
  %x = memref.load %b[%c0] : memref<4xf32>
  return
}

// -----

// A kernel's stores are not host accesses: a buffer only a kernel writes
// is a device buffer.
// CHECK-LABEL: func @kernel_writes
// CHECK: %[[B:.*]] = gpu.alloc () : memref<4xf32>
// CHECK: gpu.launch
// CHECK: memref.store %{{.*}}, %[[B]]
// CHECK: gpu.dealloc  %[[B]]
func.func @kernel_writes(%x: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = memref.alloc() : memref<4xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    memref.store %x, %b[%c0] : memref<4xf32>
    gpu.terminator
  }
  memref.dealloc %b : memref<4xf32>
  return
}

// -----

// A buffer handed to a function that does device work on it (a fill, a
// kernel later) is a device buffer, although its own uses are a call and a
// dealloc.
// CHECK-LABEL: func @handed_to_device_code
// CHECK: %[[B:.*]] = gpu.alloc () : memref<4xf32>
// CHECK: call @fill(%[[B]])
// CHECK: gpu.dealloc  %[[B]]
func.func @handed_to_device_code() {
  %b = memref.alloc() : memref<4xf32>
  call @fill(%b) : (memref<4xf32>) -> ()
  memref.dealloc %b : memref<4xf32>
  return
}
func.func private @fill(%b: memref<4xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%b : memref<4xf32>)
  return
}
