// Source: buddy-compiler/buddy-mlir, examples/BuddyNext/next-gqa-attention.mlir (index commit 12374d30e69d90a3dffe6cd7cfa5cc03aee3fdf5), function @kernel (hand-extracted by the buddy authors from their DeepSeek-R1/Qwen-style decode graph, Dynamo -> TOSA).
// Form: (c)+(d): GQA DECODE, Lq = 1, Lk = 1024 KV cache, 2 KV heads -> 12 Q heads: cache tosa.reshape [1,2,1,1024,128] + tosa.add zeros [1,2,6,1024,128] (broadcast) + tosa.reshape [1,12,1024,128]; K goes through TWO tosa.transpose [0,1,3,2] (cancel out) then reshape to [12,1024,128]; QK^T is a `linalg.batch_matmul` WITH `indexing_maps` (transpose-B form: (b,n,k) for K) into a constant zero init; scale = tosa.mul by tensor.splat 0.0883883461; additive mask [1,1,1,1024] reshaped via [1,1024] (+ splat zero) to [1,1,1024] and tosa.add-broadcast; LOG-SUM-EXP SOFTMAX: m = reduce_max, e = math.exp(x - m) (math.exp on a whole tensor), s = reduce_sum, lse = m + tosa.log(s), p = math.exp(x - lse) — no division/reciprocal at all; lse also feeds a dead reshape; P x V via tosa.matmul (zero points); reshape to [1,12,1,128].
// Adapted: removed RUN lines, @main, @printMemrefF32/@rtclock declarations. Already MLIR-22 syntax; the @kernel body is verbatim.
// RUN: cp-opt %s --cp-raise-attention="grid-size=1 report-near-misses=true" -o %t 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s --check-prefix=IR < %t
// RUN: FileCheck %s --check-prefix=LEFT < %t
// Status: raised as a decode (queries = replicated: 1 query against 1024 cache entries) with GQA 6:1 read from the K/V cache repeated by tosa.add of zeros (normalized to linalg.broadcast; the 3-D scores stay 3-D, as lifting would only add a unit dim), the log-sum-exp softmax exp(s - (max + log(sum))), the tensor.splat scale folded into scale, the [1, 1, Lk] additive mask as explicit_mask (one-process group only), and the dead reshape of the lse dropped. The cache arguments are K and V as they are.
func.func @kernel(%q : tensor<1x12x1x128xf32>, %k_cache : tensor<1x2x1024x128xf32>, %v_cache : tensor<1x2x1024x128xf32>, %mask : tensor<1x1x1x1024xf32>) -> tensor<1x12x1x128xf32> {

  // ===========GQA cache reshape =====
  %136 = tosa.const_shape  {values = dense<[1, 2, 1, 1024, 128]> : tensor<5xindex>} : () -> !tosa.shape<5>
  %137 = tosa.reshape %k_cache, %136 : (tensor<1x2x1024x128xf32>, !tosa.shape<5>) -> tensor<1x2x1x1024x128xf32>
  %138 = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1x2x6x1024x128xf32>}> : () -> tensor<1x2x6x1024x128xf32>
  %139 = tosa.add %137, %138 : (tensor<1x2x1x1024x128xf32>, tensor<1x2x6x1024x128xf32>) -> tensor<1x2x6x1024x128xf32>
  %140 = tosa.const_shape  {values = dense<[1, 12, 1024, 128]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %141 = tosa.reshape %139, %140 : (tensor<1x2x6x1024x128xf32>, !tosa.shape<4>) -> tensor<1x12x1024x128xf32>

  %142 = tosa.const_shape  {values = dense<[1, 2, 1, 1024, 128]> : tensor<5xindex>} : () -> !tosa.shape<5>
  %143 = tosa.reshape %v_cache, %142 : (tensor<1x2x1024x128xf32>, !tosa.shape<5>) -> tensor<1x2x1x1024x128xf32>
  %144 = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1x2x6x1024x128xf32>}> : () -> tensor<1x2x6x1024x128xf32>
  %145 = tosa.add %143, %144 : (tensor<1x2x1x1024x128xf32>, tensor<1x2x6x1024x128xf32>) -> tensor<1x2x6x1024x128xf32>
  %146 = tosa.const_shape  {values = dense<[1, 12, 1024, 128]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %147 = tosa.reshape %145, %146 : (tensor<1x2x6x1024x128xf32>, !tosa.shape<4>) -> tensor<1x12x1024x128xf32>

  // ==============mask======
  %cst_21 = arith.constant 0.000000e+00 : f32
  %splat_22 = tensor.splat %cst_21 : tensor<1x1024xf32>
  %152 = tosa.const_shape  {values = dense<[1, 1024]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %153 = tosa.reshape %mask, %152 : (tensor<1x1x1x1024xf32>, !tosa.shape<2>) -> tensor<1x1024xf32>
  %154 = tosa.add %splat_22, %153 : (tensor<1x1024xf32>, tensor<1x1024xf32>) -> tensor<1x1024xf32>
  %155 = tosa.transpose %141 {perms = array<i32: 0, 1, 3, 2>} : (tensor<1x12x1024x128xf32>) -> tensor<1x12x128x1024xf32>
  %156 = tosa.const_shape  {values = dense<[12, 1, 128]> : tensor<3xindex>} : () -> !tosa.shape<3>

  // =============q reshape============
  %157 = tosa.reshape %q, %156 : (tensor<1x12x1x128xf32>, !tosa.shape<3>) -> tensor<12x1x128xf32>
  %158 = tosa.transpose %155 {perms = array<i32: 0, 1, 3, 2>} : (tensor<1x12x128x1024xf32>) -> tensor<1x12x1024x128xf32>
  %159 = tosa.const_shape  {values = dense<[12, 1024, 128]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %160 = tosa.reshape %158, %159 : (tensor<1x12x1024x128xf32>, !tosa.shape<3>) -> tensor<12x1024x128xf32>

    // ===== Attention QK^T =====

  %cst_23 = arith.constant dense<0.000000e+00> : tensor<12x1x1024xf32>
  %161 = linalg.batch_matmul indexing_maps = [affine_map<(batch, m, n, k) -> (batch, m, k)>, affine_map<(batch, m, n, k) -> (batch, n, k)>, affine_map<(batch, m, n, k) -> (batch, m, n)>] ins(%157, %160 : tensor<12x1x128xf32>, tensor<12x1024x128xf32>) outs(%cst_23 : tensor<12x1x1024xf32>) -> tensor<12x1x1024xf32>
  %cst_24 = arith.constant 0.0883883461 : f32
  %splat_25 = tensor.splat %cst_24 : tensor<12x1x1024xf32>
  %162 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %163 = tosa.mul %161, %splat_25, %162 : (tensor<12x1x1024xf32>, tensor<12x1x1024xf32>, tensor<1xi8>) -> tensor<12x1x1024xf32>
  %164 = tosa.const_shape  {values = dense<[1, 1, 1024]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %165 = tosa.reshape %154, %164 : (tensor<1x1024xf32>, !tosa.shape<3>) -> tensor<1x1x1024xf32>
  %166 = tosa.add %163, %165 : (tensor<12x1x1024xf32>, tensor<1x1x1024xf32>) -> tensor<12x1x1024xf32>

  // ===== Attention Softmax =====

  %167 = tosa.reduce_max %166 {axis = 2 : i32} : (tensor<12x1x1024xf32>) -> tensor<12x1x1xf32>
  %168 = tosa.sub %166, %167 : (tensor<12x1x1024xf32>, tensor<12x1x1xf32>) -> tensor<12x1x1024xf32>
  %169 = math.exp %168 : tensor<12x1x1024xf32>
  %170 = tosa.reduce_sum %169 {axis = 2 : i32} : (tensor<12x1x1024xf32>) -> tensor<12x1x1xf32>
  %171 = tosa.log %170 : (tensor<12x1x1xf32>) -> tensor<12x1x1xf32>
  %172 = tosa.add %167, %171 : (tensor<12x1x1xf32>, tensor<12x1x1xf32>) -> tensor<12x1x1xf32>
  %173 = tosa.sub %166, %172 : (tensor<12x1x1024xf32>, tensor<12x1x1xf32>) -> tensor<12x1x1024xf32>
  %174 = math.exp %173 : tensor<12x1x1024xf32>

  // ===== Attention * V =====

  %175 = tosa.const_shape  {values = dense<[1, 12, 1]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %176 = tosa.reshape %172, %175 : (tensor<12x1x1xf32>, !tosa.shape<3>) -> tensor<1x12x1xf32>
  %177 = tosa.const_shape  {values = dense<[12, 1024, 128]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %178 = tosa.reshape %147, %177 : (tensor<1x12x1024x128xf32>, !tosa.shape<3>) -> tensor<12x1024x128xf32>
  %179 = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xf32>}> : () -> tensor<1xf32>
  %180 = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xf32>}> : () -> tensor<1xf32>
  %181 = tosa.matmul %174, %178, %179, %180 : (tensor<12x1x1024xf32>, tensor<12x1024x128xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<12x1x128xf32>
  %182 = tosa.const_shape  {values = dense<[1, 12, 1, 128]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %183 = tosa.reshape %181, %182 : (tensor<12x1x128xf32>, !tosa.shape<4>) -> tensor<1x12x1x128xf32>

  return %183 : tensor<1x12x1x128xf32>
}

// REMARK: buddy-gqa-decode-lse-softmax-bmm-transposeb.mlir:71:10: remark: cp-raise-attention: raised tosa, 3-D scores, normalized: broadcast as an add of zeros x2, reshape round trip x2, GQA 6:1, decode (queries replicated, K/V sharded), mask tensor
// IR: cp.attention %{{.*}}, %arg1, %arg2 explicit_mask %{{.*}} on @cp grid_axes = [0] queries = replicated scale = 0.0883883461 : tensor<1x12x1x128xf32>, tensor<1x2x1024x128xf32>, tensor<1x2x1024x128xf32>, tensor<1x1x1x1024xf32> -> tensor<1x12x1x128xf32>
// IR-NOT: cp.attention
// LEFT-NOT: {{math.exp|tosa.exp|tosa.log|tosa.reduce_max|tosa.reduce_sum|tosa.matmul|linalg.batch_matmul|tosa.add|linalg.broadcast}}
