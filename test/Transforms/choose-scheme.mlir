// cp-choose-scheme: scheme = auto becomes the scheme the cost model predicts
// fastest on the machine (docs/Schemes.md has the formulas), and the op
// records every estimate in cp.cost. Each pair of cases below shows the
// choice flipping where the formulas say it should.
// RUN: cp-opt %s --cp-choose-scheme | FileCheck %s
// RUN: cp-opt %s --cp-choose-scheme --cp-apply-scheme | FileCheck %s --check-prefix=APPLY

shard.grid @cp4(shape = 4)
shard.grid @cp8(shape = 8)
shard.grid @cp16(shape = 16)

// Ulysses for MHA with divisible heads on NVLink: it sends 4*L*H*D*b*(P-1)/P
// bytes against the all-gather's 2*L*H*D*b*(P-1), fewer for P > 2, and
// balances causal work (the all-gather's busiest rank does 2 - 1/P times
// the mean).
// CHECK-LABEL: func @mha_causal_nvlink_p4
// CHECK: cp.attention {{.*}} scheme = ulysses {cp.cost = {
// CHECK-SAME: chosen = "ulysses"
func.func @mha_causal_nvlink_p4(%q: tensor<1x32x4096x128xbf16>, %k: tensor<1x32x4096x128xbf16>, %v: tensor<1x32x4096x128xbf16>) -> tensor<1x32x4096x128xbf16> {
  %o = cp.attention %q, %k, %v on @cp4 grid_axes = [0] mask = causal scheme = auto {cp.machine = {preset = "h200-nvlink"}}
      : tensor<1x32x4096x128xbf16>, tensor<1x32x4096x128xbf16>, tensor<1x32x4096x128xbf16> -> tensor<1x32x4096x128xbf16>
  return %o : tensor<1x32x4096x128xbf16>
}

// CHECK-LABEL: func @mha_causal_nvlink_p8
// CHECK: cp.attention {{.*}} scheme = ulysses {cp.cost = {
// CHECK-SAME: chosen = "ulysses"
func.func @mha_causal_nvlink_p8(%q: tensor<1x32x4096x128xbf16>, %k: tensor<1x32x4096x128xbf16>, %v: tensor<1x32x4096x128xbf16>) -> tensor<1x32x4096x128xbf16> {
  %o = cp.attention %q, %k, %v on @cp8 grid_axes = [0] mask = causal scheme = auto {cp.machine = {preset = "h200-nvlink"}}
      : tensor<1x32x4096x128xbf16>, tensor<1x32x4096x128xbf16>, tensor<1x32x4096x128xbf16> -> tensor<1x32x4096x128xbf16>
  return %o : tensor<1x32x4096x128xbf16>
}

// All-gather for strongly grouped GQA: with H/Hkv = 8 >= P - 1 it sends no
// more than Ulysses (here 24 MiB against 54 MiB), and a ring's per-step
// merges, which scale with H, cost more than the exposed all-gather.
// CHECK-LABEL: func @gqa_none_nvlink_p4
// CHECK: cp.attention {{.*}} scheme = allgather {cp.cost = {
// CHECK-SAME: allgather = {bytes = 25165824 : i64
// CHECK-SAME: chosen = "allgather"
// CHECK-SAME: ulysses = {bytes = 56623104 : i64
func.func @gqa_none_nvlink_p4(%q: tensor<1x32x4096x128xbf16>, %k: tensor<1x4x4096x128xbf16>, %v: tensor<1x4x4096x128xbf16>) -> tensor<1x32x4096x128xbf16> {
  %o = cp.attention %q, %k, %v on @cp4 grid_axes = [0] mask = none scheme = auto {cp.machine = {preset = "h200-nvlink"}}
      : tensor<1x32x4096x128xbf16>, tensor<1x4x4096x128xbf16>, tensor<1x4x4096x128xbf16> -> tensor<1x32x4096x128xbf16>
  return %o : tensor<1x32x4096x128xbf16>
}

// A sliding window shorter than L: no query sees a block two ranks back,
// so the ring stops after one shift and sends a third of the all-gather's
// bytes.
// CHECK-LABEL: func @gqa_window_nvlink_p4
// CHECK: cp.attention {{.*}} scheme = ring {cp.cost = {
// CHECK-SAME: allgather = {bytes = 25165824 : i64
// CHECK-SAME: chosen = "ring"
// CHECK-SAME: ring = {bytes = 8388608 : i64
func.func @gqa_window_nvlink_p4(%q: tensor<1x32x4096x128xbf16>, %k: tensor<1x4x4096x128xbf16>, %v: tensor<1x4x4096x128xbf16>) -> tensor<1x32x4096x128xbf16> {
  %o = cp.attention %q, %k, %v on @cp4 grid_axes = [0] mask = sliding_window(1024) scheme = auto {cp.machine = {preset = "h200-nvlink"}}
      : tensor<1x32x4096x128xbf16>, tensor<1x4x4096x128xbf16>, tensor<1x4x4096x128xbf16> -> tensor<1x32x4096x128xbf16>
  return %o : tensor<1x32x4096x128xbf16>
}

// The same shapes with MHA and no mask: the all-gather's bytes grow 8x and a
// ring hides them behind the attention.
// CHECK-LABEL: func @mha_none_nvlink_p4
// CHECK: cp.attention {{.*}} scheme = ring {cp.cost = {
// CHECK-SAME: chosen = "ring"
func.func @mha_none_nvlink_p4(%q: tensor<1x32x4096x128xbf16>, %k: tensor<1x32x4096x128xbf16>, %v: tensor<1x32x4096x128xbf16>) -> tensor<1x32x4096x128xbf16> {
  %o = cp.attention %q, %k, %v on @cp4 grid_axes = [0] mask = none scheme = auto {cp.machine = {preset = "h200-nvlink"}}
      : tensor<1x32x4096x128xbf16>, tensor<1x32x4096x128xbf16>, tensor<1x32x4096x128xbf16> -> tensor<1x32x4096x128xbf16>
  return %o : tensor<1x32x4096x128xbf16>
}

// Memory: with Hkv = 4 < P = 8 (no Ulysses) and a causal mask, head_tail
// (balanced work on all-gathered K/V) is fastest while it fits (416 MiB per
// rank); with 400 MB per rank it does not, and zigzag, which holds one K/V
// block at a time, is chosen.
// CHECK-LABEL: func @gqa_causal_fits
// CHECK: cp.attention {{.*}} scheme = head_tail {cp.cost = {
// CHECK-SAME: chosen = "head_tail"
// CHECK-SAME: head_tail = {bytes = {{[0-9]+}} : i64, comm_ns = {{[0-9]+}} : i64, compute_ns = {{[0-9]+}} : i64, flops = {{[0-9]+}} : i64, memory = 436207616 : i64
func.func @gqa_causal_fits(%q: tensor<1x8x16384x128xbf16>, %k: tensor<1x4x16384x128xbf16>, %v: tensor<1x4x16384x128xbf16>) -> tensor<1x8x16384x128xbf16> {
  %o = cp.attention %q, %k, %v on @cp8 grid_axes = [0] mask = causal scheme = auto {cp.machine = {preset = "h200-nvlink"}}
      : tensor<1x8x16384x128xbf16>, tensor<1x4x16384x128xbf16>, tensor<1x4x16384x128xbf16> -> tensor<1x8x16384x128xbf16>
  return %o : tensor<1x8x16384x128xbf16>
}

// CHECK-LABEL: func @gqa_causal_tight_memory
// CHECK: cp.attention {{.*}} scheme = zigzag {cp.cost = {
// CHECK-SAME: chosen = "zigzag"
// CHECK-SAME: head_tail = "rejected: needs 416.0 MiB per rank, more than the machine's 381.5 MiB"
func.func @gqa_causal_tight_memory(%q: tensor<1x8x16384x128xbf16>, %k: tensor<1x4x16384x128xbf16>, %v: tensor<1x4x16384x128xbf16>) -> tensor<1x8x16384x128xbf16> {
  %o = cp.attention %q, %k, %v on @cp8 grid_axes = [0] mask = causal scheme = auto {cp.machine = {preset = "h200-nvlink", memory = 4.0e8}}
      : tensor<1x8x16384x128xbf16>, tensor<1x4x16384x128xbf16>, tensor<1x4x16384x128xbf16> -> tensor<1x8x16384x128xbf16>
  return %o : tensor<1x8x16384x128xbf16>
}

// Slow links and large local chunks: across 400 Gb/s InfiniBand, each ring
// step's shift hides behind an L = 8192 attention block; zigzag also
// balances causal work.
// CHECK-LABEL: func @gqa_causal_ib_p16_long
// CHECK: cp.attention {{.*}} scheme = zigzag {cp.cost = {
// CHECK-SAME: chosen = "zigzag"
func.func @gqa_causal_ib_p16_long(%q: tensor<1x32x8192x128xbf16>, %k: tensor<1x8x8192x128xbf16>, %v: tensor<1x8x8192x128xbf16>) -> tensor<1x32x8192x128xbf16> {
  %o = cp.attention %q, %k, %v on @cp16 grid_axes = [0] mask = causal scheme = auto {cp.machine = {preset = "multinode-ib"}}
      : tensor<1x32x8192x128xbf16>, tensor<1x8x8192x128xbf16>, tensor<1x8x8192x128xbf16> -> tensor<1x32x8192x128xbf16>
  return %o : tensor<1x32x8192x128xbf16>
}

// CHECK-LABEL: func @gqa_none_ib_p16_long
// CHECK: cp.attention {{.*}} scheme = ring {cp.cost = {
// CHECK-SAME: chosen = "ring"
func.func @gqa_none_ib_p16_long(%q: tensor<1x32x8192x128xbf16>, %k: tensor<1x8x8192x128xbf16>, %v: tensor<1x8x8192x128xbf16>) -> tensor<1x32x8192x128xbf16> {
  %o = cp.attention %q, %k, %v on @cp16 grid_axes = [0] mask = none scheme = auto {cp.machine = {preset = "multinode-ib"}}
      : tensor<1x32x8192x128xbf16>, tensor<1x8x8192x128xbf16>, tensor<1x8x8192x128xbf16> -> tensor<1x32x8192x128xbf16>
  return %o : tensor<1x32x8192x128xbf16>
}

// Hybrid when Hkv = 8 < P = 16 but divisible by u: with short chunks a
// ring cannot hide its InfiniBand shifts, while hybrid(4) keeps its
// all-to-all inside a node and all-gathers over 4 groups only.
// CHECK-LABEL: func @gqa_causal_ib_p16_short
// CHECK: cp.attention {{.*}} scheme = hybrid(4) {cp.cost = {
// CHECK-SAME: chosen = "hybrid(4)"
func.func @gqa_causal_ib_p16_short(%q: tensor<1x32x1024x128xbf16>, %k: tensor<1x8x1024x128xbf16>, %v: tensor<1x8x1024x128xbf16>) -> tensor<1x32x1024x128xbf16> {
  %o = cp.attention %q, %k, %v on @cp16 grid_axes = [0] mask = causal scheme = auto {cp.machine = {preset = "multinode-ib"}}
      : tensor<1x32x1024x128xbf16>, tensor<1x8x1024x128xbf16>, tensor<1x8x1024x128xbf16> -> tensor<1x32x1024x128xbf16>
  return %o : tensor<1x32x1024x128xbf16>
}

// cp-apply-scheme resolves auto with the same model.
// APPLY-LABEL: func @mha_causal_nvlink_p4
// APPLY: cp.all_to_all
// APPLY: cp.local_attention {{.*}} cp.scheme = #cp.scheme<ulysses>
// APPLY-LABEL: func @gqa_none_nvlink_p4
// APPLY: cp.all_gather
// APPLY: cp.local_attention {{.*}} cp.scheme = #cp.scheme<allgather>
