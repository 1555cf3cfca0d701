//===- MmaFragments.h - warp-level tile plumbing for mma.sync ---*- C++ -*-===//
//
// What a tensor-core attention kernel on `mma.sync.m16n8k16` (16-bit A/B,
// f32 accumulators) assumes about where data sits in a warp's registers,
// stated once so that the GPU lowering and its CPU test read the same
// functions (docs/GPU.md, "The tensor-core kernel"):
//
//  - which element of the 16x8 accumulator each lane's register holds (the
//    masks and the online softmax need the row and column of every score);
//  - which row address each lane gives `ldmatrix.x4` to load a 16x16 A tile
//    (Q) or two 8x16 B tiles (K rows for Q K^T, V rows with `.trans` for
//    P V) from a row-major shared-memory tile;
//  - how the accumulators of two adjacent n8 tiles of scores become the A
//    fragment of the next mma (P in registers, no shared-memory round trip);
//  - which lanes share a row, so that a row's max and sum are reductions
//    over the 4 lanes of a quad (xor-shuffles 1 and 2).
//
// test/Unit/MmaFragments.cpp checks these against a transcription of the
// PTX ISA's fragment layouts and ldmatrix semantics and a plain matmul.
//
//===----------------------------------------------------------------------===//

#ifndef CP_CONVERSION_ATTENTIONCOMMON_MMAFRAGMENTS_H
#define CP_CONVERSION_ATTENTIONCOMMON_MMAFRAGMENTS_H

namespace mlir::cp::mma {

constexpr int kWarpSize = 32;
/// mma.sync.m16n8k16: A is M x K, B is K x N, C/D is M x N.
constexpr int kM = 16, kN = 8, kK = 16;

/// A (row, col) pair. The functions below are templates over the lane's
/// type: `int` in the CPU test, an IR index value in the GPU lowering
/// (MmaAttentionKernel.cpp), so that both read the same formulas. They use
/// only `lane / c`, `lane % c`, `x * c` and `+`.
template <typename I> struct PositionOf { I row, col; };
using Position = PositionOf<int>;

/// The lane's quad (group of 4 lanes) and its index in it.
template <typename I> constexpr I groupOf(I lane) { return lane / 4; }
template <typename I> constexpr I indexInGroup(I lane) { return lane % 4; }

/// The (row, col) of the 16x8 f32 accumulator that register `i` (0..3) of
/// `lane` holds: rows g and g + 8 of quad g, two adjacent columns per lane.
template <typename I>
constexpr PositionOf<I> accumulatorPosition(I lane, int i) {
  return {groupOf(lane) + 8 * (i / 2), indexInGroup(lane) * 2 + i % 2};
}

/// The row offset (within a 16-row tile) and column offset (within 16
/// columns) of the 8-element shared-memory row whose address `lane` gives
/// ldmatrix.x4 to load a 16x16 A tile stored row-major (Q). The four 8x8
/// matrices are, in register order: rows 0-7 cols 0-7, rows 8-15 cols 0-7,
/// rows 0-7 cols 8-15, rows 8-15 cols 8-15: a0a1, a2a3, a4a5, a6a7.
template <typename I> constexpr PositionOf<I> ldmatrixAddressA(I lane) {
  I matrix = lane / 8;
  return {lane % 8 + (matrix % 2) * 8, (matrix / 2) * 8};
}

/// The same for the B operands of two n8 tiles over one k16 slab, from a
/// tile stored with n as rows and k as columns (K for S = Q K^T: keys x
/// head dim), loaded without .trans. Registers: n-tile 0 k 0-7, n-tile 0
/// k 8-15, n-tile 1 k 0-7, n-tile 1 k 8-15 (b0b1 and b2b3 of each tile).
template <typename I> constexpr PositionOf<I> ldmatrixAddressBRows(I lane) {
  I matrix = lane / 8;
  return {lane % 8 + (matrix / 2) * 8, (matrix % 2) * 8};
}

/// The same for B stored with k as rows and n as columns (V for O = P V:
/// keys x value dim), loaded with .trans. Registers as for
/// ldmatrixAddressBRows: n-tile 0 k 0-7, n-tile 0 k 8-15, n-tile 1 k 0-7,
/// n-tile 1 k 8-15; the row offset is along k, the column offset along n.
template <typename I>
constexpr PositionOf<I> ldmatrixAddressBColumnsTrans(I lane) {
  I matrix = lane / 8;
  return {lane % 8 + (matrix % 2) * 8, (matrix / 2) * 8};
}

/// Where A-fragment element `i` (0..7) of P comes from when P's 16 columns
/// k0..k0+15 are the accumulators of n-tiles 2t and 2t + 1 of the scores:
/// element i of A is register (i % 4) of n-tile (i / 4). The lane is the
/// same: no shuffle moves it.
struct AccumulatorSlot {
  int nTile, reg;
};
constexpr AccumulatorSlot accumulatorForA(int i) { return {i / 4, i % 4}; }

/// The xor masks of the shuffles that reduce a row over the lanes holding
/// it: the 4 lanes of a quad hold the 8 columns of rows g and g + 8.
constexpr int kRowReduceMasks[] = {1, 2};

} // namespace mlir::cp::mma

#endif // CP_CONVERSION_ATTENTIONCOMMON_MMAFRAGMENTS_H
