//===- RaiseAttention.cpp - linalg / tosa attention to cp.attention -------===//
//
// cp-raise-attention: AttentionMatcher recognizes; this pass rewrites a
// match into cp.attention (Q, K, V reshaped to [B, H, L, D], the score
// program split into scale, score_mod and mask_mod regions), and reports
// what it could not raise.
//
//===----------------------------------------------------------------------===//

#include "AttentionMatcher.h"
#include "NormalizeAttention.h"
#include "cp/Dialect/CP/IR/CPOps.h"
#include "cp/Dialect/CP/IR/ModRegions.h"
#include "cp/Raising/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::cp {
#define GEN_PASS_DEF_RAISEATTENTIONPASS
#include "cp/Raising/Passes.h.inc"
} // namespace mlir::cp

using namespace mlir;
using namespace mlir::cp;

namespace {

/// `v` ([L, D], [N, L, D] or [B, H, L, D]) as [B, H, L, D]; `transposed`:
/// `v` holds [.., D, L].
Value toBHLD(OpBuilder &b, Location loc, Value v, bool transposed) {
  auto type = cast<RankedTensorType>(v.getType());
  int64_t rank = type.getRank();
  if (transposed) {
    SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
    std::swap(perm[rank - 2], perm[rank - 1]);
    SmallVector<int64_t> shape(type.getShape());
    std::swap(shape[rank - 2], shape[rank - 1]);
    Value init = tensor::EmptyOp::create(b, loc, shape, type.getElementType());
    v = linalg::TransposeOp::create(b, loc, v, init, perm)->getResult(0);
    type = cast<RankedTensorType>(v.getType());
  }
  if (rank == 4)
    return v;
  SmallVector<int64_t> shape(4 - rank, 1);
  llvm::append_range(shape, type.getShape());
  SmallVector<ReassociationIndices> groups;
  if (rank == 3)
    groups = {{0, 1}, {2}, {3}};
  else
    groups = {{0, 1, 2}, {3}};
  return tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), v, groups);
}

/// Clones into `b` the ops of the score program that compute `v`, with the
/// program's arguments already mapped in `mapping`.
Value cloneComputation(OpBuilder &b, Value v, IRMapping &mapping) {
  if (Value mapped = mapping.lookupOrNull(v))
    return mapped;
  Operation *def = v.getDefiningOp();
  for (Value operand : def->getOperands())
    cloneComputation(b, operand, mapping);
  b.clone(*def, mapping);
  return mapping.lookup(v);
}

/// A near miss to report: where, why, and how far the match got.
struct ReportedMiss {
  Location loc;
  std::string reason;
  unsigned progress;
  bool candidateInDoubt;

  bool isNearerThan(unsigned otherProgress, bool otherInDoubt) const {
    return NearMiss{nullptr, "", progress, candidateInDoubt}.isNearerThan(
        otherProgress, otherInDoubt);
  }
  /// `miss` is not nearer than this (ties go to the later miss, as before).
  bool isNearerThan(const NearMiss &miss) const {
    return isNearerThan(miss.progress, miss.candidateInDoubt);
  }
};

/// What matching finds in a function, without rewriting it: how many
/// attentions (with disjoint ops) and the nearest miss among the rest.
struct Outcome {
  unsigned matches = 0;
  /// The GQA groups of the matches, summed: more is more of the K/V
  /// repetition read into the ops rather than left in front of them.
  int64_t kvGroups = 0;
  /// Some match's K or V is a repetition (a broadcast, or an add of zeros
  /// to a narrower operand) under reshapes and transposes, which the
  /// normalized form may read as GQA.
  bool repeatedKV = false;
  std::optional<ReportedMiss> nearest;
};

/// `v` is, under reshapes and transposes, a tensor repeated along a dim: a
/// linalg.broadcast, or a tosa.add of zeros to an operand the result
/// widens (repeatedByAddOfZeros).
bool isRepeated(Value v) {
  Operation *def = v.getDefiningOp();
  while (isa_and_nonnull<tosa::ReshapeOp, tosa::TransposeOp,
                          tensor::CollapseShapeOp, tensor::ExpandShapeOp,
                          linalg::TransposeOp>(def)) {
    v = def->getOperand(0);
    def = v.getDefiningOp();
  }
  return isa_and_nonnull<linalg::BroadcastOp>(def) ||
         static_cast<bool>(repeatedByAddOfZeros(def));
}

Outcome analyze(FunctionOpInterface function, int64_t groupSize) {
  Outcome outcome;
  llvm::DenseSet<Operation *> consumed;
  SmallVector<NearMiss> misses;
  function->walk([&](Operation *op) {
    if (!isa<linalg::LinalgOp, tosa::MatMulOp>(op) || consumed.contains(op))
      return;
    NearMiss miss;
    FailureOr<AttentionMatch> match = matchAttention(op, groupSize, miss);
    if (failed(match)) {
      misses.push_back(miss);
      return;
    }
    consumed.insert(match->ops.begin(), match->ops.end());
    ++outcome.matches;
    outcome.kvGroups += match->kvGroup;
    outcome.repeatedKV |=
        isRepeated(match->key.value) || isRepeated(match->value.value);
  });
  for (const NearMiss &miss : misses) {
    if (miss.progress == 0 || consumed.contains(miss.at))
      continue;
    if (!outcome.nearest ||
        !outcome.nearest->isNearerThan(miss))
      outcome.nearest = ReportedMiss{miss.at->getLoc(), miss.reason,
                                     miss.progress, miss.candidateInDoubt};
  }
  return outcome;
}

/// The source form a match was recognized in, for the raised op's remark:
/// the dialect, what normalization rewrote, the head layout and the masks.
std::string describeForm(const AttentionMatch &match,
                         const NormalizationLog &log) {
  SmallVector<std::string> parts;
  parts.push_back(isa<tosa::MatMulOp>(match.root) ? "tosa" : "linalg");
  parts.push_back(std::to_string(match.scoreRank) + "-D scores");
  if (!log.empty())
    parts.push_back("normalized: " + describe(log));
  if (match.kvGroup > 1)
    parts.push_back("GQA " + std::to_string(match.kvGroup) + ":1");
  if (match.replicatedQueries)
    parts.push_back("decode (queries replicated, K/V sharded)");
  if (match.dataMask)
    parts.push_back(match.dataMaskIsMatrix ? "[Lq, Lk] mask tensor"
                                           : "mask tensor");
  if (!match.maskConditions.empty())
    parts.push_back(match.modReads.empty()
                        ? "index mask"
                        : "index mask reading " +
                              std::to_string(match.modReads.size()) +
                              " per-head tensor(s)");
  if (match.transformed)
    parts.push_back("score transform");
  if (match.lse)
    parts.push_back("log-sum-exp returned");
  return llvm::join(parts, ", ");
}

struct RaiseAttentionPass
    : public cp::impl::RaiseAttentionPassBase<RaiseAttentionPass> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *context) override {
    FailureOr<SchemeAttr> resolved = scheme.resolve(context, "cp-raise-attention");
    if (failed(resolved))
      return failure();
    schemeAttr = *resolved;
    return success();
  }

  void runOnOperation() override;

private:
  /// The grid's group size: grid-size, or the size of the existing grid;
  /// dynamic when neither is known.
  int64_t groupSize();
  /// Checks the grid for the attention at `at`, declaring it when
  /// grid-size asks for it.
  LogicalResult declareGrid(Operation *at);
  AttentionOp rewrite(AttentionMatch &match);
  void buildRegions(AttentionMatch &match, AttentionOp attention);

  SchemeAttr schemeAttr;
  bool gridDeclared = false;
};

int64_t RaiseAttentionPass::groupSize() {
  if (gridSize > 0)
    return gridSize;
  auto existing = SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(
      getOperation(), StringAttr::get(&getContext(), grid));
  if (!existing)
    return ShapedType::kDynamic;
  // The raised ops use grid axis 0.
  if (existing.getShape().empty())
    return ShapedType::kDynamic;
  return existing.getShape()[0];
}

LogicalResult RaiseAttentionPass::declareGrid(Operation *at) {
  if (gridDeclared)
    return success();
  ModuleOp module = getOperation();
  auto existing = SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(
      module, StringAttr::get(&getContext(), grid));
  if (existing) {
    if (gridSize > 0 &&
        (existing.getShape().size() != 1 || existing.getShape()[0] != gridSize))
      return existing.emitError("cp-raise-attention: grid-size=")
             << static_cast<int64_t>(gridSize) << " but shard.grid @" << grid
             << " already exists with shape "
             << llvm::make_range(existing.getShape().begin(),
                                 existing.getShape().end())
             << "; drop grid-size or name another grid";
    gridDeclared = true;
    return success();
  }
  if (gridSize <= 0)
    return at->emitError("cp-raise-attention: grid @")
           << grid << " does not exist; declare `shard.grid @" << grid
           << "(shape = P)` or pass grid-size=P";
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  shard::GridOp::create(b, module.getLoc(), grid, ArrayRef<int64_t>{gridSize});
  gridDeclared = true;
  return success();
}

void RaiseAttentionPass::buildRegions(AttentionMatch &match,
                                      AttentionOp attention) {
  OpBuilder b(&getContext());
  Location loc = attention.getLoc();
  Block &program = match.scoreProgram->getBody().front();
  unsigned rank = match.scoreRank;
  // A new region block with the region's arguments, the program's index
  // arguments ([batch..., q, k]) mapped to its positions (b, h, q_idx,
  // kv_idx; a single batch dim is the head dim, B = 1).
  ValueRange modOperands = attention.getModOperands();
  auto createBody = [&](Region &region, bool isMask, IRMapping &mapping) {
    SmallVector<Type> types =
        modArgumentTypes(&getContext(), isMask, modOperands.getTypes());
    Block *body = b.createBlock(&region, {}, types,
                                SmallVector<Location>(types.size(), loc));
    ValueRange positions =
        body->getArguments().slice(isMask ? 0 : 1, kMaskModPositions);
    ValueRange modArgs = body->getArguments().take_back(modOperands.size());
    if (rank == 4) {
      mapping.map(program.getArgument(1), positions[0]);
      mapping.map(program.getArgument(2), positions[1]);
    } else if (rank == 3) {
      mapping.map(program.getArgument(1), positions[1]);
    }
    mapping.map(program.getArgument(rank - 1), positions[2]);
    mapping.map(program.getArgument(rank), positions[3]);
    // The mod operands the conditions read, at the positions of the
    // program's maps.
    for (const ModOperandRead &read : match.modReads) {
      auto at = llvm::find(modOperands, read.tensor);
      SmallVector<Value> indices;
      for (AffineExpr e : read.map.getResults()) {
        if (auto d = dyn_cast<AffineDimExpr>(e))
          indices.push_back(
              mapping.lookup(program.getArgument(1 + d.getPosition())));
        else
          indices.push_back(arith::ConstantIndexOp::create(
              b, loc, cast<AffineConstantExpr>(e).getValue()));
      }
      mapping.map(read.argument,
                  tensor::ExtractOp::create(
                      b, loc, modArgs[at - modOperands.begin()], indices)
                      .getResult());
    }
    return body;
  };
  if (match.transformed) {
    IRMapping mapping;
    Block *body =
        createBody(attention.getScoreMod(), /*isMask=*/false, mapping);
    mapping.map(match.scaledScore, body->getArgument(0));
    YieldOp::create(b, loc, cloneComputation(b, match.transformed, mapping));
  }
  if (!match.maskConditions.empty()) {
    IRMapping mapping;
    createBody(attention.getMaskMod(), /*isMask=*/true, mapping);
    Value all;
    for (Value condition : match.maskConditions) {
      Value c = cloneComputation(b, condition, mapping);
      all = all ? arith::AndIOp::create(b, loc, all, c) : c;
    }
    YieldOp::create(b, loc, all);
    // A causal or window predicate is the structured mask.
    if (MaskAttr folded =
            foldMaskModInto(attention.getMask(), attention.getMaskMod())) {
      attention.getMaskMod().front().erase();
      attention.setMaskAttr(folded);
    }
  }
}

/// The [H] f32 sinks of a sink column [batch..., Lq, 1] that holds one
/// value per head (the matcher checked it): its values at the first batch
/// index and query row.
static Value sinksOf(OpBuilder &b, Location loc, Value column, int64_t heads) {
  auto type = cast<RankedTensorType>(column.getType());
  int64_t rank = type.getRank();
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)),
      sizes(rank, b.getIndexAttr(1)), strides(rank, b.getIndexAttr(1));
  // [B, H, Lq, 1] and [H, Lq, 1] hold the heads at rank - 3; a column
  // without heads ([Lq, 1]) is one sink for the one head.
  if (rank >= 3)
    sizes[rank - 3] = b.getIndexAttr(heads);
  auto sliceType = RankedTensorType::get({heads}, type.getElementType());
  Value sinks = tensor::ExtractSliceOp::create(b, loc, sliceType, column,
                                               offsets, sizes, strides);
  if (!type.getElementType().isF32())
    sinks = arith::ExtFOp::create(
        b, loc, RankedTensorType::get({heads}, b.getF32Type()), sinks);
  return sinks;
}

AttentionOp RaiseAttentionPass::rewrite(AttentionMatch &match) {
  for (Operation *dead : match.deadUsers)
    dead->erase();
  Operation *root = match.root;
  Location loc = root->getLoc();
  OpBuilder b(root);
  Value q = toBHLD(b, loc, match.query.value, match.query.transposed);
  Value k = toBHLD(b, loc, match.key.value, match.key.transposed);
  Value v = toBHLD(b, loc, match.value.value, match.value.transposed);
  Value mask;
  if (match.dataMask)
    mask = match.dataMaskIsMatrix
               ? match.dataMask
               : toBHLD(b, loc, match.dataMask, /*transposed=*/false);
  auto qType = cast<RankedTensorType>(q.getType());
  auto vType = cast<RankedTensorType>(v.getType());
  auto resultType =
      RankedTensorType::get({qType.getDimSize(0), qType.getDimSize(1),
                             qType.getDimSize(2), vType.getDimSize(3)},
                            qType.getElementType());
  SmallVector<Value> modOperands;
  for (const ModOperandRead &read : match.modReads)
    if (!llvm::is_contained(modOperands, read.tensor))
      modOperands.push_back(read.tensor);
  Type lseType;
  if (match.lse)
    lseType = RankedTensorType::get(resultType.getShape().drop_back(),
                                    b.getF32Type());
  Value sinks;
  if (match.sinkColumn)
    sinks = sinksOf(b, loc, match.sinkColumn, qType.getDimSize(1));
  auto attention = AttentionOp::create(
      b, loc, resultType, lseType, q, k, v, mask, sinks, modOperands,
      StringRef(grid), ArrayRef<int16_t>{0},
      MaskAttr::get(&getContext(), MaskKind::none), SequenceLayout::contiguous,
      match.replicatedQueries ? QueryPlacement::replicated
                              : QueryPlacement::sharded,
      schemeAttr,
      b.getF32FloatAttr(static_cast<float>(match.scale)));
  buildRegions(match, attention);
  b.setInsertionPointAfter(attention);
  Value result = attention.getResult();
  auto rootType = cast<RankedTensorType>(root->getResult(0).getType());
  if (rootType.getRank() != 4) {
    SmallVector<ReassociationIndices> groups;
    if (rootType.getRank() == 3)
      groups = {{0, 1}, {2}, {3}};
    else
      groups = {{0, 1, 2}, {3}};
    result = tensor::CollapseShapeOp::create(b, loc, rootType, result, groups);
  }
  root->getResult(0).replaceAllUsesWith(result);
  if (match.lse) {
    // [B, H, L] to the program's shape of it (keepdim [.., L, 1], or [BH,
    // L] for 3-D scores), through one dim.
    auto lseType = cast<RankedTensorType>(match.lse.getType());
    Value lse = attention.getLse();
    auto flat = RankedTensorType::get({lseType.getNumElements()},
                                      b.getF32Type());
    lse = tensor::CollapseShapeOp::create(
        b, loc, flat, lse, SmallVector<ReassociationIndices>{{0, 1, 2}});
    if (lseType.getRank() > 1)
      lse = tensor::ExpandShapeOp::create(
          b, loc, lseType, lse,
          SmallVector<ReassociationIndices>{
              llvm::to_vector(llvm::seq<int64_t>(0, lseType.getRank()))});
    // Users of the lse written before the contraction with V (the
    // attention's place) move after it, with their users before it, in
    // their order: they read only the lse and values defined earlier.
    Operation *after = lse.getDefiningOp();
    SetVector<Operation *> moved;
    SmallVector<Value> work{match.lse};
    while (!work.empty()) {
      Value v = work.pop_back_val();
      for (Operation *user : v.getUsers())
        if (user->getBlock() == attention->getBlock() &&
            user->isBeforeInBlock(attention) && moved.insert(user))
          llvm::append_range(work, user->getResults());
    }
    SmallVector<Operation *> ordered(moved.begin(), moved.end());
    llvm::sort(ordered, [](Operation *a, Operation *c) {
      return a->isBeforeInBlock(c);
    });
    for (Operation *op : ordered) {
      op->moveAfter(after);
      after = op;
    }
    match.lse.replaceAllUsesWith(lse);
  }

  // The replaced ops, then whatever only they used (inits, constants).
  SmallVector<Operation *> dead(match.ops.begin(), match.ops.end());
  SmallVector<Operation *> producers;
  for (Operation *op : dead) {
    // Operands, and values the op's body captures (a generic's constants).
    SetVector<Value> used(op->getOperands().begin(), op->getOperands().end());
    getUsedValuesDefinedAbove(op->getRegions(), used);
    for (Value operand : used)
      if (Operation *def = operand.getDefiningOp())
        if (!match.ops.contains(def))
          producers.push_back(def);
  }
  // Users before producers: erase in reverse program order.
  llvm::sort(dead,
             [](Operation *a, Operation *c) { return c->isBeforeInBlock(a); });
  for (Operation *op : dead)
    op->erase();
  llvm::DenseSet<Operation *> erased;
  while (!producers.empty()) {
    Operation *op = producers.pop_back_val();
    if (erased.contains(op) || !isOpTriviallyDead(op))
      continue;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        producers.push_back(def);
    erased.insert(op);
    op->erase();
  }
  return attention;
}

void RaiseAttentionPass::runOnOperation() {
  ModuleOp module = getOperation();
  int64_t size = groupSize();
  llvm::StringSet<> required;
  for (const std::string &name : requireIn) {
    if (!SymbolTable::lookupNearestSymbolFrom<FunctionOpInterface>(
            module, StringAttr::get(&getContext(), name))) {
      module.emitError("cp-raise-attention: require-in names @")
          << name << ", which is not a function of this module";
      return signalPassFailure();
    }
    required.insert(name);
  }

  for (auto function : module.getOps<FunctionOpInterface>()) {
    if (function.isExternal())
      continue;
    // Front ends' forms: the function after the normalizing rewrites, when
    // more attention matches there (or as much, reading more GQA). A near miss is reported from whichever
    // form came nearer.
    Outcome outcome = analyze(function, size);
    NormalizationLog log;
    std::optional<ReportedMiss> normalizedMiss;
    // Also when K or V of a match is repeated in front of it: the
    // normalized form may read the repetition as GQA.
    if (normalize && (outcome.nearest || outcome.repeatedKV)) {
      OwningOpRef<Operation *> copy = function->clone();
      if (succeeded(normalizeAttentionForms(*copy, &log))) {
        auto normalized = cast<FunctionOpInterface>(*copy);
        Outcome after = analyze(normalized, size);
        if (after.matches > outcome.matches ||
            (after.matches == outcome.matches &&
             after.kvGroups > outcome.kvGroups)) {
          function.getFunctionBody().takeBody(normalized.getFunctionBody());
        } else {
          log.clear();
          if (after.nearest &&
              (!outcome.nearest || after.nearest->isNearerThan(
                                       outcome.nearest->progress,
                                       outcome.nearest->candidateInDoubt)))
            normalizedMiss = after.nearest;
        }
      }
    }
    // Candidates: every contraction-like op, as they are now.
    SmallVector<Operation *> candidates;
    function->walk([&](Operation *op) {
      if (isa<linalg::LinalgOp, tosa::MatMulOp>(op))
        candidates.push_back(op);
    });
    llvm::DenseSet<Operation *> consumed;
    SmallVector<NearMiss> misses;
    SmallVector<Operation *> missedCandidates;
    unsigned raised = 0;
    for (Operation *candidate : candidates) {
      if (consumed.contains(candidate))
        continue;
      NearMiss miss;
      FailureOr<AttentionMatch> match = matchAttention(candidate, size, miss);
      if (failed(match)) {
        misses.push_back(miss);
        missedCandidates.push_back(candidate);
        continue;
      }
      if (failed(declareGrid(match->root)))
        return signalPassFailure();
      consumed.insert(match->ops.begin(), match->ops.end());
      std::string form = describeForm(*match, log);
      AttentionOp attention = rewrite(*match);
      if (reportNearMisses)
        mlir::emitRemark(attention.getLoc(), "cp-raise-attention: raised ")
            << form;
      ++raised;
      ++numRaised;
    }
    // The nearest miss among candidates that were not raised since.
    std::optional<ReportedMiss> nearest = normalizedMiss;
    for (auto [miss, candidate] : llvm::zip(misses, missedCandidates)) {
      if (normalizedMiss)
        break;
      if (consumed.contains(candidate) || consumed.contains(miss.at))
        continue;
      if (miss.progress == 0) // not a contraction
        continue;
      if (!nearest || !nearest->isNearerThan(miss))
        nearest = ReportedMiss{miss.at->getLoc(), miss.reason, miss.progress,
                               miss.candidateInDoubt};
    }
    StringRef name = SymbolTable::getSymbolName(function).getValue();
    if (raised == 0 && required.contains(name)) {
      InFlightDiagnostic error =
          function.emitError("cp-raise-attention: found no attention to "
                             "raise in @")
          << name << "; searched for " << describeAttentionForms();
      if (nearest)
        error.attachNote(nearest->loc)
            << "nearest candidate: " << nearest->reason;
      else
        error.attachNote() << "the function has no contraction";
      return signalPassFailure();
    }
    if (reportNearMisses && nearest)
      mlir::emitRemark(nearest->loc, "cp-raise-attention: not raised: ")
          << nearest->reason;
  }
}

} // namespace
