// Attention sinks in the local kernels. The CPU loop nest starts each row
// of a query tile from its head's sink (max = sinks[h], sum = 1) instead of
// (-inf, 0), so the denominator counts it once and no value row goes with
// it. Both GPU kernels add it once at the row's end (ForwardKernelCommon's
// rowEnd): m' = max(m, sink), l' = l exp(m - m') + exp(sink - m'), the
// output scaled by exp(m - m') / l' and the lse m' + log l'.
// RUN: cp-opt %s -cp-lower-local-attention -canonicalize -cse | FileCheck %s --check-prefix=CPU
// RUN: cp-opt %s -cp-lower-local-attention-to-gpu=kernel=simt -canonicalize -cse | FileCheck %s --check-prefix=GPU
// RUN: cp-opt %s -cp-lower-local-attention-to-gpu=kernel=mma -canonicalize -cse | FileCheck %s --check-prefix=GPU

// CPU-LABEL: func @sinks
// CPU-SAME: %[[S:[a-z0-9]+]]: memref<4xf32>
// CPU: %[[ONE:.*]] = arith.constant dense<1.000000e+00> : vector<8xf32>
// CPU: scf.parallel (%[[H:.*]], %{{.*}}) = (%c0, %c0) to (%c4,
// CPU: %[[SINK:.*]] = memref.load %[[S]][%[[H]]] : memref<4xf32>
// CPU: %[[FIRST:.*]] = vector.broadcast %[[SINK]] : f32 to vector<8xf32>
// CPU: scf.for
// CPU: vector.store %[[FIRST]], %[[MAX:.*]][%{{.*}}] : memref<32xf32>, vector<8xf32>
// CPU: vector.store %[[ONE]], %[[SUM:.*]][%{{.*}}] : memref<32xf32>, vector<8xf32>

// GPU-LABEL: func @sinks
// GPU-SAME: %[[S:[a-z0-9]+]]: memref<4xf32>
// GPU: gpu.launch
// GPU: %[[SINK:.*]] = memref.load %[[S]][%{{.*}}] : memref<4xf32>
// GPU: %[[TOP:.*]] = arith.maximumf %{{.*}}, %[[SINK]] : f32
// GPU: %[[SHIFT:.*]] = arith.select %{{.*}}, %{{.*}}, %[[TOP]] : f32
// GPU: arith.subf %[[SINK]], %[[SHIFT]] : f32
// GPU: math.log
func.func @sinks(%q: memref<1x4x100x32xbf16>, %k: memref<1x2x130x32xbf16>, %v: memref<1x2x130x16xbf16>,
                 %s: memref<4xf32>, %o: memref<1x4x100x16xf32>, %lse: memref<1x4x100xf32>) {
  %c0 = arith.constant 0 : index
  %qo = arith.constant 30 : index
  cp.buffer.local_attention %q, %k, %v offsets(%qo, %c0) sinks(%s : memref<4xf32>) into %o, %lse mask = causal
      : memref<1x4x100x32xbf16>, memref<1x2x130x32xbf16>, memref<1x2x130x16xbf16> into memref<1x4x100x16xf32>, memref<1x4x100xf32>
  return
}
