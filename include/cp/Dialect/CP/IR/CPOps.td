//===- CPOps.td - cp dialect operations --------------------*- tablegen -*-===//
//
// Sharded and local attention, the collectives CP schemes need, the offset
// mask and the log-sum-exp merge; their buffer forms are in CPBufferOps.td.
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

    `queries = replicated` is the decode reading: every process holds the
    same `Lq` queries (`[B, H, Lq, D]`, any `Lq`, e.g. one new token) and
    its contiguous shard of `L` keys and values of a KV cache of `S = P * L`
    entries; the result (and lse) `[B, H, Lq, Dv]` is the same on every
    process. Query row `i` has global position `i` for `mask` (so `causal`
    lets row `i` see keys `0..i`), the mod regions and the explicit mask,
    which is `[B|1, H|1, Lq, S]`. The layout must be `contiguous`; the
    schemes that apply are allgather, ulysses (the local heads' queries are
    sliced, the output all-gathered over heads) and ring (the queries stay,
    the cache travels). Without it (`sharded`, the default) Q, K and V are
    shards of one sequence and must have the same local length.

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

    `sinks` `[H]` (f32) are attention sinks (gpt-oss, StreamingLLM): one
    learned logit per query head that joins every row's softmax
    denominator exactly once and has no value row. Row i of head h divides
    by `sum_j exp(s_ij - m_i) + exp(sinks[h] - m_i)`, where `m_i` is the
    larger of the row's maximum score and the sink; a row that sees no key
    yields 0. Schemes that split heads slice the sinks with them; those that
    merge partial results count the sink in exactly one of them.

    The optional second result `lse` `[B, H, L]` (f32) is each local query
    row's log-sum-exp over every key of the global sequence, and over the
    sink when there is one (`-inf` for a row that sees no key and has no
    sink): what `cp.attention_grad` needs, so that the backward does not
    recompute the forward. Every scheme returns it in the
    op's layout; those that move the output (ulysses, hybrid, head_tail)
    move the lse with it, and `cp.bytes_per_rank` counts it.

    ```mlir
    %o, %lse = cp.attention %q, %k, %v on @cp grid_axes = [0] mask = causal
        scheme = ring
        : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>
        -> tensor<1x8x64x32xf32>, tensor<1x8x64xf32>
    %dq, %dk, %dv = cp.attention_grad %q, %k, %v, %o, %lse, %do
        on @cp grid_axes = [0] mask = causal scheme = ring : ...
    ```

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
    Optional<RankedTensorOf<[F32]>>:$sinks,
    Variadic<AnyType>:$mod_operands), groupArgs, (ins
    DefaultValuedAttr<CP_MaskAttr, "::mlir::cp::MaskKind::none">:$mask,
    DefaultValuedAttr<CP_SequenceLayout,
                      "::mlir::cp::SequenceLayout::contiguous">:$layout,
    DefaultValuedAttr<CP_QueryPlacement,
                      "::mlir::cp::QueryPlacement::sharded">:$queries,
    OptionalAttr<CP_SchemeAttr>:$scheme,
    OptionalAttr<F32Attr>:$scale
  ));
  let results = (outs
    CP_FloatTensor:$result,
    Optional<RankedTensorOf<[F32]>>:$lse
  );
  let regions = (region AnyRegion:$mask_mod, AnyRegion:$score_mod);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`explicit_mask` $explicit_mask^)?
    (`sinks` `(` $sinks^ `:` type($sinks) `)`)?
    (`mod_operands` `(` $mod_operands^ `:` type($mod_operands) `)`)?
    `on` $grid `grid_axes` `=` $grid_axes
    (`mask` `=` custom<MaskKeyword>($mask)^)?
    (`layout` `=` $layout^)?
    (`queries` `=` $queries^)?
    (`scheme` `=` custom<SchemeKeyword>($scheme)^)?
    (`scale` `=` $scale^)?
    (`mask_mod` $mask_mod^)? (`score_mod` $score_mod^)?
    attr-dict `:` type($query) `,` type($key) `,` type($value)
    (`,` type($explicit_mask)^)? `->` type($result) (`,` type($lse)^)?
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def CP_AttentionGradOp : CP_GroupOp<"attention_grad",
    [Pure, AttrSizedOperandSegments, IsolatedFromAbove]> {
  let summary = "Gradient of cp.attention over a sequence sharded across a CP group";
  let description = [{
    The backward of `cp.attention`: given this process's shards of `query`,
    `key`, `value` (as for `cp.attention`), the forward's `output`
    `[B, H, L, Dv]` and per-row log-sum-exp `lse` `[B, H, L]` (f32, over
    every key of the global sequence) and the loss gradient `grad_output`
    `[B, H, L, Dv]`, it returns this process's shards of `dq`, `dk`, `dv`
    (shaped like query, key and value; dk/dv have Hkv heads, the
    contributions of every query head of a group summed). The gradients
    have the query's element type or f32.

    `grid`, `grid_axes`, `mask`, `explicit_mask`, `mask_mod`, `score_mod`,
    `mod_operands`, `scale`, `layout` and `scheme` are those of the
    forward and mean the same; the forward's shape rules apply (and the
    scheme's). When `lse` is the result of a `cp.attention` in the IR, the
    verifier holds the two to it: that forward's mask, scale, grid, layout,
    regions, explicit mask and mod operands must be these, and `output`
    must be the same op's (the scheme may differ). With the forward's
    `sinks`, the op also returns `grad_sinks` `[H]`: the loss gradient of
    each sink, `-sum over rows of exp(sinks[h] - lse) * rowsum(dO * O)`,
    summed over every rank's rows (the same value on every rank); dq, dk
    and dv need nothing else, since the lse already counts the sink.
    Without `sinks`, the backward of a forward with them leaves them frozen
    (no `grad_sinks`). A `score_mod` must be
    differentiable (see
    `cp.local_attention_grad`). `cp-apply-scheme` rewrites the op into
    collectives and `cp.local_attention_grad` ops; each scheme's backward
    mirrors its forward (docs/Training.md §3).

    ```mlir
    %dq, %dk, %dv = cp.attention_grad %q, %k, %v, %o, %lse, %do
        on @cp grid_axes = [0] mask = causal scheme = allgather
        : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>,
          tensor<1x8x64x32xf32>, tensor<1x8x64xf32>, tensor<1x8x64x32xf32>
        -> tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>
    ```
  }];
  let arguments = !con((ins
    CP_FloatTensor:$query,
    CP_FloatTensor:$key,
    CP_FloatTensor:$value,
    CP_FloatTensor:$output,
    RankedTensorOf<[F32]>:$lse,
    CP_FloatTensor:$grad_output,
    Optional<CP_MaskTensor>:$explicit_mask,
    Optional<RankedTensorOf<[F32]>>:$sinks,
    Variadic<AnyType>:$mod_operands), groupArgs, (ins
    DefaultValuedAttr<CP_MaskAttr, "::mlir::cp::MaskKind::none">:$mask,
    DefaultValuedAttr<CP_SequenceLayout,
                      "::mlir::cp::SequenceLayout::contiguous">:$layout,
    OptionalAttr<CP_SchemeAttr>:$scheme,
    OptionalAttr<F32Attr>:$scale
  ));
  let results = (outs
    CP_FloatTensor:$grad_query,
    CP_FloatTensor:$grad_key,
    CP_FloatTensor:$grad_value,
    Optional<RankedTensorOf<[F32]>>:$grad_sinks
  );
  let regions = (region AnyRegion:$mask_mod, AnyRegion:$score_mod);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $output `,` $lse `,` $grad_output
    (`explicit_mask` $explicit_mask^)?
    (`sinks` `(` $sinks^ `:` type($sinks) `)`)?
    (`mod_operands` `(` $mod_operands^ `:` type($mod_operands) `)`)?
    `on` $grid `grid_axes` `=` $grid_axes
    (`mask` `=` custom<MaskKeyword>($mask)^)?
    (`layout` `=` $layout^)?
    (`scheme` `=` custom<SchemeKeyword>($scheme)^)?
    (`scale` `=` $scale^)?
    (`mask_mod` $mask_mod^)? (`score_mod` $score_mod^)?
    attr-dict `:` type($query) `,` type($key) `,` type($value) `,`
    type($output) `,` type($lse) `,` type($grad_output)
    (`,` type($explicit_mask)^)? `->` type($grad_query) `,` type($grad_key)
    `,` type($grad_value) (`,` type($grad_sinks)^)?
  }];
  let hasVerifier = 1;
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

    A fully masked row yields 0. `sinks` `[H]` (f32, indexed by this op's
    heads) join each row's softmax denominator once, as for `cp.attention`.
    The optional second result is the per-row natural log-sum-exp of the
    scaled, masked scores (and the sink), `[B, H, Lq]` in f32 (`-inf` for a
    fully masked row without a sink); `cp.merge` combines partial results
    with it, so a sink given to one partial of a row counts once in the
    merged one. The output has the query's element type, or f32 for f16/bf16
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
    Optional<RankedTensorOf<[F32]>>:$sinks,
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
    (`sinks` `(` $sinks^ `:` type($sinks) `)`)?
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

def CP_LocalAttentionGradOp : CP_Op<"local_attention_grad",
    [Pure, AttrSizedOperandSegments, IsolatedFromAbove]> {
  let summary = "Gradient of cp.local_attention for one query and key block";
  let description = [{
    The backward of `cp.local_attention` on one device: given the block's
    `query` `[B, H, Lq, D]`, `key` `[B, Hkv, Lkv, D]`, `value`
    `[B, Hkv, Lkv, Dv]`, the forward's normalized `output` and per-row
    log-sum-exp `lse` (`[B, H, Lq, Dv]` and `[B, H, Lq]` f32, over the keys
    the loss saw: a scheme that splits the keys passes the merged ones) and
    the loss gradient `grad_output` `[B, H, Lq, Dv]`, it returns this
    block's contributions to `dq`, `dk` and `dv` (shaped like query, key
    and value):

    ```
    P  = exp(score - lse)            D_i = rowsum(grad_output o output)
    dV = P^T dO    dS = P o (dO V^T - D)    dT = dS o m'(s) * scale
    dQ = dT K      dK = dT^T Q
    ```

    where `s` is the scaled score and `m'` the derivative of the
    `score_mod` (1 without one). The offsets, head offset, structured
    `mask`, `explicit_mask`, `mask_mod`, `score_mod`, `mod_operands` and
    `scale` are those of the forward `cp.local_attention` and mean the
    same. Under GQA the `H / Hkv` query heads of a group add into one dK/dV
    head; K and V are never expanded. A row whose `lse` is `-inf` saw no
    key and contributes nothing. The op never communicates: schemes add
    the contributions of every block.

    The gradients have the query's element type, or f32 for f16/bf16
    queries, so that contributions summed across blocks and ranks are
    rounded to the storage type once. A `score_mod` must be
    differentiable: its result may depend on the score only through
    `arith.addf/subf/mulf/divf/negf/select`, `math.exp` and `math.tanh`.

    ```mlir
    %dq, %dk, %dv = cp.local_attention_grad %q, %k, %v, %o, %lse, %do
        offsets(%qo, %c0) mask = causal
        : tensor<1x8x64x32xf32>, tensor<1x2x256x32xf32>,
          tensor<1x2x256x32xf32>, tensor<1x8x64x32xf32>, tensor<1x8x64xf32>,
          tensor<1x8x64x32xf32>
        -> tensor<1x8x64x32xf32>, tensor<1x2x256x32xf32>,
           tensor<1x2x256x32xf32>
    ```
  }];
  let arguments = (ins
    CP_FloatTensor:$query,
    CP_FloatTensor:$key,
    CP_FloatTensor:$value,
    CP_FloatTensor:$output,
    RankedTensorOf<[F32]>:$lse,
    CP_FloatTensor:$grad_output,
    Index:$q_offset,
    Index:$kv_offset,
    Optional<Index>:$head_offset,
    Optional<CP_MaskTensor>:$explicit_mask,
    Variadic<AnyType>:$mod_operands,
    DefaultValuedAttr<CP_MaskAttr, "::mlir::cp::MaskKind::none">:$mask,
    OptionalAttr<F32Attr>:$scale
  );
  let results = (outs
    CP_FloatTensor:$grad_query,
    CP_FloatTensor:$grad_key,
    CP_FloatTensor:$grad_value
  );
  let regions = (region AnyRegion:$mask_mod, AnyRegion:$score_mod);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $output `,` $lse `,` $grad_output
    `offsets` `(` $q_offset `,` $kv_offset `)`
    (`head_offset` `(` $head_offset^ `)`)?
    (`explicit_mask` $explicit_mask^)?
    (`mod_operands` `(` $mod_operands^ `:` type($mod_operands) `)`)?
    (`mask` `=` custom<MaskKeyword>($mask)^)?
    (`scale` `=` $scale^)?
    (`mask_mod` $mask_mod^)? (`score_mod` $score_mod^)?
    attr-dict `:` type($query) `,` type($key) `,` type($value) `,`
    type($output) `,` type($lse) `,` type($grad_output)
    (`,` type($explicit_mask)^)? `->` type($grad_query) `,` type($grad_key)
    `,` type($grad_value)
  }];
  let hasVerifier = 1;
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

def CP_ReduceScatterOp : CP_GroupOp<"reduce_scatter", [Pure]> {
  let summary = "Sum over the group, then scatter blocks along an axis";
  let description = [{
    Sums the `input` of every process of the group elementwise and gives
    group rank `r` block `r` of the sum along `scatter_axis` (the input dim
    split into P equal blocks, in group rank order). It is the reverse of
    `cp.all_gather`: the backward of a gathered K/V sums each rank's dK/dV
    contributions and returns every rank its own rows, sending
    (P-1)/P of the input where an all-reduce followed by taking one's own
    block would send twice that. Floats and integers of 8 bits or more are
    summed; on the host, f16/bf16 pairs are added in f32 and each partial
    sum is rounded back.

    ```mlir
    %dk = cp.reduce_scatter %dkf on @cp grid_axes = [0] scatter_axis = 2
        : tensor<1x2x256x32xf32> -> tensor<1x2x64x32xf32>
    ```
  }];
  let arguments = !con((ins AnyRankedTensor:$input), groupArgs,
                       (ins I64Attr:$scatter_axis));
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `on` $grid `grid_axes` `=` $grid_axes `scatter_axis` `=` $scatter_axis
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
    ParentOneOf<["AttentionOp", "LocalAttentionOp", "AttentionGradOp", "LocalAttentionGradOp"]>]> {
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

include "cp/Dialect/CP/IR/CPBufferOps.td"

#endif // CP_OPS_TD
