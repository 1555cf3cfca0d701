// cp-pack-collectives: collectives get dense buffers exchanged along dim 0
// (what NCCL moves), with linalg.copy packs and unpacks around them.
// RUN: cp-opt %s -cp-pack-collectives -split-input-file -verify-diagnostics | FileCheck %s

shard.grid @cp(shape = 4)

// Already flat: dense buffers, nothing before the gathered dim.
// CHECK-LABEL: func @flat_gather_stays
// CHECK-NEXT: cp.buffer.all_gather %arg0 into %arg1 on @cp grid_axes = [0] gather_axis = 2
// CHECK-NEXT: return
func.func @flat_gather_stays(%x: memref<1x1x64x32xf32>, %y: memref<1x1x256x32xf32>) {
  cp.buffer.all_gather %x into %y on @cp grid_axes = [0] gather_axis = 2 : memref<1x1x64x32xf32> into memref<1x1x256x32xf32>
  return
}

// Gathering the sequence of 4 heads: gather 4 blocks of [1, 4, 64, 32] along
// dim 0, then copy block r to rows [64 r, 64 r + 64) of the output.
// CHECK-LABEL: func @gather_along_the_sequence
// CHECK-SAME: (%[[X:.*]]: memref<1x4x64x32xf32>, %[[Y:.*]]: memref<1x4x256x32xf32>)
// CHECK: %[[RECV:.*]] = memref.alloc() : memref<4x4x64x32xf32>
// CHECK: cp.buffer.all_gather %[[X]] into %[[RECV]] on @cp grid_axes = [0] gather_axis = 0 : memref<1x4x64x32xf32> into memref<4x4x64x32xf32>
// CHECK: %[[B0:.*]] = memref.subview %[[RECV]][0, 0, 0, 0] [1, 4, 64, 32]
// CHECK: %[[O0:.*]] = memref.subview %[[Y]][0, 0, 0, 0] [1, 4, 64, 32]
// CHECK: linalg.copy ins(%[[B0]] : {{.*}}) outs(%[[O0]] : {{.*}})
// CHECK: memref.subview %[[RECV]][3, 0, 0, 0] [1, 4, 64, 32]
// CHECK: memref.subview %[[Y]][0, 0, 192, 0] [1, 4, 64, 32]
// CHECK: linalg.copy
// CHECK: memref.dealloc %[[RECV]]
func.func @gather_along_the_sequence(%x: memref<1x4x64x32xf32>, %y: memref<1x4x256x32xf32>) {
  cp.buffer.all_gather %x into %y on @cp grid_axes = [0] gather_axis = 2 : memref<1x4x64x32xf32> into memref<1x4x256x32xf32>
  return
}

// Ulysses: part j of the heads (2 of 8) goes to rank j; the received parts
// are placed along the sequence.
// CHECK-LABEL: func @heads_to_sequence
// CHECK-SAME: (%[[Q:.*]]: memref<1x8x64x32xf32>, %[[QH:.*]]: memref<1x2x256x32xf32>)
// CHECK: %[[SEND:.*]] = memref.alloc() : memref<4x2x64x32xf32>
// CHECK: memref.subview %[[Q]][0, 2, 0, 0] [1, 2, 64, 32]
// CHECK: memref.subview %[[SEND]][1, 0, 0, 0] [1, 2, 64, 32]
// CHECK: %[[RECV:.*]] = memref.alloc() : memref<4x2x64x32xf32>
// CHECK: cp.buffer.all_to_all %[[SEND]] into %[[RECV]] on @cp grid_axes = [0] split_axis = 0 concat_axis = 0 : memref<4x2x64x32xf32> into memref<4x2x64x32xf32>
// CHECK: memref.subview %[[RECV]][1, 0, 0, 0] [1, 2, 64, 32]
// CHECK: memref.subview %[[QH]][0, 0, 64, 0] [1, 2, 64, 32]
// CHECK: memref.dealloc %[[SEND]]
// CHECK: memref.dealloc %[[RECV]]
func.func @heads_to_sequence(%q: memref<1x8x64x32xf32>, %qh: memref<1x2x256x32xf32>) {
  cp.buffer.all_to_all %q into %qh on @cp grid_axes = [0] split_axis = 1 concat_axis = 2 : memref<1x8x64x32xf32> into memref<1x2x256x32xf32>
  return
}

// A strided input is copied dense first.
// CHECK-LABEL: func @strided_exchange
// CHECK: %[[DENSE:.*]] = memref.alloc() : memref<1x8x32x32xf32>
// CHECK: linalg.copy ins(%arg0 : memref<1x8x32x32xf32, strided<[16384, 2048, 32, 1], offset: 1024>>) outs(%[[DENSE]] : memref<1x8x32x32xf32>)
// CHECK: cp.buffer.exchange %[[DENSE]] into %arg1
// CHECK: memref.dealloc %[[DENSE]]
func.func @strided_exchange(%x: memref<1x8x32x32xf32, strided<[16384, 2048, 32, 1], offset: 1024>>, %y: memref<1x8x32x32xf32>) {
  cp.buffer.exchange %x into %y on @cp grid_axes = [0] partner = mirror : memref<1x8x32x32xf32, strided<[16384, 2048, 32, 1], offset: 1024>> into memref<1x8x32x32xf32>
  return
}

// A relayout along the sequence axis of BHSD moves two halves; each is
// stacked along dim 0, where NCCL sends it as one flat range, and the
// relayout works on the stack.
// CHECK-LABEL: func @relayout_halves
// CHECK-SAME: (%[[X:.*]]: memref<1x4x16x8xf32>, %[[Y:.*]]: memref<1x4x16x8xf32>)
// CHECK: %[[SEND:.*]] = memref.alloc() : memref<2x4x8x8xf32>
// CHECK: %[[H0:.*]] = memref.subview %[[X]][0, 0, 0, 0] [1, 4, 8, 8]
// CHECK: %[[S0:.*]] = memref.subview %[[SEND]][0, 0, 0, 0] [1, 4, 8, 8]
// CHECK: linalg.copy ins(%[[H0]] {{.*}} outs(%[[S0]]
// CHECK: %[[H1:.*]] = memref.subview %[[X]][0, 0, 8, 0] [1, 4, 8, 8]
// CHECK: %[[S1:.*]] = memref.subview %[[SEND]][1, 0, 0, 0] [1, 4, 8, 8]
// CHECK: linalg.copy ins(%[[H1]] {{.*}} outs(%[[S1]]
// CHECK: %[[RECV:.*]] = memref.alloc() : memref<2x4x8x8xf32>
// CHECK: cp.buffer.relayout %[[SEND]] into %[[RECV]] on @cp grid_axes = [0] seq_axis = 0 from contiguous to zigzag
// CHECK: memref.subview %[[RECV]][0, 0, 0, 0] [1, 4, 8, 8]
// CHECK: memref.subview %[[Y]][0, 0, 0, 0] [1, 4, 8, 8]
// CHECK: linalg.copy
// CHECK: memref.subview %[[RECV]][1, 0, 0, 0] [1, 4, 8, 8]
// CHECK: memref.subview %[[Y]][0, 0, 8, 0] [1, 4, 8, 8]
// CHECK: linalg.copy
// CHECK: memref.dealloc %[[SEND]]
// CHECK: memref.dealloc %[[RECV]]
func.func @relayout_halves(%x: memref<1x4x16x8xf32>, %y: memref<1x4x16x8xf32>) {
  cp.buffer.relayout %x into %y on @cp grid_axes = [0] seq_axis = 2 from contiguous to zigzag : memref<1x4x16x8xf32> into memref<1x4x16x8xf32>
  return
}

// -----

shard.grid @cp(shape = 4)
func.func @dynamic(%x: memref<?x4xf32>, %y: memref<?x4xf32>) {
  // expected-error @+1 {{cp-pack-collectives needs static shapes, got 'memref<?x4xf32>'}}
  cp.buffer.all_gather %x into %y on @cp grid_axes = [0] gather_axis = 0 : memref<?x4xf32> into memref<?x4xf32>
  return
}
