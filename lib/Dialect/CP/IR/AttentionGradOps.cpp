//===- AttentionGradOps.cpp - the attention gradient ops ------------------===//
//
// Verifiers of cp.attention_grad and cp.local_attention_grad (tensor and
// buffer forms): the forward's operand rules, then the gradient's own
// operands and results.
//
//===----------------------------------------------------------------------===//

#include "AttentionVerification.h"
#include "OpVerification.h"
#include "cp/Dialect/CP/IR/CPOps.h"
#include "cp/Dialect/CP/IR/ModRegions.h"

using namespace mlir;
using namespace mlir::cp;
using mlir::cp::detail::knownDifferent;

/// `actual` has `expected`'s shape (dynamic sizes pass).
static bool sameShape(ShapedType actual, ShapedType expected) {
  if (actual.getRank() != expected.getRank())
    return false;
  for (int64_t d = 0; d < actual.getRank(); ++d)
    if (knownDifferent(actual.getDimSize(d), expected.getDimSize(d)))
      return false;
  return true;
}

/// The gradient's own operands and results: grad_output shaped like the
/// output, lse [B, H, L], each gradient shaped like its operand with the
/// query's element type or f32.
static LogicalResult verifyGradOperands(Operation *op, ShapedType q,
                                        ShapedType k, ShapedType v,
                                        ShapedType out, ShapedType gradOut,
                                        ShapedType dq, ShapedType dk,
                                        ShapedType dv) {
  Type elt = q.getElementType();
  if (!sameShape(gradOut, out))
    return op->emitOpError("expects grad_output to have the output's shape ")
           << out << ", got " << gradOut;
  if (gradOut.getElementType() != elt && !gradOut.getElementType().isF32())
    return op->emitOpError("expects grad_output element type (")
           << gradOut.getElementType() << ") to be the query element type ("
           << elt << ") or f32";
  for (auto [name, grad, operand] :
       {std::tuple<StringRef, ShapedType, ShapedType>{"grad_query", dq, q},
        {"grad_key", dk, k},
        {"grad_value", dv, v}}) {
    if (!sameShape(grad, operand))
      return op->emitOpError("expects ")
             << name << " to have the shape of its operand " << operand
             << ", got " << grad;
    if (grad.getElementType() != elt && !grad.getElementType().isF32())
      return op->emitOpError("expects ")
             << name << " element type (" << grad.getElementType()
             << ") to be the query element type (" << elt << ") or f32";
  }
  if (dk.getElementType() != dv.getElementType())
    return op->emitOpError("expects grad_key and grad_value to have one "
                           "element type (their partial sums travel "
                           "together), got ")
           << dk.getElementType() << " and " << dv.getElementType();
  return success();
}

/// Text of an optional attribute for a diagnostic ("none" when absent).
static std::string attrText(Attribute attr) {
  if (!attr)
    return "none";
  std::string text;
  llvm::raw_string_ostream os(text);
  attr.print(os, /*elideType=*/true);
  // cp's own attributes as the ops spell them: #cp.mask<causal> is causal.
  StringRef body = text;
  if (body.starts_with("#cp.") && body.ends_with(">") && body.contains('<'))
    return body.drop_until([](char c) { return c == '<'; })
        .drop_front()
        .drop_back()
        .str();
  return text;
}

/// When `lse` (and `output`) come from a cp.attention, the backward
/// recomputes that op's probabilities: it must state the same attention.
static LogicalResult verifyAgreesWithForward(AttentionGradOp grad) {
  auto forward = grad.getLse().getDefiningOp<AttentionOp>();
  if (!forward)
    return success();
  if (forward.getLse() != grad.getLse())
    return grad.emitOpError("expects lse to be the lse result of a "
                            "cp.attention, got its output");
  if (auto producer = grad.getOutput().getDefiningOp<AttentionOp>();
      producer && producer != forward)
    return grad.emitOpError("takes its output and its lse from two "
                            "different cp.attention ops; both must come "
                            "from the forward it differentiates");
  if (forward.getQueries() == QueryPlacement::replicated)
    return grad.emitOpError("differentiates a cp.attention with queries = "
                            "replicated (a decode against a sharded KV "
                            "cache), which has no backward; train with the "
                            "queries sharded like K and V");
  struct Field {
    StringRef name;
    std::string forward, backward;
  };
  SmallVector<Field> fields{
      {"mask", attrText(forward.getMaskAttr()), attrText(grad.getMaskAttr())},
      {"scale", attrText(forward.getScaleAttr()),
       attrText(grad.getScaleAttr())},
      {"grid", attrText(forward.getGridAttr()), attrText(grad.getGridAttr())},
      {"grid_axes", attrText(forward.getGridAxesAttr()),
       attrText(grad.getGridAxesAttr())},
      {"layout", stringifySequenceLayout(forward.getLayout()).str(),
       stringifySequenceLayout(grad.getLayout()).str()},
      {"mask_mod", forward.getMaskMod().empty() ? "none" : "a region",
       grad.getMaskMod().empty() ? "none" : "a region"},
      {"score_mod", forward.getScoreMod().empty() ? "none" : "a region",
       grad.getScoreMod().empty() ? "none" : "a region"}};
  for (const Field &f : fields)
    if (f.forward != f.backward)
      return grad.emitOpError("differentiates a cp.attention with ")
             << f.name << " = " << f.forward << ", but has " << f.name
             << " = " << f.backward
             << "; the backward recomputes the forward's probabilities from "
                "its lse, so it must state the forward's mask, scale, grid, "
                "layout and regions";
  // Without sinks the backward leaves them frozen (dq, dk and dv come from
  // the lse, which counts them); with sinks they must be the forward's.
  if (grad.getSinks() && forward.getSinks() != grad.getSinks())
    return grad.emitOpError("has sinks, but differentiates a cp.attention ")
           << (forward.getSinks() ? "with other sinks" : "without sinks")
           << "; pass the forward's own";
  bool sameModOperands =
      llvm::equal(forward.getModOperands(), grad.getModOperands());
  if (forward.getExplicitMask() != grad.getExplicitMask() || !sameModOperands)
    return grad.emitOpError("differentiates a cp.attention with other ")
           << (forward.getExplicitMask() != grad.getExplicitMask()
                   ? "explicit_mask"
                   : "mod_operands")
           << " operands; pass the forward's own";
  return success();
}

LogicalResult AttentionGradOp::verify() {
  if (failed(cp::detail::verifyShardedAttention(
          *this, getQuery().getType(), getKey().getType(), getValue().getType(),
          getOutput().getType(), getLayout(), QueryPlacement::sharded,
          getMaskMod(), getScoreMod(), getModOperands(), getExplicitMask(),
          getSinks())))
    return failure();
  if (static_cast<bool>(getSinks()) != static_cast<bool>(getGradSinks()))
    return emitOpError(getSinks() ? "has sinks but no grad_sinks result; "
                                    "add a result of the sinks' type"
                                  : "has a grad_sinks result but no sinks; "
                                    "pass the forward's sinks");
  if (getSinks() && getSinks().getType() != getGradSinks().getType())
    return emitOpError("expects grad_sinks to have the sinks' type ")
           << getSinks().getType() << ", got " << getGradSinks().getType();
  if (!getScoreMod().empty() &&
      failed(verifyDifferentiableScoreMod(*this, getScoreMod().front())))
    return failure();
  RankedTensorType q = getQuery().getType(), lse = getLse().getType();
  ArrayRef<int64_t> expected = q.getShape().drop_back();
  bool lseMatches = lse.getRank() == 3 &&
                    llvm::all_of(llvm::seq<int64_t>(0, 3), [&](int64_t i) {
                      return !knownDifferent(lse.getDimSize(i), expected[i]);
                    });
  if (!lseMatches)
    return emitOpError("expects lse to have shape [B, H, L] of the query, "
                       "got ")
           << lse << " for query " << q;
  if (failed(verifyGradOperands(*this, q, getKey().getType(),
                                getValue().getType(), getOutput().getType(),
                                getGradOutput().getType(),
                                getGradQuery().getType(), getGradKey().getType(),
                                getGradValue().getType())))
    return failure();
  return verifyAgreesWithForward(*this);
}

LogicalResult
AttentionGradOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return cp::detail::verifyShardedAttentionSymbols(
      *this, getGridAttr(), getGridAxes(), getQuery().getType(),
      getKey().getType(), getValue().getType(), QueryPlacement::sharded,
      getExplicitMask(), getSchemeAttr(), symbolTable);
}

/// The rules of cp.local_attention_grad, shared by its tensor and buffer
/// forms: the forward's rules on (q, k, v, output, mask, lse), then the
/// gradient's own.
static LogicalResult
verifyLocalAttentionGrad(Operation *op, ShapedType q, ShapedType k,
                         ShapedType v, ShapedType out, Value lse,
                         ShapedType gradOut, Value mask, ShapedType dq,
                         ShapedType dk, ShapedType dv) {
  if (failed(cp::detail::verifyLocalAttention(op, q, k, v, out, mask, lse)))
    return failure();
  return verifyGradOperands(op, q, k, v, out, gradOut, dq, dk, dv);
}

LogicalResult LocalAttentionGradOp::verify() {
  if (failed(verifyModRegions(*this, getMaskMod(), getScoreMod(),
                              getModOperands())))
    return failure();
  if (!getScoreMod().empty() &&
      failed(verifyDifferentiableScoreMod(*this, getScoreMod().front())))
    return failure();
  return verifyLocalAttentionGrad(
      *this, getQuery().getType(), getKey().getType(), getValue().getType(),
      getOutput().getType(), getLse(), getGradOutput().getType(),
      getExplicitMask(), getGradQuery().getType(), getGradKey().getType(),
      getGradValue().getType());
}

LogicalResult BufferLocalAttentionGradOp::verify() {
  if (!getMaskModAttr() && !getScoreModAttr() && !getModOperands().empty())
    return emitOpError("has mod_operands but no mask_mod or score_mod "
                       "function to read them");
  return verifyLocalAttentionGrad(
      *this, getQuery().getType(), getKey().getType(), getValue().getType(),
      getOutput().getType(), getLse(), getGradOutput().getType(),
      getExplicitMask(), getGradQuery().getType(), getGradKey().getType(),
      getGradValue().getType());
}

func::FuncOp BufferLocalAttentionGradOp::getMaskModFunction() {
  return lookupModFunction(*this, getMaskModAttr());
}

func::FuncOp BufferLocalAttentionGradOp::getScoreModFunction() {
  return lookupModFunction(*this, getScoreModAttr());
}

LogicalResult BufferLocalAttentionGradOp::verifySymbolUses(
    SymbolTableCollection &symbolTable) {
  return verifyModFunctionSymbols(*this, getMaskModAttr(), getScoreModAttr(),
                                  getModOperands(), symbolTable);
}
