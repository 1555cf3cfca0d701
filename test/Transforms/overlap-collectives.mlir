// cp-overlap-collectives: a shift starts where it was and is waited for as
// late as its buffers allow, so independent work runs while it is in
// flight.
// RUN: cp-opt %s --cp-overlap-collectives -split-input-file | FileCheck %s

shard.grid @cp(shape = 4)

// The ring's step: the next K block is on its way while the current one is
// attended; the wait comes before the first use of the received block.
// CHECK-LABEL: func @ring_step
// CHECK-SAME: (%[[Q:.*]]: memref<1x4x16x8xf32>, %[[K:.*]]: memref<1x4x16x8xf32>, %[[K1:.*]]: memref<1x4x16x8xf32>, %[[O0:.*]]: memref<1x4x16x8xf32>, %[[O1:.*]]: memref<1x4x16x8xf32>, %[[I:.*]]: index)
// CHECK-NEXT: %[[REQ:.*]] = cp.buffer.shift_start %[[K]] into %[[K1]] on @cp grid_axes = [0] offset = 1
// CHECK-NEXT: cp.buffer.local_attention %[[Q]], %[[K]], %[[K]] offsets(%[[I]], %[[I]]) into %[[O0]]
// CHECK-NEXT: cp.buffer.wait %[[REQ]]
// CHECK-NEXT: cp.buffer.local_attention %[[Q]], %[[K1]], %[[K1]] offsets(%[[I]], %[[I]]) into %[[O1]]
func.func @ring_step(%q: memref<1x4x16x8xf32>, %k: memref<1x4x16x8xf32>, %k1: memref<1x4x16x8xf32>,
                     %o0: memref<1x4x16x8xf32>, %o1: memref<1x4x16x8xf32>, %i: index) {
  cp.buffer.shift %k into %k1 on @cp grid_axes = [0] offset = 1 : memref<1x4x16x8xf32> into memref<1x4x16x8xf32>
  cp.buffer.local_attention %q, %k, %k offsets(%i, %i) into %o0 : memref<1x4x16x8xf32>, memref<1x4x16x8xf32>, memref<1x4x16x8xf32> into memref<1x4x16x8xf32>
  cp.buffer.local_attention %q, %k1, %k1 offsets(%i, %i) into %o1 : memref<1x4x16x8xf32>, memref<1x4x16x8xf32>, memref<1x4x16x8xf32> into memref<1x4x16x8xf32>
  return
}

// -----

shard.grid @cp(shape = 4)

// Two shifts in flight at once (K and V); a wait does not stop the other
// transfer's wait from moving past it. Writing the sent buffer, reading a
// view of the received one, and freeing either end the overlap.
// CHECK-LABEL: func @buffers_end_the_overlap
// CHECK: %[[RK:.*]] = cp.buffer.shift_start %[[K:.*]] into %[[K1:.*]] on
// CHECK-NEXT: %[[RV:.*]] = cp.buffer.shift_start %[[V:.*]] into %[[V1:.*]] on
// CHECK-NEXT: memref.load %[[K]]
// CHECK-NEXT: cp.buffer.wait %[[RV]]
// CHECK-NEXT: memref.store %{{.*}}, %[[V]]
// CHECK-NEXT: %[[VIEW:.*]] = memref.subview %[[K1]]
// CHECK-NEXT: cp.buffer.wait %[[RK]]
// CHECK-NEXT: memref.load %[[VIEW]]
func.func @buffers_end_the_overlap(%k: memref<64xf32>, %k1: memref<64xf32>, %v: memref<64xf32>,
                                   %v1: memref<64xf32>, %i: index) {
  cp.buffer.shift %k into %k1 on @cp grid_axes = [0] offset = 1 : memref<64xf32> into memref<64xf32>
  cp.buffer.shift %v into %v1 on @cp grid_axes = [0] offset = 1 : memref<64xf32> into memref<64xf32>
  %x = memref.load %k[%i] : memref<64xf32>
  memref.store %x, %v[%i] : memref<64xf32>
  %view = memref.subview %k1[0] [32] [1] : memref<64xf32> to memref<32xf32, strided<[1]>>
  %y = memref.load %view[%i] : memref<32xf32, strided<[1]>>
  return
}

// -----

shard.grid @cp(shape = 4)
func.func private @opaque()

// A call may touch anything; nothing follows the shift before it, so the
// shift stays whole. Before a terminator, the wait goes last.
// CHECK-LABEL: func @stays_whole
// CHECK-NEXT: cp.buffer.shift
// CHECK-NEXT: call @opaque
// CHECK-LABEL: func @until_the_end
// CHECK: %[[R:.*]] = cp.buffer.shift_start
// CHECK-NEXT: arith.addi
// CHECK-NEXT: cp.buffer.wait %[[R]]
// CHECK-NEXT: return
func.func @stays_whole(%k: memref<64xf32>, %k1: memref<64xf32>) {
  cp.buffer.shift %k into %k1 on @cp grid_axes = [0] offset = 1 : memref<64xf32> into memref<64xf32>
  call @opaque() : () -> ()
  return
}
func.func @until_the_end(%k: memref<64xf32>, %k1: memref<64xf32>, %i: index) -> index {
  cp.buffer.shift %k into %k1 on @cp grid_axes = [0] offset = 1 : memref<64xf32> into memref<64xf32>
  %j = arith.addi %i, %i : index
  return %j : index
}

// -----

shard.grid @cp(shape = 4)

// The ring's loop: the block received before the loop enters it as an
// iter_arg, where the body's uses name the block argument, not the buffer.
// Handing the buffer to the loop needs the transfer finished, so the wait
// comes before scf.for (after the step-0 work that overlaps it). Inside,
// the next block's shift overlaps the body's attention and is waited for
// before the yield that hands it to the next iteration.
// CHECK-LABEL: func @ring_loop
// CHECK: %[[R0:.*]] = cp.buffer.shift_start %[[K:.*]] into %[[K1:.*]] on
// CHECK-NEXT: cp.buffer.local_attention %{{.*}}, %[[K]], %[[K]]
// CHECK-NEXT: cp.buffer.wait %[[R0]]
// CHECK-NEXT: scf.for {{.*}} iter_args(%[[KS:.*]] = %[[K1]])
// CHECK: %[[R:.*]] = cp.buffer.shift_start %[[KS]] into %[[NEXT:.*]] on
// CHECK-NEXT: cp.buffer.local_attention %{{.*}}, %[[KS]], %[[KS]]
// CHECK-NEXT: cp.buffer.wait %[[R]]
// CHECK-NEXT: scf.yield %[[NEXT]]
func.func @ring_loop(%q: memref<1x4x16x8xf32>, %k: memref<1x4x16x8xf32>,
                     %o: memref<1x4x16x8xf32>, %i: index) {
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %k1 = memref.alloc() : memref<1x4x16x8xf32>
  cp.buffer.shift %k into %k1 on @cp grid_axes = [0] offset = 1 : memref<1x4x16x8xf32> into memref<1x4x16x8xf32>
  cp.buffer.local_attention %q, %k, %k offsets(%i, %i) into %o : memref<1x4x16x8xf32>, memref<1x4x16x8xf32>, memref<1x4x16x8xf32> into memref<1x4x16x8xf32>
  %last = scf.for %s = %c1 to %c3 step %c1 iter_args(%ks = %k1) -> (memref<1x4x16x8xf32>) {
    %next = memref.alloc() : memref<1x4x16x8xf32>
    cp.buffer.shift %ks into %next on @cp grid_axes = [0] offset = 1 : memref<1x4x16x8xf32> into memref<1x4x16x8xf32>
    cp.buffer.local_attention %q, %ks, %ks offsets(%i, %s) into %o : memref<1x4x16x8xf32>, memref<1x4x16x8xf32>, memref<1x4x16x8xf32> into memref<1x4x16x8xf32>
    scf.yield %next : memref<1x4x16x8xf32>
  }
  return
}

// -----

shard.grid @cp(shape = 4)

// A select that may return the received buffer aliases it where its views
// do not show: the wait comes before the select.
// CHECK-LABEL: func @selected_buffer
// CHECK: %[[R:.*]] = cp.buffer.shift_start
// CHECK-NEXT: memref.load
// CHECK-NEXT: cp.buffer.wait %[[R]]
// CHECK-NEXT: arith.select
func.func @selected_buffer(%k: memref<64xf32>, %k1: memref<64xf32>, %o: memref<64xf32>,
                           %c: i1, %i: index) -> f32 {
  cp.buffer.shift %k into %k1 on @cp grid_axes = [0] offset = 1 : memref<64xf32> into memref<64xf32>
  %x = memref.load %o[%i] : memref<64xf32>
  %s = arith.select %c, %o, %k1 : memref<64xf32>
  memref.store %x, %s[%i] : memref<64xf32>
  return %x : f32
}
