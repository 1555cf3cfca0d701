//===- MatchOperands.cpp - matcher stage 4: Q, K and V --------------------===//
//
// Q, K and V as cp.attention takes them: the transposes, GQA broadcasts
// and constant scalings the frontends put on them are folded into the
// match, and what cp.attention cannot state is a near miss. matchRhs
// reads K (or V, for stage 1) off either contraction.
//
//===----------------------------------------------------------------------===//

#include "AttentionMatcherStages.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"

namespace mlir::cp::matcher {

/// Checks out = [batch..., x, y] and lhs = [batch..., x, r] (r the
/// reduction) and classifies the rhs: [batch'..., seq, feature] or its
/// transpose, where seq is r for P V (seqIsReduction) and y for Q K^T, and
/// batch' equals batch except that the head dim may be divided (GQA).
LogicalResult Matcher::matchRhs(const Contraction &c, bool seqIsReduction,
                                StringRef name, AttentionInput &input,
                                int64_t &group) {
  unsigned rank = c.outDims.size();
  StringRef lhsName = seqIsReduction ? "P" : "Q";
  if (c.lhsDims.size() != rank || c.rhsDims.size() != rank)
    return fail(c.op, "the contraction's operands do not have the rank of "
                      "its result");
  DimRef x = c.outDims[rank - 2], y = c.outDims[rank - 1];
  DimRef r{c.reduction};
  for (const DimRef &d : c.outDims)
    if (d.div != 1)
      return fail(c.op, "the contraction's result map is not a permutation");
  for (unsigned i = 0; i + 2 < rank; ++i)
    if (!(c.lhsDims[i] == c.outDims[i]))
      return fail(c.op, Twine(lhsName) +
                            " and the result disagree on batch dim " +
                            Twine(i));
  if (!(c.lhsDims[rank - 2] == x) || !(c.lhsDims[rank - 1] == r))
    return fail(c.op, Twine("the contraction does not reduce ") + lhsName +
                          "'s last dim (" + lhsName +
                          " must be [batch..., rows, reduced])");
  DimRef seq = seqIsReduction ? r : y, feature = seqIsReduction ? y : r;
  if (c.rhsDims[rank - 2] == seq && c.rhsDims[rank - 1] == feature)
    input.transposed = false;
  else if (c.rhsDims[rank - 2] == feature && c.rhsDims[rank - 1] == seq)
    input.transposed = true;
  else
    return fail(c.op, Twine(name) +
                          " is not indexed [batch..., keys, features] or its "
                          "transpose");
  group = 1;
  for (unsigned i = 0; i + 2 < rank; ++i) {
    DimRef b = c.rhsDims[i];
    if (b.dim != c.outDims[i].dim)
      return fail(c.op, Twine(name) + " and the result disagree on batch dim " +
                            Twine(i));
    if (b.div != 1) {
      if (i + 3 != rank)
        return fail(c.op, Twine(name) + " divides batch dim " + Twine(i) +
                              ", which is not the head dim");
      group = b.div;
    }
  }
  input.value = c.rhs;
  return success();
}

LogicalResult Matcher::matchOperands(const Contraction &qk) {
  int64_t keyGroup = 1;
  if (failed(matchRhs(qk, /*seqIsReduction=*/false, "K", m.key, keyGroup)))
    return failure();
  m.query.value = qk.lhs;

  // A constant scaling of Q (generic or tosa.mul) is part of the scale.
  if (auto g = m.query.value.getDefiningOp<linalg::GenericOp>()) {
    if (isElementwise(g) && g.getNumDpsInputs() == 1 &&
        isIdentity(g.getIndexingMapsArray()[0], rankOf(m.query.value)) &&
        g.getBody()->getOperations().size() == 2) {
      Operation *op = yielded(g).getDefiningOp();
      if (isa_and_nonnull<arith::MulFOp, arith::DivFOp>(op)) {
        bool isDiv = isa<arith::DivFOp>(op);
        Value a = op->getOperand(0), c = op->getOperand(1);
        if (!isDiv && !isArg(a, g, 0))
          std::swap(a, c);
        std::optional<double> value = constantFloat(c);
        if (isArg(a, g, 0) && value) {
          m.scale *= isDiv ? 1.0 / *value : *value;
          m.ops.insert(g);
          m.query.value = g.getDpsInputs()[0];
        }
      }
    }
  } else if (auto mul = m.query.value.getDefiningOp<tosa::MulOp>()) {
    if (hasZeroShift(mul))
      for (auto [a, c] : {std::pair(mul.getInput1(), mul.getInput2()),
                          std::pair(mul.getInput2(), mul.getInput1())})
        if (std::optional<double> value = constantFloat(c)) {
          m.scale *= *value;
          m.ops.insert(mul);
          m.query.value = a;
          break;
        }
  }

  // Transposes written as ops.
  auto unTranspose = [&](AttentionInput &in) {
    if (!in.transposed)
      return;
    unsigned rank = rankOf(in.value);
    SmallVector<int64_t> swapLast =
        llvm::to_vector(llvm::seq<int64_t>(0, rank));
    std::swap(swapLast[rank - 2], swapLast[rank - 1]);
    Operation *def = in.value.getDefiningOp();
    if (auto t = dyn_cast_or_null<linalg::TransposeOp>(def);
        t && t.getPermutation() == ArrayRef<int64_t>(swapLast)) {
      m.ops.insert(t);
      in = {t.getInput(), false};
    } else if (auto t = dyn_cast_or_null<tosa::TransposeOp>(def)) {
      SmallVector<int64_t> perms(t.getPerms().begin(), t.getPerms().end());
      if (perms == swapLast) {
        m.ops.insert(t);
        in = {t.getInput1(), false};
      }
    }
  };
  unTranspose(m.key);
  unTranspose(m.value);

  // GQA: a floordiv head map, or K and V broadcast to the query heads:
  // collapse_shape of a broadcast that inserts the copies right after the
  // head dim ([.., Hkv, G, ..] -> [.., Hkv*G, ..]), so that query head h
  // reads K/V head h / G.
  int64_t valueGroup = m.kvGroup;
  auto broadcastGroup = [&](AttentionInput &in, StringRef name,
                            int64_t &group) -> LogicalResult {
    Operation *collapse = in.value.getDefiningOp();
    if (!isa_and_nonnull<tensor::CollapseShapeOp, tosa::ReshapeOp>(collapse) ||
        in.transposed || batchRank == 0)
      return success();
    Value source = collapse->getOperand(0);
    auto sourceType = cast<RankedTensorType>(source.getType());
    std::optional<SmallVector<ReassociationIndices>> found =
        getReassociationIndicesForCollapse(
            sourceType.getShape(),
            cast<RankedTensorType>(in.value.getType()).getShape());
    if (!found || found->size() != rankOf(in.value))
      return success();
    SmallVector<ReassociationIndices> groups = *found;
    // The head group merges the K/V heads with their copies right after
    // them, [.., Hkv, G, ..] -> [.., Hkv*G, ..], after unit dims it may
    // also merge (a leading batch of 1); every other group is one dim.
    unsigned head = batchRank - 1;
    bool shape = groups[head].size() >= 2;
    for (unsigned i = 0; shape && i < groups.size(); ++i) {
      if (i == head) {
        for (int64_t d : ArrayRef<int64_t>(groups[i]).drop_back(2))
          shape = shape && sourceType.getDimSize(d) == 1;
        continue;
      }
      shape = groups[i].size() == 1;
    }
    if (!shape)
      return success();
    unsigned copies = groups[head].back();
    // The unit dims merged into the head group stay in front of K/V: the
    // operand is then [1, Hkv, L, D] for 3-D scores, which is BHSD.
    unsigned leadingUnits = groups[head].size() - 2;
    if (leadingUnits > 0 && (batchRank != 1 || leadingUnits != 1))
      return success();
    Value kv;
    Operation *broadcast = source.getDefiningOp();
    if (auto bc = dyn_cast_or_null<linalg::BroadcastOp>(broadcast)) {
      if (bc.getDimensions().size() != 1)
        return success();
      if (bc.getDimensions()[0] != copies)
        return fail(bc, Twine(name) +
                            " is repeated for GQA with the copies "
                            "before the K/V heads ([.., G, Hkv, ..]): "
                            "query head h would read K/V head h mod "
                            "Hkv, but cp.attention reads h / G");
      kv = bc.getInput();
    } else if (auto g = dyn_cast_or_null<linalg::GenericOp>(broadcast)) {
      // A copy generic whose input map drops one dim.
      if (!isElementwise(g) || g.getNumDpsInputs() != 1 ||
          !isArg(yielded(g), g, 0) || g.getBody()->getOperations().size() != 1)
        return success();
      std::optional<Dims> dims = dimsOf(g.getIndexingMapsArray()[0]);
      if (!dims ||
          static_cast<int64_t>(dims->size()) + 1 != sourceType.getRank())
        return success();
      SmallVector<unsigned> kept;
      for (const DimRef &d : *dims)
        kept.push_back(d.dim);
      SmallVector<unsigned> expected;
      for (unsigned i = 0; i < sourceType.getRank(); ++i)
        if (i != copies)
          expected.push_back(i);
      if (kept != expected)
        return fail(g, Twine(name) + " is repeated for GQA in an order where "
                                     "query head h does not read K/V head "
                                     "h / G");
      kv = g.getDpsInputs()[0];
    } else {
      return success();
    }
    m.ops.insert(collapse);
    m.ops.insert(broadcast);
    group = sourceType.getDimSize(copies);
    in.value = kv;
    return success();
  };
  int64_t keyBroadcast = 1, valueBroadcast = 1;
  if (failed(broadcastGroup(m.key, "K", keyBroadcast)) ||
      failed(broadcastGroup(m.value, "V", valueBroadcast)))
    return failure();
  keyGroup *= keyBroadcast;
  valueGroup *= valueBroadcast;
  if (keyGroup != valueGroup)
    return fail(m.root, "K is shared by " + Twine(keyGroup) +
                            " query heads and V by " + Twine(valueGroup) +
                            "; cp.attention needs one GQA group");
  m.kvGroup = keyGroup;

  // What cp.attention can state: one float type, static shapes, one
  // sequence (not cross-attention), H = G * Hkv.
  auto q = cast<RankedTensorType>(m.query.value.getType());
  Type element = q.getElementType();
  if (!element.isF32() && !element.isF16() && !element.isBF16())
    return fail(m.root, "attention on " + typeName(element) +
                            "; cp.attention takes f32, f16 or bf16");
  for (Value v : {m.key.value, m.value.value, Value(m.root->getResult(0))})
    if (cast<RankedTensorType>(v.getType()).getElementType() != element)
      return fail(m.root, "Q, K, V and the result have different element "
                          "types");
  for (Value v : {m.query.value, m.key.value, m.value.value})
    if (!cast<RankedTensorType>(v.getType()).hasStaticShape())
      return fail(m.root, "Q, K or V has a dynamic shape");
  auto seqLength = [](const AttentionInput &in) {
    ArrayRef<int64_t> shape =
        cast<RankedTensorType>(in.value.getType()).getShape();
    return shape[shape.size() - (in.transposed ? 1 : 2)];
  };
  int64_t queries = q.getShape()[q.getRank() - 2];
  int64_t keys = seqLength(m.key);
  if (seqLength(m.value) != keys)
    return fail(m.root, Twine(keys) + " keys against " +
                            Twine(seqLength(m.value)) +
                            " values: P V does not contract the keys");
  // Fewer (or more) queries than keys: a decode step against a KV cache,
  // the queries replicated and the cache sharded on the sequence.
  m.replicatedQueries = keys != queries;
  if (batchRank > 0) {
    int64_t heads = q.getShape()[batchRank - 1];
    for (Value v : {m.key.value, m.value.value}) {
      ArrayRef<int64_t> kvShape = cast<RankedTensorType>(v.getType()).getShape();
      int64_t kvHeads = kvShape[kvShape.size() - 3];
      if (kvHeads * m.kvGroup != heads)
        return fail(m.root, Twine(heads) + " query heads read " +
                                Twine(kvHeads) + " K/V heads in groups of " +
                                Twine(m.kvGroup) +
                                "; cp.attention needs H = G * Hkv");
    }
  }
  return success();
}

} // namespace mlir::cp::matcher
