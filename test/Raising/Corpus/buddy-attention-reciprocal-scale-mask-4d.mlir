// Source: buddy-compiler/buddy-mlir, examples/BuddyNext/next-attention.mlir (index commit 0bfb23b753be9cd16c2a24b79ba8e9695805a803), function @kernel (LLaMA-2-7B attention core extracted from buddy's Dynamo->TOSA import: 32 heads, seq 40, head_dim 128).
// Form: (b)+(c): Q [32,40,128] and K ALREADY TRANSPOSED [32,128,40] as arguments; tosa.matmul -> [32,40,40]; tosa.reshape to 4-D [1,32,40,40]; scale = tosa.mul by tosa.RECIPROCAL of a splat const 11.3137083 (= sqrt(128)), i.e. `x * reciprocal(sqrt(d))`; additive mask tensor<1x1x40x40> broadcast over heads by tosa.add; softmax axis 3 (reduce_max, sub, exp, reduce_sum, reciprocal, mul); a no-op `tosa.add` of a zero const after softmax; reshape 4-D->3-D; V [1,32,40,128] + zero const add, reshape to [32,40,128]; tosa.matmul. The result is consumed by tensor.cast + call @printMemrefF32 (no return value); timing calls to @rtclock surround it.
// Adapted: removed RUN/CHECK lines and @main; kept the private declarations of @rtclock/@printMemrefF32. Updated to MLIR 22 TOSA: `tosa.matmul %a, %b` -> `tosa.matmul %a, %b, %a_zp, %b_zp` (+2 f32 zero-point consts); `tosa.reshape %x {new_shape = array<i64: ...>}` -> `tosa.reshape %x, %shape` with a `tosa.const_shape` per reshape; `"tosa.const"() <{value = ...}>` -> `<{values = ...}>`; `tosa.mul %a, %b {shift = 0 : i8}` -> `tosa.mul %a, %b, %shift` (+ i8 shift const).
// RUN: cp-opt %s --cp-raise-attention="grid-size=1 report-near-misses=true" -o %t 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s --check-prefix=IR < %t
// RUN: FileCheck %s --check-prefix=LEFT < %t
// Status: raised (one cp.attention, the [1, 1, L, L] additive mask as explicit_mask) after normalization: both tosa.matmuls lifted over the tosa.reshapes to 4-D contractions, reciprocal(constant) folded into the scale, tosa.add of zeros folded away.
func.func private @rtclock() -> f64
func.func private @printMemrefF32(%ptr : tensor<*xf32>)

func.func @kernel(%t0 : tensor<32x40x128xf32>, %t1 : tensor<32x128x40xf32>, %t2 : tensor<1x1x40x40xf32>, %t3 : tensor<1x32x40x128xf32>) {
  %t_start = call @rtclock() : () -> f64

  %a_zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %b_zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %s4 = tosa.const_shape {values = dense<[1, 32, 40, 40]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %s3 = tosa.const_shape {values = dense<[32, 40, 40]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s3v = tosa.const_shape {values = dense<[32, 40, 128]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %0 = tosa.matmul %t0, %t1, %a_zp, %b_zp : (tensor<32x40x128xf32>, tensor<32x128x40xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<32x40x40xf32>
  %1 = tosa.reshape %0, %s4 : (tensor<32x40x40xf32>, !tosa.shape<4>) -> tensor<1x32x40x40xf32>
  %2 = "tosa.const"() <{values = dense<11.3137083> : tensor<1x32x40x40xf32>}> : () -> tensor<1x32x40x40xf32>
  %3 = tosa.reciprocal %2 : (tensor<1x32x40x40xf32>) -> tensor<1x32x40x40xf32>
  %4 = tosa.mul %1, %3, %shift : (tensor<1x32x40x40xf32>, tensor<1x32x40x40xf32>, tensor<1xi8>) -> tensor<1x32x40x40xf32>
  %5 = tosa.add %4, %t2 : (tensor<1x32x40x40xf32>, tensor<1x1x40x40xf32>) -> tensor<1x32x40x40xf32>
  %6 = tosa.reduce_max %5 {axis = 3 : i32} : (tensor<1x32x40x40xf32>) -> tensor<1x32x40x1xf32>
  %7 = tosa.sub %5, %6 : (tensor<1x32x40x40xf32>, tensor<1x32x40x1xf32>) -> tensor<1x32x40x40xf32>
  %8 = tosa.exp %7 : (tensor<1x32x40x40xf32>) -> tensor<1x32x40x40xf32>
  %9 = tosa.reduce_sum %8 {axis = 3 : i32} : (tensor<1x32x40x40xf32>) -> tensor<1x32x40x1xf32>
  %10 = tosa.reciprocal %9 : (tensor<1x32x40x1xf32>) -> tensor<1x32x40x1xf32>
  %11 = tosa.mul %8, %10, %shift : (tensor<1x32x40x40xf32>, tensor<1x32x40x1xf32>, tensor<1xi8>) -> tensor<1x32x40x40xf32>
  %12 = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1x32x40x40xf32>}> : () -> tensor<1x32x40x40xf32>
  %13 = tosa.add %11, %12 : (tensor<1x32x40x40xf32>, tensor<1x32x40x40xf32>) -> tensor<1x32x40x40xf32>
  %14 = tosa.reshape %13, %s3 : (tensor<1x32x40x40xf32>, !tosa.shape<3>) -> tensor<32x40x40xf32>
  %15 = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1x32x40x128xf32>}> : () -> tensor<1x32x40x128xf32>
  %16 = tosa.add %t3, %15 : (tensor<1x32x40x128xf32>, tensor<1x32x40x128xf32>) -> tensor<1x32x40x128xf32>
  %17 = tosa.reshape %16, %s3v : (tensor<1x32x40x128xf32>, !tosa.shape<3>) -> tensor<32x40x128xf32>
  %18 = tosa.matmul %14, %17, %a_zp, %b_zp : (tensor<32x40x40xf32>, tensor<32x40x128xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<32x40x128xf32>

  %t_end = call @rtclock() : () -> f64
  %time = arith.subf %t_end, %t_start : f64

  %tensor_unranked = tensor.cast %18 : tensor<32x40x128xf32> to tensor<*xf32>

  // Print results.
  call @printMemrefF32(%tensor_unranked) : (tensor<*xf32>) -> ()
  // Print timings.
  vector.print %time : f64

  return
}

// REMARK: buddy-attention-reciprocal-scale-mask-4d.mlir:38:9: remark: cp-raise-attention: raised linalg, 4-D scores, normalized: batch matmul over reshapes x2, reshape round trip x1, mask tensor
// IR: cp.attention %{{.*}}, %{{.*}}, %{{.*}} explicit_mask %{{.*}} on @cp grid_axes = [0] scale = 0.0883883461
// IR-NOT: cp.attention
// LEFT-NOT: {{math.exp|tosa.exp|arith.maximumf|tosa.reduce_max|linalg.softmax}}
