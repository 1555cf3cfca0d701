// cp-choose-scheme for training: the backward is costed with 2.5x the
// forward's FLOPs and SchemeTraffic's backward bytes, and a forward and
// backward that form one training step get one scheme chosen by the sum.
// The shape (GQA H = 32, Hkv = 4, D = 128, L = 4096 per rank, P = 4, bf16,
// NVLink) is where the forward alone picks allgather: its exposed K/V
// gather (25 MB) costs less than the ring's per-step merges. A training
// step adds allgather's f32 dK/dV reduce-scatter (50 MB, exposed) while the
// ring's dK/dV shifts hide behind 2.5x longer steps, which have no merges:
// ring wins by the cost model's 7.92 ms against 8.10 ms.
// RUN: cp-opt %s --cp-choose-scheme -split-input-file | FileCheck %s
// RUN: cp-opt %s --cp-choose-scheme=training=1 -split-input-file | FileCheck %s --check-prefix=TRAINING
// RUN: cp-opt %s --cp-choose-scheme --cp-apply-scheme -split-input-file | FileCheck %s --check-prefix=APPLY

shard.grid @cp4(shape = 4)

// CHECK-LABEL: func @forward_only
// CHECK: cp.attention {{.*}} scheme = allgather {cp.cost = {
// CHECK-SAME: allgather = {bytes = 25165824 : i64
// CHECK-SAME: chosen = "allgather"
// CHECK-NOT: passes
// With training=1 the forward is ranked as a training step (its backward
// compiled elsewhere, nothing shared): ring.
// TRAINING-LABEL: func @forward_only
// TRAINING: cp.attention {{.*}} scheme = ring {cp.cost = {
// TRAINING-SAME: chosen = "ring"
// TRAINING-SAME: passes = "forward+backward"
func.func @forward_only(%q: tensor<1x32x4096x128xbf16>, %k: tensor<1x4x4096x128xbf16>, %v: tensor<1x4x4096x128xbf16>) -> tensor<1x32x4096x128xbf16> {
  %o = cp.attention %q, %k, %v on @cp4 grid_axes = [0] scheme = auto
      : tensor<1x32x4096x128xbf16>, tensor<1x4x4096x128xbf16>, tensor<1x4x4096x128xbf16> -> tensor<1x32x4096x128xbf16>
  return %o : tensor<1x32x4096x128xbf16>
}

// -----

shard.grid @cp4(shape = 4)

// The same shape as one training step: both ops get ring and the same
// cp.cost, whose figures cover both passes. Allgather's backward sends
// 75497472 bytes with its own K/V gather; 25165824 of them are the
// forward's gather, sent once, so backward_bytes = 50331648. The ring's
// backward, 3 K/V shifts in bf16 and 4 dK/dV shifts in f32
// (25165824 + 67108864), shares its first K/V shift with the forward:
// 83886080.
// CHECK-LABEL: func @training_step
// CHECK: cp.attention {{.*}} scheme = ring {cp.cost = {
// CHECK-SAME: allgather = {backward_bytes = 50331648 : i64
// CHECK-SAME: chosen = "ring"
// CHECK-SAME: passes = "forward+backward"
// CHECK-SAME: ring = {backward_bytes = 83886080 : i64
// CHECK: cp.attention_grad {{.*}} scheme = ring {cp.cost = {
// CHECK-SAME: chosen = "ring"
// CHECK-SAME: passes = "forward+backward"
// APPLY-LABEL: func @training_step
// APPLY: cp.local_attention {{.*}}cp.scheme = #cp.scheme<ring>
// APPLY: cp.local_attention_grad {{.*}}cp.scheme = #cp.scheme<ring>
func.func @training_step(%q: tensor<1x32x4096x128xbf16>, %k: tensor<1x4x4096x128xbf16>, %v: tensor<1x4x4096x128xbf16>, %do: tensor<1x32x4096x128xbf16>)
    -> (tensor<1x32x4096x128xbf16>, tensor<1x32x4096x128xf32>, tensor<1x4x4096x128xf32>, tensor<1x4x4096x128xf32>) {
  %o, %lse = cp.attention %q, %k, %v on @cp4 grid_axes = [0] scheme = auto
      : tensor<1x32x4096x128xbf16>, tensor<1x4x4096x128xbf16>, tensor<1x4x4096x128xbf16> -> tensor<1x32x4096x128xbf16>, tensor<1x32x4096xf32>
  %dq, %dk, %dv = cp.attention_grad %q, %k, %v, %o, %lse, %do on @cp4 grid_axes = [0] scheme = auto
      : tensor<1x32x4096x128xbf16>, tensor<1x4x4096x128xbf16>, tensor<1x4x4096x128xbf16>, tensor<1x32x4096x128xbf16>, tensor<1x32x4096xf32>, tensor<1x32x4096x128xbf16>
      -> tensor<1x32x4096x128xf32>, tensor<1x4x4096x128xf32>, tensor<1x4x4096x128xf32>
  return %o, %dq, %dk, %dv : tensor<1x32x4096x128xbf16>, tensor<1x32x4096x128xf32>, tensor<1x4x4096x128xf32>, tensor<1x4x4096x128xf32>
}

// -----

shard.grid @cp4(shape = 4)

// A backward whose forward is not in the IR is ranked by the backward
// alone.
// CHECK-LABEL: func @backward_alone
// CHECK: cp.attention_grad {{.*}} scheme = ring {cp.cost = {
// CHECK-SAME: chosen = "ring"
// CHECK-SAME: passes = "backward"
func.func @backward_alone(%q: tensor<1x32x4096x128xbf16>, %k: tensor<1x4x4096x128xbf16>, %v: tensor<1x4x4096x128xbf16>, %o: tensor<1x32x4096x128xbf16>, %lse: tensor<1x32x4096xf32>, %do: tensor<1x32x4096x128xbf16>)
    -> (tensor<1x32x4096x128xf32>, tensor<1x4x4096x128xf32>, tensor<1x4x4096x128xf32>) {
  %dq, %dk, %dv = cp.attention_grad %q, %k, %v, %o, %lse, %do on @cp4 grid_axes = [0] scheme = auto
      : tensor<1x32x4096x128xbf16>, tensor<1x4x4096x128xbf16>, tensor<1x4x4096x128xbf16>, tensor<1x32x4096x128xbf16>, tensor<1x32x4096xf32>, tensor<1x32x4096x128xbf16>
      -> tensor<1x32x4096x128xf32>, tensor<1x4x4096x128xf32>, tensor<1x4x4096x128xf32>
  return %dq, %dk, %dv : tensor<1x32x4096x128xf32>, tensor<1x4x4096x128xf32>, tensor<1x4x4096x128xf32>
}

// -----

shard.grid @cp4(shape = 4)

// A forward with a chosen scheme leaves its auto backward to be ranked
// alone, and keeps its own scheme.
// CHECK-LABEL: func @fixed_forward
// CHECK: cp.attention {{.*}} scheme = allgather :
// CHECK: cp.attention_grad {{.*}} scheme = ring {cp.cost = {
// CHECK-SAME: passes = "backward"
func.func @fixed_forward(%q: tensor<1x32x4096x128xbf16>, %k: tensor<1x4x4096x128xbf16>, %v: tensor<1x4x4096x128xbf16>, %do: tensor<1x32x4096x128xbf16>)
    -> (tensor<1x32x4096x128xf32>, tensor<1x4x4096x128xf32>, tensor<1x4x4096x128xf32>) {
  %o, %lse = cp.attention %q, %k, %v on @cp4 grid_axes = [0] scheme = allgather
      : tensor<1x32x4096x128xbf16>, tensor<1x4x4096x128xbf16>, tensor<1x4x4096x128xbf16> -> tensor<1x32x4096x128xbf16>, tensor<1x32x4096xf32>
  %dq, %dk, %dv = cp.attention_grad %q, %k, %v, %o, %lse, %do on @cp4 grid_axes = [0] scheme = auto
      : tensor<1x32x4096x128xbf16>, tensor<1x4x4096x128xbf16>, tensor<1x4x4096x128xbf16>, tensor<1x32x4096x128xbf16>, tensor<1x32x4096xf32>, tensor<1x32x4096x128xbf16>
      -> tensor<1x32x4096x128xf32>, tensor<1x4x4096x128xf32>, tensor<1x4x4096x128xf32>
  return %dq, %dk, %dv : tensor<1x32x4096x128xf32>, tensor<1x4x4096x128xf32>, tensor<1x4x4096x128xf32>
}
