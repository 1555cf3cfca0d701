// cp-approximate-math: f32 exp/log/tanh/erf become polynomial arith code
// (upstream's approximations), so vector code never scalarizes into libm.
// RUN: cp-opt %s -cp-approximate-math | FileCheck %s

// CHECK-LABEL: func @vector_exp
// CHECK-NOT: math.exp
// The exponent is rebuilt by shifting an integer into the f32 exponent bits.
// CHECK: arith.shli {{.*}} : vector<8xi32>
// CHECK: arith.bitcast {{.*}} : vector<8xi32> to vector<8xf32>
// CHECK-NOT: math.exp
func.func @vector_exp(%x: vector<8xf32>) -> vector<8xf32> {
  %e = math.exp %x : vector<8xf32>
  return %e : vector<8xf32>
}

// CHECK-LABEL: func @scalar_log_tanh
// CHECK-NOT: math.log
// CHECK-NOT: math.tanh
// CHECK: return
func.func @scalar_log_tanh(%x: f32) -> f32 {
  %l = math.log %x : f32
  %t = math.tanh %l : f32
  return %t : f32
}

// Other math ops and other types are left alone.
// CHECK-LABEL: func @untouched
// CHECK: math.exp %{{.*}} : f64
// CHECK: math.sqrt %{{.*}} : f32
func.func @untouched(%x: f64, %y: f32) -> (f64, f32) {
  %e = math.exp %x : f64
  %s = math.sqrt %y : f32
  return %e, %s : f64, f32
}
