//===- DistinctResultBuffers.cpp - one buffer per function result ---------===//
//
// Implements cp-distinct-result-buffers: a memref returned more than once is
// copied for each repeat, which buffer-results-to-out-params needs to hoist
// every result's allocation into its own out-parameter.
//
//===----------------------------------------------------------------------===//

#include "cp/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir {
namespace cp {
#define GEN_PASS_DEF_DISTINCTRESULTBUFFERSPASS
#include "cp/Transforms/Passes.h.inc"
} // namespace cp
} // namespace mlir

using namespace mlir;

namespace {

struct DistinctResultBuffersPass
    : public cp::impl::DistinctResultBuffersPassBase<
          DistinctResultBuffersPass> {
  void runOnOperation() override {
    getOperation().walk([](func::ReturnOp ret) {
      OpBuilder b(ret);
      Location loc = ret.getLoc();
      llvm::SmallPtrSet<Value, 4> seen;
      for (OpOperand &operand : ret->getOpOperands()) {
        Value buffer = operand.get();
        auto type = dyn_cast<MemRefType>(buffer.getType());
        if (!type || seen.insert(buffer).second ||
            !type.getLayout().isIdentity())
          continue;
        SmallVector<Value> dynamicSizes;
        for (int64_t d = 0; d < type.getRank(); ++d)
          if (type.isDynamicDim(d))
            dynamicSizes.push_back(memref::DimOp::create(b, loc, buffer, d));
        Value copy = memref::AllocOp::create(b, loc, type, dynamicSizes);
        memref::CopyOp::create(b, loc, buffer, copy);
        operand.set(copy);
      }
    });
  }
};

} // namespace
