//===- AttentionVerification.h - rules the attention ops share --*- C++ -*-===//
//
// The operand rules of cp.attention and cp.local_attention, which their
// gradients apply to the same operands (AttentionOps.cpp,
// AttentionGradOps.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef CP_LIB_DIALECT_CP_IR_ATTENTIONVERIFICATION_H
#define CP_LIB_DIALECT_CP_IR_ATTENTIONVERIFICATION_H

#include "cp/Dialect/CP/IR/CPDialect.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::cp::detail {

/// The rules of cp.local_attention, shared by its tensor and buffer forms
/// and by cp.local_attention_grad: BHSD operands, element types, batch,
/// H % Hkv, D and Dv, an explicit mask covering [Lq, Lkv], and (when
/// `lseValue` is given) an lse of [B, H, Lq], and (when `sinks` is given)
/// sinks of [H]. `out` is the forward's output.
LogicalResult verifyLocalAttention(Operation *op, ShapedType q, ShapedType k,
                                   ShapedType v, ShapedType out,
                                   Value maskValue, Value lseValue,
                                   Value sinks = {});

/// Attention sinks for query `q`: one f32 logit per query head, [H].
LogicalResult verifySinks(Operation *op, ShapedType q, Value sinks);

/// The rules of cp.attention that need no symbol: BHSD shards of one local
/// length (`out` is the forward's output; with replicated queries only K
/// and V are shards, in the contiguous layout), an even L for zigzag, the
/// mod regions, the explicit mask's layout and the sinks' shape.
LogicalResult verifyShardedAttention(Operation *op, ShapedType q, ShapedType k,
                                     ShapedType v, ShapedType out,
                                     SequenceLayout layout,
                                     QueryPlacement queries, Region &maskMod,
                                     Region &scoreMod, ValueRange modOperands,
                                     Value explicitMask, Value sinks);

/// The rules of cp.attention that need the CP group: the group itself, the
/// global length S = P * L, the explicit mask's extents and the scheme's
/// constraints.
LogicalResult verifyShardedAttentionSymbols(
    Operation *op, FlatSymbolRefAttr grid, ArrayRef<int16_t> gridAxes,
    RankedTensorType q, RankedTensorType k, RankedTensorType v,
    QueryPlacement queries, Value explicitMask, SchemeAttr scheme,
    SymbolTableCollection &symbolTable);

} // namespace mlir::cp::detail

#endif // CP_LIB_DIALECT_CP_IR_ATTENTIONVERIFICATION_H
