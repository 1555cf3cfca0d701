//===- RunConfig.h - what one cp-run-attention run checks -------*- C++ -*-===//
//
// The attention shape, element type and layout of a run and its cases (mask
// kinds), as the command line gives them; the IR emitter, the host data and
// the runner all read them.
//
//===----------------------------------------------------------------------===//

#ifndef CP_TOOLS_CPRUNATTENTION_RUNCONFIG_H
#define CP_TOOLS_CPRUNATTENTION_RUNCONFIG_H

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cp::run {

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
  /// Attention sinks: an [H] f32 operand whose logit joins each row's
  /// softmax denominator (with +train or +grad, its gradient is checked
  /// too).
  bool sinks = false;

  /// Also run the backward and check dq, dk, dv against the reference
  /// gradient for a loss gradient dO (--P 1: cp.local_attention_grad).
  bool grad = false;
  /// With +grad and --scheme: a training step, the forward cp.attention
  /// (returning its lse) chained into cp.attention_grad; the output is
  /// checked as well as the gradients. Without it, cp.attention_grad is
  /// given the reference output and lse, so only the backward is under test.
  bool train = false;
  /// With --scheme: two layers, the first one's output the queries of a
  /// second cp.attention over the same keys and values (needs D = Dv);
  /// the reference applies plain attention twice.
  bool stacked = false;

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
  std::optional<double> tolerance, gradTolerance;
  std::optional<int64_t> expectBytes;
  int repeat = 1;
  /// Untimed calls before the timed ones: communicators, page faults.
  int warmup = 1;
  /// Run on device buffers (a program compiled with cp-compile --target=nvvm).
  bool gpu = false;
  /// The op's layout: rank r holds chunks r and 2P-1-r of 2P chunks.
  bool zigzag = false;
  /// +grad: the gradients in the storage type (else f32): partial sums are
  /// rounded and sent in it.
  bool gradInStorageType = false;

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
  /// Max abs error allowed on dq, dk, dv: f32 at 1e-4 (sums over up to S
  /// rows of products of O(1) values). f16/bf16 gradients are f32 sums, but
  /// the forward output they start from (D_i = rowsum(dO o O)) is rounded
  /// to the storage type: the forward's tolerance.
  double defaultGradTolerance() const {
    if (type == ElementType::f32)
      return 1e-4;
    // Rounding gradients of magnitude up to ~4 to the storage type.
    if (gradInStorageType)
      return type == ElementType::f16 ? 4e-3 : 3e-2;
    return defaultTolerance();
  }
};

/// The run the command line asks for. An unknown, incomplete or
/// inconsistent command line prints the usage and exits with status 2.
Config parseArgs(int argc, char **argv);

} // namespace cp::run

#endif // CP_TOOLS_CPRUNATTENTION_RUNCONFIG_H
