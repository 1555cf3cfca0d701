//===- AttentionLayer.cpp - build a CP attention layer from shapes --------===//
//
// include/cp-c/AttentionLayer.h: one shard.grid and one function around a
// cp.attention, built with OpBuilder from a shape spec and verified, so
// that bindings never assemble MLIR text.
//
//===----------------------------------------------------------------------===//

#include "cp-c/AttentionLayer.h"
#include "cp/Dialect/CP/IR/CPOps.h"
#include "cp/InitAllCP.h"
#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Support.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::cp;

CpAttentionLayerSpec cpAttentionLayerSpecGetDefault(MlirContext ctx) {
  CpAttentionLayerSpec spec{};
  spec.batch = 1;
  spec.elementType = wrap(Float32Type::get(unwrap(ctx)));
  spec.mask = MlirAttribute{nullptr};
  spec.scheme = MlirAttribute{nullptr};
  spec.explicitMask = CpExplicitMaskNone;
  spec.layout = CpSequenceContiguous;
  spec.funcName = mlirStringRefCreate(nullptr, 0);
  spec.gridName = mlirStringRefCreate(nullptr, 0);
  spec.training = 0;
  return spec;
}

/// The first thing wrong with `spec` that would keep the layer's types from
/// being formed, as a sentence with the numbers and the fix.
static std::optional<std::string>
findSpecError(const CpAttentionLayerSpec &spec) {
  std::string text;
  llvm::raw_string_ostream os(text);
  struct Size {
    const char *name;
    int64_t value;
  } sizes[] = {{"B", spec.batch},    {"H", spec.heads},   {"Hkv", spec.kvHeads},
               {"S", spec.seqLen},   {"D", spec.headDim}, {"Dv", spec.valueDim},
               {"P", spec.groupSize}};
  for (const Size &s : sizes)
    if (s.value <= 0) {
      os << "attention layer: " << s.name << " must be positive, got "
         << s.value;
      return text;
    }
  if (spec.seqLen % spec.groupSize != 0) {
    os << "attention layer: the sequence length S = " << spec.seqLen
       << " is not divisible by the CP group size P = " << spec.groupSize
       << "; pad S to a multiple of " << spec.groupSize;
    return text;
  }
  if (spec.heads % spec.kvHeads != 0) {
    os << "attention layer: H = " << spec.heads
       << " query heads are not a multiple of Hkv = " << spec.kvHeads
       << " key/value heads";
    return text;
  }
  Type element = unwrap(spec.elementType);
  if (!element || !isa<Float32Type, Float16Type, BFloat16Type>(element)) {
    os << "attention layer: the element type must be f32, f16 or bf16, got ";
    if (element)
      os << element;
    else
      os << "none";
    return text;
  }
  if (spec.layout != CpSequenceContiguous && spec.layout != CpSequenceZigzag) {
    os << "attention layer: unknown sequence layout "
       << static_cast<int>(spec.layout);
    return text;
  }
  if (spec.explicitMask < CpExplicitMaskNone ||
      spec.explicitMask > CpExplicitMaskBias) {
    os << "attention layer: unknown explicit mask kind "
       << static_cast<int>(spec.explicitMask);
    return text;
  }
  return std::nullopt;
}

MlirModule cpAttentionLayerBuild(MlirContext ctx,
                                 const CpAttentionLayerSpec *spec,
                                 MlirStringCallback onDiagnostic,
                                 void *userData) {
  MLIRContext *context = unwrap(ctx);
  context->loadDialect<CPDialect, func::FuncDialect, shard::ShardDialect>();
  auto report = [&](StringRef text) {
    if (onDiagnostic)
      onDiagnostic(mlirStringRefCreate(text.data(), text.size()), userData);
  };
  if (std::optional<std::string> error = findSpecError(*spec)) {
    report(*error);
    return MlirModule{nullptr};
  }
  Attribute maskAttr = unwrap(spec->mask);
  Attribute schemeAttr = unwrap(spec->scheme);
  if ((maskAttr && !isa<MaskAttr>(maskAttr)) ||
      (schemeAttr && !isa<SchemeAttr>(schemeAttr))) {
    report("attention layer: `mask` must be a #cp.mask and `scheme` a "
           "#cp.scheme attribute");
    return MlirModule{nullptr};
  }

  Location loc = NameLoc::get(StringAttr::get(context, "attention_layer"));
  OpBuilder b(context);
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  StringRef gridName = unwrap(spec->gridName);
  StringRef funcName = unwrap(spec->funcName);
  gridName = gridName.empty() ? "cp" : gridName;
  funcName = funcName.empty() ? "attention" : funcName;
  shard::GridOp::create(b, loc, gridName, ArrayRef<int64_t>{spec->groupSize});

  Type t = unwrap(spec->elementType);
  int64_t l = spec->seqLen / spec->groupSize, s = spec->seqLen;
  auto tensor = [&](ArrayRef<int64_t> shape, Type element) {
    return RankedTensorType::get(shape, element);
  };
  SmallVector<Type> args = {
      tensor({spec->batch, spec->heads, l, spec->headDim}, t),
      tensor({spec->batch, spec->kvHeads, l, spec->headDim}, t),
      tensor({spec->batch, spec->kvHeads, l, spec->valueDim}, t)};
  if (spec->explicitMask != CpExplicitMaskNone)
    args.push_back(tensor(
        {s, s}, spec->explicitMask == CpExplicitMaskBool ? b.getI1Type() : t));
  Type result = tensor({spec->batch, spec->heads, l, spec->valueDim}, t);
  SmallVector<Type> results = {result};
  Type lse;
  if (spec->training) {
    // dO in; the f32 gradients of q, k, v out.
    args.push_back(result);
    lse = tensor({spec->batch, spec->heads, l}, b.getF32Type());
    for (Type arg : ArrayRef<Type>(args).take_front(3))
      results.push_back(
          cast<RankedTensorType>(arg).clone(b.getF32Type()));
  }
  auto func =
      func::FuncOp::create(b, loc, funcName, b.getFunctionType(args, results));
  Block *body = func.addEntryBlock();
  b.setInsertionPointToStart(body);
  Value mask =
      spec->explicitMask != CpExplicitMaskNone ? body->getArgument(3) : Value();
  auto maskKind = maskAttr ? cast<MaskAttr>(maskAttr)
                           : MaskAttr::get(context, MaskKind::none);
  auto layout = static_cast<SequenceLayout>(spec->layout);
  auto scheme = schemeAttr ? cast<SchemeAttr>(schemeAttr) : SchemeAttr();
  Value q = body->getArgument(0), k = body->getArgument(1),
        v = body->getArgument(2);
  auto attention = AttentionOp::create(
      b, loc, result, lse, q, k, v, mask, /*sinks=*/Value(),
      /*mod_operands=*/ValueRange(),
      gridName, ArrayRef<int16_t>{0}, maskKind, layout,
      QueryPlacement::sharded, scheme, /*scale=*/FloatAttr());
  SmallVector<Value> returned = {attention.getResult()};
  if (spec->training) {
    auto grad = AttentionGradOp::create(
        b, loc, ArrayRef<Type>(results).drop_front(), q, k, v,
        attention.getResult(), attention.getLse(), body->getArguments().back(),
        mask, /*sinks=*/Value(), /*mod_operands=*/ValueRange(), gridName,
        ArrayRef<int16_t>{0},
        maskKind, layout, scheme, /*scale=*/FloatAttr());
    llvm::append_range(returned, grad.getResults());
  }
  func::ReturnOp::create(b, loc, returned);

  // The verifier states scheme and mask violations with their numbers.
  std::string diagnostics;
  {
    ScopedDiagnosticHandler handler(context, [&](Diagnostic &diag) {
      if (!diagnostics.empty())
        diagnostics += "\n";
      diagnostics += "attention layer: " + diag.str();
      return success();
    });
    if (failed(verify(*module))) {
      report(diagnostics);
      return MlirModule{nullptr};
    }
  }
  return MlirModule{module.release().getOperation()};
}
