//===- CPDialect.td - context-parallel attention dialect ---*- tablegen -*-===//
//
// The `cp` dialect states context-parallel attention: sharded attention,
// the collectives that schemes need, and offset-aware masks.
//
//===----------------------------------------------------------------------===//

#ifndef CP_DIALECT_TD
#define CP_DIALECT_TD

include "mlir/IR/OpBase.td"

def CP_Dialect : Dialect {
  let name = "cp";
  let cppNamespace = "::mlir::cp";
  let summary = "Context parallelism for attention";
  let description = [{
    The `cp` dialect makes context parallelism (CP) for attention a compiler
    concern. A long sequence is split contiguously across the P processes of
    a CP group: process `r` holds global rows `[r*L, (r+1)*L)` of Q, K and V
    (layout BHSD: `[batch, heads, sequence, head_dim]`).

    `cp.attention` states attention on those local shards. The
    `cp-apply-scheme` pass rewrites it into collectives (`cp.all_gather`,
    `cp.all_to_all`, `cp.exchange`, `cp.shift`) and single-device
    `cp.local_attention` ops whose `q_offset` / `kv_offset` operands place
    the local rows and columns in the global sequence, so that causal and
    windowed masks are always evaluated on global positions.

    Process groups are named the way upstream `shard` collectives name them:
    a symbol referring to a `shard.grid` and a list of `grid_axes`.
  }];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect",
    "::mlir::shard::ShardDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::func::FuncDialect",
    "::mlir::memref::MemRefDialect"
  ];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
    void registerTypes();

    /// The schemes registered with this dialect (SchemeDefinition.h): the
    /// built-ins, then those of plugins, in order of registration.
    std::vector<std::unique_ptr<::mlir::cp::SchemeDefinition>> schemes;
  }];
}

class CP_Op<string mnemonic, list<Trait> traits = []>
    : Op<CP_Dialect, mnemonic, traits>;

#endif // CP_DIALECT_TD
