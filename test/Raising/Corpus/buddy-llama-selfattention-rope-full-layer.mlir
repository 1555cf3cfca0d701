// Source: buddy-compiler/buddy-mlir, examples/BuddyNext/next-selfattention.mlir (index commit 01f83f583ffba8e569e287f09cfd1857259de5ea), function @kernel_self_attention (one LLaMA-2-7B self-attention block as imported by buddy's Dynamo->TOSA frontend: 32 heads, seq 40, head_dim 128, hidden 4096).
// Form: (b)+(c), full layer, mixed TOSA + linalg: RMSNorm weight tosa.mul; Q/K/V projections = tosa.transpose(W,[1,0]) + tosa.reshape [1,40,4096]->[40,4096] + `linalg.matmul {cast = #linalg.type_fn<cast_signed>}` + reshape back; heads: tosa.reshape [1,40,32,128] + tosa.transpose [0,2,1,3]; RoPE on Q and K (cos/sin cache slices of %arg6/%arg7 via tensor.extract_slice chains, rank-reducing broadcast generics, gather generic with tensor.extract by position ids %arg2, rotate-half via extract_slice/tosa.negate/insert_slice, tosa.mul + tosa.add); K^T = tosa.transpose [0,1,3,2] of the RoPE'd K; `tosa.add x, zeros` no-ops on Q, K^T, P and V before each 4-D->3-D tosa.reshape; tosa.matmul; reshape to [1,32,40,40]; scale = tosa.mul by tosa.reciprocal(splat 11.3137083); additive mask %arg9 tensor<1x1x40x40> broadcast over heads; softmax axis 3 (reduce_max, sub, exp, reduce_sum, reciprocal, mul); P x V tosa.matmul; reshape [1,32,40,128]; tosa.transpose [0,2,1,3]; tosa.identity; reshape [1,40,4096]; out-projection linalg.matmul; residual tosa.add. Result printed, not returned.
// Adapted: removed RUN lines and @main; declared @printMemrefF32 at the top (the original declares it elsewhere in the file). Mechanical MLIR-22 TOSA update (scripted, see INDEX.md): `<{value = ...}>` -> `<{values = ...}>`; `tosa.transpose %x, %permsConst` -> `tosa.transpose %x {perms = array<i32: ...>}` (perm consts kept, now unused); `tosa.reshape %x {new_shape = array<i64: ...>}` -> `tosa.const_shape` + `tosa.reshape %x, %shape_N`; `tosa.mul a, b {shift = 0 : i8}` -> `tosa.mul a, b, %shift`; `tosa.matmul a, b` -> `tosa.matmul a, b, %a_zp, %b_zp`; `tosa.negate x` -> `tosa.negate x, %a_zp, %b_zp` (f32 zero points). One source bug fixed: `%arg2_converted = tosa.reshape %arg2 {new_shape = array<i64: 40>} : (tensor<40xi64>) -> tensor<1x40xi64>` had a new_shape inconsistent with its result type; the const_shape uses [1, 40] (the result type).
// RUN: cp-opt %s --cp-raise-attention="grid-size=1 report-near-misses=true" -o %t 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s --check-prefix=IR < %t
// RUN: FileCheck %s --check-prefix=LEFT < %t
// Status: raised after normalization (projections, RoPE and the residual kept): the tosa.matmuls lifted over the tosa.reshapes and read through the heads transposes, V held as [B, L, H, D] transposed to [B, H, L, D], reciprocal(constant) folded into the scale, the [1, 1, L, L] mask as explicit_mask.
#map = affine_map<(d0, d1, d2) -> (d1)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d2)>
#map2 = affine_map<(d0, d1, d2) -> (d0, d1)>
#map3 = affine_map<(d0, d1) -> (d0, d1)>
#map4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map5 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map6 = affine_map<(d0, d1, d2) -> (d0, 0, d1, d2)>
#map7 = affine_map<(d0, d1) -> (0, d0, d1)>
func.func private @rtclock() -> f64
func.func private @printMemrefF32(%ptr : tensor<*xf32>)

func.func @kernel_self_attention(%arg0 : tensor<1x1x4096xf32>, %arg1 : tensor<1x40x4096xf32>, %arg2 : tensor<40xi64>, %arg3 : tensor<4096x4096xf32>, %arg4 : tensor<4096x4096xf32>, %arg5 : tensor<4096x4096xf32>, %arg6 : tensor<1x1x2048x128xf32>, %arg7 : tensor<1x1x2048x128xf32>, %arg8 : tensor<4096x4096xf32>, %arg9 : tensor<1x1x40x40xf32>) {
  %a_zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %b_zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %t_start = call @rtclock() : () -> f64

  // 计算 Query、Key 和 Value 矩阵
  %41 = tosa.mul %arg0, %arg1, %shift : (tensor<1x1x4096xf32>, tensor<1x40x4096xf32>, tensor<1xi8>) -> tensor<1x40x4096xf32>

  %42 = "tosa.const"() <{values = dense<[1, 0]> : tensor<2xi32>}> : () -> tensor<2xi32>
  %43 = tosa.transpose %arg3 {perms = array<i32: 1, 0>} : (tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  %shape_44 = tosa.const_shape {values = dense<[40, 4096]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %44 = tosa.reshape %41, %shape_44 : (tensor<1x40x4096xf32>, !tosa.shape<2>) -> tensor<40x4096xf32>
  %cst_6 = arith.constant dense<0.0> : tensor<40x4096xf32>
  %45 = linalg.matmul {cast = #linalg.type_fn<cast_signed>} ins(%44, %43 : tensor<40x4096xf32>, tensor<4096x4096xf32>) outs(%cst_6 : tensor<40x4096xf32>) -> tensor<40x4096xf32>
  %shape_46 = tosa.const_shape {values = dense<[1, 40, 4096]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %46 = tosa.reshape %45, %shape_46 : (tensor<40x4096xf32>, !tosa.shape<3>) -> tensor<1x40x4096xf32>

  %47 = "tosa.const"() <{values = dense<[1, 0]> : tensor<2xi32>}> : () -> tensor<2xi32>
  %48 = tosa.transpose %arg4 {perms = array<i32: 1, 0>} : (tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  %shape_49 = tosa.const_shape {values = dense<[40, 4096]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %49 = tosa.reshape %41, %shape_49 : (tensor<1x40x4096xf32>, !tosa.shape<2>) -> tensor<40x4096xf32>
  %cst_7 = arith.constant dense<0.0> : tensor<40x4096xf32>
  %50 = linalg.matmul {cast = #linalg.type_fn<cast_signed>} ins(%49, %48 : tensor<40x4096xf32>, tensor<4096x4096xf32>) outs(%cst_7 : tensor<40x4096xf32>) -> tensor<40x4096xf32>
  %shape_51 = tosa.const_shape {values = dense<[1, 40, 4096]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %51 = tosa.reshape %50, %shape_51 : (tensor<40x4096xf32>, !tosa.shape<3>) -> tensor<1x40x4096xf32>

  %52 = "tosa.const"() <{values = dense<[1, 0]> : tensor<2xi32>}> : () -> tensor<2xi32>
  %53 = tosa.transpose %arg5 {perms = array<i32: 1, 0>} : (tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  %shape_54 = tosa.const_shape {values = dense<[40, 4096]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %54 = tosa.reshape %41, %shape_54 : (tensor<1x40x4096xf32>, !tosa.shape<2>) -> tensor<40x4096xf32>
  %cst_8 = arith.constant dense<0.0> : tensor<40x4096xf32>
  %55 = linalg.matmul {cast = #linalg.type_fn<cast_signed>} ins(%54, %53 : tensor<40x4096xf32>, tensor<4096x4096xf32>) outs(%cst_8 : tensor<40x4096xf32>) -> tensor<40x4096xf32>
  %shape_56 = tosa.const_shape {values = dense<[1, 40, 4096]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %56 = tosa.reshape %55, %shape_56 : (tensor<40x4096xf32>, !tosa.shape<3>) -> tensor<1x40x4096xf32>

  // 对 Q、K 向量进行 RoPE (旋转式位置编码)
  %shape_57 = tosa.const_shape {values = dense<[1, 40, 32, 128]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %57 = tosa.reshape %46, %shape_57 : (tensor<1x40x4096xf32>, !tosa.shape<4>) -> tensor<1x40x32x128xf32>
  %58 = "tosa.const"() <{values = dense<[0, 2, 1, 3]> : tensor<4xi32>}> : () -> tensor<4xi32>
  %59 = tosa.transpose %57 {perms = array<i32: 0, 2, 1, 3>} : (tensor<1x40x32x128xf32>) -> tensor<1x32x40x128xf32>

  %shape_60 = tosa.const_shape {values = dense<[1, 40, 32, 128]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %60 = tosa.reshape %51, %shape_60 : (tensor<1x40x4096xf32>, !tosa.shape<4>) -> tensor<1x40x32x128xf32>
  %61 = "tosa.const"() <{values = dense<[0, 2, 1, 3]> : tensor<4xi32>}> : () -> tensor<4xi32>
  %62 = tosa.transpose %60 {perms = array<i32: 0, 2, 1, 3>} : (tensor<1x40x32x128xf32>) -> tensor<1x32x40x128xf32>

  %shape_63 = tosa.const_shape {values = dense<[1, 40, 32, 128]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %63 = tosa.reshape %56, %shape_63 : (tensor<1x40x4096xf32>, !tosa.shape<4>) -> tensor<1x40x32x128xf32>
  %64 = "tosa.const"() <{values = dense<[0, 2, 1, 3]> : tensor<4xi32>}> : () -> tensor<4xi32>
  %65 = tosa.transpose %63 {perms = array<i32: 0, 2, 1, 3>} : (tensor<1x40x32x128xf32>) -> tensor<1x32x40x128xf32>

  // 计算 Softmax(Q,K) 以及Self-Attention的输出
  %extracted_slice_9 = tensor.extract_slice %arg6[0, 0, 0, 0] [1, 1, 2048, 128] [1, 1, 1, 1] : tensor<1x1x2048x128xf32> to tensor<1x1x2048x128xf32>
  %extracted_slice_10 = tensor.extract_slice %extracted_slice_9[0, 0, 0, 0] [1, 1, 2048, 128] [1, 1, 1, 1] : tensor<1x1x2048x128xf32> to tensor<1x1x2048x128xf32>
  %extracted_slice_11 = tensor.extract_slice %extracted_slice_10[0, 0, 0, 0] [1, 1, 40, 128] [1, 1, 1, 1] : tensor<1x1x2048x128xf32> to tensor<1x1x40x128xf32>
  %extracted_slice_12 = tensor.extract_slice %arg7[0, 0, 0, 0] [1, 1, 2048, 128] [1, 1, 1, 1] : tensor<1x1x2048x128xf32> to tensor<1x1x2048x128xf32>
  %extracted_slice_13 = tensor.extract_slice %extracted_slice_12[0, 0, 0, 0] [1, 1, 2048, 128] [1, 1, 1, 1] : tensor<1x1x2048x128xf32> to tensor<1x1x2048x128xf32>
  %extracted_slice_14 = tensor.extract_slice %extracted_slice_13[0, 0, 0, 0] [1, 1, 40, 128] [1, 1, 1, 1] : tensor<1x1x2048x128xf32> to tensor<1x1x40x128xf32>
  %66 = tensor.empty() : tensor<1x40x128xf32>
  %67 = linalg.generic {indexing_maps = [#map6, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%extracted_slice_11 : tensor<1x1x40x128xf32>) outs(%66 : tensor<1x40x128xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x40x128xf32>
  %68 = tensor.empty() : tensor<40x128xf32>
  %69 = linalg.generic {indexing_maps = [#map7, #map3], iterator_types = ["parallel", "parallel"]} ins(%67 : tensor<1x40x128xf32>) outs(%68 : tensor<40x128xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<40x128xf32>
  %70 = tensor.empty() : tensor<1x40x128xf32>
  %71 = linalg.generic {indexing_maps = [#map6, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%extracted_slice_14 : tensor<1x1x40x128xf32>) outs(%70 : tensor<1x40x128xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x40x128xf32>
  %72 = tensor.empty() : tensor<40x128xf32>
  %73 = linalg.generic {indexing_maps = [#map7, #map3], iterator_types = ["parallel", "parallel"]} ins(%71 : tensor<1x40x128xf32>) outs(%72 : tensor<40x128xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<40x128xf32>

  %74 = tensor.empty() : tensor<1x40x128xf32>
  %shape_arg2_converted = tosa.const_shape {values = dense<[1, 40]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %arg2_converted = tosa.reshape %arg2, %shape_arg2_converted : (tensor<40xi64>, !tosa.shape<2>) -> tensor<1x40xi64>
  %75 = linalg.generic {indexing_maps = [#map2, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg2_converted : tensor<1x40xi64>) outs(%74 : tensor<1x40x128xf32>) {
  ^bb0(%in: i64, %out: f32):
    %4175 = arith.index_cast %in : i64 to index
    %4176 = linalg.index 1 : index 
    %extracted = tensor.extract %69[%4175, %4176] : tensor<40x128xf32>
    linalg.yield %extracted : f32
  } -> tensor<1x40x128xf32>
  %shape_76 = tosa.const_shape {values = dense<[1, 1, 40, 128]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %76 = tosa.reshape %75, %shape_76 : (tensor<1x40x128xf32>, !tosa.shape<4>) -> tensor<1x1x40x128xf32>

  %77 = tensor.empty() : tensor<1x40x128xf32>
  %78 = linalg.generic {indexing_maps = [#map2, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg2_converted : tensor<1x40xi64>) outs(%77 : tensor<1x40x128xf32>) {
  ^bb0(%in: i64, %out: f32):
    %4175 = arith.index_cast %in : i64 to index
    %4176 = linalg.index 1 : index 
    %extracted = tensor.extract %73[%4175, %4176] : tensor<40x128xf32>
    linalg.yield %extracted : f32
  } -> tensor<1x40x128xf32>
  %shape_79 = tosa.const_shape {values = dense<[1, 1, 40, 128]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %79 = tosa.reshape %78, %shape_79 : (tensor<1x40x128xf32>, !tosa.shape<4>) -> tensor<1x1x40x128xf32>

  %80 = tosa.mul %59, %76, %shift : (tensor<1x32x40x128xf32>, tensor<1x1x40x128xf32>, tensor<1xi8>) -> tensor<1x32x40x128xf32>
  %extracted_slice_15 = tensor.extract_slice %59[0, 0, 0, 0] [1, 32, 40, 64] [1, 1, 1, 1] : tensor<1x32x40x128xf32> to tensor<1x32x40x64xf32>
  %extracted_slice_16 = tensor.extract_slice %59[0, 0, 0, 64] [1, 32, 40, 64] [1, 1, 1, 1] : tensor<1x32x40x128xf32> to tensor<1x32x40x64xf32>
  %81 = tosa.negate %extracted_slice_16, %a_zp, %b_zp : (tensor<1x32x40x64xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x32x40x64xf32>
  %82 = tensor.empty() : tensor<1x32x40x128xf32>
  %inserted_slice = tensor.insert_slice %81 into %82[0, 0, 0, 0] [1, 32, 40, 64] [1, 1, 1, 1] : tensor<1x32x40x64xf32> into tensor<1x32x40x128xf32>
  %inserted_slice_17 = tensor.insert_slice %extracted_slice_15 into %inserted_slice[0, 0, 0, 64] [1, 32, 40, 64] [1, 1, 1, 1] : tensor<1x32x40x64xf32> into tensor<1x32x40x128xf32>
  %83 = tosa.mul %inserted_slice_17, %79, %shift : (tensor<1x32x40x128xf32>, tensor<1x1x40x128xf32>, tensor<1xi8>) -> tensor<1x32x40x128xf32>
  %84 = tosa.add %80, %83 : (tensor<1x32x40x128xf32>, tensor<1x32x40x128xf32>) -> tensor<1x32x40x128xf32>
  %85 = tosa.mul %62, %76, %shift : (tensor<1x32x40x128xf32>, tensor<1x1x40x128xf32>, tensor<1xi8>) -> tensor<1x32x40x128xf32>
  %extracted_slice_18 = tensor.extract_slice %62[0, 0, 0, 0] [1, 32, 40, 64] [1, 1, 1, 1] : tensor<1x32x40x128xf32> to tensor<1x32x40x64xf32>
  %extracted_slice_19 = tensor.extract_slice %62[0, 0, 0, 64] [1, 32, 40, 64] [1, 1, 1, 1] : tensor<1x32x40x128xf32> to tensor<1x32x40x64xf32>
  %86 = tosa.negate %extracted_slice_19, %a_zp, %b_zp : (tensor<1x32x40x64xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x32x40x64xf32>
  %87 = tensor.empty() : tensor<1x32x40x128xf32>
  %inserted_slice_20 = tensor.insert_slice %86 into %87[0, 0, 0, 0] [1, 32, 40, 64] [1, 1, 1, 1] : tensor<1x32x40x64xf32> into tensor<1x32x40x128xf32>
  %inserted_slice_21 = tensor.insert_slice %extracted_slice_18 into %inserted_slice_20[0, 0, 0, 64] [1, 32, 40, 64] [1, 1, 1, 1] : tensor<1x32x40x64xf32> into tensor<1x32x40x128xf32>

  // 计算 Softmax(QK/sqrt(d_k))
  %88 = tosa.mul %inserted_slice_21, %79, %shift : (tensor<1x32x40x128xf32>, tensor<1x1x40x128xf32>, tensor<1xi8>) -> tensor<1x32x40x128xf32>
  %89 = tosa.add %85, %88 : (tensor<1x32x40x128xf32>, tensor<1x32x40x128xf32>) -> tensor<1x32x40x128xf32>
  %90 = "tosa.const"() <{values = dense<[0, 1, 3, 2]> : tensor<4xi32>}> : () -> tensor<4xi32>
  %91 = tosa.transpose %89 {perms = array<i32: 0, 1, 3, 2>} : (tensor<1x32x40x128xf32>) -> tensor<1x32x128x40xf32>
  %92 = "tosa.const"() <{values = dense<0.0> : tensor<1x32x40x128xf32>}> : () -> tensor<1x32x40x128xf32>
  %93 = tosa.add %84, %92 : (tensor<1x32x40x128xf32>, tensor<1x32x40x128xf32>) -> tensor<1x32x40x128xf32>
  %shape_94 = tosa.const_shape {values = dense<[32, 40, 128]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %94 = tosa.reshape %93, %shape_94 : (tensor<1x32x40x128xf32>, !tosa.shape<3>) -> tensor<32x40x128xf32>
  %95 = "tosa.const"() <{values = dense<0.0> : tensor<1x32x128x40xf32>}> : () -> tensor<1x32x128x40xf32>
  %96 = tosa.add %91, %95 : (tensor<1x32x128x40xf32>, tensor<1x32x128x40xf32>) -> tensor<1x32x128x40xf32>
  %shape_97 = tosa.const_shape {values = dense<[32, 128, 40]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %97 = tosa.reshape %96, %shape_97 : (tensor<1x32x128x40xf32>, !tosa.shape<3>) -> tensor<32x128x40xf32>
  %98 = tosa.matmul %94, %97, %a_zp, %b_zp : (tensor<32x40x128xf32>, tensor<32x128x40xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<32x40x40xf32>
  %shape_99 = tosa.const_shape {values = dense<[1, 32, 40, 40]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %99 = tosa.reshape %98, %shape_99 : (tensor<32x40x40xf32>, !tosa.shape<4>) -> tensor<1x32x40x40xf32>
  %100 = "tosa.const"() <{values = dense<11.3137083> : tensor<1x32x40x40xf32>}> : () -> tensor<1x32x40x40xf32>
  %101 = tosa.reciprocal %100 : (tensor<1x32x40x40xf32>) -> tensor<1x32x40x40xf32>
  %102 = tosa.mul %99, %101, %shift : (tensor<1x32x40x40xf32>, tensor<1x32x40x40xf32>, tensor<1xi8>) -> tensor<1x32x40x40xf32>
  %103 = tosa.add %102, %arg9 : (tensor<1x32x40x40xf32>, tensor<1x1x40x40xf32>) -> tensor<1x32x40x40xf32>
  %104 = tosa.reduce_max %103 {axis = 3 : i32} : (tensor<1x32x40x40xf32>) -> tensor<1x32x40x1xf32>
  %105 = tosa.sub %103, %104 : (tensor<1x32x40x40xf32>, tensor<1x32x40x1xf32>) -> tensor<1x32x40x40xf32>
  %106 = tosa.exp %105 : (tensor<1x32x40x40xf32>) -> tensor<1x32x40x40xf32>
  %107 = tosa.reduce_sum %106 {axis = 3 : i32} : (tensor<1x32x40x40xf32>) -> tensor<1x32x40x1xf32>
  %108 = tosa.reciprocal %107 : (tensor<1x32x40x1xf32>) -> tensor<1x32x40x1xf32>
  %109 = tosa.mul %106, %108, %shift : (tensor<1x32x40x40xf32>, tensor<1x32x40x1xf32>, tensor<1xi8>) -> tensor<1x32x40x40xf32>

  // 计算Self-Attention的输出
  %110 = "tosa.const"() <{values = dense<0.0> : tensor<1x32x40x40xf32>}> : () -> tensor<1x32x40x40xf32>
  %111 = tosa.add %109, %110 : (tensor<1x32x40x40xf32>, tensor<1x32x40x40xf32>) -> tensor<1x32x40x40xf32>
  %shape_112 = tosa.const_shape {values = dense<[32, 40, 40]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %112 = tosa.reshape %111, %shape_112 : (tensor<1x32x40x40xf32>, !tosa.shape<3>) -> tensor<32x40x40xf32>
  %113 = "tosa.const"() <{values = dense<0.0> : tensor<1x32x40x128xf32>}> : () -> tensor<1x32x40x128xf32>
  %114 = tosa.add %65, %113 : (tensor<1x32x40x128xf32>, tensor<1x32x40x128xf32>) -> tensor<1x32x40x128xf32>
  %shape_115 = tosa.const_shape {values = dense<[32, 40, 128]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %115 = tosa.reshape %114, %shape_115 : (tensor<1x32x40x128xf32>, !tosa.shape<3>) -> tensor<32x40x128xf32>
  %116 = tosa.matmul %112, %115, %a_zp, %b_zp : (tensor<32x40x40xf32>, tensor<32x40x128xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<32x40x128xf32>

  %shape_117 = tosa.const_shape {values = dense<[1, 32, 40, 128]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %117 = tosa.reshape %116, %shape_117 : (tensor<32x40x128xf32>, !tosa.shape<4>) -> tensor<1x32x40x128xf32>
  %118 = "tosa.const"() <{values = dense<[0, 2, 1, 3]> : tensor<4xi32>}> : () -> tensor<4xi32>
  %119 = tosa.transpose %117 {perms = array<i32: 0, 2, 1, 3>} : (tensor<1x32x40x128xf32>) -> tensor<1x40x32x128xf32>
  %120 = tosa.identity %119 : (tensor<1x40x32x128xf32>) -> tensor<1x40x32x128xf32>
  %shape_121 = tosa.const_shape {values = dense<[1, 40, 4096]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %121 = tosa.reshape %120, %shape_121 : (tensor<1x40x32x128xf32>, !tosa.shape<3>) -> tensor<1x40x4096xf32>

  %122 = "tosa.const"() <{values = dense<[1, 0]> : tensor<2xi32>}> : () -> tensor<2xi32>
  %123 = tosa.transpose %arg8 {perms = array<i32: 1, 0>} : (tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  %shape_124 = tosa.const_shape {values = dense<[40, 4096]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %124 = tosa.reshape %121, %shape_124 : (tensor<1x40x4096xf32>, !tosa.shape<2>) -> tensor<40x4096xf32>
  %cst_22 = arith.constant dense<0.0> : tensor<40x4096xf32>
  %125 = linalg.matmul {cast = #linalg.type_fn<cast_signed>} ins(%124, %123 : tensor<40x4096xf32>, tensor<4096x4096xf32>) outs(%cst_22 : tensor<40x4096xf32>) -> tensor<40x4096xf32>
  %shape_126 = tosa.const_shape {values = dense<[1, 40, 4096]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %126 = tosa.reshape %125, %shape_126 : (tensor<40x4096xf32>, !tosa.shape<3>) -> tensor<1x40x4096xf32>
  %127 = tosa.add %arg1, %126 : (tensor<1x40x4096xf32>, tensor<1x40x4096xf32>) -> tensor<1x40x4096xf32>

  %t_end = call @rtclock() : () -> f64
  %time = arith.subf %t_end, %t_start : f64

  %tensor_unranked = tensor.cast %127 : tensor<1x40x4096xf32> to tensor<*xf32>

  call @printMemrefF32(%tensor_unranked) : (tensor<*xf32>) -> ()
  vector.print %time : f64

  return
}

// REMARK: buddy-llama-selfattention-rope-full-layer.mlir:176:10: remark: cp-raise-attention: raised linalg, 4-D scores, normalized: broadcast or transpose copy x2, batch matmul over reshapes x2, reshape round trip x2, [B, L, H, D] operand x1, mask tensor
// REMARK: buddy-llama-selfattention-rope-full-layer.mlir:189:10: remark: cp-raise-attention: not raised: P is not a softmax (linalg.softmax, a division by the row sum, or tosa.mul by a reciprocal)
// IR: cp.attention %{{.*}}, %{{.*}}, %{{.*}} explicit_mask %{{.*}} on @cp grid_axes = [0] scale = 0.0883883461
// IR-NOT: cp.attention
// LEFT-NOT: {{math.exp|tosa.exp|arith.maximumf|tosa.reduce_max|linalg.softmax}}
