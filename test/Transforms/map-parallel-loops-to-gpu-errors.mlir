// RUN: cp-opt %s --split-input-file --verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(func.func(cp-map-parallel-loops-to-gpu))'
// RUN: not cp-opt %s --pass-pipeline='builtin.module(func.func(cp-map-parallel-loops-to-gpu{block-size=100}))' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BLOCK

// BLOCK: error: cp-map-parallel-loops-to-gpu: block-size must be a multiple of 32 in [32, 1024], got 100

func.func @reduction(%m: memref<64xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  // expected-error @+1 {{has 1 reduction result(s); cp-map-parallel-loops-to-gpu maps only element-wise loops to threads}}
  %s = scf.parallel (%i) = (%c0) to (%c64) step (%c1) init (%zero) -> f32 {
    %x = memref.load %m[%i] : memref<64xf32>
    scf.reduce (%x : f32) {
    ^bb0(%l: f32, %r: f32):
      %y = arith.addf %l, %r : f32
      scf.reduce.return %y : f32
    }
  }
  return %s : f32
}
