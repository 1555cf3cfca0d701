// cp-free-buffers-early: a buffer is freed right after its last use (a view
// of it counts, and a started shift uses its buffers until its wait), not
// at the end of the block, so a ring keeps two K/V blocks alive, not P.
// RUN: cp-opt %s --cp-free-buffers-early -split-input-file | FileCheck %s

shard.grid @cp(shape = 4)

// CHECK-LABEL: func @ring_blocks
// CHECK: %[[A:.*]] = memref.alloc() : memref<64xf32>
// CHECK: %[[B:.*]] = memref.alloc() : memref<64xf32>
// CHECK: %[[R1:.*]] = cp.buffer.shift_start %[[A]] into %[[B]]
// CHECK: cp.buffer.wait %[[R1]]
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK: %[[C:.*]] = memref.alloc() : memref<64xf32>
// CHECK: %[[R2:.*]] = cp.buffer.shift_start %[[B]] into %[[C]]
// CHECK: %[[VIEW:.*]] = memref.subview %[[B]]
// CHECK: memref.load %[[VIEW]]
// CHECK: cp.buffer.wait %[[R2]]
// CHECK-NEXT: memref.dealloc %[[B]]
// CHECK: memref.load %[[C]]
// CHECK-NEXT: memref.dealloc %[[C]]
// CHECK-NEXT: arith.addf
func.func @ring_blocks(%k: memref<64xf32>, %i: index) -> f32 {
  %a = memref.alloc() : memref<64xf32>
  memref.copy %k, %a : memref<64xf32> to memref<64xf32>
  %b = memref.alloc() : memref<64xf32>
  %r1 = cp.buffer.shift_start %a into %b on @cp grid_axes = [0] offset = 1 : memref<64xf32> into memref<64xf32>
  cp.buffer.wait %r1
  %c = memref.alloc() : memref<64xf32>
  %r2 = cp.buffer.shift_start %b into %c on @cp grid_axes = [0] offset = 1 : memref<64xf32> into memref<64xf32>
  %view = memref.subview %b[0] [32] [1] : memref<64xf32> to memref<32xf32, strided<[1]>>
  %x = memref.load %view[%i] : memref<32xf32, strided<[1]>>
  cp.buffer.wait %r2
  %y = memref.load %c[%i] : memref<64xf32>
  %s = arith.addf %x, %y : f32
  memref.dealloc %a : memref<64xf32>
  memref.dealloc %b : memref<64xf32>
  memref.dealloc %c : memref<64xf32>
  return %s : f32
}

// -----

// A buffer an scf.if returns is freed through its base after its last use.
// CHECK-LABEL: func @if_result
// CHECK: %[[R:.*]] = scf.if
// CHECK: memref.load %[[R]]
// CHECK-NEXT: %[[BASE:[a-z_0-9]+]], %{{.*}} = memref.extract_strided_metadata %[[R]]
// CHECK-NEXT: memref.dealloc %[[BASE]]
// CHECK-NEXT: arith.addf
func.func @if_result(%c: i1, %i: index) -> f32 {
  %r = scf.if %c -> memref<64xf32, strided<[?], offset: ?>> {
    %a = memref.alloc() : memref<64xf32>
    %ca = memref.cast %a : memref<64xf32> to memref<64xf32, strided<[?], offset: ?>>
    scf.yield %ca : memref<64xf32, strided<[?], offset: ?>>
  } else {
    %b = memref.alloc() : memref<64xf32>
    %cb = memref.cast %b : memref<64xf32> to memref<64xf32, strided<[?], offset: ?>>
    scf.yield %cb : memref<64xf32, strided<[?], offset: ?>>
  }
  %x = memref.load %r[%i] : memref<64xf32, strided<[?], offset: ?>>
  %y = arith.addf %x, %x : f32
  %base, %offset, %size, %stride = memref.extract_strided_metadata %r : memref<64xf32, strided<[?], offset: ?>> -> memref<f32>, index, index, index
  memref.dealloc %base : memref<f32>
  return %y : f32
}

// -----

// A buffer that an arith.select may return is in use wherever the select's
// result is: its dealloc stays after the last use of the selection.
// CHECK-LABEL: func @selected
// CHECK: %[[A:.*]] = memref.alloc() : memref<64xf32>
// CHECK: %[[S:.*]] = arith.select %{{.*}}, %{{.*}}, %[[A]]
// CHECK-NEXT: memref.load %[[S]]
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: arith.addf
func.func @selected(%c: i1, %b: memref<64xf32>, %i: index) -> f32 {
  %a = memref.alloc() : memref<64xf32>
  memref.copy %b, %a : memref<64xf32> to memref<64xf32>
  %s = arith.select %c, %b, %a : memref<64xf32>
  %x = memref.load %s[%i] : memref<64xf32>
  %y = arith.addf %x, %x : f32
  memref.dealloc %a : memref<64xf32>
  return %y : f32
}
