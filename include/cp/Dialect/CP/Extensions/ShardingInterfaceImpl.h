//===- ShardingInterfaceImpl.h - cp ops in upstream sharding ----*- C++ -*-===//
//
// External models of upstream's shard::ShardingInterface for cp ops, so
// that sharding-propagation and shard-partition hand a sequence-sharded
// attention to a cp scheme.
//
//===----------------------------------------------------------------------===//

#ifndef CP_DIALECT_CP_TRANSFORMS_SHARDINGINTERFACEIMPL_H
#define CP_DIALECT_CP_TRANSFORMS_SHARDINGINTERFACEIMPL_H

namespace mlir {
class DialectRegistry;

namespace cp {
void registerShardingInterfaceExternalModels(DialectRegistry &registry);
} // namespace cp
} // namespace mlir

#endif // CP_DIALECT_CP_TRANSFORMS_SHARDINGINTERFACEIMPL_H
