// cp-choose-scheme never chooses a scheme that does not take sinks for an
// op with sinks (its definition does not say supportsSinks; cp-apply-scheme
// would reject it). On the machine of choose-scheme.mlir, where only the
// plugin's head_chunked_allgather(4) fits, nothing is left, and the error
// says why for each scheme.
// RUN: not cp-opt --load-dialect-plugin=%cp_example_schemes %s --cp-choose-scheme 2>&1 | FileCheck %s

shard.grid @cp4(shape = 4)

// CHECK: error: 'cp.attention' op scheme auto found no applicable scheme on machine h200-nvlink: allgather: needs 1.1 GiB per rank
// CHECK-SAME: head_chunked_allgather(4): does not take sinks (its definition does not say supportsSinks)
func.func @memory_bound_sinks(%q: tensor<1x32x32768x128xbf16>, %k: tensor<1x8x32768x128xbf16>, %v: tensor<1x8x32768x128xbf16>, %s: tensor<32xf32>) -> tensor<1x32x32768x128xbf16> {
  %o = cp.attention %q, %k, %v sinks(%s : tensor<32xf32>) on @cp4 grid_axes = [0] mask = causal scheme = auto {cp.machine = {preset = "h200-nvlink", memory = 0.9e9}}
      : tensor<1x32x32768x128xbf16>, tensor<1x8x32768x128xbf16>, tensor<1x8x32768x128xbf16> -> tensor<1x32x32768x128xbf16>
  return %o : tensor<1x32x32768x128xbf16>
}
