// cp-outline-local-attention: every buffer-level local attention becomes a
// call of a private kernel function holding one copy of it; ops with the
// same attributes and operand types share the kernel (a model of N equal
// layers compiles one attention loop nest). Operands are passed by
// position, so the two offsets stay two arguments even when one value (0)
// is both.
// RUN: cp-opt %s -cp-outline-local-attention | FileCheck %s

// CHECK-LABEL: func.func @two_layers(
// CHECK-SAME: %[[Q:.*]]: memref<1x4x40x16xf32>, %[[K:.*]]: memref<1x2x40x16xf32>, %[[V:.*]]: memref<1x2x40x16xf32>, %[[O1:.*]]: memref<1x4x40x16xf32>, %[[O2:.*]]: memref<1x4x40x16xf32>, %[[O3:.*]]: memref<1x4x40x16xf32>
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK: call @cp_local_attention(%[[Q]], %[[K]], %[[V]], %[[C0]], %[[C0]], %[[O1]])
// CHECK: call @cp_local_attention(%[[O1]], %[[K]], %[[V]], %[[C8]], %[[C0]], %[[O2]])
// A different mask is a different kernel.
// CHECK: call @cp_local_attention_0(%[[O2]], %[[K]], %[[V]], %[[C0]], %[[C0]], %[[O3]])
// CHECK-NOT: cp.buffer.local_attention
// CHECK: return

// CHECK: func.func private @cp_local_attention(%[[A0:.*]]: memref<1x4x40x16xf32>, %[[A1:.*]]: memref<1x2x40x16xf32>, %[[A2:.*]]: memref<1x2x40x16xf32>, %[[A3:.*]]: index, %[[A4:.*]]: index, %[[A5:.*]]: memref<1x4x40x16xf32>)
// CHECK-NEXT: cp.buffer.local_attention %[[A0]], %[[A1]], %[[A2]] offsets(%[[A3]], %[[A4]]) into %[[A5]] mask = causal
// CHECK-NEXT: return
// CHECK: func.func private @cp_local_attention_0(
// CHECK-NEXT: cp.buffer.local_attention {{.*}} into %{{.*}} :
// CHECK-NEXT: return
func.func @two_layers(%q: memref<1x4x40x16xf32>, %k: memref<1x2x40x16xf32>, %v: memref<1x2x40x16xf32>,
                      %o1: memref<1x4x40x16xf32>, %o2: memref<1x4x40x16xf32>, %o3: memref<1x4x40x16xf32>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  cp.buffer.local_attention %q, %k, %v offsets(%c0, %c0) into %o1 mask = causal
      : memref<1x4x40x16xf32>, memref<1x2x40x16xf32>, memref<1x2x40x16xf32> into memref<1x4x40x16xf32>
  cp.buffer.local_attention %o1, %k, %v offsets(%c8, %c0) into %o2 mask = causal
      : memref<1x4x40x16xf32>, memref<1x2x40x16xf32>, memref<1x2x40x16xf32> into memref<1x4x40x16xf32>
  cp.buffer.local_attention %o2, %k, %v offsets(%c0, %c0) into %o3
      : memref<1x4x40x16xf32>, memref<1x2x40x16xf32>, memref<1x2x40x16xf32> into memref<1x4x40x16xf32>
  return
}
