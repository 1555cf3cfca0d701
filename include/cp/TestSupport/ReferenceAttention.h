//===- ReferenceAttention.h - plain attention, the ground truth -*- C++ -*-===//
//
// Single-device attention written the obvious way: for each query row, all
// S scores, the masked softmax over them, the weighted sum of V. It shares
// nothing with the compiler's tiled algorithm, which is what makes it a
// reference (numeric tests) and a baseline (bench/).
//
//===----------------------------------------------------------------------===//

#ifndef CP_TESTSUPPORT_REFERENCEATTENTION_H
#define CP_TESTSUPPORT_REFERENCEATTENTION_H

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace cp::reference {

/// BHSD shapes of one attention problem.
struct Shape {
  int64_t batch, heads, kvHeads, queries, keys, headDim, valueDim;
};

/// A score transform that keeps the score.
struct KeepScore {
  template <typename T>
  T operator()(T score, int64_t, int64_t, int64_t, int64_t) const {
    return score;
  }
};

/// Row i's scores against every key of one KV head (`kHead`, [Sk, D]):
/// scores[j] = scoreMod(scale * q . k_j) + bias, visible[j] whether the
/// mask allows j and the score is finite, raw[j] (when given) the scaled
/// dot product before scoreMod. Returns the largest visible score (-inf
/// when none is).
template <typename T, typename Allowed, typename Bias, typename ScoreMod>
T rowScores(const Shape &s, const T *qRow, const T *kHead, int64_t b,
            int64_t h, int64_t i, T scale, Allowed &allowed, Bias &bias,
            ScoreMod &scoreMod, std::vector<T> &scores,
            std::vector<char> &visible, std::vector<T> *raw = nullptr) {
  T max = -std::numeric_limits<T>::infinity();
  for (int64_t j = 0; j < s.keys; ++j) {
    visible[j] = allowed(b, h, i, j);
    if (!visible[j])
      continue;
    T dot = 0;
    for (int64_t d = 0; d < s.headDim; ++d)
      dot += qRow[d] * kHead[j * s.headDim + d];
    if (raw)
      (*raw)[j] = scale * dot;
    scores[j] = scoreMod(scale * dot, b, h, i, j) + bias(b, h, i, j);
    visible[j] = scores[j] != -std::numeric_limits<T>::infinity();
    if (visible[j] && scores[j] > max)
      max = scores[j];
  }
  return max;
}

/// out[b, h, i, :] for query rows i in [rowBegin, rowEnd) of a [B, H, Sq, D]
/// query tensor against [B, Hkv, Sk, D] keys and [B, Hkv, Sk, Dv] values
/// (row-major). `allowed(b, h, i, j)` says whether row i may see key j;
/// `scoreMod(score, b, h, i, j)` transforms the scaled score, then
/// `bias(b, h, i, j)` is added. A row that sees no key is 0. Scores are
/// kept for the whole row (L x S work and storage). When `lse` is given, it
/// receives each row's log(sum_j exp(score_j)) ([B, H, rows]), -inf for a
/// row that sees no key. With `sinks` ([H]), exp(sinks[h]) joins every
/// row's sum (and its lse) once, with no value row.
template <typename T, typename Allowed, typename Bias,
          typename ScoreMod = KeepScore>
void attention(const Shape &s, const T *q, const T *k, const T *v, T *out,
               int64_t rowBegin, int64_t rowEnd, T scale, Allowed allowed,
               Bias bias, T *lse = nullptr, ScoreMod scoreMod = ScoreMod(),
               const T *sinks = nullptr) {
  std::vector<T> scores(s.keys);
  std::vector<char> visible(s.keys);
  int64_t group = s.heads / s.kvHeads;
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t h = 0; h < s.heads; ++h) {
      int64_t hk = h / group;
      const T *kHead = k + (b * s.kvHeads + hk) * s.keys * s.headDim;
      const T *vHead = v + (b * s.kvHeads + hk) * s.keys * s.valueDim;
      for (int64_t i = rowBegin; i < rowEnd; ++i) {
        const T *qRow = q + ((b * s.heads + h) * s.queries + i) * s.headDim;
        T *oRow =
            out + ((b * s.heads + h) * (rowEnd - rowBegin) + (i - rowBegin)) *
                      s.valueDim;
        T max = rowScores(s, qRow, kHead, b, h, i, scale, allowed, bias,
                          scoreMod, scores, visible);
        if (sinks && sinks[h] > max)
          max = sinks[h];
        for (int64_t d = 0; d < s.valueDim; ++d)
          oRow[d] = 0;
        // A sink of -inf is no sink (and no NaN when max is -inf too).
        bool sink = sinks && sinks[h] != -std::numeric_limits<T>::infinity();
        T sum = sink ? std::exp(sinks[h] - max) : T(0);
        for (int64_t j = 0; j < s.keys; ++j) {
          if (!visible[j])
            continue;
          T w = std::exp(scores[j] - max);
          sum += w;
          for (int64_t d = 0; d < s.valueDim; ++d)
            oRow[d] += w * vHead[j * s.valueDim + d];
        }
        if (sum > 0)
          for (int64_t d = 0; d < s.valueDim; ++d)
            oRow[d] /= sum;
        if (lse)
          lse[(b * s.heads + h) * (rowEnd - rowBegin) + (i - rowBegin)] =
              sum > 0 ? max + std::log(sum)
                      : -std::numeric_limits<T>::infinity();
      }
    }
}

} // namespace cp::reference

#endif // CP_TESTSUPPORT_REFERENCEATTENTION_H
