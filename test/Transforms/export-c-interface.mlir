// cp-export-c-interface: public definitions get llvm.emit_c_interface, so
// the LLVM lowering also emits the _mlir_ciface_<name> entry drivers call.
// RUN: cp-opt %s -cp-export-c-interface | FileCheck %s
// RUN: cp-opt %s -cp-export-c-interface -finalize-memref-to-llvm -convert-func-to-llvm -reconcile-unrealized-casts | FileCheck %s --check-prefix=LLVM

// CHECK-LABEL: func.func @attention
// CHECK-SAME: attributes {llvm.emit_c_interface}
// LLVM: llvm.func @attention(
// LLVM: llvm.func @_mlir_ciface_attention(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
func.func @attention(%q: memref<1x8x64x32xf32>, %o: memref<1x8x64x32xf32>) {
  return
}

// Private functions and declarations keep their plain ABI; a private
// definition (a shared kernel) gets internal linkage, so the program does
// not export it.
// CHECK: func.func private @helper() attributes {llvm.linkage = #llvm.linkage<internal>} {
// CHECK: func.func private @external()
// CHECK-NOT: llvm.emit_c_interface
// LLVM: llvm.func internal @helper()
func.func private @helper() {
  return
}
func.func private @external()
