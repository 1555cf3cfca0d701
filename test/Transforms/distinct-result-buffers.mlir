// cp-distinct-result-buffers: a buffer returned more than once gets a copy
// for each repeat, so buffer-results-to-out-params can hoist every result
// into its own out-parameter.
// RUN: cp-opt %s --pass-pipeline='builtin.module(func.func(cp-distinct-result-buffers))' | FileCheck %s
// RUN: cp-opt %s --pass-pipeline='builtin.module(func.func(cp-distinct-result-buffers),buffer-results-to-out-params{hoist-static-allocs modify-public-functions})' | FileCheck %s --check-prefix=OUT

// CHECK-LABEL: func @twice
// CHECK-SAME: (%[[X:.*]]: memref<?x4xf32>)
// CHECK: %[[A:.*]] = memref.alloc() : memref<4xf32>
// CHECK: %[[B:.*]] = memref.alloc() : memref<4xf32>
// CHECK: memref.copy %[[A]], %[[B]]
// CHECK: %[[D:.*]] = memref.dim %[[X]], %{{.*}}
// CHECK: %[[Y:.*]] = memref.alloc(%[[D]]) : memref<?x4xf32>
// CHECK: memref.copy %[[X]], %[[Y]]
// CHECK: return %[[A]], %[[B]], %[[X]], %[[Y]]
func.func @twice(%x: memref<?x4xf32>) -> (memref<4xf32>, memref<4xf32>, memref<?x4xf32>, memref<?x4xf32>) {
  %a = memref.alloc() : memref<4xf32>
  return %a, %a, %x, %x : memref<4xf32>, memref<4xf32>, memref<?x4xf32>, memref<?x4xf32>
}

// Distinct results are left alone.
// CHECK-LABEL: func @once
// CHECK-NOT: memref.copy
// CHECK: return
func.func @once(%x: memref<4xf32>) -> (memref<4xf32>, memref<4xf32>) {
  %a = memref.alloc() : memref<4xf32>
  return %a, %x : memref<4xf32>, memref<4xf32>
}

// OUT-LABEL: func @twice
// OUT-SAME: (%{{.*}}: memref<?x4xf32>, %[[R0:arg[0-9]+]]: memref<4xf32>, %[[R1:arg[0-9]+]]: memref<4xf32>,
// OUT: memref.copy %[[R0]], %[[R1]]
