//===- ModRegions.h - mask_mod and score_mod regions ------------*- C++ -*-===//
//
// The one place that knows the `mask_mod` / `score_mod` regions of the
// attention ops: their signatures (checked by the verifiers) and what
// cp-mlir recognizes in a mask_mod (a causal or sliding-window predicate,
// folded into `#cp.mask` by canonicalization and used by the lowerings to
// skip tiles; a document predicate `seg[q] == seg[k]`, whose tiles the CPU
// lowering skips). Outlining a region is bufferization's
// (Transforms/OutlineModRegion.h); emitting one inline is the lowerings'
// (Conversion/AttentionCommon/ModFunctions.h).
//
//===----------------------------------------------------------------------===//

#ifndef CP_DIALECT_CP_IR_MODREGIONS_H
#define CP_DIALECT_CP_IR_MODREGIONS_H

#include "cp/Dialect/CP/IR/CPDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Region.h"
#include "mlir/IR/SymbolTable.h"

#include <optional>

namespace mlir {
namespace cp {

/// Block arguments before the mod operands: (b, h, q_idx, kv_idx) for
/// mask_mod, (score, b, h, q_idx, kv_idx) for score_mod.
constexpr unsigned kMaskModPositions = 4;
constexpr unsigned kScoreModPositions = 5;

/// The arguments of a mask_mod (`isMask`) or score_mod taking
/// `modOperands`: (score: f32,) b, h, q_idx, kv_idx: index, then one per
/// mod operand.
SmallVector<Type> modArgumentTypes(MLIRContext *ctx, bool isMask,
                                   TypeRange modOperands);

/// Checks both regions against `modOperands`: entry block arguments, the
/// yielded type, and that their bodies hold only arith and math ops and
/// reads of the mod operands (tensor.extract). Emits one diagnostic on `op`
/// and fails otherwise.
LogicalResult verifyModRegions(Operation *op, Region &maskMod, Region &scoreMod,
                               ValueRange modOperands);

/// The same rules for the outlined form of cp.buffer.local_attention: a
/// private function (`isMask`: mask_mod, else score_mod) whose body reads
/// the mod operands' buffers with memref.load and returns i1 or f32.
/// `checkBody` false checks the signature only: between bufferization and
/// the lowerings, buffer passes may leave transient ops in any function
/// (the deallocation pipeline's no-op deallocs); the lowerings check the
/// body before they inline it.
LogicalResult verifyModFunction(Operation *op, func::FuncOp function,
                                bool isMask, ValueRange modOperands,
                                bool checkBody = true);

/// The function `name` names from `op` (null for a null name or none).
func::FuncOp lookupModFunction(Operation *op, FlatSymbolRefAttr name);

/// The verifySymbolUses of the buffer attention ops: each non-null name
/// resolves to a func.func with the signature verifyModFunction checks
/// (the body is the lowerings' to check).
LogicalResult verifyModFunctionSymbols(Operation *op, FlatSymbolRefAttr maskMod,
                                       FlatSymbolRefAttr scoreMod,
                                       ValueRange modOperands,
                                       SymbolTableCollection &symbolTable);

/// The ops through which a score_mod's result may depend on the score for
/// the gradient to differentiate it (forward mode, docs/Training.md §5).
/// Ops that do not depend on the score (positions, mod operand reads,
/// constants) may be anything verifyModRegions allows.
constexpr const char *kDifferentiableScoreOps =
    "arith.addf, arith.subf, arith.mulf, arith.divf, arith.negf, "
    "arith.select, arith.maximumf, arith.minimumf, arith.cmpf, math.exp, "
    "math.tanh";

/// Whether `op`, which reads a value depending on the score, has a
/// derivative rule (kDifferentiableScoreOps).
bool isDifferentiableScoreOp(Operation *op);

/// Checks that the score_mod `body` (a region's block or an outlined
/// function's) depends on its score argument only through
/// kDifferentiableScoreOps. Emits one diagnostic on `op` naming the first
/// op that cannot be differentiated, and fails otherwise.
LogicalResult verifyDifferentiableScoreMod(Operation *op, Block &body);

/// What a mask_mod's conjuncts (operands of nested arith.andi) are, for a
/// region (cp.yield) or its outlined function (func.return).
struct MaskModAnalysis {
  /// The AND of the causal / sliding-window conjuncts (null when none).
  MaskAttr structured;
  /// Every conjunct is causal or sliding-window: `structured` says it all.
  bool onlyStructured = false;
  /// A conjunct `seg[q_idx] == seg[kv_idx]` on mod operand #n.
  std::optional<unsigned> documentOperand;
  /// Every conjunct is causal, sliding-window (with causal) or that
  /// document conjunct: where a query and a key share one segment id,
  /// `structured` says the rest.
  bool onlyDocumentAndStructured = false;
};
MaskModAnalysis analyzeMaskMod(Region &maskMod);
MaskModAnalysis analyzeMaskMod(func::FuncOp maskMod);

/// The mask allowing what both `a` and `b` allow, when it is structured
/// (null masks are `none`).
MaskAttr intersectMasks(MLIRContext *ctx, MaskAttr a, MaskAttr b);

/// When `maskMod` holds only causal / sliding-window predicates: `mask`
/// narrowed by them, the op's whole mask once the region is dropped.
/// Null when the region says more (or is empty).
MaskAttr foldMaskModInto(MaskAttr mask, Region &maskMod);

/// The value a mod body yields (cp.yield) or returns (func.return); null
/// when its terminator does not have exactly one operand.
Value modBodyResult(Block &body);

} // namespace cp
} // namespace mlir

#endif // CP_DIALECT_CP_IR_MODREGIONS_H
