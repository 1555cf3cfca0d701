//===- ModRegions.cpp - mask_mod and score_mod regions --------------------===//

#include "cp/Dialect/CP/IR/ModRegions.h"
#include "cp/Dialect/CP/IR/CPOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::cp;

//===----------------------------------------------------------------------===//
// Verification
//===----------------------------------------------------------------------===//

static std::string typeList(TypeRange types) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::interleaveComma(types, os);
  return text;
}

Value mlir::cp::modBodyResult(Block &body) {
  Operation *terminator = body.getTerminator();
  if (terminator->getNumOperands() != 1)
    return Value();
  return terminator->getOperand(0);
}

SmallVector<Type> mlir::cp::modArgumentTypes(MLIRContext *ctx, bool isMask,
                                             TypeRange modOperands) {
  SmallVector<Type> types;
  if (!isMask)
    types.push_back(Float32Type::get(ctx));
  types.append(kMaskModPositions, IndexType::get(ctx));
  llvm::append_range(types, modOperands);
  return types;
}

/// The rules for a mod body, in a region (cp.yield) or an outlined function
/// (func.return): its arguments, its result and (`checkOps`) its ops.
static LogicalResult verifyModBody(Operation *op, Block &body, bool isMask,
                                   TypeRange modOperands,
                                   StringRef terminatorName, bool checkOps) {
  MLIRContext *ctx = op->getContext();
  StringRef name = isMask ? "mask_mod" : "score_mod";
  SmallVector<Type> expectedArgs = modArgumentTypes(ctx, isMask, modOperands);
  if (body.getArgumentTypes() != expectedArgs)
    return op->emitOpError("expects ")
           << name << " to take ("
           << (isMask ? "b, h, q_idx, kv_idx: index"
                      : "score: f32, b, h, q_idx, kv_idx: index")
           << ", then one argument per mod operand), that is ("
           << typeList(expectedArgs) << "), got ("
           << typeList(body.getArgumentTypes()) << ")";
  Type yielded =
      isMask ? Type(IntegerType::get(ctx, 1)) : Float32Type::get(ctx);
  Value result = modBodyResult(body);
  if (!result || result.getType() != yielded)
    return op->emitOpError("expects ")
           << name << " to end in " << terminatorName << " of " << yielded;
  if (!checkOps)
    return success();
  unsigned firstModArg = isMask ? kMaskModPositions : kScoreModPositions;
  for (Operation &nested : body.without_terminator()) {
    StringRef dialect =
        nested.getDialect() ? nested.getDialect()->getNamespace() : StringRef();
    bool readsModOperand = false;
    Value source;
    if (auto extract = dyn_cast<tensor::ExtractOp>(nested))
      source = extract.getTensor();
    else if (auto load = dyn_cast<memref::LoadOp>(nested))
      source = load.getMemref();
    if (source) {
      auto arg = dyn_cast<BlockArgument>(source);
      readsModOperand =
          arg && arg.getOwner() == &body && arg.getArgNumber() >= firstModArg;
    }
    bool allowed = (dialect == "arith" || dialect == "math") &&
                   nested.getNumRegions() == 0;
    if (!allowed && !readsModOperand)
      return op->emitOpError("expects ")
             << name << " to hold arith and math ops and reads of its mod "
             << "operands (tensor.extract, memref.load), found '"
             << nested.getName() << "'";
  }
  return success();
}

static LogicalResult verifyModRegion(Operation *op, Region &region, bool isMask,
                                     ValueRange modOperands) {
  if (region.empty())
    return success();
  StringRef name = isMask ? "mask_mod" : "score_mod";
  if (!region.hasOneBlock())
    return op->emitOpError("expects ") << name << " to have one block";
  if (!isa<YieldOp>(region.front().getTerminator()))
    return op->emitOpError("expects ") << name << " to end in cp.yield";
  return verifyModBody(op, region.front(), isMask, modOperands.getTypes(),
                       "cp.yield", /*checkOps=*/true);
}

LogicalResult mlir::cp::verifyModFunction(Operation *op, func::FuncOp function,
                                          bool isMask, ValueRange modOperands,
                                          bool checkBody) {
  StringRef name = isMask ? "mask_mod" : "score_mod";
  if (!function || function.isExternal())
    return op->emitOpError("expects its ")
           << name << " to name a function with a body";
  if (!function.getBody().hasOneBlock() ||
      !isa<func::ReturnOp>(function.getBody().front().getTerminator()))
    return op->emitOpError("expects its ")
           << name << " function to be one block ending in func.return";
  return verifyModBody(op, function.getBody().front(), isMask,
                       modOperands.getTypes(), "func.return", checkBody);
}

LogicalResult mlir::cp::verifyModRegions(Operation *op, Region &maskMod,
                                         Region &scoreMod,
                                         ValueRange modOperands) {
  if (maskMod.empty() && scoreMod.empty() && !modOperands.empty())
    return op->emitOpError("has mod_operands but no mask_mod or score_mod "
                           "region to read them");
  if (failed(verifyModRegion(op, maskMod, /*isMask=*/true, modOperands)))
    return failure();
  return verifyModRegion(op, scoreMod, /*isMask=*/false, modOperands);
}

func::FuncOp mlir::cp::lookupModFunction(Operation *op,
                                         FlatSymbolRefAttr name) {
  if (!name)
    return {};
  return SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(op, name);
}

LogicalResult mlir::cp::verifyModFunctionSymbols(
    Operation *op, FlatSymbolRefAttr maskMod, FlatSymbolRefAttr scoreMod,
    ValueRange modOperands, SymbolTableCollection &symbolTable) {
  for (auto [name, isMask] :
       {std::pair(maskMod, true), std::pair(scoreMod, false)}) {
    if (!name)
      continue;
    auto function = symbolTable.lookupNearestSymbolFrom<func::FuncOp>(op, name);
    if (!function)
      return op->emitOpError("expects ")
             << (isMask ? "mask_mod" : "score_mod") << " " << name
             << " to name a func.func";
    if (failed(verifyModFunction(op, function, isMask, modOperands,
                                 /*checkBody=*/false)))
      return failure();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Differentiability of a score_mod
//===----------------------------------------------------------------------===//

bool mlir::cp::isDifferentiableScoreOp(Operation *op) {
  return isa<arith::AddFOp, arith::SubFOp, arith::MulFOp, arith::DivFOp,
             arith::NegFOp, arith::SelectOp, arith::MaximumFOp,
             arith::MinimumFOp, arith::CmpFOp, math::ExpOp, math::TanhOp>(op);
}

LogicalResult mlir::cp::verifyDifferentiableScoreMod(Operation *op,
                                                     Block &body) {
  if (body.getNumArguments() == 0)
    return success();
  llvm::SmallPtrSet<Value, 16> dependent;
  dependent.insert(body.getArgument(0));
  for (Operation &nested : body.without_terminator()) {
    if (llvm::none_of(nested.getOperands(),
                      [&](Value v) { return dependent.contains(v); }))
      continue;
    if (!isDifferentiableScoreOp(&nested)) {
      InFlightDiagnostic diag =
          op->emitOpError("score_mod cannot be differentiated: '")
          << nested.getName()
          << "' depends on the score and has no derivative rule; the score "
             "may only flow through "
          << kDifferentiableScoreOps;
      diag.attachNote(nested.getLoc()) << "the op without a derivative";
      return diag;
    }
    for (Value result : nested.getResults())
      dependent.insert(result);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Analysis
//===----------------------------------------------------------------------===//

namespace {

enum Position { kQuery = 2, kKey = 3 };

bool isArg(Value v, Block &body, unsigned n) {
  auto arg = dyn_cast<BlockArgument>(v);
  return arg && arg.getOwner() == &body && arg.getArgNumber() == n;
}

/// The mod operand number read at position `pos` by `v`
/// (tensor.extract / memref.load of a mod operand at one index).
std::optional<unsigned> readAt(Value v, Block &body, unsigned pos) {
  Value source;
  ValueRange indices;
  if (auto extract = v.getDefiningOp<tensor::ExtractOp>()) {
    source = extract.getTensor();
    indices = extract.getIndices();
  } else if (auto load = v.getDefiningOp<memref::LoadOp>()) {
    source = load.getMemref();
    indices = load.getIndices();
  } else {
    return std::nullopt;
  }
  auto arg = dyn_cast<BlockArgument>(source);
  if (!arg || arg.getOwner() != &body ||
      arg.getArgNumber() < kMaskModPositions || indices.size() != 1 ||
      !isArg(indices[0], body, pos))
    return std::nullopt;
  return arg.getArgNumber() - kMaskModPositions;
}

std::optional<int64_t> constantIndex(Value v) {
  APInt value;
  if (matchPattern(v, m_ConstantInt(&value)))
    return value.getSExtValue();
  return std::nullopt;
}

bool isLessEq(arith::CmpIPredicate p) {
  return p == arith::CmpIPredicate::sle || p == arith::CmpIPredicate::ule;
}
bool isGreaterEq(arith::CmpIPredicate p) {
  return p == arith::CmpIPredicate::sge || p == arith::CmpIPredicate::uge;
}
bool isLess(arith::CmpIPredicate p) {
  return p == arith::CmpIPredicate::slt || p == arith::CmpIPredicate::ult;
}

/// `q_idx - kv_idx`.
bool isQueryMinusKey(Value v, Block &body) {
  auto sub = v.getDefiningOp<arith::SubIOp>();
  return sub && isArg(sub.getLhs(), body, kQuery) &&
         isArg(sub.getRhs(), body, kKey);
}

struct Conjunct {
  enum Kind { causal, window, document, other } kind = other;
  int64_t width = 0;
  unsigned operand = 0;
};

Conjunct classify(Value c, Block &body) {
  auto cmp = c.getDefiningOp<arith::CmpIOp>();
  if (!cmp)
    return {};
  Value lhs = cmp.getLhs(), rhs = cmp.getRhs();
  arith::CmpIPredicate p = cmp.getPredicate();
  // kv_idx <= q_idx, q_idx >= kv_idx
  if ((isLessEq(p) && isArg(lhs, body, kKey) && isArg(rhs, body, kQuery)) ||
      (isGreaterEq(p) && isArg(lhs, body, kQuery) && isArg(rhs, body, kKey)))
    return {Conjunct::causal};
  // q_idx - kv_idx < W, q_idx - kv_idx <= W - 1
  if (isQueryMinusKey(lhs, body))
    if (std::optional<int64_t> w = constantIndex(rhs)) {
      if (isLess(p) && *w > 0)
        return {Conjunct::window, *w};
      if (isLessEq(p) && *w >= 0)
        return {Conjunct::window, *w + 1};
    }
  // seg[q_idx] == seg[kv_idx]
  if (p == arith::CmpIPredicate::eq) {
    std::optional<unsigned> a = readAt(lhs, body, kQuery),
                            b = readAt(rhs, body, kKey);
    if (!a || !b) {
      a = readAt(rhs, body, kQuery);
      b = readAt(lhs, body, kKey);
    }
    if (a && b && *a == *b)
      return {Conjunct::document, 0, *a};
  }
  return {};
}

void collectConjuncts(Value v, SmallVectorImpl<Value> &out) {
  if (auto andOp = v.getDefiningOp<arith::AndIOp>()) {
    collectConjuncts(andOp.getLhs(), out);
    collectConjuncts(andOp.getRhs(), out);
    return;
  }
  out.push_back(v);
}

} // namespace

static MaskModAnalysis analyzeBody(Block &body) {
  MaskModAnalysis result;
  SmallVector<Value> conjuncts;
  collectConjuncts(modBodyResult(body), conjuncts);
  bool causal = false, other = false, notDocument = false;
  int64_t window = 0;
  for (Value c : conjuncts) {
    Conjunct conjunct = classify(c, body);
    switch (conjunct.kind) {
    case Conjunct::causal:
      causal = true;
      break;
    case Conjunct::window:
      window = window ? std::min(window, conjunct.width) : conjunct.width;
      break;
    case Conjunct::document:
      if (result.documentOperand && *result.documentOperand != conjunct.operand)
        notDocument = true;
      result.documentOperand = conjunct.operand;
      other = true;
      break;
    case Conjunct::other:
      other = true;
      notDocument = true;
      break;
    }
  }
  MLIRContext *ctx = body.getParentOp()->getContext();
  // A window bound alone lets future keys in: it is structured only with
  // the causal bound.
  if (causal)
    result.structured =
        window ? MaskAttr::get(ctx, MaskKind::sliding_window, window)
               : MaskAttr::get(ctx, MaskKind::causal);
  result.onlyStructured = causal && !other;
  if (window && !causal)
    result.onlyStructured = false;
  result.onlyDocumentAndStructured =
      result.documentOperand && !notDocument && !(window && !causal);
  return result;
}

MaskModAnalysis mlir::cp::analyzeMaskMod(Region &maskMod) {
  if (maskMod.empty())
    return {};
  return analyzeBody(maskMod.front());
}

MaskModAnalysis mlir::cp::analyzeMaskMod(func::FuncOp maskMod) {
  if (!maskMod || maskMod.isExternal())
    return {};
  return analyzeBody(maskMod.getBody().front());
}

MaskAttr mlir::cp::intersectMasks(MLIRContext *ctx, MaskAttr a, MaskAttr b) {
  if (!a || a.isNone())
    return b ? b : MaskAttr::get(ctx, MaskKind::none);
  if (!b || b.isNone())
    return a;
  auto windowOf = [](MaskAttr m) {
    return m.getKind() == MaskKind::sliding_window ? m.getWindow() : 0;
  };
  int64_t wa = windowOf(a), wb = windowOf(b);
  if (!wa && !wb)
    return MaskAttr::get(ctx, MaskKind::causal);
  int64_t w = !wa ? wb : !wb ? wa : std::min(wa, wb);
  return MaskAttr::get(ctx, MaskKind::sliding_window, w);
}

MaskAttr mlir::cp::foldMaskModInto(MaskAttr mask, Region &maskMod) {
  MaskModAnalysis analysis = analyzeMaskMod(maskMod);
  if (!analysis.onlyStructured)
    return {};
  return intersectMasks(maskMod.getContext(), mask, analysis.structured);
}
