//===- CPOps.td - cp dialect operations --------------------*- tablegen -*-===//
//
// Sharded and local attention, the collectives CP schemes need, the offset
// mask and the log-sum-exp merge.
//
//===----------------------------------------------------------------------===//

#ifndef CP_OPS_TD
#define CP_OPS_TD

include "cp/Dialect/CP/IR/CPDialect.td"
include "cp/Dialect/CP/IR/CPAttrs.td"
include "cp/Dialect/CP/IR/CPTypes.td"
include "mlir/Dialect/GPU/IR/GPUBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

def CP_FloatTensor : RankedTensorOf<[F32, F16, BF16]>;
def CP_MaskTensor : RankedTensorOf<[I1, F32, F16, BF16]>;

// Ops that name a process group the way upstream shard collectives do.
class CP_GroupOp<string mnemonic, list<Trait> traits = []>
    : CP_Op<mnemonic, !listconcat(traits, [
        DeclareOpInterfaceMethods<SymbolUserOpInterface>])> {
  dag groupArgs = (ins
    FlatSymbolRefAttr:$grid,
    DenseI16ArrayAttr:$grid_axes
  );
  let extraClassDeclaration = [{
    /// Number of processes in the group named by `grid` and `grid_axes`;
    /// ShapedType::kDynamic when a grid axis is dynamic or the grid cannot
    /// be resolved.
    int64_t getGroupSize();
  }];
  let extraClassDefinition = [{
    int64_t $cppClass::getGroupSize() { return lookupGroupSize(*this); }
  }];
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

def CP_AttentionOp : CP_GroupOp<"attention",
    [Pure, AttrSizedOperandSegments, IsolatedFromAbove]> {
  let summary = "Attention over a sequence sharded across a CP group";
  let description = [{
    Computes `softmax(scale * Q K^T + bias) V` for the global sequence,
    given this process's contiguous shards in BHSD layout:

    - `query`: `[B, H, L, D]`, `key`: `[B, Hkv, L, D]`, `value`:
      `[B, Hkv, L, Dv]`, result `[B, H, L, Dv]`, with `H % Hkv == 0`
      (MHA, GQA and MQA) and `Dv` free (MLA);
    - the CP group is `grid` / `grid_axes` (P processes), so the global
      sequence length is `S = P * L` and process `r` holds rows
      `[r*L, (r+1)*L)`.

    `mask` is a structured mask on global positions (`none`, `causal`,
    `sliding_window(W)`). An `explicit_mask` is an i1 (true = attend) or
    additive float tensor `[B|1, H|1, L|S, S]` (or `[L|S, S]`) covering the
    global key length; with a query extent of `S` its global rows are used.

    `layout` states how the sequence is sharded: `contiguous` (the
    default, as above) or `zigzag` (rank `r` holds chunks `r` and
    `2P-1-r` of `2P` chunks of `L/2` rows; `S` must be divisible by `2P`).
    Operands and result share the layout, and global positions (masks,
    explicit mask rows) follow it. The layout is never inferred: a scheme
    that needs the other layout converts explicitly with `cp.relayout`.

    `scheme` selects how `cp-apply-scheme` parallelizes the op; without it
    the pass's `scheme` option decides, and without either the pass fails.
    `auto` lets a cost model choose (`cp-choose-scheme`). `scale` defaults
    to `1/sqrt(D)`.

    Two optional regions are the compiler form of FlexAttention's
    `mask_mod` and `score_mod`, written on **global** positions:
    `mask_mod (%b, %h, %q_idx, %kv_idx : index ...) -> i1` says whether
    query `q_idx` may see key `kv_idx` (in addition to `mask` and
    `explicit_mask`); `score_mod (%score : f32, %b, %h, %q_idx, %kv_idx)
    -> f32` rewrites the scaled score before masking. Both may read the
    op's `mod_operands` (e.g. segment ids of the global sequence), passed
    as extra block arguments, with `tensor.extract`; otherwise they hold
    `arith` and `math` ops and end in `cp.yield`. The op is isolated from
    above: whatever else a region reads comes in as a mod operand, so
    schemes can move and copy regions freely. The schemes supply the
    global indices: nobody builds a mask for the global key length by hand.

    ```mlir
    %o = cp.attention %q, %k, %v mod_operands(%seg : tensor<256xi32>)
           on @cp grid_axes = [0] mask = causal
           mask_mod {
           ^bb0(%b: index, %h: index, %qi: index, %ki: index, %s: tensor<256xi32>):
             %a = tensor.extract %s[%qi] : tensor<256xi32>
             %c = tensor.extract %s[%ki] : tensor<256xi32>
             %same = arith.cmpi eq, %a, %c : i32
             cp.yield %same : i1
           } : ...
    ```

    ```mlir
    shard.grid @cp(shape = 4)
    %o = cp.attention %q, %k, %v on @cp grid_axes = [0] mask = causal
           scheme = ulysses
         : tensor<1x8x256x64xf32>, tensor<1x2x256x64xf32>,
           tensor<1x2x256x64xf32> -> tensor<1x8x256x64xf32>
    %z = cp.attention %q, %k, %v on @cp grid_axes = [0] mask = causal
           layout = zigzag scheme = zigzag
         : tensor<1x8x256x64xf32>, tensor<1x2x256x64xf32>,
           tensor<1x2x256x64xf32> -> tensor<1x8x256x64xf32>
    ```
  }];
  let arguments = !con((ins
    CP_FloatTensor:$query,
    CP_FloatTensor:$key,
    CP_FloatTensor:$value,
    Optional<CP_MaskTensor>:$explicit_mask,
    Variadic<AnyType>:$mod_operands), groupArgs, (ins
    DefaultValuedAttr<CP_MaskAttr, "::mlir::cp::MaskKind::none">:$mask,
    DefaultValuedAttr<CP_SequenceLayout,
                      "::mlir::cp::SequenceLayout::contiguous">:$layout,
    OptionalAttr<CP_SchemeAttr>:$scheme,
    OptionalAttr<F32Attr>:$scale
  ));
  let results = (outs CP_FloatTensor:$result);
  let regions = (region AnyRegion:$mask_mod, AnyRegion:$score_mod);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`explicit_mask` $explicit_mask^)?
    (`mod_operands` `(` $mod_operands^ `:` type($mod_operands) `)`)?
    `on` $grid `grid_axes` `=` $grid_axes
    (`mask` `=` custom<MaskKeyword>($mask)^)?
    (`layout` `=` $layout^)?
    (`scheme` `=` custom<SchemeKeyword>($scheme)^)?
    (`scale` `=` $scale^)?
    (`mask_mod` $mask_mod^)? (`score_mod` $score_mod^)?
    attr-dict `:` type($query) `,` type($key) `,` type($value)
    (`,` type($explicit_mask)^)? `->` type($result)
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def CP_LocalAttentionOp : CP_Op<"local_attention",
    [Pure, AttrSizedOperandSegments, IsolatedFromAbove]> {
  let summary = "Single-device attention of a query block against a key block";
  let description = [{
    Attention of `query` `[B, H, Lq, D]` against `key` `[B, Hkv, Lkv, D]` /
    `value` `[B, Hkv, Lkv, Dv]` on one device. `q_offset` and `kv_offset`
    are the global positions of the first query row and the first key
    column: the structured `mask` is evaluated at
    `(q_offset + i, kv_offset + j)`, which is how every scheme keeps causal
    masks aligned on ranks other than the first.

    An `explicit_mask` is local to this block: `[B|1, H|1, Lq, Lkv]` or
    `[Lq, Lkv]`, i1 (true = attend) or an additive float bias. It combines
    with `mask` (both must allow a position).

    A fully masked row yields 0. The optional second result is the per-row
    natural log-sum-exp of the scaled, masked scores, `[B, H, Lq]` in f32
    (`-inf` for a fully masked row); `cp.merge` combines partial results
    with it. The output has the query's element type, or f32 for f16/bf16
    queries: partial results that are merged stay in f32 and are rounded
    to the storage type once.

    `mask_mod` and `score_mod` regions and their `mod_operands` are those of
    `cp.attention`, evaluated at the global positions above and at the
    global head `head_offset + h` (0 without `head_offset`; Ulysses gives
    each rank a slice of the heads).

    ```mlir
    %o, %lse = cp.local_attention %q, %k, %v offsets(%qo, %c0) mask = causal
        : tensor<1x8x64x32xf32>, tensor<1x2x256x32xf32>, tensor<1x2x256x32xf32>
        -> tensor<1x8x64x32xf32>, tensor<1x8x64xf32>
    ```
  }];
  let arguments = (ins
    CP_FloatTensor:$query,
    CP_FloatTensor:$key,
    CP_FloatTensor:$value,
    Index:$q_offset,
    Index:$kv_offset,
    Optional<Index>:$head_offset,
    Optional<CP_MaskTensor>:$explicit_mask,
    Variadic<AnyType>:$mod_operands,
    DefaultValuedAttr<CP_MaskAttr, "::mlir::cp::MaskKind::none">:$mask,
    OptionalAttr<F32Attr>:$scale
  );
  let results = (outs
    CP_FloatTensor:$output,
    Optional<RankedTensorOf<[F32]>>:$lse
  );
  let regions = (region AnyRegion:$mask_mod, AnyRegion:$score_mod);
  let assemblyFormat = [{
    $query `,` $key `,` $value `offsets` `(` $q_offset `,` $kv_offset `)`
    (`head_offset` `(` $head_offset^ `)`)?
    (`explicit_mask` $explicit_mask^)?
    (`mod_operands` `(` $mod_operands^ `:` type($mod_operands) `)`)?
    (`mask` `=` custom<MaskKeyword>($mask)^)?
    (`scale` `=` $scale^)?
    (`mask_mod` $mask_mod^)? (`score_mod` $score_mod^)?
    attr-dict `:` type($query) `,` type($key) `,` type($value)
    (`,` type($explicit_mask)^)? `->` type($output) (`,` type($lse)^)?
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def CP_OffsetMaskOp : CP_Op<"offset_mask", [Pure]> {
  let summary = "Materialize an offset-aware structured mask as i1";
  let description = [{
    Returns the `[Lq, Lkv]` i1 tensor of `mask` evaluated at global
    positions `(q_offset + i, kv_offset + j)`; true means "may attend".
    It exists to state and test masks; canonicalization folds it into a
    consuming `cp.local_attention` so that no mask tensor is built.

    ```mlir
    %m = cp.offset_mask offsets(%qo, %ko) mask = causal : tensor<64x256xi1>
    ```
  }];
  let arguments = (ins
    Index:$q_offset,
    Index:$kv_offset,
    CP_MaskAttr:$mask
  );
  let results = (outs RankedTensorOf<[I1]>:$result);
  let assemblyFormat = [{
    `offsets` `(` $q_offset `,` $kv_offset `)` `mask` `=` custom<MaskKeyword>($mask)
    attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

def CP_AllGatherOp : CP_GroupOp<"all_gather", [Pure]> {
  let summary = "All-gather along a tensor axis, in group rank order";
  let description = [{
    Concatenates the `input` of every process of the group along
    `gather_axis`, in group rank order, and gives every process the result.
    The group is `grid_axes` of `grid`, ranked row-major as in upstream
    `shard`. Like `shard.all_gather`, but lowerable to MPI and NCCL.

    ```mlir
    %kf = cp.all_gather %k on @cp grid_axes = [0] gather_axis = 2
        : tensor<1x2x64x32xf32> -> tensor<1x2x256x32xf32>
    ```
  }];
  let arguments = !con((ins AnyRankedTensor:$input), groupArgs,
                       (ins I64Attr:$gather_axis));
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `on` $grid `grid_axes` `=` $grid_axes `gather_axis` `=` $gather_axis
    attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def CP_AllToAllOp : CP_GroupOp<"all_to_all", [Pure]> {
  let summary = "Split along one axis, exchange, concatenate along another";
  let description = [{
    Splits `input` into P equal parts along `split_axis`, sends part `j` to
    group rank `j`, and concatenates the parts received along
    `concat_axis` in group rank order. Ulysses uses it to go from
    sequence-sharded to head-sharded (`split_axis = 1, concat_axis = 2`)
    and back.

    ```mlir
    %qh = cp.all_to_all %q on @cp grid_axes = [0] split_axis = 1 concat_axis = 2
        : tensor<1x8x64x32xf32> -> tensor<1x2x256x32xf32>
    ```
  }];
  let arguments = !con((ins AnyRankedTensor:$input), groupArgs,
                       (ins I64Attr:$split_axis, I64Attr:$concat_axis));
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `on` $grid `grid_axes` `=` $grid_axes
    `split_axis` `=` $split_axis `concat_axis` `=` $concat_axis
    attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def CP_ExchangeOp : CP_GroupOp<"exchange", [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "Pairwise swap with a partner process";
  let description = [{
    Sends `input` to this process's partner and returns the partner's
    `input`. With `partner = mirror`, group rank `r` pairs with `P-1-r`;
    for odd P the middle rank is its own partner and gets its own input
    back. Head-tail load balancing uses it to trade query and output
    halves.

    ```mlir
    %t = cp.exchange %tail on @cp grid_axes = [0] partner = mirror
        : tensor<1x8x32x32xf32>
    ```
  }];
  let arguments = !con((ins AnyRankedTensor:$input), groupArgs,
                       (ins CP_PartnerKind:$partner));
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `on` $grid `grid_axes` `=` $grid_axes `partner` `=` $partner
    attr-dict `:` type($input)
  }];
  let hasFolder = 1;
}

def CP_ShiftOp : CP_GroupOp<"shift", [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "Rotate tensors around the group";
  let description = [{
    Group rank `r` receives the `input` of rank `(r - offset) mod P`; data
    moves `offset` ranks forward, wrapping around. Ring attention rotates
    K and V with `offset = 1`.

    ```mlir
    %k1 = cp.shift %k on @cp grid_axes = [0] offset = 1 : tensor<1x2x64x32xf32>
    ```
  }];
  let arguments = !con((ins AnyRankedTensor:$input), groupArgs,
                       (ins I64Attr:$offset));
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `on` $grid `grid_axes` `=` $grid_axes `offset` `=` $offset
    attr-dict `:` type($input)
  }];
  let hasFolder = 1;
}

def CP_RelayoutOp : CP_GroupOp<"relayout",
    [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "Convert a sequence-sharded tensor between layouts";
  let description = [{
    `input` is this rank's shard of a sequence sharded along `seq_axis` in
    layout `from`; the result is its shard in layout `to` (see
    `cp.attention`'s `layout`). Between `contiguous` and `zigzag`, every
    rank sends its two halves (chunks of `L/2` rows) to the ranks that hold
    them in the other layout and receives its own two. The same conversion
    must be applied to every tensor indexed by sequence position: Q, K, V,
    position ids, labels, masks with a local query extent.

    ```mlir
    %qz = cp.relayout %q on @cp grid_axes = [0] seq_axis = 2
        from contiguous to zigzag : tensor<1x8x64x32xf32>
    ```
  }];
  let arguments = !con((ins AnyRankedTensor:$input), groupArgs,
                       (ins I64Attr:$seq_axis, CP_SequenceLayout:$from,
                            CP_SequenceLayout:$to));
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `on` $grid `grid_axes` `=` $grid_axes `seq_axis` `=` $seq_axis
    `from` $from `to` $to attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def CP_YieldOp : CP_Op<"yield", [Pure, Terminator,
    ParentOneOf<["AttentionOp", "LocalAttentionOp"]>]> {
  let summary = "The value of a mask_mod (i1) or score_mod (f32) region";
  let description = [{
    Ends a `mask_mod` region with whether the query may see the key, or a
    `score_mod` region with the new score.

    ```mlir
    cp.yield %allowed : i1
    ```
  }];
  let arguments = (ins AnyType:$value);
  let assemblyFormat = "$value attr-dict `:` type($value)";
}

//===----------------------------------------------------------------------===//
// Merge
//===----------------------------------------------------------------------===//

def CP_MergeOp : CP_Op<"merge", [Pure,
    AllTypesMatch<["out_a", "out_b", "output"]>,
    AllTypesMatch<["lse_a", "lse_b", "lse"]>]> {
  let summary = "Log-sum-exp merge of two partial attention results";
  let description = [{
    Combines two partial attentions of the same queries over disjoint key
    sets, each given as its normalized output `[B, H, L, Dv]` and per-row
    log-sum-exp `[B, H, L]` (f32):

    ```
    lse    = max(a, b) + log(exp(a - max) + exp(b - max))
    output = exp(lse_a - lse) * out_a + exp(lse_b - lse) * out_b
    ```

    Rows where both sides are fully masked (`-inf`) give output 0 and
    `lse = -inf`, never NaN.

    ```mlir
    %o, %l = cp.merge %o0, %l0, %o1, %l1
        : tensor<1x8x64x32xf32>, tensor<1x8x64xf32>
    ```
  }];
  let arguments = (ins
    CP_FloatTensor:$out_a,
    RankedTensorOf<[F32]>:$lse_a,
    CP_FloatTensor:$out_b,
    RankedTensorOf<[F32]>:$lse_b
  );
  let results = (outs CP_FloatTensor:$output, RankedTensorOf<[F32]>:$lse);
  let assemblyFormat = [{
    $out_a `,` $lse_a `,` $out_b `,` $lse_b attr-dict
    `:` type($out_a) `,` type($lse_a)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Buffer forms (produced by bufferization, consumed by lowerings)
//===----------------------------------------------------------------------===//

def CP_FloatMemRef : StridedMemRefOf<[F32, F16, BF16]>;
def CP_MaskMemRef : StridedMemRefOf<[I1, F32, F16, BF16]>;

def CP_BufferLocalAttentionOp : CP_Op<"buffer.local_attention",
    [AttrSizedOperandSegments,
     DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "cp.local_attention on buffers";
  let description = [{
    The bufferized form of `cp.local_attention`: reads `query`, `key`,
    `value` (and `explicit_mask` and `mod_operands`) and writes the
    attention output into `output` and, when present, the per-row
    log-sum-exp into `lse`. Shapes, offsets, masks and numerics are those of
    `cp.local_attention`. Operands may have any strided layout.
    `cp-lower-local-attention` lowers it to a tiled online-softmax loop nest.

    A `mask_mod` or `score_mod` is a private function here (bufferization
    outlines the tensor op's region), taking the region's arguments with the
    mod operands as buffers and returning i1 or f32; the lowerings emit its
    body inline wherever a position is evaluated. Keeping regions off the
    buffer op lets the buffer deallocation passes, which require every op
    with regions to describe its control flow, run unchanged.

    ```mlir
    cp.buffer.local_attention %q, %k, %v offsets(%qo, %c0) into %o
        mask = causal
        : memref<1x8x64x32xf32>, memref<1x2x256x32xf32>,
          memref<1x2x256x32xf32> into memref<1x8x64x32xf32>
    cp.buffer.local_attention %q, %k, %v offsets(%qo, %c0)
        mod_operands(%seg : memref<256xi32>) into %o mask_mod = @same_document
        : ...
    ```
  }];
  let arguments = (ins
    Arg<CP_FloatMemRef, "", [MemRead]>:$query,
    Arg<CP_FloatMemRef, "", [MemRead]>:$key,
    Arg<CP_FloatMemRef, "", [MemRead]>:$value,
    Index:$q_offset,
    Index:$kv_offset,
    Optional<Index>:$head_offset,
    Arg<Optional<CP_MaskMemRef>, "", [MemRead]>:$explicit_mask,
    Arg<Variadic<AnyType>, "", [MemRead]>:$mod_operands,
    Arg<CP_FloatMemRef, "", [MemWrite]>:$output,
    Arg<Optional<StridedMemRefOf<[F32]>>, "", [MemWrite]>:$lse,
    DefaultValuedAttr<CP_MaskAttr, "::mlir::cp::MaskKind::none">:$mask,
    OptionalAttr<F32Attr>:$scale,
    OptionalAttr<FlatSymbolRefAttr>:$mask_mod,
    OptionalAttr<FlatSymbolRefAttr>:$score_mod
  );
  let assemblyFormat = [{
    $query `,` $key `,` $value `offsets` `(` $q_offset `,` $kv_offset `)`
    (`head_offset` `(` $head_offset^ `)`)?
    (`explicit_mask` $explicit_mask^)?
    (`mod_operands` `(` $mod_operands^ `:` type($mod_operands) `)`)?
    `into` $output (`,` $lse^)?
    (`mask` `=` custom<MaskKeyword>($mask)^)?
    (`scale` `=` $scale^)?
    (`mask_mod` `=` $mask_mod^)? (`score_mod` `=` $score_mod^)?
    attr-dict `:` type($query) `,` type($key) `,` type($value)
    (`,` type($explicit_mask)^)? `into` type($output) (`,` type($lse)^)?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The functions named by mask_mod / score_mod (null when absent).
    ::mlir::func::FuncOp getMaskModFunction();
    ::mlir::func::FuncOp getScoreModFunction();
  }];
}

// A collective on buffers: reads `input`, writes `output`. With `async`
// (GPU programs) it is a gpu::AsyncOpInterface op: it runs after its
// `asyncDependencies` and returns a token for the work it enqueued, so
// gpu-async-region threads it into the stream of the surrounding kernels.
class CP_BufferCollectiveOp<string mnemonic, string tensorForm,
                            dag attrs, string attrSyntax>
    : CP_GroupOp<"buffer." # mnemonic, [GPU_AsyncOpInterface]> {
  let summary = tensorForm # " on buffers";
  let arguments = !con((ins Variadic<GPU_AsyncToken>:$asyncDependencies,
                            Arg<AnyStridedMemRef, "", [MemRead]>:$input,
                            Arg<AnyStridedMemRef, "", [MemWrite]>:$output),
                       groupArgs, attrs);
  let results = (outs Optional<GPU_AsyncToken>:$asyncToken);
  let assemblyFormat = "custom<AsyncDependencies>(type($asyncToken), "
                       "$asyncDependencies) "
                       "$input `into` $output `on` $grid `grid_axes` `=` "
                       "$grid_axes " # attrSyntax #
                       " attr-dict `:` type($input) `into` type($output)";
  let hasVerifier = 1;
}
def CP_BufferAllGatherOp : CP_BufferCollectiveOp<"all_gather", "cp.all_gather",
    (ins I64Attr:$gather_axis), "`gather_axis` `=` $gather_axis"> {
  let description = [{
    The bufferized form of `cp.all_gather`: every process's `input`,
    concatenated along `gather_axis` in group rank order, is written into
    `output`. `convert-cp-to-mpi` lowers it to the MPI runtime; on GPUs,
    `async` forms are lowered by `convert-cp-to-nccl` onto the stream of
    their dependencies.

    ```mlir
    cp.buffer.all_gather %k into %kf on @cp grid_axes = [0] gather_axis = 2
        : memref<1x2x64x32xf32> into memref<1x2x256x32xf32>
    %t1 = cp.buffer.all_gather async [%t0] %k into %kf on @cp grid_axes = [0]
        gather_axis = 2 : memref<1x2x64x32xf32> into memref<1x2x256x32xf32>
    ```
  }];
}

def CP_BufferAllToAllOp : CP_BufferCollectiveOp<"all_to_all", "cp.all_to_all",
    (ins I64Attr:$split_axis, I64Attr:$concat_axis),
    "`split_axis` `=` $split_axis `concat_axis` `=` $concat_axis"> {
  let description = [{
    The bufferized form of `cp.all_to_all`: `input` is split into P parts
    along `split_axis`, part `j` goes to group rank `j`, and the received
    parts are written into `output` concatenated along `concat_axis`.

    ```mlir
    cp.buffer.all_to_all %q into %qh on @cp grid_axes = [0] split_axis = 1
        concat_axis = 2 : memref<1x8x64x32xf32> into memref<1x2x256x32xf32>
    ```
  }];
}

def CP_BufferExchangeOp : CP_BufferCollectiveOp<"exchange", "cp.exchange",
    (ins CP_PartnerKind:$partner), "`partner` `=` $partner"> {
  let description = [{
    The bufferized form of `cp.exchange`: `input` goes to the partner and
    the partner's input is written into `output` (same shape).

    ```mlir
    cp.buffer.exchange %t into %r on @cp grid_axes = [0] partner = mirror
        : memref<1x8x32x32xf32> into memref<1x8x32x32xf32>
    ```
  }];
}

def CP_BufferShiftOp : CP_BufferCollectiveOp<"shift", "cp.shift",
    (ins I64Attr:$offset), "`offset` `=` $offset"> {
  let description = [{
    The bufferized form of `cp.shift`: group rank `r` writes the `input` of
    rank `(r - offset) mod P` into `output` (same shape).

    ```mlir
    cp.buffer.shift %k into %k1 on @cp grid_axes = [0] offset = 1
        : memref<1x2x64x32xf32> into memref<1x2x64x32xf32>
    ```
  }];
}

def CP_BufferRelayoutOp : CP_BufferCollectiveOp<"relayout", "cp.relayout",
    (ins I64Attr:$seq_axis, CP_SequenceLayout:$from, CP_SequenceLayout:$to),
    "`seq_axis` `=` $seq_axis `from` $from `to` $to"> {
  let description = [{
    The bufferized form of `cp.relayout`: this rank's shard of `input` in
    layout `from` is written into `output` in layout `to` (same shape).

    ```mlir
    cp.buffer.relayout %q into %qz on @cp grid_axes = [0] seq_axis = 2
        from contiguous to zigzag
        : memref<1x8x64x32xf32> into memref<1x8x64x32xf32>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Split-phase collectives (produced by cp-overlap-collectives)
//===----------------------------------------------------------------------===//

def CP_BufferShiftStartOp : CP_GroupOp<"buffer.shift_start",
    [GPU_AsyncOpInterface]> {
  let summary = "Start a cp.buffer.shift without waiting for it";
  let description = [{
    Issues the shift of `input` into `output` (the semantics of
    `cp.buffer.shift`) and returns at once with a `!cp.request`. Until the
    matching `cp.buffer.wait`, `output` holds undefined data and `input`
    must not be written; computation placed in between overlaps the
    transfer. On CPUs it is a nonblocking MPI send/receive; on GPUs
    (`async`) the transfer runs with NCCL on a second stream that starts
    after the work of its dependencies, so kernels enqueued before the wait
    run concurrently.

    ```mlir
    %req = cp.buffer.shift_start %k into %k1 on @cp grid_axes = [0] offset = 1
        : memref<1x2x64x32xf32> into memref<1x2x64x32xf32>
    // ... attention on %k ...
    cp.buffer.wait %req
    ```
  }];
  let arguments = !con((ins Variadic<GPU_AsyncToken>:$asyncDependencies,
                            Arg<AnyStridedMemRef, "", [MemRead]>:$input,
                            Arg<AnyStridedMemRef, "", [MemWrite]>:$output),
                       groupArgs, (ins I64Attr:$offset));
  let results = (outs CP_RequestType:$request,
                      Optional<GPU_AsyncToken>:$asyncToken);
  let assemblyFormat = [{
    custom<AsyncDependencies>(type($asyncToken), $asyncDependencies)
    $input `into` $output `on` $grid `grid_axes` `=` $grid_axes
    `offset` `=` $offset attr-dict `:` type($input) `into` type($output)
  }];
  let hasVerifier = 1;
}

def CP_BufferWaitOp : CP_Op<"buffer.wait", [GPU_AsyncOpInterface,
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Wait for a started collective";
  let description = [{
    Completes the collective that produced `request`: afterwards its output
    buffer holds the received data and its input buffer may be reused. On
    GPUs (`async`) nothing blocks the host: the stream of the dependencies
    waits for the transfer (an event recorded on the communication stream).
    It reads and writes memory as far as other ops are concerned, so no
    load or store moves across it.

    ```mlir
    cp.buffer.wait %req
    %t2 = cp.buffer.wait async [%t1] %req
    ```
  }];
  let arguments = (ins Variadic<GPU_AsyncToken>:$asyncDependencies,
                       CP_RequestType:$request);
  let results = (outs Optional<GPU_AsyncToken>:$asyncToken);
  let assemblyFormat = [{
    custom<AsyncDependencies>(type($asyncToken), $asyncDependencies)
    $request attr-dict
  }];
  let hasVerifier = 1;
}

#endif // CP_OPS_TD
