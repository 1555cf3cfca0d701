// Round trip of every cp op, in the custom form and through the generic form.
// RUN: cp-opt %s | cp-opt | FileCheck %s
// RUN: cp-opt %s --mlir-print-op-generic | cp-opt | FileCheck %s

shard.grid @cp(shape = 4)
shard.grid @grid2d(shape = 2x4)

// CHECK-LABEL: func @attention_forms
func.func @attention_forms(%q: tensor<2x8x64x32xf32>, %k: tensor<2x4x64x32xf32>,
                           %v: tensor<2x4x64x16xf32>, %m: tensor<1x8x256x256xi1>,
                           %bias: tensor<64x256xf32>) {
  // CHECK: cp.attention %{{.*}}, %{{.*}}, %{{.*}} on @cp grid_axes = [0] : tensor<2x8x64x32xf32>, tensor<2x4x64x32xf32>, tensor<2x4x64x16xf32> -> tensor<2x8x64x16xf32>
  %0 = cp.attention %q, %k, %v on @cp grid_axes = [0]
      : tensor<2x8x64x32xf32>, tensor<2x4x64x32xf32>, tensor<2x4x64x16xf32> -> tensor<2x8x64x16xf32>
  // CHECK: cp.attention {{.*}} on @cp grid_axes = [0] mask = causal scheme = ulysses scale = 1.250000e-01 :
  %1 = cp.attention %q, %k, %v on @cp grid_axes = [0] mask = causal scheme = ulysses scale = 0.125
      : tensor<2x8x64x32xf32>, tensor<2x4x64x32xf32>, tensor<2x4x64x16xf32> -> tensor<2x8x64x16xf32>
  // CHECK: cp.attention {{.*}} mask = sliding_window(128) scheme = hybrid(2) :
  %2 = cp.attention %q, %k, %v on @cp grid_axes = [0] mask = sliding_window(128) scheme = hybrid(2)
      : tensor<2x8x64x32xf32>, tensor<2x4x64x32xf32>, tensor<2x4x64x16xf32> -> tensor<2x8x64x16xf32>
  // CHECK: cp.attention %{{.*}}, %{{.*}}, %{{.*}} explicit_mask %{{.*}} on @cp grid_axes = [0] scheme = head_tail : {{.*}}, tensor<1x8x256x256xi1> -> tensor<2x8x64x16xf32>
  %3 = cp.attention %q, %k, %v explicit_mask %m on @cp grid_axes = [0] scheme = head_tail
      : tensor<2x8x64x32xf32>, tensor<2x4x64x32xf32>, tensor<2x4x64x16xf32>, tensor<1x8x256x256xi1> -> tensor<2x8x64x16xf32>
  // CHECK: cp.attention {{.*}} explicit_mask %{{.*}} on @cp grid_axes = [0] mask = causal scheme = allgather : {{.*}}, tensor<64x256xf32> ->
  %4 = cp.attention %q, %k, %v explicit_mask %bias on @cp grid_axes = [0] mask = causal scheme = allgather
      : tensor<2x8x64x32xf32>, tensor<2x4x64x32xf32>, tensor<2x4x64x16xf32>, tensor<64x256xf32> -> tensor<2x8x64x16xf32>
  // CHECK: cp.attention {{.*}} mask = causal scheme = ring : {{.*}} -> tensor<2x8x64x16xf32>, tensor<2x8x64xf32>
  %lse_o, %lse = cp.attention %q, %k, %v on @cp grid_axes = [0] mask = causal scheme = ring
      : tensor<2x8x64x32xf32>, tensor<2x4x64x32xf32>, tensor<2x4x64x16xf32> -> tensor<2x8x64x16xf32>, tensor<2x8x64xf32>
  // CHECK: scheme = ring
  %5 = cp.attention %q, %k, %v on @cp grid_axes = [0] scheme = ring
      : tensor<2x8x64x32xf32>, tensor<2x4x64x32xf32>, tensor<2x4x64x16xf32> -> tensor<2x8x64x16xf32>
  // CHECK: scheme = zigzag
  %6 = cp.attention %q, %k, %v on @cp grid_axes = [0] scheme = zigzag
      : tensor<2x8x64x32xf32>, tensor<2x4x64x32xf32>, tensor<2x4x64x16xf32> -> tensor<2x8x64x16xf32>
  // CHECK: scheme = auto
  %7 = cp.attention %q, %k, %v on @cp grid_axes = [0] scheme = auto
      : tensor<2x8x64x32xf32>, tensor<2x4x64x32xf32>, tensor<2x4x64x16xf32> -> tensor<2x8x64x16xf32>
  // The CP group may be one axis of a larger grid (here data x context).
  // CHECK: cp.attention {{.*}} on @grid2d grid_axes = [1] :
  %8 = cp.attention %q, %k, %v on @grid2d grid_axes = [1]
      : tensor<2x8x64x32xf32>, tensor<2x4x64x32xf32>, tensor<2x4x64x16xf32> -> tensor<2x8x64x16xf32>
  // Dynamic sizes are accepted; their rules become runtime checks.
  %qd = tensor.cast %q : tensor<2x8x64x32xf32> to tensor<?x8x?x32xf32>
  // CHECK: cp.attention {{.*}} : tensor<?x8x?x32xf32>, {{.*}} -> tensor<?x8x?x16xf32>
  %9 = cp.attention %qd, %k, %v on @cp grid_axes = [0] mask = causal
      : tensor<?x8x?x32xf32>, tensor<2x4x64x32xf32>, tensor<2x4x64x16xf32> -> tensor<?x8x?x16xf32>
  return
}

// CHECK-LABEL: func @local_attention_forms
func.func @local_attention_forms(%q: tensor<1x8x64x32xbf16>, %k: tensor<1x2x256x32xbf16>,
                                 %v: tensor<1x2x256x32xbf16>, %qo: index, %ko: index,
                                 %m: tensor<64x256xi1>) {
  // CHECK: %[[O:.*]] = cp.local_attention %{{.*}}, %{{.*}}, %{{.*}} offsets(%{{.*}}, %{{.*}}) mask = causal : tensor<1x8x64x32xbf16>, tensor<1x2x256x32xbf16>, tensor<1x2x256x32xbf16> -> tensor<1x8x64x32xbf16>
  %0 = cp.local_attention %q, %k, %v offsets(%qo, %ko) mask = causal
      : tensor<1x8x64x32xbf16>, tensor<1x2x256x32xbf16>, tensor<1x2x256x32xbf16> -> tensor<1x8x64x32xbf16>
  // CHECK: %{{.*}}, %{{.*}} = cp.local_attention {{.*}} offsets(%{{.*}}, %{{.*}}) explicit_mask %{{.*}} scale = 5.000000e-01 : {{.*}}, tensor<64x256xi1> -> tensor<1x8x64x32xbf16>, tensor<1x8x64xf32>
  %1:2 = cp.local_attention %q, %k, %v offsets(%qo, %ko) explicit_mask %m scale = 0.5
      : tensor<1x8x64x32xbf16>, tensor<1x2x256x32xbf16>, tensor<1x2x256x32xbf16>, tensor<64x256xi1>
      -> tensor<1x8x64x32xbf16>, tensor<1x8x64xf32>
  return
}

// CHECK-LABEL: func @offset_mask_and_merge
func.func @offset_mask_and_merge(%qo: index, %ko: index, %a: tensor<1x8x64x32xf32>,
                                 %la: tensor<1x8x64xf32>, %b: tensor<1x8x64x32xf32>,
                                 %lb: tensor<1x8x64xf32>) {
  // CHECK: cp.offset_mask offsets(%{{.*}}, %{{.*}}) mask = causal : tensor<64x256xi1>
  %0 = cp.offset_mask offsets(%qo, %ko) mask = causal : tensor<64x256xi1>
  // CHECK: cp.offset_mask offsets(%{{.*}}, %{{.*}}) mask = sliding_window(16) : tensor<64x64xi1>
  %1 = cp.offset_mask offsets(%qo, %ko) mask = sliding_window(16) : tensor<64x64xi1>
  // CHECK: cp.merge %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<1x8x64x32xf32>, tensor<1x8x64xf32>
  %2:2 = cp.merge %a, %la, %b, %lb : tensor<1x8x64x32xf32>, tensor<1x8x64xf32>
  return
}

// CHECK-LABEL: func @collectives
func.func @collectives(%x: tensor<1x8x64x32xf32>, %m: tensor<64x256xi1>) {
  // CHECK: cp.all_gather %{{.*}} on @cp grid_axes = [0] gather_axis = 2 : tensor<1x8x64x32xf32> -> tensor<1x8x256x32xf32>
  %0 = cp.all_gather %x on @cp grid_axes = [0] gather_axis = 2 : tensor<1x8x64x32xf32> -> tensor<1x8x256x32xf32>
  // CHECK: cp.all_gather %{{.*}} on @grid2d grid_axes = [0, 1] gather_axis = 0 : tensor<64x256xi1> -> tensor<512x256xi1>
  %1 = cp.all_gather %m on @grid2d grid_axes = [0, 1] gather_axis = 0 : tensor<64x256xi1> -> tensor<512x256xi1>
  // CHECK: cp.all_to_all %{{.*}} on @cp grid_axes = [0] split_axis = 1 concat_axis = 2 : tensor<1x8x64x32xf32> -> tensor<1x2x256x32xf32>
  %2 = cp.all_to_all %x on @cp grid_axes = [0] split_axis = 1 concat_axis = 2 : tensor<1x8x64x32xf32> -> tensor<1x2x256x32xf32>
  // CHECK: cp.exchange %{{.*}} on @cp grid_axes = [0] partner = mirror : tensor<1x8x64x32xf32>
  %3 = cp.exchange %x on @cp grid_axes = [0] partner = mirror : tensor<1x8x64x32xf32>
  // CHECK: cp.shift %{{.*}} on @cp grid_axes = [0] offset = 1 : tensor<1x8x64x32xf32>
  %4 = cp.shift %x on @cp grid_axes = [0] offset = 1 : tensor<1x8x64x32xf32>
  // CHECK: cp.shift %{{.*}} on @grid2d grid_axes = [1] offset = -1 : tensor<1x8x64x32xf32>
  %5 = cp.shift %x on @grid2d grid_axes = [1] offset = -1 : tensor<1x8x64x32xf32>
  return
}

// Buffer forms, as bufferization produces them; strided operands are fine.
// CHECK-LABEL: func @buffer_forms
func.func @buffer_forms(%q: memref<1x8x64x32xbf16, strided<[32768, 4096, 32, 1]>>,
                        %k: memref<1x2x256x32xbf16>, %v: memref<1x2x256x16xbf16>,
                        %o: memref<1x8x64x16xbf16>, %lse: memref<1x8x64xf32>,
                        %m: memref<64x256xi1>, %qo: index, %ko: index,
                        %x: memref<1x2x64x32xf32>, %xf: memref<1x2x256x32xf32>,
                        %xh: memref<1x8x64x32xf32>, %xs: memref<1x2x256x32xf32>) {
  // CHECK: cp.buffer.local_attention %{{.*}}, %{{.*}}, %{{.*}} offsets(%{{.*}}, %{{.*}}) into %{{.*}} mask = causal : memref<1x8x64x32xbf16, strided<[32768, 4096, 32, 1]>>, memref<1x2x256x32xbf16>, memref<1x2x256x16xbf16> into memref<1x8x64x16xbf16>
  cp.buffer.local_attention %q, %k, %v offsets(%qo, %ko) into %o mask = causal
      : memref<1x8x64x32xbf16, strided<[32768, 4096, 32, 1]>>, memref<1x2x256x32xbf16>, memref<1x2x256x16xbf16> into memref<1x8x64x16xbf16>
  // CHECK: cp.buffer.local_attention {{.*}} explicit_mask %{{.*}} into %{{.*}}, %{{.*}} scale = 5.000000e-01 : {{.*}}, memref<64x256xi1> into memref<1x8x64x16xbf16>, memref<1x8x64xf32>
  cp.buffer.local_attention %q, %k, %v offsets(%qo, %ko) explicit_mask %m into %o, %lse scale = 0.5
      : memref<1x8x64x32xbf16, strided<[32768, 4096, 32, 1]>>, memref<1x2x256x32xbf16>, memref<1x2x256x16xbf16>, memref<64x256xi1> into memref<1x8x64x16xbf16>, memref<1x8x64xf32>
  // CHECK: cp.buffer.all_gather %{{.*}} into %{{.*}} on @cp grid_axes = [0] gather_axis = 2 : memref<1x2x64x32xf32> into memref<1x2x256x32xf32>
  cp.buffer.all_gather %x into %xf on @cp grid_axes = [0] gather_axis = 2 : memref<1x2x64x32xf32> into memref<1x2x256x32xf32>
  // CHECK: cp.buffer.all_to_all %{{.*}} into %{{.*}} on @cp grid_axes = [0] split_axis = 1 concat_axis = 2 : memref<1x8x64x32xf32> into memref<1x2x256x32xf32>
  cp.buffer.all_to_all %xh into %xs on @cp grid_axes = [0] split_axis = 1 concat_axis = 2 : memref<1x8x64x32xf32> into memref<1x2x256x32xf32>
  // CHECK: cp.buffer.exchange %{{.*}} into %{{.*}} on @cp grid_axes = [0] partner = mirror : memref<1x2x64x32xf32> into memref<1x2x64x32xf32>
  cp.buffer.exchange %x into %x on @cp grid_axes = [0] partner = mirror : memref<1x2x64x32xf32> into memref<1x2x64x32xf32>
  // CHECK: cp.buffer.shift %{{.*}} into %{{.*}} on @grid2d grid_axes = [1] offset = 1 : memref<1x2x64x32xf32> into memref<1x2x64x32xf32>
  cp.buffer.shift %x into %x on @grid2d grid_axes = [1] offset = 1 : memref<1x2x64x32xf32> into memref<1x2x64x32xf32>
  // On GPUs, collectives take part in the !gpu.async.token chain.
  // CHECK: %[[T0:.*]] = gpu.wait async
  // CHECK: %[[T1:.*]] = cp.buffer.all_gather async [%[[T0]]] %{{.*}} into %{{.*}} on @cp grid_axes = [0] gather_axis = 2 : memref<1x2x64x32xf32> into memref<1x2x256x32xf32>
  // CHECK: cp.buffer.exchange async %{{.*}} into %{{.*}} on @cp grid_axes = [0] partner = mirror
  // CHECK: gpu.wait [%[[T1]]]
  %t0 = gpu.wait async
  %t1 = cp.buffer.all_gather async [%t0] %x into %xf on @cp grid_axes = [0] gather_axis = 2 : memref<1x2x64x32xf32> into memref<1x2x256x32xf32>
  %t2 = cp.buffer.exchange async %x into %x on @cp grid_axes = [0] partner = mirror : memref<1x2x64x32xf32> into memref<1x2x64x32xf32>
  gpu.wait [%t1]
  return
}

// CHECK-LABEL: func @attributes
// CHECK-SAME: cp.a = #cp.scheme<hybrid(4)>
// CHECK-SAME: cp.b = #cp.mask<sliding_window(8)>
// CHECK-SAME: cp.c = #cp.scheme<auto>
// CHECK-SAME: cp.d = #cp.mask<none>
func.func @attributes() attributes {cp.a = #cp.scheme<hybrid(4)>, cp.b = #cp.mask<sliding_window(8)>,
                                    cp.c = #cp.scheme<auto>, cp.d = #cp.mask<none>} {
  return
}

// The zigzag layout, its conversion, and f32 partial outputs of low
// precision attention.
// CHECK-LABEL: func @layouts
func.func @layouts(%q: tensor<2x8x64x32xbf16>, %k: tensor<2x4x64x32xbf16>,
                   %ids: tensor<2x64xi64>, %qo: index) {
  // CHECK: cp.attention {{.*}} on @cp grid_axes = [0] mask = causal layout = zigzag scheme = zigzag :
  %0 = cp.attention %q, %k, %k on @cp grid_axes = [0] mask = causal layout = zigzag scheme = zigzag
      : tensor<2x8x64x32xbf16>, tensor<2x4x64x32xbf16>, tensor<2x4x64x32xbf16> -> tensor<2x8x64x32xbf16>
  // The default layout is not printed.
  // CHECK: cp.attention {{.*}} on @cp grid_axes = [0] mask = causal :
  %1 = cp.attention %q, %k, %k on @cp grid_axes = [0] mask = causal layout = contiguous
      : tensor<2x8x64x32xbf16>, tensor<2x4x64x32xbf16>, tensor<2x4x64x32xbf16> -> tensor<2x8x64x32xbf16>
  // CHECK: cp.relayout %{{.*}} on @cp grid_axes = [0] seq_axis = 2 from contiguous to zigzag : tensor<2x8x64x32xbf16>
  %2 = cp.relayout %q on @cp grid_axes = [0] seq_axis = 2 from contiguous to zigzag : tensor<2x8x64x32xbf16>
  // Position ids move with the tokens.
  // CHECK: cp.relayout %{{.*}} on @cp grid_axes = [0] seq_axis = 1 from zigzag to contiguous : tensor<2x64xi64>
  %3 = cp.relayout %ids on @cp grid_axes = [0] seq_axis = 1 from zigzag to contiguous : tensor<2x64xi64>
  // CHECK: cp.local_attention {{.*}} -> tensor<2x8x64x32xf32>, tensor<2x8x64xf32>
  %4, %5 = cp.local_attention %q, %k, %k offsets(%qo, %qo) mask = causal
      : tensor<2x8x64x32xbf16>, tensor<2x4x64x32xbf16>, tensor<2x4x64x32xbf16> -> tensor<2x8x64x32xf32>, tensor<2x8x64xf32>
  return
}

// Split-phase shifts, as cp-overlap-collectives makes them, on the host and
// on a stream.
// CHECK-LABEL: func @split_phase
func.func @split_phase(%x: memref<1x2x64x32xf32>, %y: memref<1x2x64x32xf32>,
                       %z: memref<1x2x64x32xf32>) {
  // CHECK: %[[R:.*]] = cp.buffer.shift_start %{{.*}} into %{{.*}} on @cp grid_axes = [0] offset = 1 : memref<1x2x64x32xf32> into memref<1x2x64x32xf32>
  // CHECK: cp.buffer.wait %[[R]]
  %r = cp.buffer.shift_start %x into %y on @cp grid_axes = [0] offset = 1 : memref<1x2x64x32xf32> into memref<1x2x64x32xf32>
  cp.buffer.wait %r
  // CHECK: %[[T0:.*]] = gpu.wait async
  // CHECK: %[[R2:.*]], %[[T1:.*]] = cp.buffer.shift_start async [%[[T0]]] %{{.*}} into %{{.*}} on @cp grid_axes = [0] offset = -1
  // CHECK: %{{.*}} = cp.buffer.wait async [%[[T1]]] %[[R2]]
  %t0 = gpu.wait async
  %r2, %t1 = cp.buffer.shift_start async [%t0] %x into %z on @cp grid_axes = [0] offset = -1 : memref<1x2x64x32xf32> into memref<1x2x64x32xf32>
  %t2 = cp.buffer.wait async [%t1] %r2
  // CHECK: cp.buffer.relayout %{{.*}} into %{{.*}} on @cp grid_axes = [0] seq_axis = 2 from zigzag to contiguous
  cp.buffer.relayout %x into %y on @cp grid_axes = [0] seq_axis = 2 from zigzag to contiguous : memref<1x2x64x32xf32> into memref<1x2x64x32xf32>
  return
}

// Flex-style regions on global positions: a document mask_mod reading the
// segment ids passed as a mod operand, and a soft-capping score_mod.
// CHECK-LABEL: func @mod_regions
func.func @mod_regions(%q: tensor<1x8x64x32xf32>, %k: tensor<1x2x64x32xf32>,
                       %v: tensor<1x2x64x32xf32>, %seg: tensor<256xi32>,
                       %qo: index, %h0: index) {
  // CHECK: cp.attention %{{.*}}, %{{.*}}, %{{.*}} mod_operands(%{{.*}} : tensor<256xi32>) on @cp grid_axes = [0] mask = causal mask_mod {
  // CHECK: ^bb0(%{{.*}}: index, %{{.*}}: index, %[[QI:.*]]: index, %[[KI:.*]]: index, %[[S:.*]]: tensor<256xi32>):
  // CHECK: tensor.extract %[[S]][%[[QI]]]
  // CHECK: cp.yield %{{.*}} : i1
  // CHECK: } score_mod {
  // CHECK: ^bb0(%{{.*}}: f32, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: tensor<256xi32>):
  // CHECK: math.tanh
  // CHECK: cp.yield %{{.*}} : f32
  %0 = cp.attention %q, %k, %v mod_operands(%seg : tensor<256xi32>)
      on @cp grid_axes = [0] mask = causal
      mask_mod {
      ^bb0(%b: index, %h: index, %qi: index, %ki: index, %s: tensor<256xi32>):
        %a = tensor.extract %s[%qi] : tensor<256xi32>
        %c = tensor.extract %s[%ki] : tensor<256xi32>
        %same = arith.cmpi eq, %a, %c : i32
        cp.yield %same : i1
      }
      score_mod {
      ^bb0(%x: f32, %b: index, %h: index, %qi: index, %ki: index, %s: tensor<256xi32>):
        %cap = arith.constant 2.0 : f32
        %xs = arith.divf %x, %cap : f32
        %t = math.tanh %xs : f32
        %y = arith.mulf %t, %cap : f32
        cp.yield %y : f32
      }
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>
        -> tensor<1x8x64x32xf32>
  // CHECK: cp.local_attention %{{.*}} offsets(%{{.*}}, %{{.*}}) head_offset(%{{.*}}) mask_mod {
  // CHECK: arith.cmpi ule
  %1 = cp.local_attention %q, %k, %v offsets(%qo, %qo) head_offset(%h0)
      mask_mod {
      ^bb0(%b: index, %h: index, %qi: index, %ki: index):
        %past = arith.cmpi ule, %ki, %qi : index
        cp.yield %past : i1
      }
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>
        -> tensor<1x8x64x32xf32>
  return
}

// The bufferized form names outlined functions.
// CHECK-LABEL: func.func private @same_document
func.func private @same_document(%b: index, %h: index, %qi: index, %ki: index,
                                 %s: memref<256xi32>) -> i1 {
  %a = memref.load %s[%qi] : memref<256xi32>
  %c = memref.load %s[%ki] : memref<256xi32>
  %same = arith.cmpi eq, %a, %c : i32
  return %same : i1
}
// CHECK-LABEL: func @buffer_mod_function
func.func @buffer_mod_function(%q: memref<1x8x64x32xf32>, %k: memref<1x2x256x32xf32>,
                               %v: memref<1x2x256x32xf32>, %seg: memref<256xi32>,
                               %o: memref<1x8x64x32xf32>, %qo: index) {
  %c0 = arith.constant 0 : index
  // CHECK: cp.buffer.local_attention %{{.*}} offsets(%{{.*}}, %{{.*}}) mod_operands(%{{.*}} : memref<256xi32>) into %{{.*}} mask = causal mask_mod = @same_document
  cp.buffer.local_attention %q, %k, %v offsets(%qo, %c0)
      mod_operands(%seg : memref<256xi32>) into %o mask = causal
      mask_mod = @same_document
      : memref<1x8x64x32xf32>, memref<1x2x256x32xf32>, memref<1x2x256x32xf32>
        into memref<1x8x64x32xf32>
  return
}
