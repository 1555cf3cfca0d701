// convert-cp-to-mpi: shard process indices become runtime grid queries. The
// runtime places world rank r at the row-major coordinates of r in the grid
// (and fails on every rank if the world is not the grid's size).
// RUN: cp-opt %s -convert-cp-to-mpi | FileCheck %s

shard.grid @dp_cp(shape = 2x4)

// CHECK-DAG: memref.global "private" constant @__cp_grid_dp_cp : memref<4xi64> = dense<[2, 2, 4, 0]>
// CHECK-DAG: func.func private @cp_rt_grid_coord(memref<*xi8>, memref<*xi64>, i64) -> i64
// CHECK-DAG: func.func private @cp_rt_grid_linear_index(memref<*xi8>, memref<*xi64>) -> i64

// Axes in the order asked for, one query each.
// CHECK-LABEL: func @multi_index
// CHECK: %[[A1:.*]] = arith.constant 1 : i64
// CHECK: %[[C1:.*]] = call @cp_rt_grid_coord(%{{.*}}, %{{.*}}, %[[A1]])
// CHECK: %[[I1:.*]] = arith.index_cast %[[C1]] : i64 to index
// CHECK: %[[A0:.*]] = arith.constant 0 : i64
// CHECK: %[[C0:.*]] = call @cp_rt_grid_coord(%{{.*}}, %{{.*}}, %[[A0]])
// CHECK: %[[I0:.*]] = arith.index_cast %[[C0]] : i64 to index
// CHECK: return %[[I1]], %[[I0]]
func.func @multi_index() -> (index, index) {
  %i:2 = shard.process_multi_index on @dp_cp axes = [1, 0] : index, index
  return %i#0, %i#1 : index, index
}

// No axes means every axis.
// CHECK-LABEL: func @all_axes
// CHECK-COUNT-2: call @cp_rt_grid_coord
func.func @all_axes() -> (index, index) {
  %i:2 = shard.process_multi_index on @dp_cp : index, index
  return %i#0, %i#1 : index, index
}

// CHECK-LABEL: func @linear_index
// CHECK: %[[L:.*]] = call @cp_rt_grid_linear_index
// CHECK: arith.index_cast %[[L]] : i64 to index
func.func @linear_index() -> index {
  %i = shard.process_linear_index on @dp_cp : index
  return %i : index
}
