// RUN: cp-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(cp-map-parallel-loops-to-gpu))' | FileCheck %s
// RUN: cp-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(cp-map-parallel-loops-to-gpu{block-size=128},convert-parallel-loops-to-gpu,canonicalize))' \
// RUN:   2>/dev/null | FileCheck %s --check-prefix=LAUNCH

// A 4-d copy (a pack for an all-to-all): 2*8*64*48 = 49152 elements in
// 192 blocks of 256 threads, the last dimension fastest.
// CHECK-LABEL: func.func @copy_4d
//   CHECK-DAG:   %[[N:.*]] = arith.constant 49152 : index
//   CHECK-DAG:   %[[T:.*]] = arith.constant 256 : index
//       CHECK:   %[[B:.*]] = arith.ceildivsi %[[N]], %[[T]]
//       CHECK:   scf.parallel (%[[BX:.*]]) = (%{{.*}}) to (%[[B]])
//       CHECK:     scf.parallel (%[[TX:.*]]) = (%{{.*}}) to (%[[T]])
//       CHECK:       %[[MUL:.*]] = arith.muli %[[BX]], %[[T]]
//       CHECK:       %[[LIN:.*]] = arith.addi %[[MUL]], %[[TX]]
//       CHECK:       %[[IN:.*]] = arith.cmpi ult, %[[LIN]], %[[N]]
//       CHECK:       scf.if %[[IN]] {
//       CHECK:         %[[I:.*]]:4 = affine.delinearize_index %[[LIN]] into (2, 8, 64, 48)
//       CHECK:         memref.load %{{.*}}[%[[I]]#0, %[[I]]#1, %[[I]]#2, %[[I]]#3]
//       CHECK:         memref.store
//       CHECK:     } {mapping = [#gpu.loop_dim_map<processor = thread_x
//       CHECK:   } {mapping = [#gpu.loop_dim_map<processor = block_x

// LAUNCH-LABEL: func.func @copy_4d
//   LAUNCH-DAG:   %[[C384:.*]] = arith.constant 384 : index
//   LAUNCH-DAG:   %[[C128:.*]] = arith.constant 128 : index
//       LAUNCH:   gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C384]], %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C128]], %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}})
//       LAUNCH:     affine.delinearize_index
//   LAUNCH-NOT:   scf.parallel
func.func @copy_4d(%a: memref<2x8x64x48xf32>, %b: memref<2x8x64x48xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %c48 = arith.constant 48 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%i, %j, %k, %l) = (%c0, %c0, %c0, %c0) to (%c2, %c8, %c64, %c48)
      step (%c1, %c1, %c1, %c1) {
    %x = memref.load %a[%i, %j, %k, %l] : memref<2x8x64x48xf32>
    memref.store %x, %b[%i, %j, %k, %l] : memref<2x8x64x48xf32>
    scf.reduce
  }
  return
}

// -----

// Dynamic extents, a lower bound and a step: the count is computed at run
// time and each index is rebuilt as lb + i * step.
// CHECK-LABEL: func.func @dynamic
//  CHECK-SAME:   (%[[M:.*]]: memref<?xf32>, %[[LB:.*]]: index, %[[UB:.*]]: index)
//       CHECK:   %[[EXT:.*]] = arith.subi %[[UB]], %[[LB]]
//       CHECK:   %[[N:.*]] = arith.ceildivsi %[[EXT]], %c2
//       CHECK:   scf.if
//   CHECK-NOT:     affine.delinearize_index
//       CHECK:     %[[S:.*]] = arith.muli %{{.*}}, %c2
//       CHECK:     %[[IV:.*]] = arith.addi %[[S]], %[[LB]]
//       CHECK:     memref.store %{{.*}}, %[[M]][%[[IV]]]
func.func @dynamic(%m: memref<?xf32>, %lb: index, %ub: index) {
  %c2 = arith.constant 2 : index
  %f = arith.constant 1.0 : f32
  scf.parallel (%i) = (%lb) to (%ub) step (%c2) {
    memref.store %f, %m[%i] : memref<?xf32>
    scf.reduce
  }
  return
}

// -----

// Loops inside kernels and loops already mapped are left alone.
// CHECK-LABEL: func.func @mapped
//       CHECK:   scf.parallel (%{{.*}}) = (%c0) to (%c64)
//   CHECK-NOT:   arith.ceildivsi
//       CHECK:   processor = block_y
func.func @mapped(%m: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %f = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    memref.store %f, %m[%i] : memref<64xf32>
    scf.reduce
  } {mapping = [#gpu.loop_dim_map<processor = block_y, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
  return
}

