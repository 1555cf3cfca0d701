//===- HeadChunkedAllGather.cpp - an out-of-tree CP scheme plugin ---------===//
//
// `head_chunked_allgather(c)`: allgather, with K/V gathered in c groups of
// heads instead of all at once. Each group's K/V are gathered, attended by
// the query heads that read them (H/c query heads on Hkv/c K/V heads, so GQA
// groups stay whole) and dropped, so a rank holds the whole sequence of only
// Hkv/c K/V heads at a time: peak K/V memory falls by a factor c for the
// same bytes sent, at the price of 2c gathers instead of 2.
//
// It uses only cp's public headers (SchemeDefinition.h, SchemeBuilder.h,
// SchemeCost.h) and registers itself as a dialect plugin:
//
//   cp-opt   --load-dialect-plugin=CPExampleSchemes.so ...
//   mlir-opt --load-dialect-plugin=CPPlugin.so --load-pass-plugin=CPPlugin.so
//            --load-dialect-plugin=CPExampleSchemes.so ...
//
// docs/SchemePlugins.md walks through it.
//
//===----------------------------------------------------------------------===//

#include "cp/Dialect/CP/Analysis/SchemeCost.h"
#include "cp/Dialect/CP/Analysis/SchemeTraffic.h"
#include "cp/Dialect/CP/IR/SchemeDefinition.h"
#include "cp/Dialect/CP/Schemes/SchemeBuilder.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/Compiler.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::cp;

namespace {

constexpr llvm::StringLiteral kPluginName = "cp-example-schemes";

class HeadChunkedAllGather : public SchemeDefinition {
public:
  HeadChunkedAllGather()
      : SchemeDefinition("head_chunked_allgather", kPluginName) {}

  std::optional<std::string> checkParameter(int64_t chunks) const override {
    if (chunks >= 1)
      return std::nullopt;
    return llvm::formatv("head_chunked_allgather needs its number of head "
                         "groups c >= 1, e.g. head_chunked_allgather(2); "
                         "got {0}",
                         chunks)
        .str();
  }

  std::optional<std::string>
  findViolation(SchemeAttr scheme, const AttentionShape &shape) const override {
    int64_t c = scheme.getParameter();
    // H is a multiple of Hkv (the op verifier's rule), so c | Hkv gives
    // c | H and each group keeps whole GQA groups.
    if (ShapedType::isDynamic(shape.kvHeads) || shape.kvHeads % c == 0)
      return std::nullopt;
    return llvm::formatv("head_chunked_allgather({0}) gathers K/V in {0} "
                         "groups of heads and needs Hkv ({1}) divisible by "
                         "{0}; choose c dividing Hkv",
                         c, shape.kvHeads)
        .str();
  }

  /// allgather's, group by group: every rank receives every other rank's
  /// K/V once (and, in the backward, sends dK/dV back once).
  int64_t bytesSentPerRank(SchemeAttr scheme, const AttentionShape &s,
                           int64_t elementBytes, MaskAttr mask,
                           bool withLse) const override {
    return cp::bytesSentPerRank(allGather(scheme), s, elementBytes, mask,
                                withLse);
  }
  int64_t backwardBytesSentPerRank(SchemeAttr scheme, const AttentionShape &s,
                                   const GradElementBytes &bytes,
                                   MaskAttr mask) const override {
    return cp::backwardBytesSentPerRank(allGather(scheme), s, bytes,
                                        SequenceLayout::contiguous,
                                        /*kvReused=*/false, mask);
  }

  LogicalResult rewrite(SchemeBuilder &b) const override;
  bool hasBackward() const override { return true; }
  LogicalResult rewriteGrad(GradSchemeBuilder &b) const override;

  /// allgather's estimate with the K/V buffer divided by c and 2(c - 1)
  /// more collective latencies, for each c in {2, 4} dividing Hkv.
  void estimate(MLIRContext *context, const AttentionProblem &problem,
                const MachineModel &machine,
                SmallVectorImpl<SchemeEstimate> &out) const override {
    const AttentionShape &s = problem.shape;
    for (int64_t c : {2, 4}) {
      if (s.kvHeads % c != 0)
        continue;
      SchemeEstimate e = estimateBuiltinScheme(
          SchemeAttr::get(context, SchemeKind::allgather), problem, machine);
      e.scheme = SchemeAttr::getPlugin(context, getName(), c);
      // An estimate rejected by a constraint has no figures (memory 0); one
      // rejected for memory is judged again with the smaller buffer.
      if (e.memory > 0) {
        double gathered = static_cast<double>(s.batch) * s.globalLen() *
                          s.kvHeads * (s.headDim + s.valueDim) *
                          problem.elementBytes;
        e.memory -= static_cast<int64_t>(gathered * (c - 1) / c);
        double extra = 2.0 * (c - 1) * machine.latency;
        e.commSeconds += extra;
        e.seconds += extra;
        e.rejection.reset();
        rejectMemoryOverrun(e, machine);
      }
      out.push_back(e);
    }
  }

private:
  static SchemeAttr allGather(SchemeAttr scheme) {
    return SchemeAttr::get(scheme.getContext(), SchemeKind::allgather);
  }
};

/// `parts` (each [B, h, ...]) concatenated along the heads.
Value concatHeads(CollectiveBuilder &b, ArrayRef<Value> parts) {
  auto partType = cast<RankedTensorType>(parts.front().getType());
  SmallVector<int64_t> shape(partType.getShape());
  int64_t heads = shape[kHeadsDim];
  shape[kHeadsDim] = heads * parts.size();
  Value whole =
      tensor::EmptyOp::create(b.b, b.loc, shape, partType.getElementType());
  for (auto [i, part] : llvm::enumerate(parts)) {
    SmallVector<OpFoldResult> offsets(shape.size(), b.b.getIndexAttr(0));
    offsets[kHeadsDim] = b.b.getIndexAttr(i * heads);
    SmallVector<OpFoldResult> sizes, strides(shape.size(), b.b.getIndexAttr(1));
    for (int64_t size : partType.getShape())
      sizes.push_back(b.b.getIndexAttr(size));
    whole = tensor::InsertSliceOp::create(b.b, b.loc, part, whole, offsets,
                                          sizes, strides);
  }
  return whole;
}

LogicalResult HeadChunkedAllGather::rewrite(SchemeBuilder &b) const {
  int64_t c = b.scheme.getParameter();
  const AttentionShape &s = b.shape;
  const Group &cp = b.cpGroup();
  b.convertOperandsTo(cp, SequenceLayout::contiguous);
  // As allgather: this rank's queries from r * L (replicated ones from 0)
  // against all S keys.
  Value qOffset =
      s.replicatedQueries ? b.index(0) : b.mul(cp.index, s.localLen);
  Value mask =
      s.replicatedQueries ? b.mask : b.gatheredKeysMask(b.mask, qOffset);
  int64_t heads = s.heads / c, kvHeads = s.kvHeads / c;
  SmallVector<Value> outs, lses;
  for (int64_t g = 0; g < c; ++g) {
    Value k = b.allGather(
        cp, b.slice(b.key, kHeadsDim, b.index(g * kvHeads), kvHeads), kSeqDim);
    Value v = b.allGather(
        cp, b.slice(b.value, kHeadsDim, b.index(g * kvHeads), kvHeads),
        kSeqDim);
    Value q = b.slice(b.query, kHeadsDim, b.index(g * heads), heads);
    Value m = mask && b.maskHasHeads(mask)
                  ? b.slice(mask, kHeadsDim, b.index(g * heads), heads)
                  : mask;
    // Mod regions see global head indices.
    if (b.hasModRegions())
      b.headOffset = b.index(g * heads);
    SchemeBuilder::Result part =
        b.localAttention(q, k, v, qOffset, b.index(0), m);
    outs.push_back(part.out);
    if (part.lse)
      lses.push_back(part.lse);
  }
  SchemeBuilder::Result result{concatHeads(b, outs), Value()};
  if (!lses.empty())
    result.lse = concatHeads(b, lses);
  b.finish(cp, result, SequenceLayout::contiguous);
  return success();
}

LogicalResult HeadChunkedAllGather::rewriteGrad(GradSchemeBuilder &b) const {
  int64_t c = b.scheme.getParameter();
  const AttentionShape &s = b.shape;
  const Group &cp = b.cpGroup();
  GradSchemeBuilder::Operands in = b.operandsIn(cp, SequenceLayout::contiguous);
  Value qOffset = b.mul(cp.index, s.localLen);
  Value mask = b.gatheredKeysMask(in.mask, qOffset);
  bool mods = !b.op.getMaskMod().empty() || !b.op.getScoreMod().empty();
  int64_t heads = s.heads / c, kvHeads = s.kvHeads / c;
  SmallVector<Value> dqs, dks, dvs;
  for (int64_t g = 0; g < c; ++g) {
    Value h0 = b.index(g * heads), kv0 = b.index(g * kvHeads);
    GradSchemeBuilder::Operands part;
    part.q = b.slice(in.q, kHeadsDim, h0, heads);
    part.o = b.slice(in.o, kHeadsDim, h0, heads);
    part.dO = b.slice(in.dO, kHeadsDim, h0, heads);
    part.lse = b.slice(in.lse, kHeadsDim, h0, heads);
    part.k = b.allGather(cp, b.slice(in.k, kHeadsDim, kv0, kvHeads), kSeqDim);
    part.v = b.allGather(cp, b.slice(in.v, kHeadsDim, kv0, kvHeads), kSeqDim);
    part.mask = mask && b.maskHasHeads(mask)
                    ? b.slice(mask, kHeadsDim, h0, heads)
                    : mask;
    GradSchemeBuilder::Grads grads =
        b.localGrad(part, qOffset, b.index(0), mods ? h0 : Value());
    // Every rank's contributions to this group's keys, summed; each rank
    // keeps its rows.
    dqs.push_back(grads.dq);
    dks.push_back(b.reduceScatter(cp, grads.dk, kSeqDim));
    dvs.push_back(b.reduceScatter(cp, grads.dv, kSeqDim));
  }
  b.finish(cp, {concatHeads(b, dqs), concatHeads(b, dks), concatHeads(b, dvs)},
           SequenceLayout::contiguous);
  return success();
}

} // namespace

/// The dialect-plugin entry point: registers the scheme with the cp dialect
/// of every context the tool creates.
extern "C" LLVM_ATTRIBUTE_WEAK DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, kPluginName.data(), LLVM_VERSION_STRING,
          [](DialectRegistry *registry) {
            registry->addExtension(+[](MLIRContext *context, CPDialect *) {
              (void)registerScheme(context,
                                   std::make_unique<HeadChunkedAllGather>());
            });
          }};
}
