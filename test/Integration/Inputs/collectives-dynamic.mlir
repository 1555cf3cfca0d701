// The runtime's agreement check: an all-gather whose row count is known
// only at run time (Inputs/collectives-driver.cpp, `dynamic` mode).
shard.grid @cp(shape = 3)

// An all-gather whose row count is known only at run time: ranks that pass
// different counts would hang a plain MPI_Allgather.
func.func @gather_dynamic(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = cp.all_gather %x on @cp grid_axes = [0] gather_axis = 0 : tensor<?x4xf32> -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}
