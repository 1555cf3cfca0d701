//===- InitAllCP.h - register everything cp-mlir provides -------*- C++ -*-===//
//
// One call each to make the cp dialect (with its interface implementations)
// and every cp pass and pipeline available to a tool: cp-opt, the mlir-opt
// plugin, the C API, or a user's own driver.
//
//===----------------------------------------------------------------------===//

#ifndef CP_INITALLCP_H
#define CP_INITALLCP_H

#include "cp/Conversion/Passes.h"
#include "cp/Dialect/CP/IR/CPDialect.h"
#include "cp/Dialect/CP/Extensions/BufferizableOpInterfaceImpl.h"
#include "cp/Dialect/CP/Schemes/BuiltinSchemes.h"
#include "cp/Dialect/CP/Buffers/Passes.h"
#include "cp/Dialect/CP/Schemes/Passes.h"
#include "cp/Dialect/CP/Extensions/ShardingInterfaceImpl.h"
#include "cp/Pipelines/Pipelines.h"
#include "cp/Raising/Passes.h"
#include "cp/Transforms/Passes.h"
#include "mlir/IR/DialectRegistry.h"

namespace mlir {
namespace cp {

/// The cp dialect with its built-in schemes, the external models it
/// promises (bufferization, upstream sharding), and shard, whose `shard.grid`
/// every cp program names before its first cp op (so a tool that registers only
/// cp can still parse cp IR).
inline void registerAllDialects(DialectRegistry &registry) {
  registry.insert<CPDialect, shard::ShardDialect>();
  registerBuiltinSchemes(registry);
  registerBufferizableOpInterfaceExternalModels(registry);
  registerShardingInterfaceExternalModels(registry);
}

/// cp passes, conversions and pipelines.
inline void registerAllPasses() {
  registerCPRaisingPasses();
  registerCPSchemesPasses();
  registerCPBuffersPasses();
  registerCPConversionPasses();
  registerCPUpstreamPasses();
  registerCPPipelines();
}

} // namespace cp
} // namespace mlir

#endif // CP_INITALLCP_H
