//===- PtxIsa.h - warp-level PTX semantics for CPU checks -------*- C++ -*-===//
//
// The PTX ISA's definitions of the warp-level instructions the tensor-core
// attention kernel uses, written out from the ISA document so that CPU
// checks can emulate them: the fragment layouts of mma.m16n8k16 with 16-bit
// A/B and f32 C/D ("Matrix Fragments for mma.m16n8k16 with floating point
// type") and which element of which lane's row ldmatrix.m8n8 delivers.
// They are independent of the compiler's own statement of the same plumbing
// (MmaFragments.h), which is what the checks compare it with.
//
//===----------------------------------------------------------------------===//

#ifndef CP_TESTSUPPORT_PTXISA_H
#define CP_TESTSUPPORT_PTXISA_H

namespace cp::ptx {

struct RowCol {
  int row, col;
};

/// Element i (0..7) of lane's A fragment (16x16, row-major): a0..a7, two
/// per 32-bit register. g = lane / 4, t = lane % 4.
inline RowCol mmaA(int lane, int i) {
  int g = lane / 4, t = lane % 4;
  int row = (i < 2 || (i >= 4 && i < 6)) ? g : g + 8;
  int col = t * 2 + (i & 1) + (i >= 4 ? 8 : 0);
  return {row, col};
}

/// Element i (0..3) of lane's B fragment (16x8, k x n): b0..b3.
inline RowCol mmaB(int lane, int i) {
  int g = lane / 4, t = lane % 4;
  return {t * 2 + (i & 1) + (i >= 2 ? 8 : 0), g};
}

/// Element i (0..3) of lane's C/D fragment (16x8 f32): c0..c3.
inline RowCol mmaC(int lane, int i) {
  int g = lane / 4, t = lane % 4;
  return {i < 2 ? g : g + 8, t * 2 + (i & 1)};
}

/// ldmatrix.sync.aligned.m8n8.xN.b16: lane 8m + r gives the address of row
/// r of matrix m (8 consecutive 16-bit elements). Element j (0 or 1) of
/// register m in `lane` is element `element` of the row whose address lane
/// `source` gave: without .trans, row lane / 4, element 2 (lane % 4) + j;
/// with .trans, row 2 (lane % 4) + j, element lane / 4.
struct LdmatrixSource {
  int source, element;
};
inline LdmatrixSource ldmatrixSource(int lane, int m, int j, bool trans) {
  int row = trans ? 2 * (lane % 4) + j : lane / 4;
  int element = trans ? lane / 4 : 2 * (lane % 4) + j;
  return {8 * m + row, element};
}

} // namespace cp::ptx

#endif // CP_TESTSUPPORT_PTXISA_H
