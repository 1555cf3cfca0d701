// cp-choose-scheme costs a plugin's scheme beside the built-ins (its
// SchemeDefinition::estimate): on a rank with 0.9 GB, every built-in
// needs more memory (allgather holds all 8 K/V heads of the whole
// sequence), while head_chunked_allgather(4) holds 2 at a time and fits.
// RUN: cp-opt --load-dialect-plugin=%cp_example_schemes %s --cp-choose-scheme | FileCheck %s
// Without the plugin nothing fits.
// RUN: not cp-opt %s --cp-choose-scheme 2>&1 | FileCheck %s --check-prefix=BUILTIN

shard.grid @cp4(shape = 4)

// CHECK: scheme = head_chunked_allgather(4) {cp.cost = {
// CHECK-SAME: allgather = "rejected: needs 1.1 GiB per rank, more than the machine's 858.3 MiB"
// CHECK-SAME: chosen = "head_chunked_allgather(4)"
// CHECK-SAME: "head_chunked_allgather(2)" = "rejected: needs 896.0 MiB per rank
// CHECK-SAME: "head_chunked_allgather(4)" = {bytes = 402653184 : i64
// BUILTIN: error: 'cp.attention' op scheme auto found no applicable scheme on machine h200-nvlink: allgather: needs 1.1 GiB per rank
func.func @memory_bound(%q: tensor<1x32x32768x128xbf16>, %k: tensor<1x8x32768x128xbf16>, %v: tensor<1x8x32768x128xbf16>) -> tensor<1x32x32768x128xbf16> {
  %o = cp.attention %q, %k, %v on @cp4 grid_axes = [0] mask = causal scheme = auto {cp.machine = {preset = "h200-nvlink", memory = 0.9e9}}
      : tensor<1x32x32768x128xbf16>, tensor<1x8x32768x128xbf16>, tensor<1x8x32768x128xbf16> -> tensor<1x32x32768x128xbf16>
  return %o : tensor<1x32x32768x128xbf16>
}
