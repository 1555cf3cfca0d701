// cp-gpu-emulate's own checks: each kernel here misuses the GPU in one way
// a device would punish (often silently), and the emulator must stop with
// an error naming the op instead of producing numbers.
//
// RUN: not cp-gpu-emulate %s --func read_before_wait 2>&1 | FileCheck %s --check-prefix=RACE
// RACE: cp-gpu-emulate: accesses workgroup memory that a cp.async has not landed in yet (a missing cp.async.wait_group or gpu.barrier) at 'memref.load'
// RUN: not cp-gpu-emulate %s --func unwaited 2>&1 | FileCheck %s --check-prefix=UNWAITED
// UNWAITED: cp-gpu-emulate: a thread ends with cp.async copies it never waited for at 'gpu.launch'
// RUN: not cp-gpu-emulate %s --func misaligned_ldmatrix 2>&1 | FileCheck %s --check-prefix=ALIGN
// ALIGN: cp-gpu-emulate: ldmatrix row address is not 16-byte aligned at 'nvgpu.ldmatrix'
// RUN: not cp-gpu-emulate %s --func misaligned_copy 2>&1 | FileCheck %s --check-prefix=COPY
// COPY: cp-gpu-emulate: cp.async of 16 bytes between addresses not aligned to it at 'nvgpu.device_async_copy'
// RUN: not cp-gpu-emulate %s --func diverged_shuffle 2>&1 | FileCheck %s --check-prefix=DIVERGED
// DIVERGED: cp-gpu-emulate: deadlock: 16 threads wait at a barrier or warp op the others never reach at 'gpu.shuffle'
// RUN: not cp-gpu-emulate %s --func out_of_bounds 2>&1 | FileCheck %s --check-prefix=BOUNDS
// BOUNDS: cp-gpu-emulate: index 64 out of bounds [0, 64) in dim 2 at 'memref.load'

!q = memref<1x1x64x16xbf16>
!o = memref<1x1x64x16xf32>
!smem = memref<64x16xbf16, #gpu.address_space<workgroup>>

func.func @read_before_wait(%q: !q, %k: !q, %v: !q, %o: !o) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%b0, %b1, %b2) in (%g0 = %c1, %g1 = %c1, %g2 = %c1)
      threads(%t, %t1, %t2) in (%n0 = %c32, %n1 = %c1, %n2 = %c1)
      workgroup(%s : !smem) {
    %cp = nvgpu.device_async_copy %q[%c0, %c0, %t, %c0], %s[%t, %c0], 8 : !q to !smem
    nvvm.cp.async.commit.group
    gpu.barrier
    %x = memref.load %s[%t, %c0] : !smem
    nvvm.cp.async.wait.group 0
    gpu.terminator
  }
  return
}

func.func @unwaited(%q: !q, %k: !q, %v: !q, %o: !o) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%b0, %b1, %b2) in (%g0 = %c1, %g1 = %c1, %g2 = %c1)
      threads(%t, %t1, %t2) in (%n0 = %c32, %n1 = %c1, %n2 = %c1)
      workgroup(%s : !smem) {
    %cp = nvgpu.device_async_copy %q[%c0, %c0, %t, %c0], %s[%t, %c0], 8 : !q to !smem
    nvvm.cp.async.commit.group
    gpu.terminator
  }
  return
}

func.func @misaligned_ldmatrix(%q: !q, %k: !q, %v: !q, %o: !o) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%b0, %b1, %b2) in (%g0 = %c1, %g1 = %c1, %g2 = %c1)
      threads(%t, %t1, %t2) in (%n0 = %c32, %n1 = %c1, %n2 = %c1)
      workgroup(%s : !smem) {
    %f = nvgpu.ldmatrix %s[%t, %c4] {numTiles = 4 : i32, transpose = false} : !smem -> vector<4x2xbf16>
    gpu.terminator
  }
  return
}

func.func @misaligned_copy(%q: !q, %k: !q, %v: !q, %o: !o) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%b0, %b1, %b2) in (%g0 = %c1, %g1 = %c1, %g2 = %c1)
      threads(%t, %t1, %t2) in (%n0 = %c32, %n1 = %c1, %n2 = %c1)
      workgroup(%s : !smem) {
    %cp = nvgpu.device_async_copy %q[%c0, %c0, %t, %c4], %s[%t, %c0], 8 : !q to !smem
    nvvm.cp.async.commit.group
    nvvm.cp.async.wait.group 0
    gpu.terminator
  }
  return
}

func.func @diverged_shuffle(%q: !q, %k: !q, %v: !q, %o: !o) {
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %one = arith.constant 1 : i32
  %width = arith.constant 32 : i32
  %x = arith.constant 1.0 : f32
  gpu.launch blocks(%b0, %b1, %b2) in (%g0 = %c1, %g1 = %c1, %g2 = %c1)
      threads(%t, %t1, %t2) in (%n0 = %c32, %n1 = %c1, %n2 = %c1) {
    %low = arith.cmpi ult, %t, %c16 : index
    scf.if %low {
      %y, %ok = gpu.shuffle xor %x, %one, %width : f32
    }
    gpu.terminator
  }
  return
}

func.func @out_of_bounds(%q: !q, %k: !q, %v: !q, %o: !o) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%b0, %b1, %b2) in (%g0 = %c1, %g1 = %c1, %g2 = %c1)
      threads(%t, %t1, %t2) in (%n0 = %c32, %n1 = %c1, %n2 = %c1) {
    %row = arith.addi %t, %c64 : index
    %x = memref.load %q[%c0, %c0, %row, %c0] : !q
    gpu.terminator
  }
  return
}
