// Inputs/collectives.mlir written with upstream's shard collectives, as
// shard-partition emits them, for 3 ranks: convert-shard-to-cp (the head of
// cp-lower-to-cpu) turns them into cp's. The shifts are upstream's
// spelling of cp.shift offset +1 (shift_forward: rank r gets rank r - 1's
// data, shard offset -1) and -1 (shift_back: shard offset +1). The mirror
// exchange has no shard counterpart. Inputs/collectives-driver.cpp (mode
// `shard`) checks every function against the ops' definitions.
shard.grid @cp(shape = 3)
#id = affine_map<(i, j, k) -> (i, j, k)>

func.func @gather_axis1(%x: tensor<2x6x4xf32>) -> tensor<2x18x4xf32> {
  %0 = shard.all_gather %x on @cp grid_axes = [0] gather_axis = 1 : tensor<2x6x4xf32> -> tensor<2x18x4xf32>
  return %0 : tensor<2x18x4xf32>
}

// A strided slice, gathered along the innermost dim.
func.func @gather_slice_axis2(%x: tensor<2x6x4xf32>) -> tensor<2x2x12xf32> {
  %s = tensor.extract_slice %x[0, 2, 0] [2, 2, 4] [1, 1, 1] : tensor<2x6x4xf32> to tensor<2x2x4xf32>
  %0 = shard.all_gather %s on @cp grid_axes = [0] gather_axis = 2 : tensor<2x2x4xf32> -> tensor<2x2x12xf32>
  return %0 : tensor<2x2x12xf32>
}

func.func @all_to_all_1_0(%x: tensor<2x6x4xf32>) -> tensor<6x2x4xf32> {
  %0 = shard.all_to_all %x on @cp grid_axes = [0] split_axis = 1 concat_axis = 0 : tensor<2x6x4xf32> -> tensor<6x2x4xf32>
  return %0 : tensor<6x2x4xf32>
}

func.func @all_to_all_1_1(%x: tensor<2x6x4xf32>) -> tensor<2x6x4xf32> {
  %0 = shard.all_to_all %x on @cp grid_axes = [0] split_axis = 1 concat_axis = 1 : tensor<2x6x4xf32> -> tensor<2x6x4xf32>
  return %0 : tensor<2x6x4xf32>
}

// Rank r gets block r (2 of 6 along dim 1) of the sum over ranks.
func.func @reduce_scatter_axis1(%x: tensor<2x6x4xf32>) -> tensor<2x2x4xf32> {
  %0 = shard.reduce_scatter %x on @cp grid_axes = [0] scatter_axis = 1 : tensor<2x6x4xf32> -> tensor<2x2x4xf32>
  return %0 : tensor<2x2x4xf32>
}

// From a strided slice (columns 1..3), scattered along the innermost dim.
func.func @reduce_scatter_slice_axis2(%x: tensor<2x6x4xf32>) -> tensor<2x6x1xf32> {
  %s = tensor.extract_slice %x[0, 0, 1] [2, 6, 3] [1, 1, 1] : tensor<2x6x4xf32> to tensor<2x6x3xf32>
  %0 = shard.reduce_scatter %s on @cp grid_axes = [0] scatter_axis = 2 : tensor<2x6x3xf32> -> tensor<2x6x1xf32>
  return %0 : tensor<2x6x1xf32>
}

// 16-bit floats are summed too (in f32 per pair, rounded back).
func.func @reduce_scatter_bf16(%x: tensor<2x6x4xf32>) -> tensor<2x2x4xf32> {
  %e = tensor.empty() : tensor<2x6x4xbf16>
  %h = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x6x4xf32>) outs(%e : tensor<2x6x4xbf16>) {
  ^bb0(%a: f32, %b: bf16):
    %c = arith.truncf %a : f32 to bf16
    linalg.yield %c : bf16
  } -> tensor<2x6x4xbf16>
  %0 = shard.reduce_scatter %h on @cp grid_axes = [0] scatter_axis = 1 : tensor<2x6x4xbf16> -> tensor<2x2x4xbf16>
  %e2 = tensor.empty() : tensor<2x2x4xf32>
  %f = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%0 : tensor<2x2x4xbf16>) outs(%e2 : tensor<2x2x4xf32>) {
  ^bb0(%a: bf16, %b: f32):
    %c = arith.extf %a : bf16 to f32
    linalg.yield %c : f32
  } -> tensor<2x2x4xf32>
  return %f : tensor<2x2x4xf32>
}
func.func @reduce_scatter_f16(%x: tensor<2x6x4xf32>) -> tensor<2x2x4xf32> {
  %e = tensor.empty() : tensor<2x6x4xf16>
  %h = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x6x4xf32>) outs(%e : tensor<2x6x4xf16>) {
  ^bb0(%a: f32, %b: f16):
    %c = arith.truncf %a : f32 to f16
    linalg.yield %c : f16
  } -> tensor<2x6x4xf16>
  %0 = shard.reduce_scatter %h on @cp grid_axes = [0] scatter_axis = 1 : tensor<2x6x4xf16> -> tensor<2x2x4xf16>
  %e2 = tensor.empty() : tensor<2x2x4xf32>
  %f = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%0 : tensor<2x2x4xf16>) outs(%e2 : tensor<2x2x4xf32>) {
  ^bb0(%a: f16, %b: f32):
    %c = arith.extf %a : f16 to f32
    linalg.yield %c : f32
  } -> tensor<2x2x4xf32>
  return %f : tensor<2x2x4xf32>
}

func.func @shift_forward(%x: tensor<2x6x4xf32>) -> tensor<2x6x4xf32> {
  %0 = shard.shift %x on @cp grid_axes = [0] shift_axis = 0 offset = -1 rotate : tensor<2x6x4xf32> -> tensor<2x6x4xf32>
  return %0 : tensor<2x6x4xf32>
}

func.func @shift_back(%x: tensor<2x6x4xf32>) -> tensor<2x6x4xf32> {
  %0 = shard.shift %x on @cp grid_axes = [0] shift_axis = 0 offset = 1 rotate : tensor<2x6x4xf32> -> tensor<2x6x4xf32>
  return %0 : tensor<2x6x4xf32>
}
