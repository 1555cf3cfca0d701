//===- MmaFragments.cpp - the mma.sync plumbing against the PTX ISA -------===//
//
// MmaFragments.h states what a tensor-core attention kernel assumes about
// registers: accumulator positions, the row each lane addresses for
// ldmatrix, which loads are transposed, P's accumulators reused as an A
// fragment, and the quad shuffles of a row reduction. This program emulates
// one warp on the CPU with the PTX ISA's definitions (cp/TestSupport/PtxIsa.h:
// fragment layouts of mma.m16n8k16 for 16-bit A/B and f32 C/D; ldmatrix
// .x4 with and without .trans; shfl.bfly) and checks, with small integers
// so that every sum is exact:
//
//   - the header's accumulator positions against the ISA's C layout;
//   - S = Q K^T from ldmatrix'd Q and K tiles against a plain matmul;
//   - the row max of S by quad shuffles against the plain row max;
//   - O = P V with P taken from S's accumulators and V ldmatrix'd with
//     .trans, against a plain matmul;
//   - the backward's dQ = dS K: accumulators of dS^T (rows keys, columns
//     queries) stored transposed into shared memory at their
//     accumulatorPosition, read back as A fragments by ldmatrix at
//     ldmatrixAddressA, times K by ldmatrix.trans, against a plain matmul.
//
// --break uses the non-transposed load for V: that must fail. Prints one
// line per check and exits 1 on any mismatch.
//
//===----------------------------------------------------------------------===//

#include "cp/Conversion/AttentionCommon/MmaFragments.h"
#include "cp/TestSupport/PtxIsa.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <vector>

using namespace mlir::cp::mma;

namespace {

// The PTX ISA's layouts (PtxIsa.h), as Positions.
Position isaA(int lane, int i) {
  cp::ptx::RowCol p = cp::ptx::mmaA(lane, i);
  return {p.row, p.col};
}
Position isaB(int lane, int i) {
  cp::ptx::RowCol p = cp::ptx::mmaB(lane, i);
  return {p.row, p.col};
}
Position isaC(int lane, int i) {
  cp::ptx::RowCol p = cp::ptx::mmaC(lane, i);
  return {p.row, p.col};
}

/// A row-major matrix in "shared memory".
struct Tile {
  int rows, cols;
  std::vector<float> data;
  float at(int r, int c) const { return data[r * cols + c]; }
};

/// ldmatrix.sync.aligned.m8n8.x4.b16 on `tile` (PtxIsa.h): each lane
/// gives `address(lane)` relative to (row0, col0).
using Fragment = std::array<float, 8>; // 4 registers x 2 halves
std::array<Fragment, kWarpSize> ldmatrixX4(const Tile &tile, int row0, int col0,
                                           Position (*address)(int),
                                           bool trans) {
  std::array<Position, kWarpSize> rowStart;
  for (int lane = 0; lane < kWarpSize; ++lane) {
    Position p = address(lane);
    rowStart[lane] = {row0 + p.row, col0 + p.col};
  }
  std::array<Fragment, kWarpSize> out{};
  for (int lane = 0; lane < kWarpSize; ++lane)
    for (int m = 0; m < 4; ++m)
      for (int j = 0; j < 2; ++j) {
        cp::ptx::LdmatrixSource src =
            cp::ptx::ldmatrixSource(lane, m, j, trans);
        Position start = rowStart[src.source];
        out[lane][2 * m + j] = tile.at(start.row, start.col + src.element);
      }
  return out;
}

/// mma.sync.aligned.m16n8k16.row.col.f32: D = A B + C on the warp's
/// fragments, positions by the ISA.
using Accumulator = std::array<float, 4>;
void mma(const std::array<std::array<float, 8>, kWarpSize> &a,
         const std::array<std::array<float, 4>, kWarpSize> &b,
         std::array<Accumulator, kWarpSize> &c) {
  float A[kM][kK], B[kK][kN], C[kM][kN];
  for (int lane = 0; lane < kWarpSize; ++lane) {
    for (int i = 0; i < 8; ++i) {
      Position p = isaA(lane, i);
      A[p.row][p.col] = a[lane][i];
    }
    for (int i = 0; i < 4; ++i) {
      Position p = isaB(lane, i);
      B[p.row][p.col] = b[lane][i];
      Position q = isaC(lane, i);
      C[q.row][q.col] = c[lane][i];
    }
  }
  for (int r = 0; r < kM; ++r)
    for (int n = 0; n < kN; ++n)
      for (int k = 0; k < kK; ++k)
        C[r][n] += A[r][k] * B[k][n];
  for (int lane = 0; lane < kWarpSize; ++lane)
    for (int i = 0; i < 4; ++i) {
      Position q = isaC(lane, i);
      c[lane][i] = C[q.row][q.col];
    }
}

/// The B fragments (b0..b3) of n-tile `nTile` (0 or 1) in an ldmatrix.x4
/// result ordered as MmaFragments.h states: n-tile 0 k 0-7, n-tile 0 k
/// 8-15, n-tile 1 k 0-7, n-tile 1 k 8-15.
std::array<std::array<float, 4>, kWarpSize>
bOfTile(const std::array<Fragment, kWarpSize> &loaded, int nTile) {
  std::array<std::array<float, 4>, kWarpSize> b{};
  for (int lane = 0; lane < kWarpSize; ++lane)
    for (int i = 0; i < 4; ++i)
      b[lane][i] = loaded[lane][4 * nTile + i];
  return b;
}

/// shfl.sync.bfly: each lane reads `values` of lane ^ mask.
std::array<float, kWarpSize> shuffleXor(const std::array<float, kWarpSize> &v,
                                        int mask) {
  std::array<float, kWarpSize> out{};
  for (int lane = 0; lane < kWarpSize; ++lane)
    out[lane] = v[lane ^ mask];
  return out;
}

Tile randomTile(int rows, int cols, std::mt19937 &rng) {
  std::uniform_int_distribution<int> small(-3, 3);
  Tile t{rows, cols, std::vector<float>(rows * cols)};
  for (float &x : t.data)
    x = static_cast<float>(small(rng));
  return t;
}

/// Two adjacent n8 accumulator tiles of a warp (a 16 x 16 result).
using AccumulatorPair = std::array<std::array<Accumulator, kWarpSize>, 2>;

/// Whether every lane's registers of `acc` hold want(row, col) at their
/// accumulatorPosition (col 0-15 across both tiles).
bool holds(const AccumulatorPair &acc,
           const std::function<float(int row, int col)> &want) {
  bool ok = true;
  for (int nTile = 0; nTile < 2; ++nTile)
    for (int lane = 0; lane < kWarpSize; ++lane)
      for (int i = 0; i < 4; ++i) {
        Position pos = accumulatorPosition(lane, i);
        ok &= acc[nTile][lane][i] == want(pos.row, 8 * nTile + pos.col);
      }
  return ok;
}

int failures = 0;
void report(const char *name, bool ok, const char *detail = "") {
  std::printf("%s %s%s\n", ok ? "PASS" : "FAIL", name, detail);
  failures += !ok;
}

} // namespace

int main(int argc, char **argv) {
  bool broken = argc > 1 && std::strcmp(argv[1], "--break") == 0;
  std::mt19937 rng(11);

  // 1. Accumulator positions: the header's against the ISA's.
  bool same = true;
  for (int lane = 0; lane < kWarpSize; ++lane)
    for (int i = 0; i < 4; ++i) {
      Position h = accumulatorPosition(lane, i), isa = isaC(lane, i);
      same &= h.row == isa.row && h.col == isa.col;
    }
  report("accumulator_positions", same);

  // One warp's block: 16 queries, 16 keys (two n8 tiles), head dim 32 (two
  // k16 slabs), value dim 16 (two n8 tiles). Q, K, V row-major.
  const int d = 32, dv = 16, keys = 16;
  Tile q = randomTile(kM, d, rng), k = randomTile(keys, d, rng),
       v = randomTile(keys, dv, rng);

  // 2. S = Q K^T: per k16 slab, Q's A fragment and K's two B fragments by
  // ldmatrix.x4 at the header's addresses; mma into two n8 accumulators.
  AccumulatorPair s{};
  for (int slab = 0; slab < d / kK; ++slab) {
    auto a =
        ldmatrixX4(q, 0, slab * kK, ldmatrixAddressA<int>, /*trans=*/false);
    auto kb =
        ldmatrixX4(k, 0, slab * kK, ldmatrixAddressBRows<int>, /*trans=*/false);
    for (int nTile = 0; nTile < 2; ++nTile)
      mma(a, bOfTile(kb, nTile), s[nTile]);
  }
  float sPlain[kM][keys] = {};
  for (int r = 0; r < kM; ++r)
    for (int n = 0; n < keys; ++n)
      for (int x = 0; x < d; ++x)
        sPlain[r][n] += q.at(r, x) * k.at(n, x);
  bool scoresOk =
      holds(s, [&](int row, int col) { return sPlain[row][col]; });
  report("scores_q_kt", scoresOk);

  // 3. Row max by the quad's xor shuffles: each lane's partial max of its
  // row (registers 0-1 for row g, 2-3 for row g + 8, over both n-tiles).
  bool maxOk = true;
  for (int half = 0; half < 2; ++half) {
    std::array<float, kWarpSize> partial{};
    for (int lane = 0; lane < kWarpSize; ++lane) {
      float m = -1e30f;
      for (int nTile = 0; nTile < 2; ++nTile)
        for (int j = 0; j < 2; ++j)
          m = std::max(m, s[nTile][lane][2 * half + j]);
      partial[lane] = m;
    }
    for (int mask : kRowReduceMasks) {
      auto other = shuffleXor(partial, mask);
      for (int lane = 0; lane < kWarpSize; ++lane)
        partial[lane] = std::max(partial[lane], other[lane]);
    }
    for (int lane = 0; lane < kWarpSize; ++lane) {
      int row = accumulatorPosition(lane, 2 * half).row;
      float want = *std::max_element(sPlain[row], sPlain[row] + keys);
      maxOk &= partial[lane] == want;
    }
  }
  report("row_max_quad_shuffles", maxOk);

  // 4. O = P V with P = S (integers, so exact): A taken from S's
  // accumulators in the lane's own registers, V's B fragments by
  // ldmatrix.x4.trans (or, with --break, without .trans).
  std::array<std::array<float, 8>, kWarpSize> p{};
  for (int lane = 0; lane < kWarpSize; ++lane)
    for (int i = 0; i < 8; ++i) {
      AccumulatorSlot slot = accumulatorForA(i);
      p[lane][i] = s[slot.nTile][lane][slot.reg];
    }
  auto vb = ldmatrixX4(v, 0, 0, ldmatrixAddressBColumnsTrans<int>,
                       /*trans=*/!broken);
  AccumulatorPair o{};
  for (int nTile = 0; nTile < 2; ++nTile)
    mma(p, bOfTile(vb, nTile), o[nTile]);
  bool outOk = holds(o, [&](int row, int col) {
    float want = 0;
    for (int n = 0; n < keys; ++n)
      want += sPlain[row][n] * v.at(n, col);
    return want;
  });
  report("output_p_v", outOk, broken ? " (V loaded without .trans)" : "");

  // 5. dQ = dS K as the tensor-core backward computes it: a warp holds
  // dS^T (here S, rows = keys, columns = queries) as accumulators, stores
  // each element at [query][key] of a shared tile, reads the tile back as
  // A fragments (16 queries x 16 keys) and multiplies them by K [keys][d]
  // read with .trans.
  Tile dsT{keys, kM, std::vector<float>(keys * kM)};
  for (int nTile = 0; nTile < 2; ++nTile)
    for (int lane = 0; lane < kWarpSize; ++lane)
      for (int i = 0; i < 4; ++i) {
        Position pos = accumulatorPosition(lane, i);
        dsT.data[(8 * nTile + pos.col) * kM + pos.row] = s[nTile][lane][i];
      }
  auto dsA = ldmatrixX4(dsT, 0, 0, ldmatrixAddressA<int>, /*trans=*/false);
  bool dqOk = true;
  for (int col0 = 0; col0 < d; col0 += 2 * kN) {
    auto kb = ldmatrixX4(k, 0, col0, ldmatrixAddressBColumnsTrans<int>,
                         /*trans=*/!broken);
    AccumulatorPair dq{};
    for (int nTile = 0; nTile < 2; ++nTile)
      mma(dsA, bOfTile(kb, nTile), dq[nTile]);
    // dS[query][key] = S[key][query].
    dqOk &= holds(dq, [&](int row, int col) {
      float want = 0;
      for (int n = 0; n < keys; ++n)
        want += sPlain[n][row] * k.at(n, col0 + col);
      return want;
    });
  }
  report("grad_query_ds_k", dqOk, broken ? " (K loaded without .trans)" : "");

  std::printf("mma fragments: 5 checks, %d failed\n", failures);
  return failures ? 1 : 0;
}
