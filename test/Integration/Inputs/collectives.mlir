// Every collective of the runtime on odd dims, strided inputs and both shift
// directions, for 3 ranks. Inputs/collectives-driver.cpp computes what each
// function must return from the ops' definitions.
shard.grid @cp(shape = 3)

func.func @gather_axis1(%x: tensor<2x6x4xf32>) -> tensor<2x18x4xf32> {
  %0 = cp.all_gather %x on @cp grid_axes = [0] gather_axis = 1 : tensor<2x6x4xf32> -> tensor<2x18x4xf32>
  return %0 : tensor<2x18x4xf32>
}

// A strided slice, gathered along the innermost dim.
func.func @gather_slice_axis2(%x: tensor<2x6x4xf32>) -> tensor<2x2x12xf32> {
  %s = tensor.extract_slice %x[0, 2, 0] [2, 2, 4] [1, 1, 1] : tensor<2x6x4xf32> to tensor<2x2x4xf32>
  %0 = cp.all_gather %s on @cp grid_axes = [0] gather_axis = 2 : tensor<2x2x4xf32> -> tensor<2x2x12xf32>
  return %0 : tensor<2x2x12xf32>
}

func.func @all_to_all_1_0(%x: tensor<2x6x4xf32>) -> tensor<6x2x4xf32> {
  %0 = cp.all_to_all %x on @cp grid_axes = [0] split_axis = 1 concat_axis = 0 : tensor<2x6x4xf32> -> tensor<6x2x4xf32>
  return %0 : tensor<6x2x4xf32>
}

func.func @all_to_all_1_1(%x: tensor<2x6x4xf32>) -> tensor<2x6x4xf32> {
  %0 = cp.all_to_all %x on @cp grid_axes = [0] split_axis = 1 concat_axis = 1 : tensor<2x6x4xf32> -> tensor<2x6x4xf32>
  return %0 : tensor<2x6x4xf32>
}

func.func @exchange_mirror(%x: tensor<2x6x4xf32>) -> tensor<2x6x4xf32> {
  %0 = cp.exchange %x on @cp grid_axes = [0] partner = mirror : tensor<2x6x4xf32>
  return %0 : tensor<2x6x4xf32>
}

func.func @shift_forward(%x: tensor<2x6x4xf32>) -> tensor<2x6x4xf32> {
  %0 = cp.shift %x on @cp grid_axes = [0] offset = 1 : tensor<2x6x4xf32>
  return %0 : tensor<2x6x4xf32>
}

func.func @shift_back(%x: tensor<2x6x4xf32>) -> tensor<2x6x4xf32> {
  %0 = cp.shift %x on @cp grid_axes = [0] offset = -1 : tensor<2x6x4xf32>
  return %0 : tensor<2x6x4xf32>
}

// An all-gather whose row count is known only at run time: ranks that pass
// different counts would hang a plain MPI_Allgather.
func.func @gather_dynamic(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = cp.all_gather %x on @cp grid_axes = [0] gather_axis = 0 : tensor<?x4xf32> -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}
