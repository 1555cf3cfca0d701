// Every cp dialect diagnostic, one case each: what is wrong, with the numbers.
// RUN: cp-opt %s -split-input-file -verify-diagnostics

// The grid symbol must name a shard.grid.
shard.grid @cp(shape = 4)
func.func @f(%q: tensor<1x8x64x32xf32>, %k: tensor<1x2x64x32xf32>, %v: tensor<1x2x64x16xf32>) {
  // expected-error @+1 {{grid @nope does not name a shard.grid; declare it, e.g. `shard.grid @nope(shape = 4)`}}
  %0 = cp.attention %q, %k, %v on @nope grid_axes = [0]
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x16xf32> -> tensor<1x8x64x16xf32>
  return
}

// -----

shard.grid @cp(shape = 4)
func.func @f(%q: tensor<1x8x64x32xf32>, %k: tensor<1x2x64x32xf32>, %v: tensor<1x2x64x16xf32>) {
  // expected-error @+1 {{grid axis 1 is out of range for grid @cp of rank 1; valid axes are 0..0}}
  %0 = cp.attention %q, %k, %v on @cp grid_axes = [1]
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x16xf32> -> tensor<1x8x64x16xf32>
  return
}

// -----

shard.grid @cp(shape = 2x2)
func.func @f(%q: tensor<1x8x64x32xf32>, %k: tensor<1x2x64x32xf32>, %v: tensor<1x2x64x16xf32>) {
  // expected-error @+1 {{grid axis 0 appears more than once in grid_axes}}
  %0 = cp.attention %q, %k, %v on @cp grid_axes = [0, 0]
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x16xf32> -> tensor<1x8x64x16xf32>
  return
}

// -----

// Operand layout rules.
shard.grid @cp(shape = 4)
func.func @f(%q: tensor<8x64x32xf32>, %k: tensor<1x2x64x32xf32>, %v: tensor<1x2x64x16xf32>) {
  // expected-error @+1 {{expects query to be rank 4 [B, H, S, D], got rank 3 ('tensor<8x64x32xf32>')}}
  %0 = cp.attention %q, %k, %v on @cp grid_axes = [0]
      : tensor<8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x16xf32> -> tensor<1x8x64x16xf32>
  return
}

// -----

shard.grid @cp(shape = 4)
func.func @f(%q: tensor<1x8x64x32xf32>, %k: tensor<1x2x64x32xf16>, %v: tensor<1x2x64x16xf32>) {
  // expected-error @+1 {{expects key element type ('f16') to match the query element type ('f32')}}
  %0 = cp.attention %q, %k, %v on @cp grid_axes = [0]
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf16>, tensor<1x2x64x16xf32> -> tensor<1x8x64x16xf32>
  return
}

// -----

shard.grid @cp(shape = 4)
func.func @f(%q: tensor<1x8x64x32xf32>, %k: tensor<1x2x64x32xf32>, %v: tensor<2x2x64x16xf32>) {
  // expected-error @+1 {{expects value batch size (2) to match the query batch size (1)}}
  %0 = cp.attention %q, %k, %v on @cp grid_axes = [0]
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<2x2x64x16xf32> -> tensor<1x8x64x16xf32>
  return
}

// -----

shard.grid @cp(shape = 4)
func.func @f(%q: tensor<1x8x64x32xf32>, %k: tensor<1x2x64x32xf32>, %v: tensor<1x4x64x16xf32>) {
  // expected-error @+1 {{expects key and value to have the same number of heads Hkv, got 2 and 4}}
  %0 = cp.attention %q, %k, %v on @cp grid_axes = [0]
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x4x64x16xf32> -> tensor<1x8x64x16xf32>
  return
}

// -----

shard.grid @cp(shape = 4)
func.func @f(%q: tensor<1x8x64x32xf32>, %k: tensor<1x3x64x32xf32>, %v: tensor<1x3x64x16xf32>) {
  // expected-error @+1 {{expects query heads H (8) to be a multiple of key/value heads Hkv (3) for grouped-query attention}}
  %0 = cp.attention %q, %k, %v on @cp grid_axes = [0]
      : tensor<1x8x64x32xf32>, tensor<1x3x64x32xf32>, tensor<1x3x64x16xf32> -> tensor<1x8x64x16xf32>
  return
}

// -----

shard.grid @cp(shape = 4)
func.func @f(%q: tensor<1x8x64x32xf32>, %k: tensor<1x2x64x32xf32>, %v: tensor<1x2x64x16xf32>) {
  // expected-error @+1 {{expects result heads (4) to match query heads H (8)}}
  %0 = cp.attention %q, %k, %v on @cp grid_axes = [0]
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x16xf32> -> tensor<1x4x64x16xf32>
  return
}

// -----

shard.grid @cp(shape = 4)
func.func @f(%q: tensor<1x8x64x32xf32>, %k: tensor<1x2x64x32xf32>, %v: tensor<1x2x32x16xf32>) {
  // expected-error @+1 {{expects key and value sequence lengths to match, got 64 and 32}}
  %0 = cp.attention %q, %k, %v on @cp grid_axes = [0]
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x32x16xf32> -> tensor<1x8x64x16xf32>
  return
}

// -----

shard.grid @cp(shape = 4)
func.func @f(%q: tensor<1x8x64x32xf32>, %k: tensor<1x2x32x32xf32>, %v: tensor<1x2x32x16xf32>) {
  // expected-error @+1 {{expects query and key/value shards of the same local length L, got 64 and 32; all three are contiguous shards of one sequence}}
  %0 = cp.attention %q, %k, %v on @cp grid_axes = [0]
      : tensor<1x8x64x32xf32>, tensor<1x2x32x32xf32>, tensor<1x2x32x16xf32> -> tensor<1x8x64x16xf32>
  return
}

// -----

shard.grid @cp(shape = 4)
func.func @f(%q: tensor<1x8x64x32xf32>, %k: tensor<1x2x64x32xf32>, %v: tensor<1x2x64x16xf32>) {
  // expected-error @+1 {{expects result sequence length (32) to match the query's (64)}}
  %0 = cp.attention %q, %k, %v on @cp grid_axes = [0]
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x16xf32> -> tensor<1x8x32x16xf32>
  return
}

// -----

shard.grid @cp(shape = 4)
func.func @f(%q: tensor<1x8x64x32xf32>, %k: tensor<1x2x64x16xf32>, %v: tensor<1x2x64x16xf32>) {
  // expected-error @+1 {{expects query and key head dims D to match, got 32 and 16}}
  %0 = cp.attention %q, %k, %v on @cp grid_axes = [0]
      : tensor<1x8x64x32xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32> -> tensor<1x8x64x16xf32>
  return
}

// -----

shard.grid @cp(shape = 4)
func.func @f(%q: tensor<1x8x64x32xf32>, %k: tensor<1x2x64x32xf32>, %v: tensor<1x2x64x16xf32>) {
  // expected-error @+1 {{expects result head dim (32) to match the value head dim Dv (16)}}
  %0 = cp.attention %q, %k, %v on @cp grid_axes = [0]
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x16xf32> -> tensor<1x8x64x32xf32>
  return
}

// -----

// Explicit mask extents.
shard.grid @cp(shape = 4)
func.func @f(%q: tensor<1x8x64x32xf32>, %k: tensor<1x2x64x32xf32>, %v: tensor<1x2x64x16xf32>, %m: tensor<8x64x256xi1>) {
  // expected-error @+1 {{expects explicit_mask of rank 2 [Lq, Skv] or 4 [B|1, H|1, Lq, Skv], got rank 3}}
  %0 = cp.attention %q, %k, %v explicit_mask %m on @cp grid_axes = [0]
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x16xf32>, tensor<8x64x256xi1> -> tensor<1x8x64x16xf32>
  return
}

// -----

shard.grid @cp(shape = 4)
func.func @f(%q: tensor<1x8x64x32xf32>, %k: tensor<1x2x64x32xf32>, %v: tensor<1x2x64x16xf32>, %m: tensor<64x256xf16>) {
  // expected-error @+1 {{expects explicit_mask element type to be i1 (true = attend) or the query element type ('f32') as an additive bias, got 'f16'}}
  %0 = cp.attention %q, %k, %v explicit_mask %m on @cp grid_axes = [0]
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x16xf32>, tensor<64x256xf16> -> tensor<1x8x64x16xf32>
  return
}

// -----

shard.grid @cp(shape = 4)
func.func @f(%q: tensor<1x8x64x32xf32>, %k: tensor<1x2x64x32xf32>, %v: tensor<1x2x64x16xf32>, %m: tensor<3x8x64x256xi1>) {
  // expected-error @+1 {{explicit_mask batch extent (3) must be 1 or the batch size B (1)}}
  %0 = cp.attention %q, %k, %v explicit_mask %m on @cp grid_axes = [0]
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x16xf32>, tensor<3x8x64x256xi1> -> tensor<1x8x64x16xf32>
  return
}

// -----

shard.grid @cp(shape = 4)
func.func @f(%q: tensor<1x8x64x32xf32>, %k: tensor<1x2x64x32xf32>, %v: tensor<1x2x64x16xf32>, %m: tensor<1x2x64x256xi1>) {
  // expected-error @+1 {{explicit_mask head extent (2) must be 1 or the query head count H (8)}}
  %0 = cp.attention %q, %k, %v explicit_mask %m on @cp grid_axes = [0]
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x256xi1> -> tensor<1x8x64x16xf32>
  return
}

// -----

shard.grid @cp(shape = 4)
func.func @f(%q: tensor<1x8x64x32xf32>, %k: tensor<1x2x64x32xf32>, %v: tensor<1x2x64x16xf32>, %m: tensor<64x64xi1>) {
  // expected-error @+1 {{explicit_mask key extent (64) must equal the global sequence length S = P * L = 4 * 64 = 256}}
  %0 = cp.attention %q, %k, %v explicit_mask %m on @cp grid_axes = [0]
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x16xf32>, tensor<64x64xi1> -> tensor<1x8x64x16xf32>
  return
}

// -----

shard.grid @cp(shape = 4)
func.func @f(%q: tensor<1x8x64x32xf32>, %k: tensor<1x2x64x32xf32>, %v: tensor<1x2x64x16xf32>, %m: tensor<128x256xi1>) {
  // expected-error @+1 {{explicit_mask query extent (128) must be the local length L (64) or the global length S (256)}}
  %0 = cp.attention %q, %k, %v explicit_mask %m on @cp grid_axes = [0]
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x16xf32>, tensor<128x256xi1> -> tensor<1x8x64x16xf32>
  return
}

// -----

// Scheme constraints (each rule has a case in test/Transforms/apply-scheme-*-invalid.mlir).
shard.grid @cp(shape = 4)
func.func @f(%q: tensor<1x8x64x32xf32>, %k: tensor<1x2x64x32xf32>, %v: tensor<1x2x64x16xf32>) {
  // expected-error @+1 {{cannot use scheme #cp.scheme<ulysses>: ulysses needs Hkv (2) divisible by the CP group size (4); use allgather, or hybrid(u) with u dividing Hkv}}
  %0 = cp.attention %q, %k, %v on @cp grid_axes = [0] scheme = ulysses
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x16xf32> -> tensor<1x8x64x16xf32>
  return
}

// -----

// Attribute syntax.
// expected-error @+1 {{unknown scheme 'tree'; expected allgather, ulysses, hybrid(u), head_tail, ring, zigzag, auto or a scheme a loaded plugin registers (none is registered)}}
func.func private @f() attributes {s = #cp.scheme<tree>}

// -----

// expected-error @+1 {{hybrid needs its Ulysses degree, e.g. hybrid(2)}}
func.func private @f() attributes {s = #cp.scheme<hybrid>}

// -----

// expected-error @+1 {{hybrid needs a Ulysses degree u >= 2, got u = 1; use allgather for u = 1}}
func.func private @f() attributes {s = #cp.scheme<hybrid(1)>}

// -----

// expected-error @+1 {{scheme ulysses takes no Ulysses degree, got 2}}
func.func private @f() attributes {s = #cp.scheme<ulysses(2)>}

// -----

// expected-error @+1 {{unknown mask 'diagonal'; expected none, causal or sliding_window(W)}}
func.func private @f() attributes {s = #cp.mask<diagonal>}

// -----

// expected-error @+1 {{sliding_window needs a positive window size W (keys in (q - W, q] are visible), got W = 0}}
func.func private @f() attributes {s = #cp.mask<sliding_window(0)>}

// -----

// expected-error @+1 {{mask causal takes no window size, got 3}}
func.func private @f() attributes {s = #cp.mask<causal(3)>}

// -----

// cp.local_attention: the explicit mask covers exactly this block.
func.func @f(%q: tensor<1x8x16x32xf32>, %k: tensor<1x2x64x32xf32>, %v: tensor<1x2x64x32xf32>, %o: index, %m: tensor<16x256xi1>) {
  // expected-error @+1 {{expects explicit_mask to cover this block's [Lq, Lkv] = [16, 64], got [16, 256]}}
  %0 = cp.local_attention %q, %k, %v offsets(%o, %o) explicit_mask %m
      : tensor<1x8x16x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>, tensor<16x256xi1> -> tensor<1x8x16x32xf32>
  return
}

// -----

func.func @f(%q: tensor<1x8x16x32xf32>, %k: tensor<1x2x64x32xf32>, %v: tensor<1x2x64x32xf32>, %o: index) {
  // expected-error @+1 {{expects the lse result to have shape [B, H, Lq] = [1, 8, 16], got 'tensor<1x8x64xf32>'}}
  %0:2 = cp.local_attention %q, %k, %v offsets(%o, %o) mask = causal
      : tensor<1x8x16x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32> -> tensor<1x8x16x32xf32>, tensor<1x8x64xf32>
  return
}

// -----

func.func @f(%q: tensor<1x8x16x32xi32>, %k: tensor<1x2x64x32xf32>, %v: tensor<1x2x64x32xf32>, %o: index) {
  // expected-error @+1 {{operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values}}
  %0 = cp.local_attention %q, %k, %v offsets(%o, %o)
      : tensor<1x8x16x32xi32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32> -> tensor<1x8x16x32xf32>
  return
}

// -----

// cp.offset_mask
func.func @f(%o: index) {
  // expected-error @+1 {{expects a rank-2 [Lq, Lkv] result, got rank 3}}
  %0 = cp.offset_mask offsets(%o, %o) mask = causal : tensor<1x16x64xi1>
  return
}

// -----

func.func @f(%o: index) {
  // expected-error @+1 {{mask = none is all-true; pass no explicit_mask instead of materializing one}}
  %0 = cp.offset_mask offsets(%o, %o) mask = none : tensor<16x64xi1>
  return
}

// -----

// Collectives.
shard.grid @cp(shape = 4)
func.func @f(%x: tensor<1x8x64x32xf32>) {
  // expected-error @+1 {{gather_axis (4) is out of range for a rank-4 tensor}}
  %0 = cp.all_gather %x on @cp grid_axes = [0] gather_axis = 4 : tensor<1x8x64x32xf32> -> tensor<1x8x64x32xf32>
  return
}

// -----

shard.grid @cp(shape = 4)
func.func @f(%x: tensor<1x8x64x32xf32>) {
  // expected-error @+1 {{expects result rank (3) to equal input rank (4)}}
  %0 = cp.all_gather %x on @cp grid_axes = [0] gather_axis = 2 : tensor<1x8x64x32xf32> -> tensor<8x256x32xf32>
  return
}

// -----

shard.grid @cp(shape = 4)
func.func @f(%x: tensor<1x8x64x32xf32>) {
  // expected-error @+1 {{expects result element type ('f16') to equal input element type ('f32')}}
  %0 = cp.all_gather %x on @cp grid_axes = [0] gather_axis = 2 : tensor<1x8x64x32xf32> -> tensor<1x8x256x32xf16>
  return
}

// -----

shard.grid @cp(shape = 4)
func.func @f(%x: tensor<1x8x64x32xf32>) {
  // expected-error @+1 {{expects result dim 1 (4) to equal input dim 1 (8)}}
  %0 = cp.all_gather %x on @cp grid_axes = [0] gather_axis = 2 : tensor<1x8x64x32xf32> -> tensor<1x4x256x32xf32>
  return
}

// -----

shard.grid @cp(shape = 4)
func.func @f(%x: tensor<1x8x64x32xf32>) {
  // expected-error @+1 {{expects result dim 2 to be P * input dim = 4 * 64 = 256, got 128}}
  %0 = cp.all_gather %x on @cp grid_axes = [0] gather_axis = 2 : tensor<1x8x64x32xf32> -> tensor<1x8x128x32xf32>
  return
}

// -----

shard.grid @cp(shape = 4)
func.func @f(%x: tensor<1x8x64x32xf32>) {
  // expected-error @+1 {{grid axis 2 is out of range for grid @cp of rank 1; valid axes are 0..0}}
  %0 = cp.all_gather %x on @cp grid_axes = [2] gather_axis = 2 : tensor<1x8x64x32xf32> -> tensor<1x8x256x32xf32>
  return
}

// -----

shard.grid @cp(shape = 4)
func.func @f(%x: tensor<1x8x64x32xf32>) {
  // expected-error @+1 {{concat_axis (-1) is out of range for a rank-4 tensor}}
  %0 = cp.all_to_all %x on @cp grid_axes = [0] split_axis = 1 concat_axis = -1 : tensor<1x8x64x32xf32> -> tensor<1x2x64x32xf32>
  return
}

// -----

shard.grid @cp(shape = 4)
func.func @f(%x: tensor<1x6x64x32xf32>) {
  // expected-error @+1 {{split_axis 1 has size 6, which the group size P = 4 does not divide}}
  %0 = cp.all_to_all %x on @cp grid_axes = [0] split_axis = 1 concat_axis = 2 : tensor<1x6x64x32xf32> -> tensor<1x1x256x32xf32>
  return
}

// -----

shard.grid @cp(shape = 4)
func.func @f(%x: tensor<1x8x64x32xf32>) {
  // expected-error @+1 {{expects result dim 1 to be input dim / P = 8 / 4 = 2, got 4}}
  %0 = cp.all_to_all %x on @cp grid_axes = [0] split_axis = 1 concat_axis = 2 : tensor<1x8x64x32xf32> -> tensor<1x4x256x32xf32>
  return
}

// -----

shard.grid @cp(shape = 4)
func.func @f(%x: tensor<1x8x64x32xf32>) {
  // expected-error @+1 {{expects result dim 2 to be input dim * P = 64 * 4 = 256, got 128}}
  %0 = cp.all_to_all %x on @cp grid_axes = [0] split_axis = 1 concat_axis = 2 : tensor<1x8x64x32xf32> -> tensor<1x2x128x32xf32>
  return
}

// -----

shard.grid @cp(shape = 4)
func.func @f(%x: tensor<1x8x64x32xf32>) {
  // expected-error @+1 {{expects result dim 2 (16) to equal input dim (64) when split_axis == concat_axis}}
  %0 = cp.all_to_all %x on @cp grid_axes = [0] split_axis = 2 concat_axis = 2 : tensor<1x8x64x32xf32> -> tensor<1x8x16x32xf32>
  return
}

// -----

shard.grid @cp(shape = 4)
func.func @f(%x: tensor<1x8x64x32xf32>) {
  // expected-error @+1 {{grid @other does not name a shard.grid; declare it, e.g. `shard.grid @other(shape = 4)`}}
  %0 = cp.exchange %x on @other grid_axes = [0] partner = mirror : tensor<1x8x64x32xf32>
  return
}

// -----

shard.grid @cp(shape = 4)
func.func @f(%x: tensor<1x8x64x32xf32>) {
  // expected-error @+1 {{grid axis 0 appears more than once in grid_axes}}
  %0 = cp.shift %x on @cp grid_axes = [0, 0] offset = 1 : tensor<1x8x64x32xf32>
  return
}

// -----

// cp.merge
func.func @f(%a: tensor<1x8x64x32xf32>, %la: tensor<1x8x32xf32>) {
  // expected-error @+1 {{expects log-sum-exp operands shaped like the outputs without their last dim, got 'tensor<1x8x32xf32>' for outputs 'tensor<1x8x64x32xf32>'}}
  %0:2 = cp.merge %a, %la, %a, %la : tensor<1x8x64x32xf32>, tensor<1x8x32xf32>
  return
}

// -----

shard.grid @cp(shape = 4)
func.func @f(%q: tensor<1x8x7x8xf32>) {
  // expected-error @+1 {{cannot use scheme #cp.scheme<zigzag>: zigzag splits each local shard in two halves and needs an even local length L, got L = 7; pad the sequence to a multiple of 2 * P = 8}}
  %0 = cp.attention %q, %q, %q on @cp grid_axes = [0] mask = causal scheme = zigzag
      : tensor<1x8x7x8xf32>, tensor<1x8x7x8xf32>, tensor<1x8x7x8xf32> -> tensor<1x8x7x8xf32>
  return
}

// -----

// Buffer forms are checked by the tensor forms' rules.
shard.grid @cp(shape = 4)
func.func @f(%x: memref<1x2x64x32xf32>, %y: memref<1x2x128x32xf32>) {
  // expected-error @+1 {{expects result dim 2 to be P * input dim = 4 * 64 = 256, got 128}}
  cp.buffer.all_gather %x into %y on @cp grid_axes = [0] gather_axis = 2 : memref<1x2x64x32xf32> into memref<1x2x128x32xf32>
  return
}

// -----

shard.grid @cp(shape = 4)
func.func @f(%x: memref<1x6x64x32xf32>, %y: memref<1x1x256x32xf32>) {
  // expected-error @+1 {{split_axis 1 has size 6, which the group size P = 4 does not divide}}
  cp.buffer.all_to_all %x into %y on @cp grid_axes = [0] split_axis = 1 concat_axis = 2 : memref<1x6x64x32xf32> into memref<1x1x256x32xf32>
  return
}

// -----

shard.grid @cp(shape = 4)
func.func @f(%x: memref<1x2x64x32xf32>, %y: memref<1x2x32x32xf32>) {
  // expected-error @+1 {{expects the output buffer to have the input's shape and element type, got 'memref<1x2x32x32xf32>' for input 'memref<1x2x64x32xf32>'}}
  cp.buffer.exchange %x into %y on @cp grid_axes = [0] partner = mirror : memref<1x2x64x32xf32> into memref<1x2x32x32xf32>
  return
}

// -----

shard.grid @cp(shape = 4)
func.func @f(%x: memref<1x2x64x32xf32>, %y: memref<1x2x64x32xf16>) {
  // expected-error @+1 {{expects the output buffer to have the input's shape and element type, got 'memref<1x2x64x32xf16>' for input 'memref<1x2x64x32xf32>'}}
  cp.buffer.shift %x into %y on @cp grid_axes = [0] offset = 1 : memref<1x2x64x32xf32> into memref<1x2x64x32xf16>
  return
}

// -----

func.func @f(%q: memref<1x8x64x32xf32>, %k: memref<1x3x64x32xf32>, %o: memref<1x8x64x32xf32>, %c0: index) {
  // expected-error @+1 {{expects query heads H (8) to be a multiple of key/value heads Hkv (3) for grouped-query attention}}
  cp.buffer.local_attention %q, %k, %k offsets(%c0, %c0) into %o : memref<1x8x64x32xf32>, memref<1x3x64x32xf32>, memref<1x3x64x32xf32> into memref<1x8x64x32xf32>
  return
}

// -----

func.func @f(%q: memref<1x8x64x32xf32>, %o: memref<1x8x64x32xf32>, %lse: memref<1x8x32xf32>, %c0: index) {
  // expected-error @+1 {{expects the lse result to have shape [B, H, Lq] = [1, 8, 64], got 'memref<1x8x32xf32>'}}
  cp.buffer.local_attention %q, %q, %q offsets(%c0, %c0) into %o, %lse : memref<1x8x64x32xf32>, memref<1x8x64x32xf32>, memref<1x8x64x32xf32> into memref<1x8x64x32xf32>, memref<1x8x32xf32>
  return
}

// -----

shard.grid @cp(shape = 4)
func.func @f(%q: tensor<1x8x15x32xf32>) -> tensor<1x8x15x32xf32> {
  // expected-error @+1 {{layout = zigzag holds two chunks of L/2 rows and needs an even local length L, got L = 15; pad the sequence to a multiple of 2 * P}}
  %o = cp.attention %q, %q, %q on @cp grid_axes = [0] layout = zigzag
      : tensor<1x8x15x32xf32>, tensor<1x8x15x32xf32>, tensor<1x8x15x32xf32> -> tensor<1x8x15x32xf32>
  return %o : tensor<1x8x15x32xf32>
}

// -----

shard.grid @cp(shape = 4)
func.func @f(%x: tensor<1x8x15x32xf32>) -> tensor<1x8x15x32xf32> {
  // expected-error @+1 {{moves halves of the local shard and needs an even local length along seq_axis 2, got 15; pad the sequence to a multiple of 2 * P}}
  %0 = cp.relayout %x on @cp grid_axes = [0] seq_axis = 2 from contiguous to zigzag : tensor<1x8x15x32xf32>
  return %0 : tensor<1x8x15x32xf32>
}

// -----

shard.grid @cp(shape = 4)
func.func @f(%x: tensor<1x8x16x32xf32>) -> tensor<1x8x16x32xf32> {
  // expected-error @+1 {{seq_axis (4) is out of range for a rank-4 shard}}
  %0 = cp.relayout %x on @cp grid_axes = [0] seq_axis = 4 from contiguous to zigzag : tensor<1x8x16x32xf32>
  return %0 : tensor<1x8x16x32xf32>
}

// -----

func.func @f(%q: tensor<1x8x64x32xbf16>, %c0: index) {
  // expected-error @+1 {{expects result element type ('f16') to match the query element type ('bf16') or be f32}}
  %0 = cp.local_attention %q, %q, %q offsets(%c0, %c0)
      : tensor<1x8x64x32xbf16>, tensor<1x8x64x32xbf16>, tensor<1x8x64x32xbf16> -> tensor<1x8x64x32xf16>
  return
}

// -----

shard.grid @cp(shape = 4)
func.func @f(%x: memref<64xf32>, %y: memref<64xf32>) {
  // expected-error @+1 {{expects its request to be waited for by exactly one cp.buffer.wait, found 0 uses}}
  %r = cp.buffer.shift_start %x into %y on @cp grid_axes = [0] offset = 1 : memref<64xf32> into memref<64xf32>
  return
}

// -----

shard.grid @cp(shape = 4)
func.func @f(%x: memref<64xf32>, %y: memref<64xf32>) {
  // expected-error @+1 {{expects its request to be waited for by exactly one cp.buffer.wait, found 2 uses}}
  %r = cp.buffer.shift_start %x into %y on @cp grid_axes = [0] offset = 1 : memref<64xf32> into memref<64xf32>
  cp.buffer.wait %r
  cp.buffer.wait %r
  return
}

// -----

func.func @f(%r: !cp.request) {
  // expected-error @+1 {{expects a request started by cp.buffer.shift_start}}
  cp.buffer.wait %r
  return
}

// -----

// mask_mod / score_mod regions: (b, h, q_idx, kv_idx : index) then one
// argument per mod operand.
shard.grid @cp(shape = 4)
func.func @f(%q: tensor<1x8x64x32xf32>, %k: tensor<1x2x64x32xf32>, %v: tensor<1x2x64x32xf32>, %seg: tensor<256xi32>) {
  // expected-error @+1 {{expects mask_mod to take (b, h, q_idx, kv_idx: index, then one argument per mod operand), that is (index, index, index, index, tensor<256xi32>), got (index, index, index, index)}}
  %0 = cp.attention %q, %k, %v mod_operands(%seg : tensor<256xi32>) on @cp grid_axes = [0]
      mask_mod {
      ^bb0(%b: index, %h: index, %qi: index, %ki: index):
        %past = arith.cmpi ule, %ki, %qi : index
        cp.yield %past : i1
      }
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32> -> tensor<1x8x64x32xf32>
  return
}

// -----

shard.grid @cp(shape = 4)
func.func @f(%q: tensor<1x8x64x32xf32>, %k: tensor<1x2x64x32xf32>, %v: tensor<1x2x64x32xf32>) {
  // expected-error @+1 {{expects score_mod to end in cp.yield of 'f32'}}
  %0 = cp.attention %q, %k, %v on @cp grid_axes = [0]
      score_mod {
      ^bb0(%x: f32, %b: index, %h: index, %qi: index, %ki: index):
        %past = arith.cmpi ule, %ki, %qi : index
        cp.yield %past : i1
      }
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32> -> tensor<1x8x64x32xf32>
  return
}

// -----

// Region bodies are scalar code: arith, math and reads of mod operands.
shard.grid @cp(shape = 4)
func.func @f(%q: tensor<1x8x64x32xf32>, %k: tensor<1x2x64x32xf32>, %v: tensor<1x2x64x32xf32>) {
  // expected-error @+1 {{expects mask_mod to hold arith and math ops and reads of its mod operands (tensor.extract, memref.load), found 'tensor.empty'}}
  %0 = cp.attention %q, %k, %v on @cp grid_axes = [0]
      mask_mod {
      ^bb0(%b: index, %h: index, %qi: index, %ki: index):
        %t = tensor.empty() : tensor<4xi1>
        %e = tensor.extract %t[%qi] : tensor<4xi1>
        cp.yield %e : i1
      }
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32> -> tensor<1x8x64x32xf32>
  return
}

// -----

// A region reads values of the enclosing function only as mod operands.
shard.grid @cp(shape = 4)
func.func @f(%q: tensor<1x8x64x32xf32>, %k: tensor<1x2x64x32xf32>, %v: tensor<1x2x64x32xf32>, %w: index) {
  // expected-note @+1 {{required by region isolation constraints}}
  %0 = cp.attention %q, %k, %v on @cp grid_axes = [0]
      mask_mod {
      ^bb0(%b: index, %h: index, %qi: index, %ki: index):
        // expected-error @+1 {{using value defined outside the region}}
        %near = arith.cmpi ule, %ki, %w : index
        cp.yield %near : i1
      }
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32> -> tensor<1x8x64x32xf32>
  return
}

// -----

shard.grid @cp(shape = 4)
func.func @f(%q: tensor<1x8x64x32xf32>, %k: tensor<1x2x64x32xf32>, %v: tensor<1x2x64x32xf32>, %seg: tensor<256xi32>) {
  // expected-error @+1 {{has mod_operands but no mask_mod or score_mod region to read them}}
  %0 = cp.attention %q, %k, %v mod_operands(%seg : tensor<256xi32>) on @cp grid_axes = [0]
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32> -> tensor<1x8x64x32xf32>
  return
}

// -----

func.func @f(%x: i1) {
  // expected-error @+1 {{'cp.yield' op expects parent op to be one of 'cp.attention, cp.local_attention}}
  cp.yield %x : i1
}

// -----

// The outlined form: mask_mod names a function with the region's signature.
func.func @f(%q: memref<1x8x64x32xf32>, %k: memref<1x2x256x32xf32>, %v: memref<1x2x256x32xf32>, %o: memref<1x8x64x32xf32>, %qo: index) {
  // expected-error @+1 {{expects mask_mod @missing to name a func.func}}
  cp.buffer.local_attention %q, %k, %v offsets(%qo, %qo) into %o mask_mod = @missing
      : memref<1x8x64x32xf32>, memref<1x2x256x32xf32>, memref<1x2x256x32xf32> into memref<1x8x64x32xf32>
  return
}

// -----

func.func private @score(%x: f32, %b: index, %h: index, %qi: index) -> f32 {
  return %x : f32
}
func.func @f(%q: memref<1x8x64x32xf32>, %k: memref<1x2x256x32xf32>, %v: memref<1x2x256x32xf32>, %o: memref<1x8x64x32xf32>, %qo: index) {
  // expected-error @+1 {{expects score_mod to take (score: f32, b, h, q_idx, kv_idx: index, then one argument per mod operand), that is (f32, index, index, index, index), got (f32, index, index, index)}}
  cp.buffer.local_attention %q, %k, %v offsets(%qo, %qo) into %o score_mod = @score
      : memref<1x8x64x32xf32>, memref<1x2x256x32xf32>, memref<1x2x256x32xf32> into memref<1x8x64x32xf32>
  return
}

// -----

shard.grid @cp(shape = 4)

// cp.attention's lse covers this rank's rows of every head, in f32.
func.func @f(%q: tensor<1x8x16x32xf32>, %k: tensor<1x2x16x32xf32>, %v: tensor<1x2x16x32xf32>) {
  // expected-error @+1 {{expects the lse result to have shape [B, H, L] = [1, 8, 16], got 'tensor<1x2x16xf32>'}}
  %o, %lse = cp.attention %q, %k, %v on @cp grid_axes = [0] mask = causal
      : tensor<1x8x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32> -> tensor<1x8x16x32xf32>, tensor<1x2x16xf32>
  return
}

// -----

shard.grid @cp(shape = 4)

func.func @f(%q: tensor<1x8x16x32xbf16>, %k: tensor<1x2x16x32xbf16>, %v: tensor<1x2x16x32xbf16>) {
  // expected-error @+1 {{result #1 must be ranked tensor of 32-bit float values}}
  %o, %lse = cp.attention %q, %k, %v on @cp grid_axes = [0]
      : tensor<1x8x16x32xbf16>, tensor<1x2x16x32xbf16>, tensor<1x2x16x32xbf16> -> tensor<1x8x16x32xbf16>, tensor<1x8x16xbf16>
  return
}

// -----

// Replicated queries: only K and V are sharded, in the contiguous layout.
shard.grid @cp(shape = 2)
func.func @f(%q: tensor<1x4x2x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) {
  // expected-error @+1 {{with queries = replicated only K and V are sharded, in the contiguous layout; got layout = zigzag (shard the queries, or drop the layout)}}
  %0 = cp.attention %q, %k, %v on @cp grid_axes = [0] layout = zigzag queries = replicated
      : tensor<1x4x2x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x4x2x8xf32>
  return
}

// -----

shard.grid @cp(shape = 2)
func.func @f(%q: tensor<1x4x2x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>, %m: tensor<1x1x16x32xi1>) {
  // expected-error @+1 {{explicit_mask query extent (16) must be the number of replicated queries Lq (2)}}
  %0 = cp.attention %q, %k, %v explicit_mask %m on @cp grid_axes = [0] queries = replicated
      : tensor<1x4x2x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x1x16x32xi1> -> tensor<1x4x2x8xf32>
  return
}

// -----

shard.grid @cp(shape = 2)
func.func @f(%q: tensor<1x4x2x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) {
  // expected-error @+1 {{cannot use scheme #cp.scheme<head_tail>: head_tail splits the queries' sequence, but with queries = replicated every process holds the same 2 queries and only K/V are sharded; use allgather, ulysses or ring}}
  %0 = cp.attention %q, %k, %v on @cp grid_axes = [0] queries = replicated scheme = head_tail
      : tensor<1x4x2x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x4x2x8xf32>
  return
}

// -----

shard.grid @cp(shape = 2)
func.func @f(%q: tensor<1x4x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>, %do: tensor<1x4x16x8xf32>) {
  %o, %lse = cp.attention %q, %k, %v on @cp grid_axes = [0] queries = replicated
      : tensor<1x4x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x4x16x8xf32>, tensor<1x4x16xf32>
  // expected-error @+1 {{differentiates a cp.attention with queries = replicated (a decode against a sharded KV cache), which has no backward; train with the queries sharded like K and V}}
  %dq, %dk, %dv = cp.attention_grad %q, %k, %v, %o, %lse, %do on @cp grid_axes = [0]
      : tensor<1x4x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x4x16x8xf32>, tensor<1x4x16xf32>, tensor<1x4x16x8xf32>
      -> tensor<1x4x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>
  return
}
