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
// dim 0, then one copy puts block r at rows [64 r, 64 r + 64) of the output:
// the stack is split into [4, 1] blocks, the output's sequence into
// [4, 64], and the stack's block index is transposed to dim 2.
// CHECK-LABEL: func @gather_along_the_sequence
// CHECK-SAME: (%[[X:.*]]: memref<1x4x64x32xf32>, %[[Y:.*]]: memref<1x4x256x32xf32>)
// CHECK: %[[RECV:.*]] = memref.alloc() : memref<4x4x64x32xf32>
// CHECK: cp.buffer.all_gather %[[X]] into %[[RECV]] on @cp grid_axes = [0] gather_axis = 0 : memref<1x4x64x32xf32> into memref<4x4x64x32xf32>
// CHECK: %[[BLOCKS:.*]] = memref.expand_shape %[[RECV]] {{\[}}[0, 1], [2], [3], [4]] output_shape [4, 1, 4, 64, 32]
// CHECK: %[[ROWS:.*]] = memref.expand_shape %[[Y]] {{\[}}[0], [1], [2, 3], [4]] output_shape [1, 4, 4, 64, 32]
// CHECK: %[[T:.*]] = memref.transpose %[[BLOCKS]] (d0, d1, d2, d3, d4) -> (d1, d2, d0, d3, d4)
// CHECK: linalg.copy ins(%[[T]] : {{.*}}) outs(%[[ROWS]] : memref<1x4x4x64x32xf32>)
// CHECK-NOT: linalg.copy
// CHECK: memref.dealloc %[[RECV]]
func.func @gather_along_the_sequence(%x: memref<1x4x64x32xf32>, %y: memref<1x4x256x32xf32>) {
  cp.buffer.all_gather %x into %y on @cp grid_axes = [0] gather_axis = 2 : memref<1x4x64x32xf32> into memref<1x4x256x32xf32>
  return
}

// Ulysses: part j of the heads (2 of 8) goes to rank j; the received parts
// are placed along the sequence. One copy packs, one unpacks.
// CHECK-LABEL: func @heads_to_sequence
// CHECK-SAME: (%[[Q:.*]]: memref<1x8x64x32xf32>, %[[QH:.*]]: memref<1x2x256x32xf32>)
// CHECK: %[[SEND:.*]] = memref.alloc() : memref<4x2x64x32xf32>
// CHECK: %[[PARTS:.*]] = memref.expand_shape %[[Q]] {{\[}}[0], [1, 2], [3], [4]] output_shape [1, 4, 2, 64, 32]
// CHECK: %[[STACK:.*]] = memref.expand_shape %[[SEND]] {{\[}}[0, 1], [2], [3], [4]] output_shape [4, 1, 2, 64, 32]
// CHECK: %[[T:.*]] = memref.transpose %[[PARTS]] (d0, d1, d2, d3, d4) -> (d1, d0, d2, d3, d4)
// CHECK: linalg.copy ins(%[[T]] : {{.*}}) outs(%[[STACK]] : memref<4x1x2x64x32xf32>)
// CHECK: %[[RECV:.*]] = memref.alloc() : memref<4x2x64x32xf32>
// CHECK: cp.buffer.all_to_all %[[SEND]] into %[[RECV]] on @cp grid_axes = [0] split_axis = 0 concat_axis = 0 : memref<4x2x64x32xf32> into memref<4x2x64x32xf32>
// CHECK: %[[RB:.*]] = memref.expand_shape %[[RECV]] {{\[}}[0, 1], [2], [3], [4]] output_shape [4, 1, 2, 64, 32]
// CHECK: %[[OUT:.*]] = memref.expand_shape %[[QH]] {{\[}}[0], [1], [2, 3], [4]] output_shape [1, 2, 4, 64, 32]
// CHECK: %[[T2:.*]] = memref.transpose %[[RB]] (d0, d1, d2, d3, d4) -> (d1, d2, d0, d3, d4)
// CHECK: linalg.copy ins(%[[T2]] : {{.*}}) outs(%[[OUT]] : memref<1x2x4x64x32xf32>)
// CHECK-NOT: linalg.copy
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

// A cast of a dense buffer to a dynamic layout (what bufferization gives a
// loop-carried value) is looked through: the shift sends the dense buffer
// itself, with no copy.
// CHECK-LABEL: func @cast_of_dense_shift
// CHECK-SAME: (%[[X:.*]]: memref<1x2x16x32xf32>, %[[Y:.*]]: memref<1x2x16x32xf32>)
// CHECK-NOT: linalg.copy
// CHECK: cp.buffer.shift %[[X]] into %[[Y]] on @cp grid_axes = [0] offset = 1 : memref<1x2x16x32xf32> into memref<1x2x16x32xf32>
// CHECK-NOT: linalg.copy
func.func @cast_of_dense_shift(%x: memref<1x2x16x32xf32>, %y: memref<1x2x16x32xf32>) {
  %c = memref.cast %x : memref<1x2x16x32xf32> to memref<1x2x16x32xf32, strided<[?, ?, ?, ?], offset: ?>>
  cp.buffer.shift %c into %y on @cp grid_axes = [0] offset = 1 : memref<1x2x16x32xf32, strided<[?, ?, ?, ?], offset: ?>> into memref<1x2x16x32xf32>
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

// -----

shard.grid @cp(shape = 4)

// A reduce-scatter along the sequence: block r (64 rows) of the input goes
// to block r of a stack along dim 0 (one transposed copy), and the
// reduce-scatter of the stack lands in the dense output directly.
// CHECK-LABEL: func @reduce_scatter_sequence
// CHECK-SAME: (%[[X:.*]]: memref<1x2x256x32xf32>, %[[Y:.*]]: memref<1x2x64x32xf32>)
// CHECK: %[[SEND:.*]] = memref.alloc() : memref<4x2x64x32xf32>
// CHECK: %[[BLOCKS:.*]] = memref.expand_shape %[[X]] {{\[}}[0], [1], [2, 3], [4]] output_shape [1, 2, 4, 64, 32]
// CHECK: %[[STACK:.*]] = memref.expand_shape %[[SEND]] {{\[}}[0, 1], [2], [3], [4]] output_shape [4, 1, 2, 64, 32]
// CHECK: %[[T:.*]] = memref.transpose %[[BLOCKS]] (d0, d1, d2, d3, d4) -> (d2, d0, d1, d3, d4)
// CHECK: linalg.copy ins(%[[T]] : {{.*}}) outs(%[[STACK]] : memref<4x1x2x64x32xf32>)
// CHECK: cp.buffer.reduce_scatter %[[SEND]] into %[[Y]] on @cp grid_axes = [0] scatter_axis = 0 : memref<4x2x64x32xf32> into memref<1x2x64x32xf32>
// CHECK-NOT: linalg.copy
// CHECK: memref.dealloc %[[SEND]]
func.func @reduce_scatter_sequence(%x: memref<1x2x256x32xf32>, %y: memref<1x2x64x32xf32>) {
  cp.buffer.reduce_scatter %x into %y on @cp grid_axes = [0] scatter_axis = 2 : memref<1x2x256x32xf32> into memref<1x2x64x32xf32>
  return
}
