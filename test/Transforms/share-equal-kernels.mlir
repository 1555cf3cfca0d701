// cp-share-equal-kernels: gpu.modules that print the same once their own
// symbol names are left out become one; the launches of the others name
// the first. A module that something other than a launch names stays.
// RUN: cp-opt %s -cp-share-equal-kernels | FileCheck %s

module attributes {gpu.container_module} {
  // CHECK-LABEL: func.func @launches(
  func.func @launches(%buffer: memref<256xf32>, %other: memref<256xi32>) {
    %c1 = arith.constant 1 : index
    %c256 = arith.constant 256 : index
    // CHECK: gpu.launch_func  @scale_kernel::@scale_kernel
    gpu.launch_func @scale_kernel::@scale_kernel blocks in (%c1, %c1, %c1) threads in (%c256, %c1, %c1) args(%buffer : memref<256xf32>)
    // Equal up to the names of the module and of the kernel in it.
    // CHECK: gpu.launch_func  @scale_kernel::@scale_kernel
    gpu.launch_func @other_kernel_3::@other_kernel blocks in (%c1, %c1, %c1) threads in (%c256, %c1, %c1) args(%buffer : memref<256xf32>)
    // Another constant: another kernel.
    // CHECK: gpu.launch_func  @halve_kernel::@halve_kernel
    gpu.launch_func @halve_kernel::@halve_kernel blocks in (%c1, %c1, %c1) threads in (%c256, %c1, %c1) args(%buffer : memref<256xf32>)
    // Another argument type: another kernel.
    // CHECK: gpu.launch_func  @count_kernel::@count_kernel
    gpu.launch_func @count_kernel::@count_kernel blocks in (%c1, %c1, %c1) threads in (%c256, %c1, %c1) args(%other : memref<256xi32>)
    // CHECK: gpu.launch_func  @pinned_kernel::@pinned_kernel
    gpu.launch_func @pinned_kernel::@pinned_kernel blocks in (%c1, %c1, %c1) threads in (%c256, %c1, %c1) args(%buffer : memref<256xf32>)
    return
  }
  // Named by something other than a launch: left alone.
  func.func private @pin() attributes {pinned = @pinned_kernel}

  // CHECK: gpu.module @scale_kernel
  gpu.module @scale_kernel {
    gpu.func @scale_kernel(%b: memref<256xf32>) kernel {
      %t = gpu.thread_id x
      %x = memref.load %b[%t] : memref<256xf32>
      %c = arith.constant 2.0 : f32
      %y = arith.mulf %x, %c : f32
      memref.store %y, %b[%t] : memref<256xf32>
      gpu.return
    }
  }
  // CHECK-NOT: gpu.module @other_kernel_3
  gpu.module @other_kernel_3 {
    gpu.func @other_kernel(%b: memref<256xf32>) kernel {
      %t = gpu.thread_id x
      %x = memref.load %b[%t] : memref<256xf32>
      %c = arith.constant 2.0 : f32
      %y = arith.mulf %x, %c : f32
      memref.store %y, %b[%t] : memref<256xf32>
      gpu.return
    }
  }
  // CHECK: gpu.module @halve_kernel
  gpu.module @halve_kernel {
    gpu.func @halve_kernel(%b: memref<256xf32>) kernel {
      %t = gpu.thread_id x
      %x = memref.load %b[%t] : memref<256xf32>
      %c = arith.constant 0.5 : f32
      %y = arith.mulf %x, %c : f32
      memref.store %y, %b[%t] : memref<256xf32>
      gpu.return
    }
  }
  // CHECK: gpu.module @count_kernel
  gpu.module @count_kernel {
    gpu.func @count_kernel(%b: memref<256xi32>) kernel {
      %t = gpu.thread_id x
      %x = memref.load %b[%t] : memref<256xi32>
      %c = arith.constant 2 : i32
      %y = arith.muli %x, %c : i32
      memref.store %y, %b[%t] : memref<256xi32>
      gpu.return
    }
  }
  // CHECK: gpu.module @pinned_kernel
  gpu.module @pinned_kernel {
    gpu.func @pinned_kernel(%b: memref<256xf32>) kernel {
      %t = gpu.thread_id x
      %x = memref.load %b[%t] : memref<256xf32>
      %c = arith.constant 2.0 : f32
      %y = arith.mulf %x, %c : f32
      memref.store %y, %b[%t] : memref<256xf32>
      gpu.return
    }
  }
}
