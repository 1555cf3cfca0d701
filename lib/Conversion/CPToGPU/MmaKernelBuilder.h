//===- MmaKernelBuilder.h - what both tensor-core kernels build with -*- C++
//-*-//
//
// The forward (MmaAttentionKernel.cpp) and backward
// (MmaAttentionGradKernel.cpp) tensor-core kernels are made of the same
// pieces: 4 warps of 32 lanes, 64-row tiles staged into workgroup memory by
// cp.async, 16x16 and 16x8 fragments read by ldmatrix.x4, mma.sync.m16n8k16
// with f32 accumulators, and row reductions over a quad of lanes. Those
// pieces are here, once; which lane holds which element is MmaFragments.h's.
//
//===----------------------------------------------------------------------===//

#ifndef CP_LIB_CONVERSION_CPTOGPU_MMAKERNELBUILDER_H
#define CP_LIB_CONVERSION_CPTOGPU_MMAKERNELBUILDER_H

#include "cp/Conversion/AttentionCommon/AttentionBuilder.h"
#include "cp/Conversion/AttentionCommon/MmaFragments.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace mlir::cp::detail {

/// Rows per staged tile (a warp owns 16 of them) and warps per workgroup.
constexpr int64_t kMmaTileRows = 64, kMmaWarps = 4;
constexpr int64_t kMmaThreads = kMmaWarps * mma::kWarpSize;
/// Elements per 16-byte cp.async copy, and the padding of every staged row:
/// the 8 rows one ldmatrix reads fall in distinct banks and every row stays
/// 16-byte aligned.
constexpr int64_t kMmaChunk = 8;
/// The inline PTX of AddressesInLoop: a copy with a side effect, so that
/// nothing computed from it leaves the loop it is in.
constexpr llvm::StringLiteral kOpaqueMove = "mov.u32 $0, $1;";
static_assert(kMmaTileRows == kMmaWarps * mma::kM, "a warp owns 16 rows");

/// Why a tensor-core kernel cannot read `memrefs` (named by `names`) of
/// element type `elt` with head dims `d` and `dv`, as a sentence naming the
/// numbers; empty when it can.
std::string mmaOperandsUnsupportedReason(ArrayRef<StringRef> names,
                                         ArrayRef<MemRefType> memrefs,
                                         int64_t d, int64_t dv);

/// An index value with the arithmetic MmaFragments.h's templates use, so
/// that they emit IR in the lowerings and compute ints in the CPU test.
struct IndexExpr {
  OpBuilder *b;
  Location loc;
  Value v;

  IndexExpr make(Value r) const { return {b, loc, r}; }
  Value c(int64_t x) const {
    return arith::ConstantIndexOp::create(*b, loc, x);
  }
  friend IndexExpr operator/(IndexExpr x, int64_t y) {
    return x.make(arith::DivUIOp::create(*x.b, x.loc, x.v, x.c(y)));
  }
  friend IndexExpr operator%(IndexExpr x, int64_t y) {
    return x.make(arith::RemUIOp::create(*x.b, x.loc, x.v, x.c(y)));
  }
  friend IndexExpr operator*(IndexExpr x, int64_t y) {
    return x.make(arith::MulIOp::create(*x.b, x.loc, x.v, x.c(y)));
  }
  friend IndexExpr operator+(IndexExpr x, IndexExpr y) {
    return x.make(arith::AddIOp::create(*x.b, x.loc, x.v, y.v));
  }
  friend IndexExpr operator+(IndexExpr x, int64_t y) {
    return x.make(arith::AddIOp::create(*x.b, x.loc, x.v, x.c(y)));
  }
};

/// The 4 f32 accumulators of one 16x8 tile in this lane.
using Accumulator = SmallVector<Value, 4>;

class MmaKernelBuilder : protected AttentionBuilder {
protected:
  /// `elt` is the 16-bit type of the mma operands (f16 or bf16).
  MmaKernelBuilder(Operation *op, Type elt) : AttentionBuilder(op), elt(elt) {}

  IndexExpr expr(Value v) { return {&b, loc, v}; }

  /// A launch of 4 warps over `grid` with `sharedBytes` of dynamic
  /// workgroup memory; sets `tid`, `warp` and `lane`, and leaves the
  /// builder at the start of the body.
  gpu::LaunchOp launchWarps(Value gridX, Value gridY, Value gridZ,
                            int64_t sharedBytes);
  /// Views of the launch's dynamic workgroup memory, laid out one after the
  /// other from offset 0: each `shape` of `type` (elt when null).
  class SharedViews {
  public:
    SharedViews(MmaKernelBuilder &builder);
    Value next(ArrayRef<int64_t> shape, Type type = {});

  private:
    MmaKernelBuilder &builder;
    Value shared;
    int64_t offset = 0;
  };

  /// Max or sum of `v` over the 4 lanes of this lane's quad.
  Value quadReduce(Value v, bool isMax);

  /// cp.async copies of the 64 x `cols` tile of `src[batch, h]` starting at
  /// row `r0` into `dst[prefix..., i, j]`; rows at or past `validRows` are
  /// zero-filled (a copy of 0 source bytes) and address row 0, so nothing
  /// outside `src` is read.
  void copyTileAsync(Value src, Value batch, Value h, Value r0, Value validRows,
                     Value dst, ValueRange prefix, int64_t cols);
  /// cp.async copies of the 64 f32 values `src[batch, h, r0 ...]` into
  /// `dst[prefix..., 0 ...]`, issued by the 16 threads from `firstThread`
  /// (one 16-byte chunk each); every value must exist in `src`.
  void copyRowAsync(Value src, Value batch, Value h, Value r0, Value dst,
                    ValueRange prefix, int64_t firstThread);
  /// Ends the group of copies issued since the last one.
  void commitCopies();
  /// Waits until at most `pending` groups of copies are in flight.
  void waitCopies(int pending);
  /// ldmatrix.x4 from `tile[prefix..., row, col]`: four 8x8 matrices, one
  /// 2-element register each.
  SmallVector<Value, 4> ldmatrix(Value tile, ValueRange prefix, Value row,
                                 Value col, bool transpose);
  /// One mma.sync.m16n8k16: `c` + `a` (4 registers) x `bFrag` (2).
  Accumulator mmaSync(ArrayRef<Value> a, ArrayRef<Value> bFrag,
                      ArrayRef<Value> c);
  /// The 2-element register of elt holding `x` and `y` (f32, rounded).
  Value pack(Value x, Value y);
  /// One A fragment (4 registers) of a 16 x 16 slab.
  using Fragment = SmallVector<Value, 4>;
  /// The A fragments of `rows` (16 at `tile[prefix..., row0 + r, c]`, c
  /// over `cols`): one per k16 slab of the columns.
  SmallVector<Fragment> loadA(Value tile, ValueRange prefix, Value row0,
                              int64_t cols);
  /// The A fragments of a 16 x (8 * acc.size()) operand whose elements are
  /// the f32 accumulators `acc` of adjacent n8 tiles (P or dS kept in
  /// registers, MmaFragments.h's accumulatorForA), rounded to elt: one per
  /// k16 slab.
  SmallVector<Fragment> accumulatorsAsA(ArrayRef<Accumulator> acc);
  /// acc[n] += A B for the n8 tiles n of `acc` (an even number), where
  /// B[k][n] = tile[prefix..., kRow0 + k, col0 + 8 n + ...]: B stored with
  /// k along rows (V, dO, Q, K as right operands), read by ldmatrix.trans;
  /// k runs over the slabs of `a`.
  void mmaRowsTrans(ArrayRef<Fragment> a, Value tile, ValueRange prefix,
                    Value kRow0, int64_t col0,
                    MutableArrayRef<Accumulator> acc);
  /// acc[n] += A B^T for the n8 tiles n of `acc`, where
  /// B[n][k] = tile[prefix..., nRow0 + 8 n + ..., k]: B stored with n along
  /// rows (the keys of S = Q K^T), read by ldmatrix without .trans; k runs
  /// over the slabs of `a`.
  void mmaColumns(ArrayRef<Fragment> a, Value tile, ValueRange prefix,
                  MutableArrayRef<Accumulator> acc, Value nRow0 = {});

  /// For its lifetime (a loop body), `tid` and `laneId` are re-read through
  /// a `mov` that LLVM cannot see through (kOpaqueMove), and restored after.
  /// The workgroup-memory addresses of tiles that stay put over a loop (K
  /// and V in the backward) are then computed in the loop as one base plus
  /// the immediates of ldmatrix and st.shared, instead of being hoisted
  /// ahead of it by LICM as one live 64-bit register per address (dozens,
  /// and the spills that come with them).
  class AddressesInLoop {
  public:
    explicit AddressesInLoop(MmaKernelBuilder &builder);
    ~AddressesInLoop();

  private:
    MmaKernelBuilder &builder;
    Value tid, laneId;
  };

  /// The lane's index in its warp, as MmaFragments.h's functions take it.
  IndexExpr lane() { return expr(laneId); }

  Type elt;
  Value tid, warp, laneId;
};

} // namespace mlir::cp::detail

#endif // CP_LIB_CONVERSION_CPTOGPU_MMAKERNELBUILDER_H
