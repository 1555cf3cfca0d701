//===- ReferenceAttentionGrad.h - the attention gradient, plainly -*- C++ -*-=//
//
// The analytic gradient of the plain attention of ReferenceAttention.h,
// written the obvious way for the backward pass's numeric tests: for each
// query row, every score, the softmax P, then
//
//   dV_j += P_j dO            dP_j = dO . V_j
//   dS_j  = P_j (dP_j - sum_k P_k dP_k)
//   dQ   += dS_j m'(s_j) scale K_j      dK_j += dS_j m'(s_j) scale Q
//
// where s_j = scale Q . K_j is the score before the score transform m and
// m' its derivative. The row sum is taken over P dP directly (not as
// rowsum(dO o O), the FlashAttention-2 identity the compiler uses), and
// GQA's dK/dV sum the contributions of every query head of a KV group. It
// shares nothing with the compiler; test/Unit/ReferenceGradient.cpp checks
// it against finite differences.
//
//===----------------------------------------------------------------------===//

#ifndef CP_TESTSUPPORT_REFERENCEATTENTIONGRAD_H
#define CP_TESTSUPPORT_REFERENCEATTENTIONGRAD_H

#include "cp/TestSupport/ReferenceAttention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace cp::reference {

/// The derivative of KeepScore: 1.
struct KeepScoreGrad {
  template <typename T>
  T operator()(T, int64_t, int64_t, int64_t, int64_t) const {
    return 1;
  }
};

/// dq ([B, H, Sq, D]), dk ([B, Hkv, Sk, D]) and dv ([B, Hkv, Sk, Dv]) of
/// the loss sum(dout o out), where out is
/// attention(s, q, k, v, ..., allowed, bias, scoreMod) over all Sq rows
/// and dout is [B, H, Sq, Dv]. `scoreModGrad(score, b, h, i, j)` is the
/// derivative of `scoreMod` at `score`. With `sinks` ([H]) the softmax has
/// one more column per row, the sink's logit, whose value row is 0; its
/// gradient goes to `dsinks` ([H]) when given. The outputs are overwritten.
template <typename T, typename Allowed, typename Bias,
          typename ScoreMod = KeepScore, typename ScoreModGrad = KeepScoreGrad>
void attentionGrad(const Shape &s, const T *q, const T *k, const T *v,
                   const T *dout, T *dq, T *dk, T *dv, T scale,
                   Allowed allowed, Bias bias, ScoreMod scoreMod = ScoreMod(),
                   ScoreModGrad scoreModGrad = ScoreModGrad(),
                   const T *sinks = nullptr, T *dsinks = nullptr) {
  if (dsinks)
    std::fill(dsinks, dsinks + s.heads, T(0));
  std::fill(dq, dq + s.batch * s.heads * s.queries * s.headDim, T(0));
  std::fill(dk, dk + s.batch * s.kvHeads * s.keys * s.headDim, T(0));
  std::fill(dv, dv + s.batch * s.kvHeads * s.keys * s.valueDim, T(0));
  std::vector<T> raw(s.keys), probs(s.keys), dprobs(s.keys);
  std::vector<char> visible(s.keys);
  int64_t group = s.heads / s.kvHeads;
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t h = 0; h < s.heads; ++h) {
      int64_t hk = h / group;
      int64_t kvBase = (b * s.kvHeads + hk) * s.keys;
      for (int64_t i = 0; i < s.queries; ++i) {
        int64_t row = (b * s.heads + h) * s.queries + i;
        const T *qRow = q + row * s.headDim;
        const T *doRow = dout + row * s.valueDim;
        T *dqRow = dq + row * s.headDim;
        // Scores and the softmax, as in the forward.
        T max = rowScores(s, qRow, k + kvBase * s.headDim, b, h, i, scale,
                          allowed, bias, scoreMod, probs, visible, &raw);
        if (sinks && sinks[h] > max)
          max = sinks[h];
        bool sink = sinks && sinks[h] != -std::numeric_limits<T>::infinity();
        T sinkProb = sink ? std::exp(sinks[h] - max) : T(0);
        T sum = sinkProb;
        for (int64_t j = 0; j < s.keys; ++j)
          if (visible[j]) {
            probs[j] = std::exp(probs[j] - max);
            sum += probs[j];
          }
        if (sum == 0)
          continue; // a row that sees no key has output 0 and no gradient
        // dP, and the softmax's backward through sum_k P_k dP_k.
        T weighted = 0;
        for (int64_t j = 0; j < s.keys; ++j) {
          if (!visible[j])
            continue;
          probs[j] /= sum;
          T dp = 0;
          for (int64_t d = 0; d < s.valueDim; ++d)
            dp += doRow[d] * v[(kvBase + j) * s.valueDim + d];
          dprobs[j] = dp;
          weighted += probs[j] * dp;
        }
        // The sink's column: its dP is 0 (no value row).
        if (dsinks)
          dsinks[h] -= sinkProb / sum * weighted;
        for (int64_t j = 0; j < s.keys; ++j) {
          if (!visible[j])
            continue;
          for (int64_t d = 0; d < s.valueDim; ++d)
            dv[(kvBase + j) * s.valueDim + d] += probs[j] * doRow[d];
          T dscore = probs[j] * (dprobs[j] - weighted);
          T ddot = dscore * scoreModGrad(raw[j], b, h, i, j) * scale;
          for (int64_t d = 0; d < s.headDim; ++d) {
            dqRow[d] += ddot * k[(kvBase + j) * s.headDim + d];
            dk[(kvBase + j) * s.headDim + d] += ddot * qRow[d];
          }
        }
      }
    }
}

} // namespace cp::reference

#endif // CP_TESTSUPPORT_REFERENCEATTENTIONGRAD_H
