//===- CPBufferOps.td - buffer forms of the cp ops ---------*- tablegen -*-===//
//
// The memref forms that bufferization makes of the cp ops and that the
// lowerings consume, and the split-phase shift of cp-overlap-collectives
// (docs/Lowering.md §1). Included by CPOps.td, whose base classes they use.
//
//===----------------------------------------------------------------------===//

#ifndef CP_BUFFER_OPS_TD
#define CP_BUFFER_OPS_TD

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
    `value` (and `explicit_mask`, `sinks` and `mod_operands`) and writes the
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
    Arg<Optional<StridedMemRefOf<[F32]>>, "", [MemRead]>:$sinks,
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
    (`sinks` `(` $sinks^ `:` type($sinks) `)`)?
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

def CP_BufferLocalAttentionGradOp : CP_Op<"buffer.local_attention_grad",
    [AttrSizedOperandSegments,
     DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "cp.local_attention_grad on buffers";
  let description = [{
    The bufferized form of `cp.local_attention_grad`: reads `query`, `key`,
    `value`, `output`, `lse` and `grad_output` (and `explicit_mask` and
    `mod_operands`) and overwrites `grad_query`, `grad_key` and
    `grad_value` with this block's contributions. Shapes, offsets, masks
    and numerics are those of `cp.local_attention_grad`; `mask_mod` and
    `score_mod` are private functions, as on `cp.buffer.local_attention`.
    `cp-lower-local-attention` lowers it to a tiled FlashAttention-2
    backward loop nest.

    ```mlir
    cp.buffer.local_attention_grad %q, %k, %v, %o, %lse, %do
        offsets(%qo, %c0) into %dq, %dk, %dv mask = causal
        : memref<1x8x64x32xf32>, memref<1x2x256x32xf32>,
          memref<1x2x256x32xf32>, memref<1x8x64x32xf32>, memref<1x8x64xf32>,
          memref<1x8x64x32xf32>
        into memref<1x8x64x32xf32>, memref<1x2x256x32xf32>,
             memref<1x2x256x32xf32>
    ```
  }];
  let arguments = (ins
    Arg<CP_FloatMemRef, "", [MemRead]>:$query,
    Arg<CP_FloatMemRef, "", [MemRead]>:$key,
    Arg<CP_FloatMemRef, "", [MemRead]>:$value,
    Arg<CP_FloatMemRef, "", [MemRead]>:$output,
    Arg<StridedMemRefOf<[F32]>, "", [MemRead]>:$lse,
    Arg<CP_FloatMemRef, "", [MemRead]>:$grad_output,
    Index:$q_offset,
    Index:$kv_offset,
    Optional<Index>:$head_offset,
    Arg<Optional<CP_MaskMemRef>, "", [MemRead]>:$explicit_mask,
    Arg<Variadic<AnyType>, "", [MemRead]>:$mod_operands,
    Arg<CP_FloatMemRef, "", [MemWrite]>:$grad_query,
    Arg<CP_FloatMemRef, "", [MemWrite]>:$grad_key,
    Arg<CP_FloatMemRef, "", [MemWrite]>:$grad_value,
    DefaultValuedAttr<CP_MaskAttr, "::mlir::cp::MaskKind::none">:$mask,
    OptionalAttr<F32Attr>:$scale,
    OptionalAttr<FlatSymbolRefAttr>:$mask_mod,
    OptionalAttr<FlatSymbolRefAttr>:$score_mod
  );
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $output `,` $lse `,` $grad_output
    `offsets` `(` $q_offset `,` $kv_offset `)`
    (`head_offset` `(` $head_offset^ `)`)?
    (`explicit_mask` $explicit_mask^)?
    (`mod_operands` `(` $mod_operands^ `:` type($mod_operands) `)`)?
    `into` $grad_query `,` $grad_key `,` $grad_value
    (`mask` `=` custom<MaskKeyword>($mask)^)?
    (`scale` `=` $scale^)?
    (`mask_mod` `=` $mask_mod^)? (`score_mod` `=` $score_mod^)?
    attr-dict `:` type($query) `,` type($key) `,` type($value) `,`
    type($output) `,` type($lse) `,` type($grad_output)
    (`,` type($explicit_mask)^)? `into` type($grad_query) `,`
    type($grad_key) `,` type($grad_value)
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

def CP_BufferReduceScatterOp : CP_BufferCollectiveOp<"reduce_scatter",
    "cp.reduce_scatter", (ins I64Attr:$scatter_axis),
    "`scatter_axis` `=` $scatter_axis"> {
  let description = [{
    The bufferized form of `cp.reduce_scatter`: the elementwise sum of
    every process's `input`, block `r` of it along `scatter_axis` written
    into group rank `r`'s `output`. `convert-cp-to-mpi` lowers it to
    `MPI_Reduce_scatter_block` in the runtime.

    ```mlir
    cp.buffer.reduce_scatter %dkf into %dk on @cp grid_axes = [0]
        scatter_axis = 2 : memref<1x2x256x32xf32> into memref<1x2x64x32xf32>
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

#endif // CP_BUFFER_OPS_TD
