//===- MapParallelLoopsToGPU.cpp - element-wise loops as thread blocks ----===//
//
// Implements cp-map-parallel-loops-to-gpu: every outermost scf.parallel of
// the host program is linearized and split into blocks of threads, mapped
// to block x and thread x for convert-parallel-loops-to-gpu.
//
//===----------------------------------------------------------------------===//

#include "cp/Transforms/Passes.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"

namespace mlir {
namespace cp {
#define GEN_PASS_DEF_MAPPARALLELLOOPSTOGPUPASS
#include "cp/Transforms/Passes.h.inc"
} // namespace cp
} // namespace mlir

using namespace mlir;

namespace {

/// ceil((ub - lb) / step), folded when all three are constants.
OpFoldResult tripCount(OpBuilder &b, Location loc, Value lb, Value ub,
                       Value step) {
  std::optional<int64_t> l = getConstantIntValue(lb);
  std::optional<int64_t> u = getConstantIntValue(ub);
  std::optional<int64_t> s = getConstantIntValue(step);
  if (l && u && s && *s > 0)
    return b.getIndexAttr(*u > *l ? (*u - *l + *s - 1) / *s : 0);
  Value extent = arith::SubIOp::create(b, loc, ub, lb);
  return arith::CeilDivSIOp::create(b, loc, extent, step).getResult();
}

OpFoldResult multiply(OpBuilder &b, Location loc, OpFoldResult x,
                      OpFoldResult y) {
  std::optional<int64_t> cx = getConstantIntValue(x);
  std::optional<int64_t> cy = getConstantIntValue(y);
  if (cx && cy)
    return b.getIndexAttr(*cx * *cy);
  if (cx == 1)
    return y;
  if (cy == 1)
    return x;
  Value vx = getValueOrCreateConstantIndexOp(b, loc, x);
  Value vy = getValueOrCreateConstantIndexOp(b, loc, y);
  return arith::MulIOp::create(b, loc, vx, vy).getResult();
}

gpu::ParallelLoopDimMappingAttr mapTo(MLIRContext *ctx, gpu::Processor p) {
  AffineMap identity = AffineMap::getMultiDimIdentityMap(1, ctx);
  return gpu::ParallelLoopDimMappingAttr::get(ctx, p, identity, identity);
}

/// Replaces `loop` by blocks of `blockSize` threads over its linearized
/// iteration space.
void mapLoop(scf::ParallelOp loop, int64_t blockSize) {
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  MLIRContext *ctx = b.getContext();

  SmallVector<OpFoldResult> basis;
  OpFoldResult total = b.getIndexAttr(1);
  for (auto [lb, ub, step] : llvm::zip_equal(
           loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
    basis.push_back(tripCount(b, loc, lb, ub, step));
    total = multiply(b, loc, total, basis.back());
  }
  Value count = getValueOrCreateConstantIndexOp(b, loc, total);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value threads = arith::ConstantIndexOp::create(b, loc, blockSize);
  Value blocks = arith::CeilDivSIOp::create(b, loc, count, threads);

  auto outer = scf::ParallelOp::create(b, loc, zero, blocks, one);
  b.setInsertionPointToStart(outer.getBody());
  auto inner = scf::ParallelOp::create(b, loc, zero, threads, one);
  b.setInsertionPointToStart(inner.getBody());
  Value linear = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, outer.getInductionVars()[0], threads),
      inner.getInductionVars()[0]);
  Value inBounds =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, linear, count);
  auto guard = scf::IfOp::create(b, loc, inBounds, /*withElseRegion=*/false);
  b.setInsertionPointToStart(guard.thenBlock());

  // The last dimension varies fastest: consecutive threads, consecutive
  // elements of the innermost dimension.
  SmallVector<Value> ivs;
  if (basis.size() == 1) {
    ivs.push_back(linear);
  } else {
    auto indices =
        affine::AffineDelinearizeIndexOp::create(b, loc, linear, basis);
    llvm::append_range(ivs, indices.getResults());
  }
  for (auto [iv, lb, step] :
       llvm::zip_equal(ivs, loop.getLowerBound(), loop.getStep())) {
    std::optional<int64_t> l = getConstantIntValue(lb);
    std::optional<int64_t> s = getConstantIntValue(step);
    if (!s || *s != 1)
      iv = arith::MulIOp::create(b, loc, iv, step);
    if (!l || *l != 0)
      iv = arith::AddIOp::create(b, loc, iv, lb);
  }

  // Move the body (without its scf.reduce) under the guard.
  Block *body = loop.getBody();
  body->getTerminator()->erase();
  for (auto [arg, iv] : llvm::zip_equal(body->getArguments(), ivs))
    arg.replaceAllUsesWith(iv);
  Block *then = guard.thenBlock();
  then->getOperations().splice(then->getTerminator()->getIterator(),
                               body->getOperations());
  loop.erase();

  (void)gpu::setMappingAttr(outer, {mapTo(ctx, gpu::Processor::BlockX)});
  (void)gpu::setMappingAttr(inner, {mapTo(ctx, gpu::Processor::ThreadX)});
}

struct MapParallelLoopsToGPUPass
    : public cp::impl::MapParallelLoopsToGPUPassBase<
          MapParallelLoopsToGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    if (blockSize <= 0 || blockSize % 32 != 0 || blockSize > 1024) {
      getOperation()->emitError()
          << "cp-map-parallel-loops-to-gpu: block-size must be a multiple of "
             "32 in [32, 1024], got "
          << static_cast<int64_t>(blockSize);
      return signalPassFailure();
    }
    SmallVector<scf::ParallelOp> loops;
    getOperation()->walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<gpu::LaunchOp, gpu::GPUModuleOp>(op))
        return WalkResult::skip();
      if (auto loop = dyn_cast<scf::ParallelOp>(op)) {
        loops.push_back(loop);
        return WalkResult::skip();
      }
      return WalkResult::advance();
    });
    bool failedAny = false;
    for (scf::ParallelOp loop : loops) {
      if (loop->hasAttr(gpu::getMappingAttrName()))
        continue;
      if (loop.getNumResults() != 0) {
        loop.emitOpError("has ")
            << loop.getNumResults()
            << " reduction result(s); cp-map-parallel-loops-to-gpu maps only "
               "element-wise loops to threads";
        failedAny = true;
        continue;
      }
      mapLoop(loop, blockSize);
    }
    if (failedAny)
      signalPassFailure();
  }
};

} // namespace
