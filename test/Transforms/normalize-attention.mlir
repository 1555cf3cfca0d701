// cp-normalize-attention: exact rewrites of front ends' forms around
// attention into the forms cp-raise-attention matches. One function per
// rewrite; the last one is left alone. The corpus (test/Raising/Corpus)
// shows them on other projects' IR.
// RUN: cp-opt %s --cp-normalize-attention | FileCheck %s
// RUN: cp-opt %s --cp-normalize-attention=report -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT
// REPORT: remark: cp-normalize-attention:
// REPORT-DAG: batch matmul over reshapes x2
// REPORT-DAG: keepdim statistic x2
// REPORT-DAG: unused generic result x1
// REPORT-DAG: broadcast as an add of zeros x1

// The maps the rewritten ops use.
// CHECK-DAG: #[[QMAP:map[0-9]*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-DAG: #[[KMAP:map[0-9]*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
// CHECK-DAG: #[[SMAP:map[0-9]*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[SWAP:map[0-9]*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d2)>
// CHECK-DAG: #[[ROW:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[ROW4:map[0-9]*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG: #[[ID3:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[ID4:map[0-9]*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

// A tosa.matmul over [2, 2, 16, 8] operands collapsed to 3-D, its result
// expanded back: one 4-D contraction, the reshapes gone.
// CHECK-LABEL: func @matmul_over_collapses
// The reshapes are gone; K is read through its transpose (d4 is D).
// CHECK-NOT: tensor.collapse_shape
// CHECK: %[[ZERO:.*]] = linalg.fill
// CHECK: linalg.generic {indexing_maps = [#[[QMAP]], #[[KMAP]], #[[SMAP]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%arg0, %arg1 : tensor<2x2x16x8xf32>, tensor<2x2x16x8xf32>) outs(%[[ZERO]] : tensor<2x2x16x16xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK-NOT: tensor.expand_shape
// CHECK: return
func.func @matmul_over_collapses(%q: tensor<2x2x16x8xf32>, %k: tensor<2x2x16x8xf32>) -> tensor<2x2x16x16xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %kt = tosa.transpose %k {perms = array<i32: 0, 1, 3, 2>} : (tensor<2x2x16x8xf32>) -> tensor<2x2x8x16xf32>
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<2x2x16x8xf32> into tensor<4x16x8xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<2x2x8x16xf32> into tensor<4x8x16xf32>
  %s = tosa.matmul %q3, %k3, %zp, %zp : (tensor<4x16x8xf32>, tensor<4x8x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x16x16xf32>
  %s4 = tensor.expand_shape %s [[0, 1], [2], [3]] output_shape [2, 2, 16, 16] : tensor<4x16x16xf32> into tensor<2x2x16x16xf32>
  return %s4 : tensor<2x2x16x16xf32>
}

// A named batch_matmul whose B is transposed by its indexing maps, on a 3-D
// Q and a K reshaped by tosa.reshape, the result reshaped to 4-D.
// CHECK-LABEL: func @batch_matmul_transposed_b
// The 3-D Q is expanded to the batch dims; the tosa.reshapes cancel.
// CHECK: %[[Q:.*]] = tensor.expand_shape %arg0 {{\[\[}}0, 1], [2], [3]] output_shape [2, 2, 16, 8]
// CHECK: linalg.generic {indexing_maps = [#[[QMAP]], #[[KMAP]], #[[SMAP]]], {{.*}} ins(%[[Q]], %arg1 : tensor<2x2x16x8xf32>, tensor<2x2x16x8xf32>)
// CHECK-NOT: tosa.reshape
// CHECK: return
func.func @batch_matmul_transposed_b(%q: tensor<4x16x8xf32>, %k: tensor<2x2x16x8xf32>) -> tensor<2x2x16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %shape3 = tosa.const_shape {values = dense<[4, 16, 8]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %shape4 = tosa.const_shape {values = dense<[2, 2, 16, 16]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %k3 = tosa.reshape %k, %shape3 : (tensor<2x2x16x8xf32>, !tosa.shape<3>) -> tensor<4x16x8xf32>
  %e = tensor.empty() : tensor<4x16x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %s = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%q, %k3 : tensor<4x16x8xf32>, tensor<4x16x8xf32>) outs(%f : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %s4 = tosa.reshape %s, %shape4 : (tensor<4x16x16xf32>, !tosa.shape<4>) -> tensor<2x2x16x16xf32>
  return %s4 : tensor<2x2x16x16xf32>
}

// With one batch dim that is not 1 ([1, 4]), lifting would only add a
// unit dim: a contraction whose operands are reshaped arguments and whose
// result is computed on as it is stays rank 3 (the matcher reads it so).
// CHECK-LABEL: func @unit_batch_stays
// CHECK: tosa.matmul
// CHECK-NOT: linalg.generic
// CHECK: tosa.exp
func.func @unit_batch_stays(%q: tensor<1x4x16x8xf32>, %k: tensor<1x4x8x16xf32>) -> tensor<4x16x16xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x4x16x8xf32> into tensor<4x16x8xf32>
  %k3 = tensor.collapse_shape %k [[0, 1], [2], [3]] : tensor<1x4x8x16xf32> into tensor<4x8x16xf32>
  %s = tosa.matmul %q3, %k3, %zp, %zp : (tensor<4x16x8xf32>, tensor<4x8x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x16x16xf32>
  %e = tosa.exp %s : (tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  return %e : tensor<4x16x16xf32>
}

// torch's keepdim max: a max + argmax generic into [4, 16, 1] through
// (d0, d1, 0), read back through (d0, d1, 0); the argmax is unused.
// CHECK-LABEL: func @keepdim_max_argmax
// One result, [4, 16], from the lowest-finite fill; the argmax is gone.
// CHECK: %[[INIT:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4x16xf32>)
// CHECK: %[[MAX:.*]] = linalg.generic {indexing_maps = [#[[ID3]], #[[ROW]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0 : tensor<4x16x16xf32>) outs(%[[INIT]] : tensor<4x16xf32>)
// CHECK-NOT: linalg.index
// CHECK: arith.maximumf
// CHECK-NEXT: linalg.yield %{{.*}} : f32
// CHECK: linalg.generic {indexing_maps = [#[[ID3]], #[[ROW]], #[[ID3]]], {{.*}} ins(%arg0, %[[MAX]] : tensor<4x16x16xf32>, tensor<4x16xf32>)
func.func @keepdim_max_argmax(%x: tensor<4x16x16xf32>) -> tensor<4x16x16xf32> {
  %lowest = arith.constant -3.40282347E+38 : f32
  %c0 = arith.constant 0 : i64
  %e = tensor.empty() : tensor<4x16x1xf32>
  %ei = tensor.empty() : tensor<4x16x1xi64>
  %m0 = linalg.fill ins(%lowest : f32) outs(%e : tensor<4x16x1xf32>) -> tensor<4x16x1xf32>
  %i0 = linalg.fill ins(%c0 : i64) outs(%ei : tensor<4x16x1xi64>) -> tensor<4x16x1xi64>
  %m:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<4x16x16xf32>) outs(%m0, %i0 : tensor<4x16x1xf32>, tensor<4x16x1xi64>) {
  ^bb0(%in: f32, %acc: f32, %idx: i64):
    %j = linalg.index 2 : index
    %ji = arith.index_cast %j : index to i64
    %max = arith.maximumf %in, %acc : f32
    %gt = arith.cmpf ogt, %in, %acc : f32
    %arg = arith.select %gt, %ji, %idx : i64
    linalg.yield %max, %arg : f32, i64
  } -> (tensor<4x16x1xf32>, tensor<4x16x1xi64>)
  %o = tensor.empty() : tensor<4x16x16xf32>
  %d = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %m#0 : tensor<4x16x16xf32>, tensor<4x16x1xf32>) outs(%o : tensor<4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %r = arith.subf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4x16x16xf32>
  return %d : tensor<4x16x16xf32>
}

// torch's copies: a [1, 4, 16, 16] tensor "broadcast" to itself through
// (0, d1, d2, d3), a row statistic broadcast by a copy generic, a zero
// fill read by an add.
// CHECK-LABEL: func @copies_and_fills
// One generic reads x and the row statistic directly; the fill is the
// scalar 0.
// CHECK: %[[C0:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NOT: linalg.fill
// CHECK: linalg.generic {indexing_maps = [#[[ID4]], #[[ROW4]], #[[ID4]]], {{.*}} ins(%arg0, %arg1 : tensor<1x4x16x16xf32>, tensor<1x4x16xf32>)
// CHECK: %[[D:.*]] = arith.subf
// CHECK: arith.addf %[[D]], %[[C0]] : f32
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @copies_and_fills(%x: tensor<1x4x16x16xf32>, %r: tensor<1x4x16xf32>) -> tensor<1x4x16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x16x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32>
  %same = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x4x16x16xf32>) outs(%e : tensor<1x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  } -> tensor<1x4x16x16xf32>
  %wide = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%r : tensor<1x4x16xf32>) outs(%e : tensor<1x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  } -> tensor<1x4x16x16xf32>
  %d = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%same, %wide, %z : tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>) outs(%e : tensor<1x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    %t = arith.addf %s, %c : f32
    linalg.yield %t : f32
  } -> tensor<1x4x16x16xf32>
  return %d : tensor<1x4x16x16xf32>
}

// Q held as [B, L, H, D] (before the heads transpose) read by a
// contraction through (b, i, h, d): transposed to [B, H, L, D] first.
// CHECK-LABEL: func @blhd_query
// CHECK: %[[T:.*]] = linalg.transpose ins(%arg0 : tensor<1x16x4x8xf32>) outs(%{{.*}} : tensor<1x4x16x8xf32>) permutation = [0, 2, 1, 3]
// CHECK: linalg.generic {indexing_maps = [#[[QMAP]], #[[KMAP]], #[[SMAP]]], {{.*}} ins(%[[T]], %arg1 : tensor<1x4x16x8xf32>, tensor<1x4x16x8xf32>)
func.func @blhd_query(%q: tensor<1x16x4x8xf32>, %k: tensor<1x4x16x8xf32>) -> tensor<1x4x16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x16x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, i, j, d) -> (b, i, h, d)>, affine_map<(b, h, i, j, d) -> (b, h, j, d)>, affine_map<(b, h, i, j, d) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<1x16x4x8xf32>, tensor<1x4x16x8xf32>) outs(%f : tensor<1x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16x16xf32>
  return %s : tensor<1x4x16x16xf32>
}

// Scores computed as K Q^T and read transposed by the scaling: computed as
// Q K^T (Q first), read at the scaling's own index. The loops keep their
// order (b, h, j, i, d): Q is read at (b, h, i, d), the result written at
// (b, h, i, j), and the body reads its arguments exchanged.
// CHECK-LABEL: func @transposed_scores
// CHECK: %[[S:.*]] = linalg.generic {indexing_maps = [#[[KMAP]], #[[QMAP]], #[[SWAP]]], {{.*}} ins(%arg0, %arg1 : tensor<1x4x16x8xf32>, tensor<1x4x16x8xf32>)
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: arith.mulf %[[B]], %[[A]] : f32
// CHECK: linalg.generic {indexing_maps = [#[[ID4]], #[[ID4]]], {{.*}} ins(%[[S]] : tensor<1x4x16x16xf32>)
func.func @transposed_scores(%q: tensor<1x4x16x8xf32>, %k: tensor<1x4x16x8xf32>) -> tensor<1x4x16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %c = arith.constant 0.125 : f32
  %e = tensor.empty() : tensor<1x4x16x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32>
  %kq = linalg.generic {indexing_maps = [affine_map<(b, h, j, i, d) -> (b, h, j, d)>, affine_map<(b, h, j, i, d) -> (b, h, i, d)>, affine_map<(b, h, j, i, d) -> (b, h, j, i)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%k, %q : tensor<1x4x16x8xf32>, tensor<1x4x16x8xf32>) outs(%f : tensor<1x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16x16xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, j, i)>, affine_map<(b, h, i, j) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%kq : tensor<1x4x16x16xf32>) outs(%e : tensor<1x4x16x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %c : f32
    linalg.yield %m : f32
  } -> tensor<1x4x16x16xf32>
  return %s : tensor<1x4x16x16xf32>
}

// K repeated for GQA by adding zeros of the wider shape (MIGraphX, Dynamo
// to TOSA): a linalg.broadcast of K with its unit dim collapsed away, which
// the matcher reads GQA from. An add of a non-zero tensor stays.
// CHECK-LABEL: func @broadcast_add_of_zeros
// CHECK: %[[C:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0], [1], [2, 3], [4]] : tensor<2x2x1x32x8xf32> into tensor<2x2x32x8xf32>
// CHECK: %[[E:.*]] = tensor.empty() : tensor<2x2x2x32x8xf32>
// CHECK: %[[B:.*]] = linalg.broadcast ins(%[[C]] : tensor<2x2x32x8xf32>) outs(%[[E]] : tensor<2x2x2x32x8xf32>) dimensions = [2]
// CHECK: %[[S:.*]] = tosa.add %arg0, %arg1
// CHECK: return %[[B]], %[[S]]
func.func @broadcast_add_of_zeros(%k: tensor<2x2x1x32x8xf32>, %y: tensor<2x2x2x32x8xf32>)
    -> (tensor<2x2x2x32x8xf32>, tensor<2x2x2x32x8xf32>) {
  %zeros = "tosa.const"() <{values = dense<0.0> : tensor<2x2x2x32x8xf32>}> : () -> tensor<2x2x2x32x8xf32>
  %b = tosa.add %k, %zeros : (tensor<2x2x1x32x8xf32>, tensor<2x2x2x32x8xf32>) -> tensor<2x2x2x32x8xf32>
  %s = tosa.add %k, %y : (tensor<2x2x1x32x8xf32>, tensor<2x2x2x32x8xf32>) -> tensor<2x2x2x32x8xf32>
  return %b, %s : tensor<2x2x2x32x8xf32>, tensor<2x2x2x32x8xf32>
}

// Left alone: the second result is unused, but the first needs what it
// computes (the index feeds the value).
// CHECK-LABEL: func @unused_result_still_needed
// CHECK: %{{.*}}:2 = linalg.generic
func.func @unused_result_still_needed(%x: tensor<4x16xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %ei = tensor.empty() : tensor<4xi64>
  %m:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x16xf32>) outs(%e, %ei : tensor<4xf32>, tensor<4xi64>) {
  ^bb0(%in: f32, %acc: f32, %idx: i64):
    %f = arith.sitofp %idx : i64 to f32
    %v = arith.addf %in, %f : f32
    %n = arith.fptosi %v : f32 to i64
    linalg.yield %v, %n : f32, i64
  } -> (tensor<4xf32>, tensor<4xi64>)
  return %m#0 : tensor<4xf32>
}


