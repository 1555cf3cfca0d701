// A layer's IR does not grow with the number of ranks P. Ring and zigzag
// used to unroll their P steps (a grid of 2147483647 or 9999999 processes
// ran for minutes), and the GPU path unpacked an all_gather with P copies
// (P = 1024: minutes). Now the middle ring steps are one scf.for and the
// P blocks of a collective move in one copy, so each run below takes about
// a second whatever P is (bench/ring-compile-time.sh prints the times).
// RUN: cp-opt %s --cp-apply-scheme=scheme=ring -canonicalize | FileCheck %s --check-prefix=RING
// RUN: cp-opt %s --cp-lower-to-cpu=scheme=ring -o /dev/null
// RUN: cp-opt %s --cp-lower-to-cpu=scheme=zigzag -o /dev/null
// RUN: cp-opt %s "--cp-lower-to-nvvm=scheme=ring format=isa" -o /dev/null
// RUN: cp-opt %s "--cp-lower-to-nvvm=scheme=zigzag format=isa" -o /dev/null
// RUN: sed 's/shape = 2147483647/shape = 1024/' %s | cp-opt "--cp-lower-to-nvvm=scheme=allgather format=isa" -o /dev/null
// RUN: sed 's/shape = 2147483647/shape = 1024/' %s | cp-opt --cp-apply-scheme=scheme=allgather "--one-shot-bufferize=bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -cp-pack-collectives | FileCheck %s --check-prefix=PACK

// Step 0, the loop's step, the last step: three attentions whatever P.
// RING: cp.local_attention
// RING: scf.for %{{.*}} = %c1 to %c2147483646
// RING: cp.local_attention
// RING: cp.local_attention
// RING-NOT: cp.local_attention

// PACK: cp.buffer.all_gather
// PACK-COUNT-1: linalg.copy
// PACK-NOT: linalg.copy
// PACK: cp.buffer.all_gather
// PACK-COUNT-1: linalg.copy
// PACK-NOT: linalg.copy

shard.grid @cp(shape = 2147483647)

func.func @attention(%q: tensor<1x8x64x32xf32>, %k: tensor<1x8x64x32xf32>,
                     %v: tensor<1x8x64x32xf32>) -> tensor<1x8x64x32xf32> {
  %o = cp.attention %q, %k, %v on @cp grid_axes = [0] mask = sliding_window(2147483647)
      : tensor<1x8x64x32xf32>, tensor<1x8x64x32xf32>, tensor<1x8x64x32xf32>
      -> tensor<1x8x64x32xf32>
  return %o : tensor<1x8x64x32xf32>
}
