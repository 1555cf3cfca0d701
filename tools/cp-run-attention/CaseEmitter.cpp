//===- CaseEmitter.cpp - the cp IR of cp-run-attention's cases ------------===//
//
// cp.attention on the CP grid (a scheme pass decides how), or, with +lse,
// cp.local_attention itself, or, with +grad, cp.local_attention and its
// gradient cp.local_attention_grad (with --scheme: cp.attention_grad, given
// the forward's output; with +train: chained to cp.attention), with the
// mask and score regions of the case.
//
//===----------------------------------------------------------------------===//

#include "CaseEmitter.h"

#include <cinttypes>
#include <cstdio>
#include <string>
#include <vector>

namespace cp::run {

std::vector<int64_t> maskShape(const Config &c, Case::Explicit kind) {
  switch (kind) {
  case Case::Explicit::globalBool:
    return {1, c.heads, c.seq, c.seq};
  case Case::Explicit::localBool:
    return {c.localLen(), c.seq};
  case Case::Explicit::globalBias:
    return {c.seq, c.seq};
  case Case::Explicit::none:
    break;
  }
  return {};
}

namespace {

std::string tensorType(const std::vector<int64_t> &shape, const char *type) {
  std::string s = "tensor<";
  for (int64_t d : shape)
    s += std::to_string(d) + "x";
  return s + type + ">";
}

/// Writes the IR of one case as a function. Operands: %q, %k, %v and, with
/// an explicit mask, %m (this rank's shards, BHSD); results: the output
/// and, with +lse, the log-sum-exp.
class CaseEmitter {
public:
  CaseEmitter(const Config &c, const Case &cs) : c(c), cs(cs) {
    const char *t = c.typeName();
    int64_t l = c.localLen();
    qType = tensorType({c.batch, c.heads, l, c.headDim}, t);
    kType = tensorType({c.batch, c.kvHeads, l, c.headDim}, t);
    vType = tensorType({c.batch, c.kvHeads, l, c.valueDim}, t);
    oType = tensorType({c.batch, c.heads, l, c.valueDim}, t);
    lseType = tensorType({c.batch, c.heads, l}, "f32");
    if (cs.sinks)
      sinksType = tensorType({c.heads}, "f32");
    if (cs.explicitMask != Case::Explicit::none)
      maskType =
          tensorType(maskShape(c, cs.explicitMask),
                     cs.explicitMask == Case::Explicit::globalBias ? t : "i1");
    if (cs.structured == "causal")
      structured = " mask = causal";
    else if (cs.structured == "window")
      structured = " mask = sliding_window(" + std::to_string(cs.window) + ")";
  }

  std::string emit() const {
    std::string body;
    if (cs.train)
      body = trainingStep();
    else if (cs.grad && shardedGrad())
      body = shardedGradient();
    else if (cs.grad)
      body = localGradient();
    else if (!cs.lse)
      body = shardedAttention();
    else if (!cs.merge)
      body = localAttention("%q", "%k", "%v", "%m", "%qo", "%ko", c.seq, "%o",
                            "%lse") +
             "  return %o, %lse : " + oType + ", " + lseType + "\n";
    else
      body = mergedHalves();
    std::string results = cs.lse ? "(" + oType + ", " + lseType + ")" : oType;
    if (cs.grad)
      results = shardedGrad() ? "(" + gradTypes() + ")"
                              : "(" + oType + ", " + gradTypes() + ")";
    std::string offsets;
    if (cs.lse || (cs.grad && c.scheme.empty()))
      offsets = "  %qo = arith.constant " + std::to_string(cs.qOffset) +
                " : index\n  %ko = arith.constant " +
                std::to_string(cs.kvOffset) + " : index\n";
    std::string seg =
        cs.document ? ", %seg: " + tensorType({c.seq}, "i32") : std::string();
    if (cs.sinks)
      seg += ", %sk: " + sinksType;
    return "func.func @" + cs.name + "(%q: " + qType + ", %k: " + kType +
           ", %v: " + vType + (maskType.empty() ? "" : ", %m: " + maskType) +
           seg +
           (shardedGrad() ? ", %o: " + oType + ", %lse: " + lseType
                          : std::string()) +
           (cs.grad ? ", %do: " + oType : std::string()) + ") -> " +
           results + " {\n" + offsets + body + "}\n";
  }

private:
  /// An f32 literal MLIR parses as a float (it always has an exponent).
  static std::string floatLiteral(double x) {
    char text[64];
    std::snprintf(text, sizeof(text), "%.9e", x);
    return text;
  }

  /// The mask_mod and score_mod regions of the case, on global positions.
  std::string modRegions() const {
    std::string segArg =
        cs.document ? ", %s: " + tensorType({c.seq}, "i32") : std::string();
    std::string header =
        "(%b: index, %h: index, %qi: index, %ki: index" + segArg + "):\n";
    std::string text;
    if (cs.document || cs.causalModRegion) {
      std::string body, result;
      if (cs.document)
        body += "        %sq = tensor.extract %s[%qi] : " +
                tensorType({c.seq}, "i32") +
                "\n        %sk = tensor.extract %s[%ki] : " +
                tensorType({c.seq}, "i32") +
                "\n        %same = arith.cmpi eq, %sq, %sk : i32\n";
      if (cs.causalModRegion)
        body += "        %past = arith.cmpi ule, %ki, %qi : index\n";
      if (cs.document && cs.causalModRegion) {
        body += "        %both = arith.andi %same, %past : i1\n";
        result = "%both";
      } else {
        result = cs.document ? "%same" : "%past";
      }
      text += "      mask_mod {\n      ^bb0" + header + body +
              "        cp.yield " + result + " : i1\n      }\n";
    }
    if (cs.softcap > 0 || cs.alibi) {
      std::string body, score = "%x";
      if (cs.softcap > 0) {
        body += "        %cap = arith.constant " + floatLiteral(cs.softcap) +
                " : f32\n        %xs = arith.divf %x, %cap : f32\n"
                "        %t = math.tanh %xs : f32\n"
                "        %capped = arith.mulf %t, %cap : f32\n";
        score = "%capped";
      }
      if (cs.alibi) {
        // slope(h) = 2^(-8 (h + 1) / H), bias = slope * (kv - q).
        body += "        %one = arith.constant 1 : index\n"
                "        %h1 = arith.addi %h, %one : index\n"
                "        %h1i = arith.index_cast %h1 : index to i64\n"
                "        %h1f = arith.sitofp %h1i : i64 to f32\n"
                "        %rate = arith.constant " +
                floatLiteral(-8.0 / c.heads) +
                " : f32\n"
                "        %e = arith.mulf %h1f, %rate : f32\n"
                "        %slope = math.exp2 %e : f32\n"
                "        %qii = arith.index_cast %qi : index to i64\n"
                "        %kii = arith.index_cast %ki : index to i64\n"
                "        %dist = arith.subi %kii, %qii : i64\n"
                "        %distf = arith.sitofp %dist : i64 to f32\n"
                "        %bias = arith.mulf %slope, %distf : f32\n"
                "        %biased = arith.addf " +
                score + ", %bias : f32\n";
        score = "%biased";
      }
      text += "      score_mod {\n      ^bb0(%x: f32, " + header.substr(1) +
              body + "        cp.yield " + score + " : f32\n      }\n";
    }
    return text;
  }

  /// cp.attention on the CP group, a scheme pass decides how; `%o` and,
  /// `withLse`, `%lse`.
  std::string attentionOnGrid(bool withLse, const std::string &q = "%q",
                              const std::string &o = "%o") const {
    std::string scheme = c.scheme.empty() ? "" : " scheme = " + c.scheme;
    std::string mask = maskType.empty() ? "" : " explicit_mask %m";
    std::string layout = c.zigzag ? " layout = zigzag" : "";
    std::string regions = modRegions();
    return "  " + o + (withLse ? ", %lse" : "") + " = cp.attention " + q +
           ", %k, %v" + mask + sinksOperand() + modOperands() +
           " on @cp grid_axes = [0]" +
           structured + layout + scheme +
           (regions.empty() ? "\n" : "\n" + regions) + "      : " + qType +
           ", " + kType + ", " + vType +
           (maskType.empty() ? "" : ", " + maskType) + " -> " + oType +
           (withLse ? ", " + lseType : std::string()) + "\n";
  }

  std::string shardedAttention() const {
    std::string layers =
        cs.stacked ? attentionOnGrid(/*withLse=*/false, "%q", "%o1") +
                         attentionOnGrid(/*withLse=*/false, "%o1", "%o")
                   : attentionOnGrid(/*withLse=*/false);
    return layers + "  return %o : " + oType + "\n";
  }

  /// `o`, `lse` = cp.local_attention of `q` against the `keys` keys and
  /// values `k`, `v` (and mask `m`) at offsets (`qo`, `ko`).
  std::string localAttention(const std::string &q, const std::string &k,
                             const std::string &v, const std::string &m,
                             const std::string &qo, const std::string &ko,
                             int64_t keys, const std::string &o,
                             const std::string &lse) const {
    const char *t = c.typeName();
    std::string kt = tensorType({c.batch, c.kvHeads, keys, c.headDim}, t);
    std::string vt = tensorType({c.batch, c.kvHeads, keys, c.valueDim}, t);
    std::string mask, mt;
    if (!maskType.empty()) {
      std::vector<int64_t> shape = maskShape(c, cs.explicitMask);
      shape.back() = keys;
      mt = tensorType(shape,
                      cs.explicitMask == Case::Explicit::globalBias ? t : "i1");
      mask = " explicit_mask " + m;
    }
    std::string regions = modRegions();
    return "  " + o + ", " + lse + " = cp.local_attention " + q + ", " + k +
           ", " + v + " offsets(" + qo + ", " + ko + ")" + mask +
           sinksOperand() + modOperands() + structured +
           (regions.empty() ? "\n" : "\n" + regions) + "      : " + qType +
           ", " + kt + ", " + vt + (mt.empty() ? "" : ", " + mt) + " -> " +
           oType + ", " + lseType + "\n";
  }

  /// +grad with --scheme: cp.attention_grad on the CP grid, given the
  /// forward's output and lse as operands (not with +train).
  bool shardedGrad() const {
    return cs.grad && !cs.train && !c.scheme.empty();
  }

  /// +train: the forward on the grid with its lse, then its gradient;
  /// returns the output and the gradients.
  std::string trainingStep() const {
    return attentionOnGrid(/*withLse=*/true) + gradientOnGrid() +
           "  return %o, " + gradNames() + " : " + oType + ", " + gradTypes() +
           "\n";
  }

  std::string shardedGradient() const {
    return gradientOnGrid() + "  return " + gradNames() + " : " + gradTypes() +
           "\n";
  }

  /// The gradients a sharded backward returns: dq, dk, dv and, with sinks,
  /// the sinks' gradient.
  std::string gradNames() const {
    return cs.sinks ? "%dq, %dk, %dv, %dsk" : "%dq, %dk, %dv";
  }

  /// " sinks(...)" for +sinks, else empty.
  std::string sinksOperand() const {
    return cs.sinks ? " sinks(%sk : " + sinksType + ")" : std::string();
  }

  /// cp.attention_grad of this rank's shards of %q, %k, %v, %o, %lse, %do;
  /// a scheme pass decides how.
  std::string gradientOnGrid() const {
    std::string mask = maskType.empty() ? "" : " explicit_mask %m";
    std::string layout = c.zigzag ? " layout = zigzag" : "";
    std::string regions = modRegions();
    return "  " + gradNames() +
           " = cp.attention_grad %q, %k, %v, %o, %lse, %do" + mask +
           sinksOperand() + modOperands() + " on @cp grid_axes = [0]" +
           structured +
           layout + " scheme = " + c.scheme +
           (regions.empty() ? "\n" : "\n" + regions) + "      : " + qType +
           ", " + kType + ", " + vType + ", " + oType + ", " + lseType + ", " +
           oType + (maskType.empty() ? "" : ", " + maskType) + " -> " +
           gradTypes() + "\n";
  }

  /// " mod_operands(...)" for a document mask, else empty.
  std::string modOperands() const {
    return cs.document
               ? " mod_operands(%seg : " + tensorType({c.seq}, "i32") + ")"
               : std::string();
  }

  /// The gradients dq, dk, dv of this rank's shard, f32 or (with
  /// --grad-dtype storage) in the storage type, and (with sinks, on the
  /// grid) the sinks' f32 gradient.
  std::string gradTypes() const {
    int64_t l = c.localLen();
    const char *t = c.gradInStorageType ? c.typeName() : "f32";
    return tensorType({c.batch, c.heads, l, c.headDim}, t) + ", " +
           tensorType({c.batch, c.kvHeads, l, c.headDim}, t) + ", " +
           tensorType({c.batch, c.kvHeads, l, c.valueDim}, t) +
           (cs.sinks ? ", " + sinksType : std::string());
  }

  /// The forward of the block, then cp.local_attention_grad with the loss
  /// gradient %do; returns the output and the gradients.
  std::string localGradient() const {
    std::string text = localAttention("%q", "%k", "%v", "%m", "%qo", "%ko",
                                      c.seq, "%o", "%lse");
    std::string mask = maskType.empty() ? "" : " explicit_mask %m";
    std::string regions = modRegions();
    text += "  %dq, %dk, %dv = cp.local_attention_grad %q, %k, %v, %o, %lse, "
            "%do offsets(%qo, %ko)" +
            mask + modOperands() + structured +
            (regions.empty() ? "\n" : "\n" + regions) + "      : " + qType +
            ", " + kType + ", " + vType + ", " + oType + ", " + lseType + ", " +
            oType + (maskType.empty() ? "" : ", " + maskType) + " -> " +
            gradTypes() + "\n";
    return text + "  return %o, %dq, %dk, %dv : " + oType + ", " + gradTypes() +
           "\n";
  }

  /// The keys split in two halves, attended separately and merged with
  /// cp.merge: the building block of ring attention.
  std::string mergedHalves() const {
    const char *t = c.typeName();
    int64_t s = c.seq, first = s / 2, second = s - first;
    auto slice4 = [&](const std::string &name, const std::string &src,
                      const std::string &srcType, int64_t d, int64_t begin,
                      int64_t count) {
      return "  " + name + " = tensor.extract_slice " + src + "[0, 0, " +
             std::to_string(begin) + ", 0] [" + std::to_string(c.batch) + ", " +
             std::to_string(c.kvHeads) + ", " + std::to_string(count) + ", " +
             std::to_string(d) + "] [1, 1, 1, 1] : " + srcType + " to " +
             tensorType({c.batch, c.kvHeads, count, d}, t) + "\n";
    };
    std::string text = slice4("%k0", "%k", kType, c.headDim, 0, first) +
                       slice4("%k1", "%k", kType, c.headDim, first, second) +
                       slice4("%v0", "%v", vType, c.valueDim, 0, first) +
                       slice4("%v1", "%v", vType, c.valueDim, first, second);
    if (!maskType.empty()) {
      // Split the mask's key (last) dim the same way.
      std::vector<int64_t> shape = maskShape(c, cs.explicitMask);
      const char *mt = cs.explicitMask == Case::Explicit::globalBias ? t : "i1";
      auto sliceMask = [&](const std::string &name, int64_t begin,
                           int64_t count) {
        std::string offsets, sizes, strides;
        for (size_t d = 0; d < shape.size(); ++d) {
          bool last = d + 1 == shape.size();
          offsets += (d ? ", " : "") + std::to_string(last ? begin : 0);
          sizes += (d ? ", " : "") + std::to_string(last ? count : shape[d]);
          strides += d ? ", 1" : "1";
        }
        std::vector<int64_t> out = shape;
        out.back() = count;
        return "  " + name + " = tensor.extract_slice %m[" + offsets + "] [" +
               sizes + "] [" + strides + "] : " + maskType + " to " +
               tensorType(out, mt) + "\n";
      };
      text += sliceMask("%m0", 0, first) + sliceMask("%m1", first, second);
    }
    text += "  %ko1 = arith.addi %ko, %c_half : index\n";
    text = "  %c_half = arith.constant " + std::to_string(first) +
           " : index\n" + text;
    text += localAttention("%q", "%k0", "%v0", "%m0", "%qo", "%ko", first,
                           "%o0", "%l0") +
            localAttention("%q", "%k1", "%v1", "%m1", "%qo", "%ko1", second,
                           "%o1", "%l1") +
            "  %o, %lse = cp.merge %o0, %l0, %o1, %l1 : " + oType + ", " +
            lseType + "\n  return %o, %lse : " + oType + ", " + lseType + "\n";
    return text;
  }

  const Config &c;
  const Case &cs;
  std::string qType, kType, vType, oType, lseType, maskType, sinksType,
      structured;
};

} // namespace

void emitMlir(const Config &c) {
  std::printf("// cp-run-attention: B=%" PRId64 " H=%" PRId64 " Hkv=%" PRId64
              " S=%" PRId64 " D=%" PRId64 " Dv=%" PRId64 " P=%" PRId64 " %s\n",
              c.batch, c.heads, c.kvHeads, c.seq, c.headDim, c.valueDim, c.p,
              c.typeName());
  std::printf("shard.grid @cp(shape = %" PRId64 ")\n", c.p);
  for (const Case &cs : c.cases)
    std::printf("%s", CaseEmitter(c, cs).emit().c_str());
}

} // namespace cp::run
