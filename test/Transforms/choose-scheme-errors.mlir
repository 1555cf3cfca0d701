// A machine description that cannot be read is an error on the op that
// carries it, naming the entry; a machine on which no scheme fits is an
// error that says why each scheme was rejected.
// RUN: cp-opt %s --cp-choose-scheme -split-input-file -verify-diagnostics

shard.grid @cp(shape = 4)
func.func @f(%q: tensor<1x8x16x8xf32>) -> tensor<1x8x16x8xf32> {
  // expected-error @+1 {{cp.machine preset 'dgx-a100' is unknown; expected one of h200-nvlink, multinode-ib, host-mpi}}
  %o = cp.attention %q, %q, %q on @cp grid_axes = [0] scheme = auto {cp.machine = {preset = "dgx-a100"}}
      : tensor<1x8x16x8xf32>, tensor<1x8x16x8xf32>, tensor<1x8x16x8xf32> -> tensor<1x8x16x8xf32>
  return %o : tensor<1x8x16x8xf32>
}

// -----

shard.grid @cp(shape = 4)
func.func @f(%q: tensor<1x8x16x8xf32>) -> tensor<1x8x16x8xf32> {
  // expected-error @+1 {{cp.machine has no entry 'bandwidth'; known: preset, intra_node_bandwidth, inter_node_bandwidth, latency, ranks_per_node, attention_flops, memory_bandwidth, memory, launch_overhead, overlap}}
  %o = cp.attention %q, %q, %q on @cp grid_axes = [0] scheme = auto {cp.machine = {bandwidth = 1.0e9}}
      : tensor<1x8x16x8xf32>, tensor<1x8x16x8xf32>, tensor<1x8x16x8xf32> -> tensor<1x8x16x8xf32>
  return %o : tensor<1x8x16x8xf32>
}

// -----

// The module's description applies to the ops inside.
// expected-error @+1 {{cp.machine entry 'latency' must be positive, got -1}}
module attributes {cp.machine = {latency = -1.0}} {
  shard.grid @cp(shape = 4)
  func.func @f(%q: tensor<1x8x16x8xf32>) -> tensor<1x8x16x8xf32> {
    %o = cp.attention %q, %q, %q on @cp grid_axes = [0] scheme = auto
        : tensor<1x8x16x8xf32>, tensor<1x8x16x8xf32>, tensor<1x8x16x8xf32> -> tensor<1x8x16x8xf32>
    return %o : tensor<1x8x16x8xf32>
  }
}

// -----

shard.grid @cp(shape = 4)
func.func @f(%q: tensor<1x8x16x8xf32>) -> tensor<1x8x16x8xf32> {
  // expected-error @+1 {{cp.machine entry 'memory' must be a number, got "lots"}}
  %o = cp.attention %q, %q, %q on @cp grid_axes = [0] scheme = auto {cp.machine = {memory = "lots"}}
      : tensor<1x8x16x8xf32>, tensor<1x8x16x8xf32>, tensor<1x8x16x8xf32> -> tensor<1x8x16x8xf32>
  return %o : tensor<1x8x16x8xf32>
}

// -----

// A machine with 1 KB per rank fits no scheme; L = 15 is odd, and Hkv = 6
// does not divide by P = 4.
shard.grid @cp(shape = 4)
func.func @f(%q: tensor<1x6x15x8xf32>, %k: tensor<1x6x15x8xf32>, %v: tensor<1x6x15x8xf32>) -> tensor<1x6x15x8xf32> {
  // expected-error-re @+1 {{scheme auto found no applicable scheme on machine h200-nvlink: allgather: needs 33.8 KiB per rank, more than the machine's 1.0 KiB; ulysses: ulysses needs H (6) divisible by the CP group size (4){{.*}}; hybrid(2): needs {{.*}} KiB per rank{{.*}}; head_tail: head_tail splits each local shard in two halves and needs an even local length L, got L = 15{{.*}}; ring: needs {{.*}}; zigzag: zigzag splits{{.*}}}}
  %o = cp.attention %q, %k, %v on @cp grid_axes = [0] scheme = auto {cp.machine = {memory = 1000}}
      : tensor<1x6x15x8xf32>, tensor<1x6x15x8xf32>, tensor<1x6x15x8xf32> -> tensor<1x6x15x8xf32>
  return %o : tensor<1x6x15x8xf32>
}
