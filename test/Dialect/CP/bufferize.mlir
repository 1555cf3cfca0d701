// one-shot-bufferize on cp ops (BufferizableOpInterface): collectives and
// local attention write a fresh buffer through their cp.buffer.* form;
// cp.merge and cp.offset_mask become linalg.generic on memrefs.
// RUN: cp-opt %s -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -split-input-file | FileCheck %s

shard.grid @cp(shape = 4)

// CHECK-LABEL: func @collectives
// CHECK-SAME: (%[[X:.*]]: memref<1x8x64x32xf32>)
func.func @collectives(%x: tensor<1x8x64x32xf32>)
    -> (tensor<1x8x256x32xf32>, tensor<1x2x256x32xf32>, tensor<1x8x64x32xf32>, tensor<1x8x64x32xf32>) {
  // CHECK: %[[G:.*]] = memref.alloc() {{.*}} : memref<1x8x256x32xf32>
  // CHECK: cp.buffer.all_gather %[[X]] into %[[G]] on @cp grid_axes = [0] gather_axis = 2
  %0 = cp.all_gather %x on @cp grid_axes = [0] gather_axis = 2 : tensor<1x8x64x32xf32> -> tensor<1x8x256x32xf32>
  // CHECK: %[[A:.*]] = memref.alloc() {{.*}} : memref<1x2x256x32xf32>
  // CHECK: cp.buffer.all_to_all %[[X]] into %[[A]] on @cp grid_axes = [0] split_axis = 1 concat_axis = 2
  %1 = cp.all_to_all %x on @cp grid_axes = [0] split_axis = 1 concat_axis = 2 : tensor<1x8x64x32xf32> -> tensor<1x2x256x32xf32>
  // The receive buffer is never the send buffer.
  // CHECK: %[[E:.*]] = memref.alloc() {{.*}} : memref<1x8x64x32xf32>
  // CHECK: cp.buffer.exchange %[[X]] into %[[E]] on @cp grid_axes = [0] partner = mirror
  %2 = cp.exchange %x on @cp grid_axes = [0] partner = mirror : tensor<1x8x64x32xf32>
  // CHECK: %[[S:.*]] = memref.alloc() {{.*}} : memref<1x8x64x32xf32>
  // CHECK: cp.buffer.shift %[[X]] into %[[S]] on @cp grid_axes = [0] offset = 1
  %3 = cp.shift %x on @cp grid_axes = [0] offset = 1 : tensor<1x8x64x32xf32>
  // CHECK: return %[[G]], %[[A]], %[[E]], %[[S]]
  return %0, %1, %2, %3 : tensor<1x8x256x32xf32>, tensor<1x2x256x32xf32>, tensor<1x8x64x32xf32>, tensor<1x8x64x32xf32>
}

// -----

shard.grid @cp(shape = 4)

// A slice feeding a collective stays a strided view: no copy is made.
// CHECK-LABEL: func @strided_input
// CHECK: %[[V:.*]] = memref.subview %{{.*}}[0, 0, 32, 0] [1, 8, 32, 32] [1, 1, 1, 1] : memref<1x8x64x32xf32> to memref<1x8x32x32xf32, strided<[16384, 2048, 32, 1], offset: 1024>>
// CHECK-NOT: memref.copy
// CHECK: cp.buffer.exchange %[[V]] into %{{.*}} : memref<1x8x32x32xf32, strided<[16384, 2048, 32, 1], offset: 1024>> into memref<1x8x32x32xf32>
func.func @strided_input(%x: tensor<1x8x64x32xf32>) -> tensor<1x8x32x32xf32> {
  %s = tensor.extract_slice %x[0, 0, 32, 0] [1, 8, 32, 32] [1, 1, 1, 1] : tensor<1x8x64x32xf32> to tensor<1x8x32x32xf32>
  %0 = cp.exchange %s on @cp grid_axes = [0] partner = mirror : tensor<1x8x32x32xf32>
  return %0 : tensor<1x8x32x32xf32>
}

// -----

shard.grid @cp(shape = 4)

// Dynamic sizes: the gathered dim is P times the input's.
// CHECK-LABEL: func @dynamic_gather
// CHECK-SAME: (%[[X:.*]]: memref<?x4xf32>)
// CHECK: %[[N:.*]] = memref.dim %[[X]], %c0
// CHECK: %[[PN:.*]] = arith.muli %[[N]], %c4
// CHECK: %[[G:.*]] = memref.alloc(%[[PN]]) {{.*}} : memref<?x4xf32>
// CHECK: cp.buffer.all_gather %[[X]] into %[[G]]
func.func @dynamic_gather(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = cp.all_gather %x on @cp grid_axes = [0] gather_axis = 0 : tensor<?x4xf32> -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// CHECK-LABEL: func @local_attention
// CHECK-SAME: (%[[Q:.*]]: memref<1x8x64x32xf16>, %[[K:.*]]: memref<1x2x256x32xf16>, %[[V:.*]]: memref<1x2x256x16xf16>, %[[QO:.*]]: index, %[[KO:.*]]: index, %[[M:.*]]: memref<64x256xi1>)
// CHECK: %[[O:.*]] = memref.alloc() {{.*}} : memref<1x8x64x16xf16>
// CHECK: %[[L:.*]] = memref.alloc() {{.*}} : memref<1x8x64xf32>
// CHECK: cp.buffer.local_attention %[[Q]], %[[K]], %[[V]] offsets(%[[QO]], %[[KO]]) explicit_mask %[[M]] into %[[O]], %[[L]] mask = causal scale = 1.250000e-01
// CHECK: return %[[O]], %[[L]]
func.func @local_attention(%q: tensor<1x8x64x32xf16>, %k: tensor<1x2x256x32xf16>,
                           %v: tensor<1x2x256x16xf16>, %qo: index, %ko: index,
                           %m: tensor<64x256xi1>) -> (tensor<1x8x64x16xf16>, tensor<1x8x64xf32>) {
  %o, %lse = cp.local_attention %q, %k, %v offsets(%qo, %ko) explicit_mask %m mask = causal scale = 0.125
      : tensor<1x8x64x32xf16>, tensor<1x2x256x32xf16>, tensor<1x2x256x16xf16>, tensor<64x256xi1>
      -> tensor<1x8x64x16xf16>, tensor<1x8x64xf32>
  return %o, %lse : tensor<1x8x64x16xf16>, tensor<1x8x64xf32>
}

// -----

// The stable log-sum-exp merge: one generic for lse, one for the output.
// CHECK-LABEL: func @merge
// CHECK: %[[O:.*]] = memref.alloc() {{.*}} : memref<1x8x64x32xbf16>
// CHECK: %[[L:.*]] = memref.alloc() {{.*}} : memref<1x8x64xf32>
// CHECK: linalg.generic {{.*}} outs(%[[L]] : memref<1x8x64xf32>)
// CHECK:   arith.maximumf
// CHECK:   math.exp
// CHECK:   math.log
// CHECK: linalg.generic {{.*}} outs(%[[O]] : memref<1x8x64x32xbf16>)
// CHECK:   arith.extf
// CHECK:   arith.truncf
// CHECK: return %[[O]], %[[L]]
func.func @merge(%a: tensor<1x8x64x32xbf16>, %la: tensor<1x8x64xf32>,
                 %b: tensor<1x8x64x32xbf16>, %lb: tensor<1x8x64xf32>)
    -> (tensor<1x8x64x32xbf16>, tensor<1x8x64xf32>) {
  %o, %l = cp.merge %a, %la, %b, %lb : tensor<1x8x64x32xbf16>, tensor<1x8x64xf32>
  return %o, %l : tensor<1x8x64x32xbf16>, tensor<1x8x64xf32>
}

// -----

// CHECK-LABEL: func @offset_mask
// CHECK-SAME: (%[[QO:.*]]: index, %[[KO:.*]]: index)
// CHECK: %[[B:.*]] = memref.alloc() {{.*}} : memref<8x16xi1>
// CHECK: linalg.generic {{.*}} outs(%[[B]] : memref<8x16xi1>)
// CHECK:   %[[I:.*]] = linalg.index 0
// CHECK:   %[[QP:.*]] = arith.addi %[[QO]], %[[I]]
// CHECK:   %[[J:.*]] = linalg.index 1
// CHECK:   %[[KP:.*]] = arith.addi %[[KO]], %[[J]]
// CHECK:   arith.cmpi sle, %[[KP]], %[[QP]]
func.func @offset_mask(%qo: index, %ko: index) -> tensor<8x16xi1> {
  %m = cp.offset_mask offsets(%qo, %ko) mask = causal : tensor<8x16xi1>
  return %m : tensor<8x16xi1>
}


// -----

shard.grid @cp(shape = 4)

// CHECK-LABEL: func @relayout
// CHECK-SAME: (%[[X:.*]]: memref<1x8x64x32xf32>)
// CHECK: %[[R:.*]] = memref.alloc() {{.*}} : memref<1x8x64x32xf32>
// CHECK: cp.buffer.relayout %[[X]] into %[[R]] on @cp grid_axes = [0] seq_axis = 2 from contiguous to zigzag
// CHECK: return %[[R]]
func.func @relayout(%x: tensor<1x8x64x32xf32>) -> tensor<1x8x64x32xf32> {
  %0 = cp.relayout %x on @cp grid_axes = [0] seq_axis = 2 from contiguous to zigzag : tensor<1x8x64x32xf32>
  return %0 : tensor<1x8x64x32xf32>
}

// -----

// mask_mod / score_mod regions become private functions next to the
// function (buffer ops hold no regions, so the deallocation passes need no
// control-flow model of them); reads of a mod operand become memref.load
// of its buffer.
// CHECK-LABEL: func.func private @cp_mask_mod
// CHECK-SAME: (%{{.*}}: index, %{{.*}}: index, %[[QI:.*]]: index, %[[KI:.*]]: index, %[[S:.*]]: memref<256xi32>) -> i1
// CHECK: %[[A:.*]] = memref.load %[[S]][%[[QI]]]
// CHECK: %[[B:.*]] = memref.load %[[S]][%[[KI]]]
// CHECK: %[[SAME:.*]] = arith.cmpi eq, %[[A]], %[[B]]
// CHECK: return %[[SAME]] : i1
// CHECK-LABEL: func.func private @cp_score_mod
// CHECK-SAME: (%[[X:.*]]: f32, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: memref<256xi32>) -> f32
// CHECK: math.tanh
// CHECK: return
// CHECK-LABEL: func @mod_regions
// CHECK-SAME: %[[SEG:[^:]*]]: memref<256xi32>
// CHECK: cp.buffer.local_attention {{.*}} mod_operands(%[[SEG]] : memref<256xi32>) into %{{.*}} mask = causal mask_mod = @cp_mask_mod score_mod = @cp_score_mod
func.func @mod_regions(%q: tensor<1x8x64x32xf32>, %k: tensor<1x2x256x32xf32>,
                       %v: tensor<1x2x256x32xf32>, %seg: tensor<256xi32>,
                       %qo: index) -> tensor<1x8x64x32xf32> {
  %c0 = arith.constant 0 : index
  %o = cp.local_attention %q, %k, %v offsets(%qo, %c0) mod_operands(%seg : tensor<256xi32>) mask = causal
      mask_mod {
      ^bb0(%b: index, %h: index, %qi: index, %ki: index, %s: tensor<256xi32>):
        %a = tensor.extract %s[%qi] : tensor<256xi32>
        %c = tensor.extract %s[%ki] : tensor<256xi32>
        %same = arith.cmpi eq, %a, %c : i32
        cp.yield %same : i1
      }
      score_mod {
      ^bb0(%x: f32, %b: index, %h: index, %qi: index, %ki: index, %s: tensor<256xi32>):
        %cap = arith.constant 2.0 : f32
        %xs = arith.divf %x, %cap : f32
        %t = math.tanh %xs : f32
        %y = arith.mulf %t, %cap : f32
        cp.yield %y : f32
      }
      : tensor<1x8x64x32xf32>, tensor<1x2x256x32xf32>, tensor<1x2x256x32xf32> -> tensor<1x8x64x32xf32>
  return %o : tensor<1x8x64x32xf32>
}
