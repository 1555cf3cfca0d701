// Two identical local attentions (here two mask_mods that fold to the same
// window, with mask = none) are merged by CSE, and the function then
// returns one buffer twice: upstream buffer-results-to-out-params
// {hoist-static-allocs} segfaulted on that inside cp-lower-to-cpu.
// cp-distinct-result-buffers now gives each result its own buffer.
// RUN: cp-opt %s --cp-lower-to-cpu=scheme=ring | FileCheck %s
// CHECK: llvm.func @f(
// CHECK-NOT: Stack dump

shard.grid @cp(shape = 4)
func.func @f(%q: tensor<1x8x64x32xf32>, %k: tensor<1x2x64x32xf32>,
             %v: tensor<1x2x64x32xf32>, %qo: index)
    -> (tensor<1x8x64x32xf32>, tensor<1x8x64x32xf32>) {
  %1 = cp.local_attention %q, %k, %v offsets(%qo, %qo) mask = none
      mask_mod {
      ^bb0(%b: index, %h: index, %qi: index, %ki: index):
        %past = arith.cmpi sge, %qi, %ki : index
        %d = arith.subi %qi, %ki : index
        %w = arith.constant 32 : index
        %near = arith.cmpi slt, %d, %w : index
        %both = arith.andi %near, %past : i1
        cp.yield %both : i1
      }
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32> -> tensor<1x8x64x32xf32>
  %2 = cp.local_attention %q, %k, %v offsets(%qo, %qo) mask = none
      mask_mod {
      ^bb0(%b: index, %h: index, %qi: index, %ki: index):
        %past = arith.cmpi ule, %ki, %qi : index
        %d = arith.subi %qi, %ki : index
        %w = arith.constant 31 : index
        %near = arith.cmpi sle, %d, %w : index
        %both = arith.andi %past, %near : i1
        cp.yield %both : i1
      }
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32> -> tensor<1x8x64x32xf32>
  return %1, %2 : tensor<1x8x64x32xf32>, tensor<1x8x64x32xf32>
}
