//===- cp-run-attention.cpp - run compiled attention on MPI ranks ---------===//
//
// The numeric check of compiled cp programs. For one attention shape and a
// list of cases (mask kinds), it either prints the cp IR of one function
// per case (--emit-mlir), or loads a shared object compiled from that IR
// (--lib) and, on every rank: builds the same deterministic global Q, K, V
// and masks, takes this rank's contiguous shard, calls the compiled
// function, and compares with the plain full attention of
// ReferenceAttention.h in double precision. Rank 0 prints one line per case
// with the max abs error over all ranks, the wall time, the bytes each
// rank sent and the time shifts were in flight (libcp_runtime's counters).
//
//===----------------------------------------------------------------------===//

#include "DeviceMirror.h"
#include "ReferenceAttention.h"
#include "cp/Runtime/cp_runtime.h"

#include <mpi.h>

#include <dlfcn.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

using namespace cp::tools;

namespace {

//===----------------------------------------------------------------------===//
// Configuration
//===----------------------------------------------------------------------===//

enum class ElementType { f32, f16, bf16 };

/// How one case masks attention: a structured mask on the op, and an
/// explicit mask operand given with the global or the local query extent.
struct Case {
  std::string name;
  std::string structured = "none"; // none, causal, window
  int64_t window = 0;
  enum class Explicit {
    none,
    globalBool,
    localBool,
    globalBias
  } explicitMask = Explicit::none;
  /// Also return and check the per-row log-sum-exp (cp.local_attention's
  /// second result; single process only).
  bool lse = false;
  /// Global positions of the first query row and key column; with +lse the
  /// structured mask is evaluated at (qOffset + i, kvOffset + j).
  int64_t qOffset = 0, kvOffset = 0;
  /// With +lse: attend the two halves of the keys separately and combine
  /// them with cp.merge.
  bool merge = false;
  /// Flex-style regions on cp.attention: a document mask_mod over segment
  /// ids of the global sequence (an extra operand), a causal mask written
  /// as a mask_mod, and score_mods (tanh soft-capping at `softcap`, ALiBi).
  bool document = false;
  bool causalModRegion = false;
  double softcap = 0;
  bool alibi = false;

  bool hasModRegions() const {
    return document || causalModRegion || softcap > 0 || alibi;
  }
};

struct Config {
  int64_t p = 1, batch = 1, heads = 8, kvHeads = 2, seq = 64, headDim = 16,
          valueDim = 16;
  ElementType type = ElementType::f32;
  std::vector<Case> cases;
  std::string lib, scheme;
  bool emitMlir = false;
  std::optional<double> tolerance;
  std::optional<int64_t> expectBytes;
  int repeat = 1;
  /// Run on device buffers (a program compiled with cp-compile --target=nvvm).
  bool gpu = false;
  /// The op's layout: rank r holds chunks r and 2P-1-r of 2P chunks.
  bool zigzag = false;

  int64_t localLen() const { return seq / p; }

  /// The global rows rank `rank` holds, as (first row, count) blocks in
  /// local order.
  std::vector<std::pair<int64_t, int64_t>> rowBlocks(int64_t rank) const {
    int64_t l = localLen();
    if (!zigzag)
      return {{rank * l, l}};
    int64_t c = l / 2;
    return {{rank * c, c}, {(2 * p - 1 - rank) * c, c}};
  }
  const char *typeName() const {
    return type == ElementType::f32   ? "f32"
           : type == ElementType::f16 ? "f16"
                                      : "bf16";
  }
  /// Max abs error allowed: f32 arithmetic, plus one rounding of the output
  /// to the storage type (|O| <= max |V| = 1).
  double defaultTolerance() const {
    return type == ElementType::f32   ? 1e-5
           : type == ElementType::f16 ? 1e-3
                                      : 8e-3;
  }
};

[[noreturn]] void usageError(const std::string &message) {
  std::fprintf(stderr, "cp-run-attention: %s\n", message.c_str());
  std::fprintf(
      stderr,
      "usage: cp-run-attention --P N --B N --H N --Hkv N --S N --D N --Dv N\n"
      "         [--dtype f32|f16|bf16] --case NAME=MASK [--case ...]\n"
      "         [--layout contiguous|zigzag]\n"
      "         (--emit-mlir [--scheme S] | --lib FILE.so [--tol X]\n"
      "          [--expect-bytes N] [--repeat N] [--device cpu|gpu])\n"
      "  MASK: none | causal | window:W, optionally +explicit-global,\n"
      "        +explicit-local or +bias-global (e.g. causal+explicit-global),\n"
      "        and regions: +document (mask_mod on segment ids),\n"
      "        +causal-mod (causal as a mask_mod), +softcap:C, +alibi\n"
      "        and +lse to check the log-sum-exp too (--P 1: the IR is then\n"
      "        cp.local_attention itself)\n");
  std::exit(2);
}

Case parseCase(const std::string &text) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    usageError("--case expects NAME=MASK, got '" + text + "'");
  Case c;
  c.name = text.substr(0, eq);
  std::stringstream parts(text.substr(eq + 1));
  std::string part;
  while (std::getline(parts, part, '+')) {
    if (part == "none" || part == "causal") {
      c.structured = part;
    } else if (part.rfind("window:", 0) == 0) {
      c.structured = "window";
      c.window = std::atoll(part.c_str() + 7);
      if (c.window <= 0)
        usageError("window:W needs W > 0 in '" + text + "'");
    } else if (part == "explicit-global") {
      c.explicitMask = Case::Explicit::globalBool;
    } else if (part == "explicit-local") {
      c.explicitMask = Case::Explicit::localBool;
    } else if (part == "bias-global") {
      c.explicitMask = Case::Explicit::globalBias;
    } else if (part == "document") {
      c.document = true;
    } else if (part == "causal-mod") {
      c.causalModRegion = true;
    } else if (part.rfind("softcap:", 0) == 0) {
      c.softcap = std::atof(part.c_str() + 8);
      if (c.softcap <= 0)
        usageError("softcap:C needs C > 0 in '" + text + "'");
    } else if (part == "alibi") {
      c.alibi = true;
    } else if (part == "lse") {
      c.lse = true;
    } else if (part == "merge") {
      c.merge = true;
    } else if (part.rfind("at:", 0) == 0) {
      if (std::sscanf(part.c_str(), "at:%lld:%lld",
                      reinterpret_cast<long long *>(&c.qOffset),
                      reinterpret_cast<long long *>(&c.kvOffset)) != 2)
        usageError("at:QO:KO needs two offsets in '" + text + "'");
    } else {
      usageError("unknown mask part '" + part + "' in '" + text + "'");
    }
  }
  return c;
}

Config parseArgs(int argc, char **argv) {
  Config c;
  auto number = [&](int &i) {
    if (i + 1 >= argc)
      usageError(std::string(argv[i]) + " needs a value");
    return std::atoll(argv[++i]);
  };
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--P")
      c.p = number(i);
    else if (a == "--B")
      c.batch = number(i);
    else if (a == "--H")
      c.heads = number(i);
    else if (a == "--Hkv")
      c.kvHeads = number(i);
    else if (a == "--S")
      c.seq = number(i);
    else if (a == "--D")
      c.headDim = number(i);
    else if (a == "--Dv")
      c.valueDim = number(i);
    else if (a == "--repeat")
      c.repeat = static_cast<int>(number(i));
    else if (a == "--expect-bytes")
      c.expectBytes = number(i);
    else if (a == "--emit-mlir")
      c.emitMlir = true;
    else if (a == "--device" && i + 1 < argc) {
      std::string d = argv[++i];
      if (d != "cpu" && d != "gpu")
        usageError("--device must be cpu or gpu, got '" + d + "'");
      c.gpu = d == "gpu";
    } else if (a == "--case" && i + 1 < argc)
      c.cases.push_back(parseCase(argv[++i]));
    else if (a == "--lib" && i + 1 < argc)
      c.lib = argv[++i];
    else if (a == "--scheme" && i + 1 < argc)
      c.scheme = argv[++i];
    else if (a == "--layout" && i + 1 < argc) {
      std::string layout = argv[++i];
      if (layout != "contiguous" && layout != "zigzag")
        usageError("--layout must be contiguous or zigzag, got '" + layout +
                   "'");
      c.zigzag = layout == "zigzag";
    } else if (a == "--tol" && i + 1 < argc)
      c.tolerance = std::atof(argv[++i]);
    else if (a == "--dtype" && i + 1 < argc) {
      std::string t = argv[++i];
      if (t == "f32")
        c.type = ElementType::f32;
      else if (t == "f16")
        c.type = ElementType::f16;
      else if (t == "bf16")
        c.type = ElementType::bf16;
      else
        usageError("--dtype must be f32, f16 or bf16, got '" + t + "'");
    } else
      usageError("unknown or incomplete argument '" + a + "'");
  }
  if (c.cases.empty())
    usageError("give at least one --case");
  if (c.p <= 0 || c.seq % c.p != 0)
    usageError("--S (" + std::to_string(c.seq) +
               ") must be a multiple of --P (" + std::to_string(c.p) + ")");
  if (c.zigzag && c.seq % (2 * c.p) != 0)
    usageError("--layout zigzag needs --S (" + std::to_string(c.seq) +
               ") to be a multiple of 2 * --P");
  if (c.kvHeads <= 0 || c.heads % c.kvHeads != 0)
    usageError("--H must be a multiple of --Hkv");
  if (!c.emitMlir && c.lib.empty())
    usageError("give --emit-mlir or --lib");
  for (const Case &cs : c.cases) {
    if (cs.lse && c.zigzag)
      usageError("+lse is about cp.local_attention; --layout zigzag is not");
    if (cs.lse && c.p != 1)
      usageError("+lse needs --P 1: only cp.local_attention returns the "
                 "log-sum-exp");
    if (cs.hasModRegions() && cs.lse)
      usageError("+lse checks cp.local_attention; mask and score regions are "
                 "checked on cp.attention");
    if ((cs.qOffset || cs.kvOffset || cs.merge) && !cs.lse)
      usageError("+at:QO:KO and +merge need +lse (they are about "
                 "cp.local_attention)");
  }
  return c;
}

//===----------------------------------------------------------------------===//
// IR emission
//===----------------------------------------------------------------------===//

std::string tensorType(const std::vector<int64_t> &shape, const char *type) {
  std::string s = "tensor<";
  for (int64_t d : shape)
    s += std::to_string(d) + "x";
  return s + type + ">";
}

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
    if (!cs.lse)
      body = shardedAttention();
    else if (!cs.merge)
      body = localAttention("%q", "%k", "%v", "%m", "%qo", "%ko", c.seq, "%o",
                            "%lse") +
             "  return %o, %lse : " + oType + ", " + lseType + "\n";
    else
      body = mergedHalves();
    std::string results = cs.lse ? "(" + oType + ", " + lseType + ")" : oType;
    std::string offsets;
    if (cs.lse)
      offsets = "  %qo = arith.constant " + std::to_string(cs.qOffset) +
                " : index\n  %ko = arith.constant " +
                std::to_string(cs.kvOffset) + " : index\n";
    std::string seg =
        cs.document ? ", %seg: " + tensorType({c.seq}, "i32") : std::string();
    return "func.func @" + cs.name + "(%q: " + qType + ", %k: " + kType +
           ", %v: " + vType + (maskType.empty() ? "" : ", %m: " + maskType) +
           seg + ") -> " + results + " {\n" + offsets + body + "}\n";
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

  /// cp.attention on the CP group; a scheme pass decides how.
  std::string shardedAttention() const {
    std::string scheme = c.scheme.empty() ? "" : " scheme = " + c.scheme;
    std::string mask = maskType.empty() ? "" : " explicit_mask %m";
    std::string layout = c.zigzag ? " layout = zigzag" : "";
    std::string mods =
        cs.document ? " mod_operands(%seg : " + tensorType({c.seq}, "i32") + ")"
                    : std::string();
    std::string regions = modRegions();
    return "  %o = cp.attention %q, %k, %v" + mask + mods +
           " on @cp grid_axes = [0]" + structured + layout + scheme +
           (regions.empty() ? "\n" : "\n" + regions) + "      : " + qType +
           ", " + kType + ", " + vType +
           (maskType.empty() ? "" : ", " + maskType) + " -> " + oType +
           "\n  return %o : " + oType + "\n";
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
    return "  " + o + ", " + lse + " = cp.local_attention " + q + ", " + k +
           ", " + v + " offsets(" + qo + ", " + ko + ")" + mask + structured +
           "\n      : " + qType + ", " + kt + ", " + vt +
           (mt.empty() ? "" : ", " + mt) + " -> " + oType + ", " + lseType +
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
  std::string qType, kType, vType, oType, lseType, maskType, structured;
};

void emitMlir(const Config &c) {
  std::printf("// cp-run-attention: B=%" PRId64 " H=%" PRId64 " Hkv=%" PRId64
              " S=%" PRId64 " D=%" PRId64 " Dv=%" PRId64 " P=%" PRId64 " %s\n",
              c.batch, c.heads, c.kvHeads, c.seq, c.headDim, c.valueDim, c.p,
              c.typeName());
  std::printf("shard.grid @cp(shape = %" PRId64 ")\n", c.p);
  for (const Case &cs : c.cases)
    std::printf("%s", CaseEmitter(c, cs).emit().c_str());
}

//===----------------------------------------------------------------------===//
// Data: deterministic on every rank
//===----------------------------------------------------------------------===//

uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  return x ^ (x >> 33);
}

uint64_t hash(uint64_t a, uint64_t b, uint64_t c, uint64_t d) {
  return mix(mix(mix(mix(a) ^ b) ^ c) ^ d);
}

/// A value in [-1, 1) for element `index` of tensor `id`.
double uniform(uint64_t id, uint64_t index) {
  return static_cast<double>(hash(id, index, 17, 29) >> 11) * 0x1.0p-52 - 1.0;
}

uint16_t toBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  bits += 0x7fff + ((bits >> 16) & 1); // round to nearest even
  return static_cast<uint16_t>(bits >> 16);
}
float fromBf16(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

/// A tensor in the storage type, with its values as seen by the compiled
/// code (after rounding) in double for the reference.
struct HostTensor {
  std::vector<int64_t> shape;
  std::vector<unsigned char> bytes;
  std::vector<double> values;
  int64_t elementBytes = 4;

  int64_t size() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
};

HostTensor makeTensor(std::vector<int64_t> shape, ElementType type) {
  HostTensor t;
  t.shape = std::move(shape);
  t.elementBytes = type == ElementType::f32 ? 4 : 2;
  t.values.assign(t.size(), 0.0);
  t.bytes.assign(t.size() * t.elementBytes, 0);
  return t;
}

void store(HostTensor &t, int64_t i, double value, ElementType type) {
  float f = static_cast<float>(value);
  if (type == ElementType::f32) {
    std::memcpy(&t.bytes[i * 4], &f, 4);
    t.values[i] = f;
  } else if (type == ElementType::f16) {
    _Float16 h = static_cast<_Float16>(f);
    std::memcpy(&t.bytes[i * 2], &h, 2);
    t.values[i] = static_cast<double>(h);
  } else {
    uint16_t h = toBf16(f);
    std::memcpy(&t.bytes[i * 2], &h, 2);
    t.values[i] = fromBf16(h);
  }
}

double load(const HostTensor &t, int64_t i, ElementType type) {
  if (type == ElementType::f32) {
    float f;
    std::memcpy(&f, &t.bytes[i * 4], 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, &t.bytes[i * 2], 2);
  if (type == ElementType::bf16)
    return fromBf16(h);
  _Float16 x;
  std::memcpy(&x, &h, 2);
  return static_cast<double>(x);
}

/// Explicit masks as functions of global positions. Some rows see nothing,
/// so fully masked rows are always exercised.
bool explicitAllows(int64_t h, int64_t q, int64_t k) {
  if (q % 13 == 7)
    return false;
  return hash(3, h, q, k) % 4 != 0;
}
double explicitBias(int64_t q, int64_t k) {
  uint64_t x = hash(5, 0, q, k);
  if (q % 11 == 4 || x % 9 == 0)
    return -std::numeric_limits<double>::infinity();
  return (static_cast<double>(x % 7) - 3.0) * 0.25;
}

/// Segment ids of the global sequence for document masks: non-decreasing,
/// documents of 1 to ~60 tokens.
std::vector<int32_t> segmentIds(int64_t length) {
  std::vector<int32_t> ids(length);
  int32_t id = 0;
  for (int64_t i = 0; i < length; ++i) {
    if (i > 0 && hash(7, i, 0, 0) % 23 == 0)
      ++id;
    ids[i] = id;
  }
  return ids;
}

/// What the case's score_mod does to a scaled score, in double.
double modifiedScore(const Case &c, int64_t heads, double score, int64_t h,
                     int64_t q, int64_t k) {
  if (c.softcap > 0)
    score = std::tanh(score / c.softcap) * c.softcap;
  if (c.alibi)
    score += std::exp2(-8.0 * (h + 1) / heads) * double(k - q);
  return score;
}

bool structuredAllows(const Case &c, int64_t q, int64_t k) {
  if (c.structured == "causal")
    return k <= q;
  if (c.structured == "window")
    return k <= q && q - c.window < k;
  return true;
}

//===----------------------------------------------------------------------===//
// Running a case
//===----------------------------------------------------------------------===//

template <int R> Descriptor<R> describe(HostTensor &t) {
  return denseDescriptor<R>(t.bytes.data(), t.shape.data());
}

/// The rows of `blocks` ((begin, count) along `dim`) of a row-major tensor,
/// one after the other: a rank's shard of a sequence-sharded tensor.
HostTensor gatherRows(const HostTensor &t, int dim,
                      const std::vector<std::pair<int64_t, int64_t>> &blocks) {
  int64_t rows = 0;
  for (auto [begin, count] : blocks)
    rows += count;
  HostTensor s;
  s.shape = t.shape;
  s.shape[dim] = rows;
  s.elementBytes = t.elementBytes;
  int64_t inner = t.elementBytes, outer = 1;
  for (size_t d = dim + 1; d < t.shape.size(); ++d)
    inner *= t.shape[d];
  for (int d = 0; d < dim; ++d)
    outer *= t.shape[d];
  s.bytes.resize(outer * rows * inner);
  for (int64_t o = 0; o < outer; ++o) {
    int64_t row = 0;
    for (auto [begin, count] : blocks) {
      std::memcpy(&s.bytes[(o * rows + row) * inner],
                  &t.bytes[(o * t.shape[dim] + begin) * inner], count * inner);
      row += count;
    }
  }
  return s;
}

struct Outcome {
  double maxError = 0;
  double seconds = 0;
  int64_t bytes = 0;
  /// Time shifts spent in flight while the program computed.
  double secondsInFlight = 0;
};

Outcome runCase(const Config &c, const Case &cs, void *library, int rank) {
  ElementType type = c.type;
  int64_t l = c.localLen(), s = c.seq;
  HostTensor q = makeTensor({c.batch, c.heads, s, c.headDim}, type);
  HostTensor k = makeTensor({c.batch, c.kvHeads, s, c.headDim}, type);
  HostTensor v = makeTensor({c.batch, c.kvHeads, s, c.valueDim}, type);
  for (int64_t i = 0; i < q.size(); ++i)
    store(q, i, uniform(1, i), type);
  for (int64_t i = 0; i < k.size(); ++i)
    store(k, i, uniform(2, i), type);
  for (int64_t i = 0; i < v.size(); ++i)
    store(v, i, uniform(3, i), type);

  // Reference rows of this rank, in double.
  std::vector<std::pair<int64_t, int64_t>> blocks = c.rowBlocks(rank);
  /// The global row of local row i.
  auto globalRow = [&](int64_t i) {
    for (auto [begin, count] : blocks) {
      if (i < count)
        return begin + i;
      i -= count;
    }
    return int64_t(-1);
  };
  cp::reference::Shape shape{c.batch, c.heads,   c.kvHeads, s,
                             s,       c.headDim, c.valueDim};
  std::vector<double> expected(c.batch * c.heads * l * c.valueDim);
  std::vector<double> expectedLse(c.batch * c.heads * l);
  std::vector<int32_t> segments = segmentIds(s);
  auto allowed = [&](int64_t, int64_t h, int64_t i, int64_t j) {
    if (!structuredAllows(cs, cs.qOffset + i, cs.kvOffset + j))
      return false;
    if (cs.causalModRegion && j > i)
      return false;
    if (cs.document && segments[i] != segments[j])
      return false;
    if (cs.explicitMask == Case::Explicit::globalBool ||
        cs.explicitMask == Case::Explicit::localBool)
      return explicitAllows(
          cs.explicitMask == Case::Explicit::globalBool ? h : 0, i, j);
    return true;
  };
  // The bias, rounded to the storage type as the compiled code sees it.
  HostTensor bias;
  if (cs.explicitMask == Case::Explicit::globalBias) {
    bias = makeTensor({s, s}, type);
    for (int64_t i = 0; i < s; ++i)
      for (int64_t j = 0; j < s; ++j)
        store(bias, i * s + j, explicitBias(i, j), type);
  }
  auto biasOf = [&](int64_t, int64_t, int64_t i, int64_t j) {
    return cs.explicitMask == Case::Explicit::globalBias
               ? bias.values[i * s + j]
               : 0.0;
  };
  int64_t localRow = 0;
  for (auto [begin, count] : blocks) {
    std::vector<double> rows(c.batch * c.heads * count * c.valueDim);
    std::vector<double> rowsLse(c.batch * c.heads * count);
    auto scoreMod = [&](double score, int64_t, int64_t h, int64_t i,
                        int64_t j) {
      return modifiedScore(cs, c.heads, score, h, i, j);
    };
    cp::reference::attention<double>(
        shape, q.values.data(), k.values.data(), v.values.data(), rows.data(),
        begin, begin + count, 1.0 / std::sqrt(double(c.headDim)), allowed,
        biasOf, cs.lse ? rowsLse.data() : nullptr, scoreMod);
    for (int64_t bh = 0; bh < c.batch * c.heads; ++bh)
      for (int64_t i = 0; i < count; ++i) {
        for (int64_t d = 0; d < c.valueDim; ++d)
          expected[(bh * l + localRow + i) * c.valueDim + d] =
              rows[(bh * count + i) * c.valueDim + d];
        expectedLse[bh * l + localRow + i] = rowsLse[bh * count + i];
      }
    localRow += count;
  }

  // This rank's shards and mask.
  HostTensor qLocal = gatherRows(q, 2, blocks);
  HostTensor kLocal = gatherRows(k, 2, blocks);
  HostTensor vLocal = gatherRows(v, 2, blocks);
  HostTensor out = makeTensor({c.batch, c.heads, l, c.valueDim}, type);
  HostTensor mask;
  if (cs.explicitMask == Case::Explicit::globalBool ||
      cs.explicitMask == Case::Explicit::localBool) {
    bool global = cs.explicitMask == Case::Explicit::globalBool;
    mask.shape = maskShape(c, cs.explicitMask);
    mask.elementBytes = 1;
    mask.bytes.resize(mask.size());
    int64_t rows = global ? s : l, heads = global ? c.heads : 1;
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < s; ++j)
          mask.bytes[(h * rows + i) * s + j] =
              explicitAllows(global ? h : 0, global ? i : globalRow(i), j);
  } else if (cs.explicitMask == Case::Explicit::globalBias) {
    mask = bias;
  }

  std::string symbol = "_mlir_ciface_" + cs.name;
  void *entry = dlsym(library, symbol.c_str());
  if (!entry) {
    std::fprintf(stderr, "cp-run-attention: rank %d: %s not found in %s\n",
                 rank, symbol.c_str(), c.lib.c_str());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  auto dq = describe<4>(qLocal), dk = describe<4>(kLocal),
       dv = describe<4>(vLocal), dout = describe<4>(out);
  // The segment ids (global, the same on every rank) for document masks.
  int64_t segmentShape[1] = {s};
  auto dseg = denseDescriptor<1>(segments.data(), segmentShape);
  auto dm4 = mask.shape.size() == 4 ? describe<4>(mask) : Descriptor<4>{};
  auto dm2 = mask.shape.size() == 2 ? describe<2>(mask) : Descriptor<2>{};
  void *dmask = mask.shape.size() == 4 ? static_cast<void *>(&dm4)
                                       : static_cast<void *>(&dm2);
  std::vector<float> lse(expectedLse.size(), 0.0f);
  Descriptor<3> dlse{
      lse.data(), lse.data(), 0, {c.batch, c.heads, l}, {c.heads * l, l, 1}};
  std::optional<DeviceMirror> device;
  if (c.gpu) {
    device.emplace();
    device->mirror(dq, qLocal.bytes.size());
    device->mirror(dk, kLocal.bytes.size());
    device->mirror(dv, vLocal.bytes.size());
    device->mirror(dout, out.bytes.size());
    if (cs.explicitMask != Case::Explicit::none) {
      if (mask.shape.size() == 4)
        device->mirror(dm4, mask.bytes.size());
      else
        device->mirror(dm2, mask.bytes.size());
    }
    if (cs.document)
      device->mirror(dseg, segments.size() * sizeof(int32_t));
    if (cs.lse)
      device->mirror(dlse, lse.size() * sizeof(float));
    device->synchronize();
  }
  // Operands in order, then the results (out-parameters).
  std::vector<void *> args{&dq, &dk, &dv};
  if (cs.explicitMask != Case::Explicit::none)
    args.push_back(dmask);
  if (cs.document)
    args.push_back(&dseg);
  args.push_back(&dout);
  if (cs.lse)
    args.push_back(&dlse);
  auto call = [&] {
    using Fn4 = void (*)(void *, void *, void *, void *);
    using Fn5 = void (*)(void *, void *, void *, void *, void *);
    using Fn6 = void (*)(void *, void *, void *, void *, void *, void *);
    using Fn7 =
        void (*)(void *, void *, void *, void *, void *, void *, void *);
    switch (args.size()) {
    case 4:
      reinterpret_cast<Fn4>(entry)(args[0], args[1], args[2], args[3]);
      break;
    case 5:
      reinterpret_cast<Fn5>(entry)(args[0], args[1], args[2], args[3], args[4]);
      break;
    case 6:
      reinterpret_cast<Fn6>(entry)(args[0], args[1], args[2], args[3], args[4],
                                   args[5]);
      break;
    default:
      reinterpret_cast<Fn7>(entry)(args[0], args[1], args[2], args[3], args[4],
                                   args[5], args[6]);
      break;
    }
  };

  call(); // warm-up: communicators, page faults
  cp_rt_reset_counters();
  MPI_Barrier(MPI_COMM_WORLD);
  double start = MPI_Wtime();
  for (int r = 0; r < c.repeat; ++r)
    call();
  double elapsed = (MPI_Wtime() - start) / c.repeat;

  if (device)
    device->copyBack();
  Outcome result;
  result.bytes = cp_rt_bytes_sent(-1) / c.repeat;
  result.secondsInFlight = cp_rt_seconds_in_flight() / c.repeat;
  for (size_t i = 0; i < expected.size(); ++i) {
    double got = load(out, static_cast<int64_t>(i), type);
    double err = std::fabs(got - expected[i]);
    if (!(err <= result.maxError)) // NaN counts as infinitely wrong
      result.maxError = std::isnan(err) ? INFINITY : err;
  }
  // A row that sees no key has lse = -inf on both sides; else the error.
  for (size_t i = 0; i < expectedLse.size() && cs.lse; ++i) {
    bool bothMasked =
        std::isinf(expectedLse[i]) && std::isinf(lse[i]) && lse[i] < 0;
    double err = bothMasked ? 0.0 : std::fabs(lse[i] - expectedLse[i]);
    if (!(err <= result.maxError))
      result.maxError = std::isnan(err) ? INFINITY : err;
  }
  result.seconds = elapsed;
  return result;
}

} // namespace

int main(int argc, char **argv) {
  Config c = parseArgs(argc, argv);
  if (c.emitMlir) {
    emitMlir(c);
    return 0;
  }
  cp_rt_init(&argc, &argv);
  int rank = cp_rt_world_rank(), size = cp_rt_world_size();
  if (size != c.p) {
    if (rank == 0)
      std::fprintf(stderr,
                   "cp-run-attention: --P %" PRId64
                   " but %d MPI ranks; run under mpirun -np %" PRId64 "\n",
                   c.p, size, c.p);
    // Still run: the compiled program must itself refuse a mismatched grid.
  }
  void *library = dlopen(c.lib.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!library) {
    std::fprintf(stderr, "cp-run-attention: rank %d: cannot load %s: %s\n",
                 rank, c.lib.c_str(), dlerror());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  double tolerance = c.tolerance.value_or(c.defaultTolerance());
  int failures = 0;
  for (const Case &cs : c.cases) {
    Outcome o = runCase(c, cs, library, rank);
    double maxError = 0, maxSeconds = 0, maxInFlight = 0;
    int64_t minBytes = 0, maxBytes = 0;
    MPI_Reduce(&o.maxError, &maxError, 1, MPI_DOUBLE, MPI_MAX, 0,
               MPI_COMM_WORLD);
    MPI_Reduce(&o.seconds, &maxSeconds, 1, MPI_DOUBLE, MPI_MAX, 0,
               MPI_COMM_WORLD);
    MPI_Reduce(&o.bytes, &minBytes, 1, MPI_INT64_T, MPI_MIN, 0, MPI_COMM_WORLD);
    MPI_Reduce(&o.bytes, &maxBytes, 1, MPI_INT64_T, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&o.secondsInFlight, &maxInFlight, 1, MPI_DOUBLE, MPI_MAX, 0,
               MPI_COMM_WORLD);
    if (rank != 0)
      continue;
    bool ok = maxError <= tolerance;
    std::string bytesNote;
    if (c.expectBytes) {
      bool bytesOk = maxBytes == *c.expectBytes;
      ok = ok && bytesOk;
      bytesNote = " predicted=" + std::to_string(*c.expectBytes) +
                  (bytesOk ? "" : " BYTES-MISMATCH");
    }
    failures += !ok;
    std::printf("%s case=%s dtype=%s P=%" PRId64 " max_abs_err=%.3e tol=%.1e "
                "time_ms=%.3f bytes_sent_per_rank=%" PRId64 "..%" PRId64
                "%s in_flight_ms=%.3f\n",
                ok ? "PASS" : "FAIL", cs.name.c_str(), c.typeName(), c.p,
                maxError, tolerance, maxSeconds * 1e3, minBytes, maxBytes,
                bytesNote.c_str(), maxInFlight * 1e3);
  }
  if (rank == 0)
    std::printf("cp-run-attention: %zu cases, %d failed\n", c.cases.size(),
                failures);
  MPI_Bcast(&failures, 1, MPI_INT, 0, MPI_COMM_WORLD);
  cp_rt_finalize();
  return failures ? 1 : 0;
}
